"""Record a study through the driver, resume it, and share it between worker processes."""

from __future__ import annotations

import time

import numpy as np

from ..policies.base import Policy, Pulls
from .outcomes import Outcome, Outcomes
from .replay import ReplayState, StudyMismatchError, batch_rewards, replay
from .store import PullRow, StudyStore
from .workers import _LIVE_TOKENS, new_worker_id

__all__ = ["AllPullsFailed", "RecordingEvaluator", "StudyBusyError"]


class StudyBusyError(RuntimeError):
    """Another live process holds pulls of the study this recorder wants to run."""


class AllPullsFailed(ValueError):
    """The first runs of a study all failed: it stops at once with their cause."""


class RecordingEvaluator:
    """Wrap an evaluator so every batch the driver runs is written to a study.

    Rows are inserted as ``running`` before the inner evaluator starts and
    finished (in one transaction per batch) after it returns, so
    ``driver.run(policy, RecordingEvaluator(store, evaluator))`` records an
    in-process study (the tuner's path). The calibration, one long batch
    before any decision, is finished pull by pull instead: each row as soon
    as the inner evaluator reports its pull (``Evaluator.on_result``, with
    the pull's ``info``), so Ctrl+C or a crash during it keeps the pulls that
    finished and a resume runs only the others.

    Resuming: a batch that is already stored is *not* run again. When the
    driver (with a fresh policy, same seed) asks batch ``b`` and the study
    holds rows for it, the asked pulls must match them (else
    :class:`~mftune.study.replay.StudyMismatchError`); finished rows give their
    stored outcomes, unfinished ones are claimed and run, and positions the
    study lacks (a batch trimmed by a pull cap) are inserted and run. So
    ``driver.run`` on a stored study replays it exactly — callbacks included —
    and evaluates only what had not finished. An inner evaluator with
    ``accepts_known = True`` receives the stored results
    (``evaluate(pulls, known={pos: info})``) so it can rebuild its own state;
    any other evaluator runs only the missing pulls. :meth:`resume` does the
    same for a policy replayed outside the driver.

    Parameters
    ----------
    store : StudyStore
    evaluator : Evaluator-like
        Returns finite rewards (higher is better) with a status per pull.
    sign : float, default=1.0
        ``score = sign * reward`` is stored as the user-facing score
        (``-1`` for minimised objectives).
    first_batch : int, default=0
        Index of the first policy batch (1 when batch 0 is a calibration).
    shared : bool, default=False
        Share the study with other worker processes (script studies): every
        worker asks the same batch (same seed, same stored results), the
        batch's rows are inserted once, and each worker claims up to
        ``slots`` pending rows at a time, runs them through
        ``evaluator.run_rows`` (joblib; each row is finished as its run ends,
        so Ctrl+C keeps those that ended), and waits for the rows other
        workers run. Once every row of the batch has finished, the evaluator
        is handed the whole batch as ``known`` results, so each worker tells
        its policy the same rewards.
    slots : int, default=1
        Pulls a worker claims and runs at once; 0 (with ``shared``): schedule
        only — this recorder inserts each batch and waits for others to run
        it (the tuning server, :mod:`mftune.service`).
    poll : float, default=0.1
        Seconds between looks at the rows other workers run.
    on_batch : callable, optional
        ``on_batch(kind, rows, repeats)`` is called (``shared`` only) once a
        batch's rows are stored, with each position's repeat index (what
        ``MFTUNE_SEED`` derives from), before any of them is waited for.
    """

    def __init__(self, store: StudyStore, evaluator, sign: float = 1.0, first_batch: int = 0,
                 *, shared: bool = False, slots: int = 1, poll: float = 0.1,
                 on_batch=None):
        self.store, self.evaluator, self.sign = store, evaluator, float(sign)
        self.worker = new_worker_id()
        self.next_batch = int(first_batch)
        self.n_evaluated = 0
        self.n_replayed = 0
        self._released = False
        self._worst: dict = {}
        self.shared, self.poll, self.on_batch = bool(shared), float(poll), on_batch
        self.slots = max(int(slots), 0 if shared else 1)
        store.register_worker(self.worker)

    @property
    def last_batch(self) -> int:
        """Index of the last policy batch this recorder completed."""
        return self.next_batch - 1

    # -- the driver's evaluator protocol -----------------------------------------
    def evaluate(self, pulls: Pulls, kind: str = "policy") -> Outcomes:
        """Record (or replay), evaluate and finish one batch.

        ``kind="calibration"`` stores the batch as the study's calibration
        (batch 0); policy batches are numbered from ``first_batch``.
        """
        batch = 0 if kind == "calibration" else self.next_batch
        if self.shared:
            out = self._shared(batch, pulls, kind)
            if kind == "policy":
                self.next_batch += 1
            return out
        stored = self.store.rows(batch=batch, kind=kind)
        if stored:
            out = self._complete(batch, pulls, stored, kind)
        else:
            ids = self.store.insert_batch(batch, pulls, kind=kind, status="running",
                                          worker=self.worker)
            run = list(enumerate(ids))
            out = self._inner(pulls, kind, run)
            self._finish_all(out, run)
            self.n_evaluated += len(pulls)
        if kind == "policy":
            self.next_batch += 1
        return out

    def _shared(self, batch: int, pulls: Pulls, kind: str) -> Outcomes:
        """Run this worker's share of a batch and wait for the rest (see ``shared``)."""
        store = self.store
        stored = store.rows(batch=batch, kind=kind)
        if len(stored) < len(pulls):
            store.insert_batch(batch, pulls[len(stored):], kind=kind, first_pos=len(stored),
                               if_absent=True)
        rows = self._matching(batch, pulls, kind)
        if not self._released:
            store.release_stale()  # pulls left running by a worker that died
            self._released = True
        repeats = self.evaluator.assign(pulls)
        if self.on_batch is not None:
            self.on_batch(kind, rows, repeats)
        last_release = time.monotonic()
        ever_ok = any(r.status == "done" for r in store.rows())
        failed: list[str] = []
        try:
            while True:
                rows = store.rows(batch=batch, kind=kind)[:len(pulls)]
                pending = [r for r in rows if r.status == "pending"][:self.slots]
                claimed = set(store.claim([r.id for r in pending], self.worker))
                mine = [r for r in pending if r.id in claimed]
                if mine:
                    results = []
                    for row, res in zip(mine, self.evaluator.run_rows(
                            [(r.arm, r.fidelity, r.id, r.attempts + 1, r.pos) for r in mine],
                            repeats), strict=True):  # each run kept as it ends (Ctrl+C)
                        store.finish(
                            row.id, status=res.status, score=res.score,
                            reward=None if res.score is None else self.sign * res.score,
                            cost=res.cost, error=res.error, worker=self.worker,
                            info={"repeat": int(repeats[row.pos])})
                        results.append(res)
                    self.n_evaluated += len(mine)
                    ever_ok = ever_ok or any(res.status == "done" for res in results)
                    failed += [(row.arm, res.error or res.status)
                               for row, res in zip(mine, results, strict=True)
                               if res.status != "done"]
                    arms = {a for a, _ in failed}
                    if (not ever_ok and len(failed) >= min(len(pulls), max(2, self.slots))
                            and len(arms) >= min(2, len(set(pulls.arms.tolist())))):
                        # nothing has ever worked, on two candidates (one may just fail):
                        # stop now and say why, not after the batch
                        raise AllPullsFailed(f"the first {len(failed)} runs all failed; the "
                                             f"first error: {failed[0][1]}")
                    continue
                if all(r.finished for r in rows):
                    break
                time.sleep(self.poll)  # the batch's other pulls run in other workers
                if time.monotonic() - last_release > 1.0:
                    store.release_stale()
                    last_release = time.monotonic()
        except BaseException:
            kill = getattr(self.evaluator, "kill_all", None)
            if kill is not None:
                kill()
            raise
        known = {r.pos: {"score": r.score, "cost": r.cost, "status": r.status,
                         "error": r.error} for r in rows}
        self.n_replayed += sum(1 for r in rows if r.worker != self.worker)
        return self.evaluator.evaluate(pulls, known=known, repeats=repeats)

    def _matching(self, batch: int, pulls: Pulls, kind: str) -> list[PullRow]:
        """The stored rows of a batch, checked against the pulls this run asks."""
        stored = self.store.rows(batch=batch, kind=kind)[:len(pulls)]
        if ([r.pos for r in stored] != list(range(len(pulls)))
                or [r.arm for r in stored] != pulls.arms.tolist()
                or [r.fidelity for r in stored] != pulls.fidelities.tolist()):
            raise StudyMismatchError(
                f"{kind} batch {batch}: this run asks {list(pulls)[:8]}... but the study stored "
                f"{[(r.arm, r.fidelity) for r in stored][:8]}...; it was written with another "
                "algorithm, seed, settings or mftune version")
        return stored

    def _complete(self, batch: int, pulls: Pulls, stored: list[PullRow], kind: str) -> Outcomes:
        """A batch the study already holds (part of it, or all): run only what is missing."""
        n = min(len(stored), len(pulls))
        if ([r.pos for r in stored[:n]] != list(range(n))
                or [r.arm for r in stored[:n]] != pulls.arms[:n].tolist()
                or [r.fidelity for r in stored[:n]] != pulls.fidelities[:n].tolist()):
            raise StudyMismatchError(
                f"{kind} batch {batch}: this run asks {list(pulls)[:8]}... but the study stored "
                f"{[(r.arm, r.fidelity) for r in stored][:8]}...; it was written with another "
                "algorithm, seed, settings or mftune version")
        if not self._released:
            self.store.release_stale()  # pulls left running by a worker that died
            self._released = True
            stored = self.store.rows(batch=batch, kind=kind)
        known = {r.pos: r for r in stored[:n] if r.finished}
        todo = [r for r in stored[:n] if not r.finished]
        ids = self.store.claim([r.id for r in todo], self.worker)
        if len(ids) != len(todo):
            raise StudyBusyError("another live process is running pulls of this study")
        run = [(r.pos, r.id) for r in todo]
        if n < len(pulls):
            new = self.store.insert_batch(batch, pulls[n:], kind=kind, first_pos=n,
                                          status="running", worker=self.worker)
            run += list(zip(range(n, len(pulls)), new, strict=True))
        if getattr(self.evaluator, "accepts_known", False):
            out = self._inner(pulls, kind, run, **({"known": {
                p: {**(r.info or {}), "status": r.status, "error": r.error}
                for p, r in known.items()}} if known else {}))
        else:
            out = self._merge(pulls, known, run, kind)
        self._finish_all(out, run)
        self.n_evaluated += len(run)
        self.n_replayed += len(known)
        return out

    def _merge(self, pulls: Pulls, known: dict[int, PullRow], run: list[tuple[int, int]],
               kind: str) -> Outcomes:
        """Stored outcomes for ``known`` positions, the inner evaluator's for the positions
        of ``run`` (``(position, row id)``)."""
        rows = [known[p] for p in sorted(known)]
        stored = dict(zip(sorted(known), batch_rewards(rows, self._worst, None), strict=True))
        todo = [p for p, _ in run]
        fresh = (self._inner(pulls[np.array(todo, dtype=np.int64)], kind,
                             [(i, row_id) for i, (_, row_id) in enumerate(run)])
                 if todo else None)
        at = {p: i for i, p in enumerate(todo)}
        rewards, costs, status, errors, info = [], [], [], [], []
        for p in range(len(pulls)):
            if p in known:
                r = known[p]
                vals = (stored[p], r.cost or 0.0, r.status, r.error, r.info)
            else:
                i = at[p]
                vals = (fresh.rewards[i], fresh.costs[i], fresh.status[i], fresh.errors[i],
                        fresh.info[i])
            for col, v in zip((rewards, costs, status, errors, info), vals, strict=True):
                col.append(v)
        return Outcomes(rewards, costs, status, errors, info)

    def _inner(self, pulls: Pulls, kind: str, run: list[tuple[int, int]], **known) -> Outcomes:
        """``evaluator.evaluate(pulls, **known)``; in the calibration, each row of ``run``
        (``(position in pulls, row id)``) is finished as soon as its pull is reported."""
        ev = self.evaluator
        if kind != "calibration" or not hasattr(ev, "on_result"):
            return ev.evaluate(pulls, **known)
        rows, after = dict(run), ev.on_result

        def on_result(pos: int, arm: int, fidelity: int, outcome: Outcome) -> None:
            if pos in rows:
                self._finish(rows[pos], outcome)
            if after is not None:  # the search's answer at once
                after(pos, arm, fidelity, outcome)

        ev.on_result = on_result
        try:
            return ev.evaluate(pulls, **known)
        finally:
            ev.on_result = after

    def _finish(self, row_id: int, outcome: Outcome) -> None:
        """Finish one row (a no-op for a row already finished, e.g. as it was reported).

        A failed pull reported on its own keeps its raw reward (``null`` for a
        ``nan`` error score): the stand-in the policy is told depends on the
        whole batch and is derived again from the stored rows.
        """
        reward = float(outcome.reward)
        self.store.finish(
            row_id, status=outcome.status, reward=reward, cost=float(outcome.cost),
            score=self.sign * reward if outcome.status == "done" else None,
            error=outcome.error, worker=self.worker, info=outcome.info)

    def _finish_all(self, out: Outcomes, run: list[tuple[int, int]]) -> None:
        """Finish the rows ``(position, row id)`` of a batch in one transaction."""
        with self.store.transaction():
            for pos, row_id in run:
                self._finish(row_id, Outcome(out.rewards[pos], out.costs[pos], out.status[pos],
                                             out.errors[pos], out.info[pos]))

    # -- replay outside the driver -----------------------------------------------
    def resume(self, policy: Policy) -> ReplayState:
        """Replay the stored study into ``policy`` and complete its current batch."""
        self.store.release_stale()
        self._released = True
        state = replay(policy, self.store.rows(kind="policy"), first_batch=self.next_batch)
        self.next_batch = state.batch
        if state.pulls is not None:
            out = self.evaluate(state.pulls)
            policy.tell(state.pulls, out.rewards, out.costs)
            state = ReplayState(self.next_batch, None, [])
        return state

    # -- stopping ---------------------------------------------------------------
    def release(self) -> int:
        """Put this recorder's running pulls back to ``pending`` (after Ctrl+C or an error)."""
        return self.store.release_worker(self.worker)

    def close(self) -> None:
        """Release running pulls, retire the worker id and close the study file."""
        try:
            self.release()
        finally:
            _LIVE_TOKENS.discard(self.worker)
            self.store.close()
