"""``mftune serve`` (the tuning server), the HTTP side of ``mftune worker``, ``bench serve``."""

from __future__ import annotations

import sys

import click

from ._groups import bench, main

_NEEDS = "mftune serve needs the serve extra: pip install 'mftune[serve]'"


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (the default: this machine only).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535))
@click.option("--token", help="The secret of every request (default MFTUNE_TOKEN; else one is "
                              "generated and printed).")
@click.option("--public", is_flag=True,
              help="Serve the dashboard pages without a token (the API still needs it).")
@click.option("--lease", "lease_seconds", default=30.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              help="Seconds a worker holds a pull without a heartbeat.")
def serve(paths, host, port, token, public, lease_seconds):
    """Serve the studies in PATHS (files, or folders of them) over HTTP, with a dashboard.

    The server runs each study's engine and hands its pulls to workers that
    ask for them (mftune worker --server URL, mftune.client, or curl); it
    never runs a script itself. New studies (POST /api/studies) go to the
    first folder in PATHS, else the current directory. See docs/service.md.
    """
    try:
        from ..service.lock import StudyServedElsewhere
        from ..service.server import serve as run_server
    except ImportError:
        raise click.ClickException(_NEEDS) from None
    try:
        run_server(paths or ["."], host=host, port=port, token=token, public=public,
                   lease_seconds=lease_seconds)
    except (FileNotFoundError, StudyServedElsewhere, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


def http_worker(url: str, command: list[str], study: str | None, token: str | None,
                reconnect: float, max_pulls: int | None, timeout: float | None,
                verbose: int = 1, slots: int | None = None) -> None:
    """``mftune worker --server URL [--study NAME] -- COMMAND``."""
    from ..client import ApiError, Client, ServerUnavailable
    from ..service.worker import HttpWorker

    if not command:
        raise click.UsageError("give the command to run per pull: "
                               "mftune worker --server URL -- COMMAND [ARGS]")
    client = Client(url, token)
    try:
        if study is None:
            names = [s["name"] for s in client.studies()]
            if len(names) != 1:
                raise click.UsageError(f"the server holds {len(names)} studies "
                                       f"({', '.join(names) or 'none'}); choose one with "
                                       "--study NAME")
            study = names[0]
        worker = HttpWorker(client, study, command, timeout=timeout, reconnect=reconnect,
                            verbose=verbose, stream=sys.stderr)
        n = worker.run(max_pulls, slots or 1)
    except (ApiError, ServerUnavailable) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"worker: {n} pulls run for study {study} ({worker.n_told} told)")


@bench.command("serve")
@click.option("--clients", default="1,4,16", show_default=True,
              help="Comma-separated numbers of concurrent clients.")
@click.option("--pulls", default=600, show_default=True, type=click.IntRange(min=10),
              help="Asks+tells per measurement.")
def bench_serve(clients, pulls):
    """Asks+tells per second of a real server (uvicorn on 127.0.0.1) and its overhead per pull.

    Starts `mftune serve` in a subprocess on a free port, creates one study
    per measurement (no script: the clients tell a synthetic score at once),
    and prints one line per number of clients.
    """
    try:
        from ..service.bench import bench_serve as run
    except ImportError:
        raise click.ClickException(_NEEDS) from None
    counts = [int(c) for c in clients.split(",") if c.strip()]
    run(counts, pulls, echo=click.echo)
