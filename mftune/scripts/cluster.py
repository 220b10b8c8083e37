"""Run a script study's pulls on a dask cluster (``mftune tune|resume|worker --scheduler``).

A :class:`~mftune.scripts.study.StudyRunner` keeps a pool of runs in flight and
claims pulls of the study for it. Locally the pool is a thread pool (each run
is a child process); with a dask scheduler it is the cluster: every run is a
task that starts the command on a dask worker, on whichever machine that
worker lives. The study file stays with the runner process — SQLite must not
be shared over a network file system — so one ``mftune tune --scheduler``
process drives a whole cluster, and further ``mftune worker`` processes on the
same machine may join it.

The workers need mftune installed (they unpickle the runs) and must see the
command, its working directory and the study's ``.trials`` directory at the
same paths (a shared file system, or the same machine).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DaskPool"]


class DaskPool:
    """A ``concurrent.futures``-style pool backed by a ``distributed.Client``.

    Parameters
    ----------
    address : str
        The scheduler: ``tcp://host:port`` (any address ``distributed.Client``
        accepts), or the path of a scheduler file (JSON, as written by
        ``dask scheduler --scheduler-file``).
    timeout : float, default=30
        Seconds to wait for the scheduler.

    Attributes
    ----------
    client : distributed.Client
    """

    def __init__(self, address: str, timeout: float = 30.0):
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
            self.client = Client(**kw)
        except (OSError, TimeoutError) as exc:
            raise ValueError(f"scheduler: cannot connect to {address!r} ({exc})") from exc
        self._executor = self.client.get_executor(pure=False)

    @property
    def n_slots(self) -> int:
        """Threads over all the cluster's workers (runs it can hold at once)."""
        return int(sum(self.client.nthreads().values()))

    def submit(self, fn, /, *args, **kwargs):
        """Run ``fn(*args, **kwargs)`` on a worker; returns a ``concurrent.futures.Future``."""
        return self._executor.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Cancel (``cancel_futures``) or wait for the runs in flight; then a fresh executor.

        A cancelled run that already started keeps running on its worker until
        its command exits (or times out); its result is not recorded.
        """
        self._executor.shutdown(wait=wait and not cancel_futures)
        self._executor = self.client.get_executor(pure=False)

    def close(self) -> None:
        """Disconnect from the scheduler."""
        self.client.close()
