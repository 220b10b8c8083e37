"""``mftune tune``, ``mftune resume`` and ``mftune worker``: run a script study."""

from __future__ import annotations

import json
import re
import shlex
import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from ..scripts.spacefile import SpaceFileError, check_study, load_spacefile
from ..study.replay import StudyMismatchError
from ..study.store import StudyStore, remove_study_files
from ._groups import main
from ._study_output import damaged, echo_result

EXIT_CODES = {"stopping-rule": 0, "tie": 0, "budget": 0, "max-pulls": 0, "time-budget": 0,
              "interrupted": 130, "stalled": 1, "all-failed": 1, "setting-refused": 1}


def _output_mode(quiet: bool, as_json: bool) -> str:
    if quiet and as_json:
        raise click.UsageError("--quiet and --json are mutually exclusive")
    return "json" if as_json else ("quiet" if quiet else "line")


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM acts as Ctrl+C: ``KeyboardInterrupt`` in the main thread.

    ``timeout``, docker and Slurm stop a job with SIGTERM; a study then ends
    as on Ctrl+C (its runs killed, their pulls put back to pending for
    ``mftune resume``). The previous handler is restored on exit. Outside
    the main thread (where handlers cannot be set) nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _announce(path, mode: str) -> None:
    """Say which command the study runs, and where, before running anything."""
    try:
        with StudyStore(path, readonly=True) as store:
            spec = store.meta["spec"]
    except (OSError, ValueError, sqlite3.Error):
        return  # the runner reports it
    if not spec.get("command"):
        return
    if mode == "json":
        click.echo(json.dumps({"type": "command", "command": spec["command"],
                               "cwd": spec.get("cwd")}))
    else:
        click.echo(f"command: {shlex.join(spec['command'])}\n"
                   f"working directory: {spec.get('cwd')}", err=True)


def _run(path, mode, **kw) -> None:
    from ..scripts.study import run_study  # the engine: not loaded by mftune worker --server

    start = time.monotonic()
    try:
        with sigterm_as_interrupt():
            outcome = run_study(path, verbose=int(mode == "line"), stream=sys.stderr, **kw)
    except (FileNotFoundError, ValueError, StudyMismatchError) as exc:
        raise click.ClickException(str(exc)) from None
    except sqlite3.DatabaseError as exc:
        raise damaged(path, exc) from None
    echo_result(path, outcome.reason, mode, time.monotonic() - start, outcome.error,
                outcome.statement)
    code = EXIT_CODES.get(outcome.reason, 1)
    if code:
        raise SystemExit(code)


def _check_placeholders(spec, command) -> None:
    """With ``pass = "placeholders"`` every ``{name}`` in COMMAND must name a parameter or
    the fidelity (nothing else is substituted: a misspelt one would reach the script)."""
    if spec.study["pass"] != "placeholders":
        return
    known = {*spec.parameters, spec.fidelity["name"]}
    unknown = sorted({m for a in command for m in re.findall(r"\{([A-Za-z_]\w*)\}", a)}
                     - known)
    if unknown:
        raise click.BadParameter(
            f"{', '.join('{' + u + '}' for u in unknown)} name(s) no parameter or fidelity; "
            f"placeholders are {', '.join('{' + k + '}' for k in sorted(known))}",
            param_hint="COMMAND")


def _limits(f):
    f = click.option("--budget", type=click.FloatRange(min=0, min_open=True),
                     help="Stop once the summed run cost reaches this many seconds.")(f)
    f = click.option("--max-pulls", type=click.IntRange(min=1),
                     help="Stop once this many runs of the search have started "
                          "(the calibration's runs are not counted).")(f)
    f = click.option("--workers", type=click.IntRange(min=1),
                     help="Runs in parallel in this process (with --scheduler: runs in flight "
                          "on the cluster, default its number of threads).")(f)
    f = click.option("--scheduler", metavar="ADDRESS",
                     help="Run the pulls on a dask cluster: the scheduler's address "
                          "(tcp://host:8786) or scheduler file. Needs mftune[dask]; the "
                          "workers must see the command and this directory "
                          "(docs/parallel.md).")(f)
    f = click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
                     help="Seconds before a run is killed and recorded as timed-out.")(f)
    f = click.option("--quiet", "-q", is_flag=True, help="Print only the result.")(f)
    f = click.option("--json", "as_json", is_flag=True,
                     help="Print the result as one JSON line.")(f)
    return f


@main.command()
@click.argument("space_file", type=click.Path(dir_okay=False))
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option("--study", "study_path", type=click.Path(dir_okay=False),
              help="Study file (overrides study.path of the space file).")
@click.option("--algorithm",
              help="Policy (overrides study.algorithm): auto, se, iise, iise-gamma, lucb-a, "
              "lucb-b, lucb-c, grad, mf-grad, mf-gp-ucb, gp-ucb. auto (the default): "
              "IISE-gamma with several fidelities, SE with one; the GP policies propose "
              "their own configurations and need --budget or --max-pulls.")
@click.option("--delta", type=float, help="Error probability δ (overrides study.delta).")
@click.option("--epsilon", type=float, help="Accept an ε-best configuration (study.epsilon).")
@click.option("--n-candidates", type=click.IntRange(min=2),
              help="Configurations sampled (study.n_candidates).")
@click.option("--seed", type=int, help="Seed of the sampling and the runs (study.seed).")
@click.option("--error-score", type=float, help="Score given to failed runs (study.error_score).")
@_limits
def tune(space_file, command, study_path, algorithm, delta, epsilon, n_candidates, seed,
         error_score, budget, max_pulls, workers, timeout, scheduler, quiet, as_json):
    """Tune COMMAND over the space described in SPACE_FILE (TOML).

    \b
    mftune tune space.toml -- python train.py --data data.csv
    mftune tune space.toml -- ./train.sh {lr} {epochs}

    Each run gets its configuration as --name=value options (or in {name}
    placeholders of COMMAND) and in the environment (MFTUNE_PARAMS,
    MFTUNE_FIDELITY, MFTUNE_TRIAL_DIR, MFTUNE_RESULT_FILE, MFTUNE_SEED), and
    reports {"score": x} in MFTUNE_RESULT_FILE or a last stdout line
    "mftune-score: x". COMMAND runs without a shell, from the current
    directory. Options given here override the space file.
    """
    from ..policies.registry import POINT_ALGORITHMS
    from ..scripts.study import create_study

    mode = _output_mode(quiet, as_json)
    try:
        spec = load_spacefile(space_file)
    except SpaceFileError as exc:
        raise click.ClickException(str(exc)) from None
    overrides = {"path": study_path, "algorithm": algorithm, "delta": delta,
                 "epsilon": epsilon, "n_candidates": n_candidates, "seed": seed,
                 "error_score": error_score, "budget": budget, "max_pulls": max_pulls,
                 "workers": workers, "timeout": timeout}
    spec.study.update({k: v for k, v in overrides.items() if v is not None})
    try:
        check_study(spec.study, lambda k, msg: click.BadParameter(
            msg, param_hint=f"--{k.replace('_', '-')}"))
        if spec.study["epsilon"] is not None and not spec.study["epsilon"] > 0:
            raise click.BadParameter("must be > 0", param_hint="--epsilon")
        _check_placeholders(spec, command)
        store = create_study(spec, list(command))
    except (FileExistsError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    path, waves = store.path, bool(store.meta["spec"].get("adaptive"))
    n_configs = len(store.configs())
    store.close()
    if mode == "line":
        first = (" (the first wave; a surrogate proposes more)" if waves
                 else " to calibrate on (the policy proposes the rest)"
                 if spec.study["algorithm"] in POINT_ALGORITHMS else "")
        click.echo(f"study {path}: {n_configs} configurations{first}, "
                   f"{spec.study['algorithm']}, {spec.fidelity['name']} in "
                   f"{spec.fidelity['values']}", err=True)
    try:
        _run(path, mode, scheduler=scheduler, workers=workers)
    except click.ClickException as exc:
        if exc.message.startswith("scheduler:"):  # nothing ran: the new study goes too
            remove_study_files(Path(path))
            exc.message += f" (nothing was run; {path} was not kept)"
        raise


@main.command()
@click.argument("study", type=click.Path(dir_okay=False))
@_limits
def resume(study, budget, max_pulls, workers, timeout, scheduler, quiet, as_json):
    """Continue the study in STUDY after an interruption or a crash.

    Finished runs are never repeated: the policy is rebuilt from them (same
    seed, same decisions) and only runs that had not finished are started
    again. Raise --budget or --max-pulls to continue a study stopped by them.
    """
    mode = _output_mode(quiet, as_json)
    if not StudyStore.exists(study):
        raise click.ClickException(f"{study}: no study there "
                                   f"({StudyStore.missing_reason(study)})")
    _announce(study, mode)
    _run(Path(study), mode, budget=budget, max_pulls=max_pulls, workers=workers,
         timeout=timeout, scheduler=scheduler)


@main.command()
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option("--server", metavar="URL",
              help="Work for a tuning server (mftune serve) over HTTP instead of a study "
                   "file: ARGS are then the command to run per pull.")
@click.option("--study", "study_name", metavar="NAME",
              help="With --server: the study's name (default: the server's only study).")
@click.option("--token", help="With --server: the server's token (default MFTUNE_TOKEN).")
@click.option("--reconnect", default=120.0, show_default=True, type=float,
              help="With --server: seconds to keep retrying while the server is unreachable.")
@click.option("--wait", "wait_s", default=30.0, show_default=True, type=float,
              help="Seconds to wait for the study file to appear.")
@_limits
def worker(args, server, study_name, token, reconnect, wait_s, budget, max_pulls, workers,
           timeout, scheduler, quiet, as_json):
    """Join a study: mftune worker STUDY, or mftune worker --server URL -- COMMAND.

    With a study file, workers share it: each claims runs of the current
    round that no one else has claimed, so every run happens exactly once. To
    use other machines, give --scheduler (a dask cluster), or serve the study
    (mftune serve) and start workers anywhere with --server URL: they ask the
    server for pulls, run COMMAND for each (the command on this command line,
    never one the server sends) and tell the scores.
    """
    mode = _output_mode(quiet, as_json)
    if server:
        from .serve import http_worker

        http_worker(server, list(args), study_name, token, reconnect, max_pulls, timeout,
                    verbose=int(mode == "line"), slots=workers)
        return
    if len(args) != 1:
        raise click.UsageError("give one STUDY file (or --server URL -- COMMAND)")
    study = args[0]
    deadline = time.monotonic() + wait_s
    while not StudyStore.exists(study):
        if time.monotonic() > deadline:
            raise click.ClickException(f"{study}: no study appeared within {wait_s:g} s")
        time.sleep(0.1)
    _announce(study, mode)
    _run(Path(study), mode, budget=budget, max_pulls=max_pulls, workers=workers,
         timeout=timeout, scheduler=scheduler)
