"""Pulls with a time limit: each fit runs in a forked child that is killed when it overruns.

A forked child runs its pull with one OpenMP thread: GNU libgomp's thread pool
does not survive ``fork``, so in a process that has already run OpenMP code a
multi-threaded child would crash or hang. Forking (not ``forkserver`` or
``spawn``) keeps scripts without an ``if __name__ == "__main__":`` guard
working and costs no start-up.
"""

from __future__ import annotations

import multiprocessing as mp
import time
import traceback
from collections.abc import Iterator

import numpy as np
from threadpoolctl import threadpool_limits

__all__ = ["run_with_timeout"]


def _child(conn, func, task):  # pragma: no cover - runs in a forked process
    try:
        # GNU OpenMP's thread pool does not survive fork(): a parent that already ran
        # OpenMP code would crash or hang the child at its first parallel region.
        # With one OpenMP thread the child never touches the inherited pool.
        with threadpool_limits(1, user_api="openmp"):
            conn.send(("ok", func(*task)))
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
        try:
            conn.send(("raise", exc))
        except Exception:  # unpicklable exception
            conn.send(("raise", RuntimeError(traceback.format_exc())))
    finally:
        conn.close()


def _answer(conn):
    """The child's ``(kind, value)`` if it has answered, else ``None`` (also when it died)."""
    try:
        return conn.recv() if conn.poll() else None
    except EOFError:  # the child closed the pipe by dying; its exit code tells
        return None


def run_with_timeout(func, tasks: list[tuple], timeout: float, n_jobs: int,
                     error_score) -> Iterator[dict]:
    """Run ``func(*task)`` (``fit_and_score``) in child processes, killing overrunning ones.

    Yields the results in the order of ``tasks``, each as soon as it and those
    before it are in (so the caller can record a pull before the others end).
    At most ``n_jobs`` children run at once. A killed pull comes back with
    ``status="timed-out"``, ``error_score`` as its scores and ``timeout`` as
    its fit time; a child that dies without answering, with
    ``status="failed"`` and its exit code in the error text.
    """
    ctx = mp.get_context("fork")
    results: list[dict | None] = [None] * len(tasks)
    running: dict[int, tuple] = {}
    queue = list(range(len(tasks)))
    given = 0  # results yielded so far
    try:
        while queue or running:
            while queue and len(running) < max(n_jobs, 1):
                i = queue.pop(0)
                parent, child = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child, args=(child, func, tasks[i]), daemon=True)
                proc.start()
                child.close()
                running[i] = (proc, parent, time.perf_counter())
            for i, (proc, conn, started) in list(running.items()):
                answer = _answer(conn)
                if answer is not None:
                    kind, value = answer
                    proc.join()
                    conn.close()
                    del running[i]
                    if kind == "raise":
                        raise value
                    results[i] = value
                elif time.perf_counter() - started > timeout or not proc.is_alive():
                    if proc.is_alive():
                        proc.kill()
                        status, msg = "timed-out", f"pull stopped after timeout={timeout} s"
                    else:
                        status, msg = "failed", f"worker died (exit code {proc.exitcode})"
                    proc.join()
                    conn.close()
                    del running[i]
                    scorers = tasks[i][6]
                    if error_score == "raise" and status == "failed":
                        raise RuntimeError(msg)
                    score = np.nan if error_score == "raise" else float(error_score)
                    results[i] = {"scores": dict.fromkeys(scorers, score),
                                  "fit_time": float(timeout if status == "timed-out" else 0.0),
                                  "score_time": 0.0, "status": status, "error": msg}
            while given < len(tasks) and results[given] is not None:
                yield results[given]  # type: ignore[misc]
                given += 1
            if running:
                time.sleep(0.005)
    finally:
        for proc, conn, _ in running.values():
            proc.kill()
            proc.join()
            conn.close()
