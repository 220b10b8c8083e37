"""A study the server hosts: its engine thread, its leases, ask/tell/heartbeat.

The engine is the one every face uses: :func:`mftune.scripts.study.run_study`
runs the study's :class:`~mftune.engine.search.Search` in a thread of the
server, in *schedule-only* mode (``on_batch``): each batch the policy asks is
stored as ``pending`` rows and the thread waits for them to finish, exactly
as a worker of a shared study waits for the rows other workers run. HTTP
workers take those rows with ``ask`` (a lease, :mod:`mftune.service.leases`)
and finish them with ``tell``. The calibration, the failed-pull rule, the
budget and the certificate are therefore those of ``mftune tune``, and a
study served with a seed recommends what the same study run locally does.

Everything a worker reports is committed to the study file before the answer
is sent, so a server killed at any instant loses no finished pull; restarted,
it replays the stored pulls (running none again) and goes on.

A study stopped by its budget or pull cap (or because its runs failed) goes on
with :meth:`HostedStudy.resume`: larger caps, kept in the study's ``state``
document as ``limits`` (a restarted server uses them too), are given to
``run_study`` as ``mftune resume --budget/--max-pulls`` gives them.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..scripts.runner import pull_seed
from ..scripts.study import run_study
from ..study.store import PullRow, StudyStore
from .leases import LEASE_PREFIX, Lease, LeaseTable
from .lock import StudyLock
from .requests import ApiError

__all__ = ["Batch", "HostedStudy"]

#: Why a study's engine stopped, and what ``ask`` then says.
ENDED = ("stopping-rule", "tie")
#: Why a stopped study may be resumed, and the cap each stop needs raised.
RESUMABLE = {"budget": "budget", "max-pulls": "max_pulls", "all-failed": None}


@dataclass(frozen=True)
class Batch:
    """The batch the engine waits for: its number, kind and each row's repeat index."""

    number: int
    kind: str
    repeats: dict  # row id -> repeat index


class HostedStudy:
    """One study file served: engine thread, leases and the ask/tell handlers.

    ``ask``, ``tell`` and ``heartbeat`` must be called from one thread (the
    server's event loop); the engine runs in its own thread with its own
    connection; readers (status, dashboard) open read-only connections.

    Parameters
    ----------
    name : str
        The study's name in URLs.
    path : str or Path
        The study file (it must exist).
    lease_seconds : float
        How long a worker holds a pull without a heartbeat.
    poll : float
        Seconds between the engine's looks at the rows of its batch.
    """

    def __init__(self, name: str, path, *, lease_seconds: float = 30.0, poll: float = 0.02):
        self.name, self.path = name, Path(path)
        self.lock = StudyLock(self.path)  # refuses a second server on this study
        self.leases = LeaseTable(lease_seconds)
        self.poll = float(poll)
        self.batch: Batch | None = None
        self.state, self.reason, self.error = "starting", None, None
        self._stores: dict[int, StudyStore] = {}
        self.n_told = self.n_late = 0
        self.busy = 0.0  # seconds spent in ask and tell (the server's overhead)
        with StudyStore(self.path) as store:
            meta = store.meta
            self.configs = store.configs()
            for row in store.rows():  # leases a previous server left: wait for their tells
                if row.status == "running":
                    self.leases.adopt(row.worker, row.id)
        self.meta = meta
        self.limits = dict(meta["state"].get("limits") or {})  # caps raised by resume
        self.sign = 1.0 if meta["direction"] == "maximize" else -1.0
        self.values = list(meta["fidelities"]["values"])
        self.fidelity_name = meta["fidelities"].get("name", "fidelity")
        self.thread = self._engine_thread()

    # -- the engine thread ----------------------------------------------------------
    def _engine_thread(self) -> threading.Thread:
        return threading.Thread(target=self._run, name=f"mftune-engine-{self.name}",
                                daemon=True)

    def start(self) -> None:
        """Start the engine thread."""
        self.state = "running"
        self.thread.start()

    def _run(self) -> None:
        try:
            outcome = run_study(self.path, verbose=0, on_batch=self._on_batch, poll=self.poll,
                                **self.limits)
            self.reason, self.error = outcome.reason, outcome.error
            self.state = "finished" if outcome.reason in ENDED else "stopped"
        except Exception as exc:  # shown by status and the dashboard
            self.state, self.error = "error", f"{type(exc).__name__}: {exc}"

    def _on_batch(self, kind: str, rows: list[PullRow], repeats) -> None:
        self.batch = Batch(rows[0].batch, kind, {r.id: int(repeats[r.pos]) for r in rows})

    def resume(self, budget: float | None = None, max_pulls: int | None = None) -> dict:
        """Continue a study stopped by its budget or pull cap, or because its runs failed.

        The engine starts again as ``mftune resume --budget B --max-pulls N``
        runs a script study: the stored pulls replay (none runs again) and the
        search goes on until its rule or the new caps; the runs a failed study
        stopped on run again. The caps are checked before anything is written.

        Parameters
        ----------
        budget : float, optional
            The new summed cost cap (seconds), larger than the cost so far.
        max_pulls : int, optional
            The new cap on the search's pulls, larger than its pulls so far.

        Returns
        -------
        dict
            The server's view of the study (:meth:`server_view`).
        """
        given = {k: v for k, v in (("budget", budget), ("max_pulls", max_pulls))
                 if v is not None}
        self._check_resume(given)
        limits = {**self.limits, **given}
        self.store().update_state(limits=limits)
        self.thread.join()  # it has returned: the state says the engine stopped
        self.limits, self.batch, self.reason, self.error = limits, None, None, None
        self.thread = self._engine_thread()
        self.start()
        return self.server_view()

    def _check_resume(self, given: dict) -> None:
        """Refuse (writing nothing) to resume a study that did not stop, or with caps it
        has already used up."""
        if self.state != "stopped" or self.reason not in RESUMABLE:
            why = f"{self.state} ({self.reason})" if self.reason else self.state
            raise ApiError(409, "study", f"study {self.name!r} is {why}: only a study stopped "
                           f"by {', '.join(RESUMABLE)} can be resumed; nothing written")
        store = self.store()
        used = {"budget": store.spent(), "max_pulls": len(store.rows(kind="policy"))}
        what = {"budget": "its cost so far (s)", "max_pulls": "its search's pulls so far"}
        cap = RESUMABLE[self.reason]
        if cap is not None and cap not in given:
            raise ApiError(400, cap, f"missing: the study stopped at its {self.reason} cap; "
                           f"give a larger one (> {used[cap]:g}, {what[cap]})")
        for key, value in given.items():
            if value <= used[key]:
                raise ApiError(400, key, f"must be > {used[key]:g} ({what[key]}: the study "
                               f"would stop at once); got {value!r}")

    # -- the store, one connection per thread -----------------------------------------
    def store(self) -> StudyStore:
        """This thread's connection to the study file."""
        key = threading.get_ident()
        if key not in self._stores:
            self._stores[key] = StudyStore(self.path)
        return self._stores[key]

    def close(self) -> None:
        """Close this thread's connection and drop the lock."""
        store = self._stores.pop(threading.get_ident(), None)
        if store is not None:
            store.close()
        self.lock.release()

    def candidates(self) -> list[dict]:
        """The study's candidates, read again (its waves append new ones as it runs)."""
        self.configs = self.store().configs()
        return self.configs

    # -- ask / tell / heartbeat -----------------------------------------------------
    def ask(self, holder: str = "") -> tuple[Lease, PullRow] | None:
        """Lease the next pending pull of the engine's batch, if one is free."""
        start = time.perf_counter()
        try:
            return self._ask(holder)
        finally:
            self.busy += time.perf_counter() - start

    def _ask(self, holder: str) -> tuple[Lease, PullRow] | None:
        self.expire()
        batch = self.batch
        if batch is None or self.state != "running":
            return None
        store = self.store()
        for row in store.rows(batch=batch.number, kind=batch.kind):
            if row.status != "pending" or row.id not in batch.repeats:
                continue
            lease = self.leases.new(row.id, holder)
            if store.claim([row.id], lease.worker):
                return lease, row
            self.leases.drop(lease)
        return None

    def pull_payload(self, lease: Lease, row: PullRow) -> dict:
        """What ``ask`` answers for a leased pull."""
        repeat = self.batch.repeats.get(row.id, 0) if self.batch else 0
        if row.arm >= len(self.configs):  # a candidate a wave appended since
            self.candidates()
        return {"pull_id": row.id, "lease": lease.token, "deadline": lease.deadline,
                "lease_seconds": self.leases.seconds, "arm": row.arm,
                "config": self.configs[row.arm],
                "fidelity": {"index": row.fidelity, "name": self.fidelity_name,
                             "value": self.values[row.fidelity]},
                "repeat": repeat, "seed": pull_seed(self.meta["seed"], row.arm, row.fidelity,
                                                    repeat),
                "attempt": row.attempts + 1, "kind": row.kind}

    def find(self, pull_id: int) -> PullRow | None:
        """The row ``pull_id`` (the engine's batch first, else the whole study)."""
        store = self.store()
        if self.batch is not None and pull_id in self.batch.repeats:
            rows = store.rows(batch=self.batch.number, kind=self.batch.kind)
        else:
            rows = store.rows()
        return next((r for r in rows if r.id == pull_id), None)

    def _row(self, pull_id: int) -> PullRow:
        row = self.find(pull_id)
        if row is None:
            raise ApiError(404, "pull_id", f"no pull {pull_id} in study {self.name!r}")
        if row.finished:
            raise ApiError(409, "pull_id", f"pull {pull_id} already finished ({row.status}); "
                           "nothing written")
        return row

    def tell(self, pull_id: int, *, status: str, score: float | None, seconds: float,
             error: str | None = None, token: str | None = None) -> dict:
        """Record a pull's result (the first result of a pull wins; a late one still counts).

        Returns
        -------
        dict
            ``recorded`` and ``late`` (the lease had expired or was another's).
        """
        start = time.perf_counter()
        try:
            return self._tell(pull_id, status, score, seconds, error, token)
        finally:
            self.busy += time.perf_counter() - start

    def _tell(self, pull_id, status, score, seconds, error, token) -> dict:
        self.expire()
        row = self._row(pull_id)
        if token is None:
            raise ApiError(400, "lease", "required: the lease the pull was handed out with")
        if not self.leases.was_issued(token, pull_id):
            raise ApiError(403, "lease", f"lease {token[:20]!r} was never issued for pull "
                           f"{pull_id}; nothing written")
        lease = self.leases.get(token)
        late = lease is None or lease.pull_id != pull_id or row.worker != lease.worker
        store = self.store()
        info = None
        if self.batch is not None and pull_id in self.batch.repeats:
            info = {"repeat": self.batch.repeats[pull_id]}
        with store.transaction():
            if row.status == "pending":  # its lease expired and no one took it yet: the
                store.claim([row.id], LEASE_PREFIX + token, attempt=False)  # same attempt
            store.finish(row.id, status=status, score=score,
                         reward=None if score is None else self.sign * score,
                         cost=float(seconds), error=error, info=info)
        self.leases.drop_pull(pull_id)
        self.n_told += 1
        self.n_late += int(late)
        return {"recorded": True, "late": late}

    def heartbeat(self, pull_id: int, token: str) -> float:
        """Extend the lease ``token`` on ``pull_id``; return the new deadline."""
        self.expire()
        row = self._row(pull_id)
        lease = self.leases.get(token)
        if lease is None or lease.pull_id != pull_id or row.worker != lease.worker:
            raise ApiError(409, "lease", f"lease {token[:20]!r} on pull {pull_id} expired or "
                           "is not this pull's (the pull was re-issued); a tell is still "
                           "recorded if it comes first")
        return self.leases.extend(lease)

    def expire(self) -> int:
        """Put the pulls of expired leases back to pending; return how many."""
        gone = self.leases.expired()
        if not gone:
            return 0
        store = self.store()
        for lease in gone:
            self.leases.drop(lease)
            store.release_worker(lease.worker)
        self.leases.n_expired += len(gone)
        return len(gone)

    # -- what readers see -------------------------------------------------------------
    def server_view(self) -> dict:
        """The server's side of the study: engine state, leases, tells."""
        return {"name": self.name, "path": str(self.path), "state": self.state,
                "reason": self.reason, "error": self.error, "leases": len(self.leases),
                "expired_leases": self.leases.n_expired, "tells": self.n_told,
                "late_tells": self.n_late,
                "ms_per_tell": 1000 * self.busy / self.n_told if self.n_told else None,
                "batch": None if self.batch is None else self.batch.number,
                "limits": self.limits or None, "lease_seconds": self.leases.seconds,
                "checked": time.time()}
