"""Run a script study's pulls on a dask cluster (``mftune tune|resume|worker --scheduler``).

A script study claims pulls of the study and runs them through joblib, like
every search: locally in threads (each run is a child process); with a dask
scheduler under joblib's dask backend, so every run is a task that starts the
command on a dask worker, on whichever machine that worker lives. The study
file stays with the runner process -- SQLite must not be shared over a network
file system -- so one ``mftune tune --scheduler`` process drives a whole
cluster, and further ``mftune worker`` processes on the same machine may join it.

The workers need mftune installed (they unpickle the runs) and must see the
command, its working directory and the study's ``.trials`` directory at the
same paths (a shared file system, or the same machine).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["connect", "n_threads"]


def connect(address: str, timeout: float = 30.0):
    """A ``distributed.Client`` of the scheduler at ``address`` (or in a scheduler file).

    The runs then go through joblib's dask backend, the one parallel path of
    every search (``joblib.parallel_config(backend="dask")``).

    Raises
    ------
    ValueError
        Naming ``scheduler``: the dask extra is missing or the scheduler is unreachable.
    """
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover - the dask extra is not installed
        raise ValueError(
            "scheduler: running on a dask cluster needs the distributed package "
            "(pip install 'mftune[dask]')") from exc
    kw = {"timeout": timeout}
    if Path(address).is_file():
        kw["scheduler_file"] = str(address)
    else:
        kw["address"] = address
    try:
        return Client(**kw)
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"scheduler: cannot connect to {address!r} ({exc})") from exc


def n_threads(client) -> int:
    """Threads over all the cluster's workers (runs it can hold at once)."""
    return int(sum(client.nthreads().values()))
