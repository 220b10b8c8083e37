"""Record an in-process study through the driver (the tuner's path)."""

from __future__ import annotations

import numpy as np

from .driver import Outcomes
from .policies.base import Policy, Pulls
from .replay import ReplayState, batch_rewards, replay
from .store import StudyStore, new_worker_id

__all__ = ["RecordingEvaluator"]


class RecordingEvaluator:
    """Wrap an evaluator so every batch the driver runs is written to a study.

    Rows are inserted as ``running`` before the inner evaluator starts and
    finished after it returns, so ``driver.run(policy, RecordingEvaluator(store,
    evaluator))`` records an in-process study (the tuner's path). Call
    :meth:`resume` first on a fresh policy to replay a stored study: it tells
    the finished batches, runs the unfinished pulls of the first incomplete
    batch, and leaves the policy ready for the driver.

    Parameters
    ----------
    store : StudyStore
    evaluator : Evaluator-like
        Returns finite rewards (higher is better) with a status per pull.
    sign : float, default=1.0
        ``score = sign * reward`` is stored as the user-facing score
        (``-1`` for minimised objectives).
    """

    def __init__(self, store: StudyStore, evaluator, sign: float = 1.0):
        self.store, self.evaluator, self.sign = store, evaluator, float(sign)
        self.worker = new_worker_id()
        self.next_batch = 0
        store.register_worker(self.worker)

    def _run(self, pulls: Pulls, ids: list[int]) -> Outcomes:
        out = self.evaluator.evaluate(pulls)
        with self.store.transaction():  # one commit for the whole batch
            self._finish_all(out, ids)
        return out

    def _finish_all(self, out: Outcomes, ids: list[int]) -> None:
        for i, row_id in enumerate(ids):
            reward = float(out.rewards[i])
            self.store.finish(
                row_id, status=out.status[i], reward=reward, cost=float(out.costs[i]),
                score=self.sign * reward if out.status[i] == "done" else None,
                error=out.errors[i], worker=self.worker)

    def evaluate(self, pulls: Pulls) -> Outcomes:
        """Record, evaluate and finish one batch (the driver's evaluator protocol)."""
        ids = self.store.insert_batch(self.next_batch, pulls, status="running",
                                      worker=self.worker)
        self.next_batch += 1
        return self._run(pulls, ids)

    def resume(self, policy: Policy) -> ReplayState:
        """Replay the stored study into ``policy`` and complete its current batch."""
        self.store.release_stale()
        state = replay(policy, self.store.rows(kind="policy"))
        if state.pulls is not None:
            todo = [r for r in state.rows if not r.finished]
            ids = self.store.claim([r.id for r in todo], self.worker)
            if len(ids) != len(todo):
                raise RuntimeError("another live worker holds pulls of this study")
            keep = np.array([r.pos for r in todo], dtype=np.int64)
            if len(todo):
                self._run(state.pulls[keep], ids)
            missing = state.missing
            if len(missing):
                new = self.store.insert_batch(state.batch, missing, first_pos=len(state.rows),
                                              status="running", worker=self.worker)
                self._run(missing, new)
            rows = self.store.rows(min_batch=state.batch, kind="policy")
            done = [r for r in rows if r.batch == state.batch]
            policy.tell(state.pulls, batch_rewards(done, {}, None), [r.cost for r in done])
            state = ReplayState(state.batch + 1, None, [])
        self.next_batch = state.batch
        return state
