"""Start the tuning server: find the studies, take their locks, run uvicorn."""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

from ..study.store import StudyStore
from .app import Service, create_app

__all__ = ["find_studies", "make_service", "serve"]


def find_studies(paths) -> tuple[list[Path], Path]:
    """The study files among ``paths`` (files, or folders searched for ``*.db`` studies),
    and the folder new studies go to (the first folder given, else the current one)."""
    files, folder = [], None
    for p in map(Path, paths):
        if p.is_dir():
            folder = folder or p
            files += sorted(f for f in p.glob("*.db") if StudyStore.exists(f))
        elif StudyStore.exists(p):
            files.append(p)
        else:
            raise FileNotFoundError(f"{p}: no study there ({StudyStore.missing_reason(p)})")
    return files, (folder or Path.cwd()).resolve()


def make_service(paths, *, token: str | None = None, public: bool = False,
                 lease_seconds: float = 30.0) -> Service:
    """A :class:`Service` hosting the studies found in ``paths`` (engines started)."""
    files, folder = find_studies(paths)
    service = Service(folder, token, public=public, lease_seconds=lease_seconds)
    try:
        for f in files:
            service.host(f)
    except BaseException:
        service.close()
        raise
    return service


def serve(paths, *, host: str = "127.0.0.1", port: int = 8765, token: str | None = None,
          public: bool = False, lease_seconds: float = 30.0, stream=None) -> None:
    """Serve the studies in ``paths`` until interrupted (``mftune serve``).

    Parameters
    ----------
    paths : sequence of str or Path
        Study files, or folders holding them (new studies go to the first folder).
    host, port
        Where to listen (default: this machine only).
    token : str, optional
        The secret of every request (default ``MFTUNE_TOKEN``, else one is
        generated and printed).
    public : bool
        Serve the dashboard pages without a token.
    lease_seconds : float
        How long a worker holds a pull without a heartbeat.
    """
    import uvicorn

    stream = stream or sys.stderr
    token = token or os.environ.get("MFTUNE_TOKEN")
    generated = not token
    token = token or secrets.token_urlsafe(18)
    service = make_service(paths, token=token, public=public, lease_seconds=lease_seconds)
    url = f"http://{host}:{port}"
    print(f"mftune serve: {len(service.studies)} studies from {service.folder} on {url}",
          file=stream)
    if generated:
        print(f"token (generated; set MFTUNE_TOKEN to choose it): {token}", file=stream)
    print(f"dashboard: {url}/?token={token if generated else 'TOKEN'}", file=stream, flush=True)
    try:
        uvicorn.run(create_app(service), host=host, port=port, log_level="warning",
                    limit_concurrency=1000, timeout_keep_alive=30)
    finally:
        service.close()
