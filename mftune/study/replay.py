"""Exact replay: rebuild a policy from a study's stored pulls.

Policies are replayable (same seed and same tells ⇒ same asks). A study is a
sequence of batches, each being what one ``policy.ask()`` returned;
:func:`replay` rebuilds a policy by asking, checking the batch against the
stored rows, and telling it once *all* its rows have finished. The first
batch that is not complete is left outstanding in the policy and returned,
with its rows, so the caller runs the missing pulls. A batch is told as a
whole, in ``pos`` order, both in the original run and in every replay, so a
resumed study makes exactly the decisions of an uninterrupted one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..policies.base import Policy, Pulls
from .outcomes import stand_in_rewards

if TYPE_CHECKING:
    from .store import PullRow

__all__ = ["ReplayState", "StudyMismatchError", "batch_rewards", "replay"]


class StudyMismatchError(RuntimeError):
    """The stored pulls do not match what the policy asks (different policy, seed or code)."""


@dataclass
class ReplayState:
    """Where a replay stopped.

    Attributes
    ----------
    batch : int
        Index of the first batch not yet told to the policy.
    pulls : Pulls or None
        That batch as the policy asked it (outstanding in the policy), or
        ``None`` when no row of it is stored yet (ask the policy for it).
    rows : list of PullRow
        Stored rows of that batch, by position (a prefix of ``pulls``).
    """

    batch: int
    pulls: Pulls | None
    rows: list[PullRow]

    @property
    def missing(self) -> Pulls | None:
        """Pulls of the batch with no stored row yet (a batch trimmed by a budget)."""
        if self.pulls is None:
            return None
        return self.pulls[len(self.rows):]


def batch_rewards(rows: Sequence[PullRow], worst: dict, error_reward: float | None) -> np.ndarray:
    """Rewards to tell for a complete batch of rows, by the one failed-pull rule.

    Finished pulls tell their stored reward. A failed pull without a stored
    reward tells ``error_reward`` if given, else the lowest reward seen so far
    (:func:`~mftune.study.outcomes.stand_in_rewards`) -- computed from stored
    rows only, so every replay tells the same values. ``worst`` (a dict
    carried from batch to batch) is updated in place.
    """
    rewards = np.array([np.nan if r.reward is None else r.reward for r in rows], dtype=float)
    if error_reward is not None:
        rewards = np.where(np.isnan(rewards), error_reward, rewards)
    out, worst["reward"] = stand_in_rewards(rewards, worst.get("reward", np.inf))
    return out


def replay(policy: Policy, rows: Sequence[PullRow], *, first_batch: int = 0,
           error_reward: float | None = None, worst: dict | None = None) -> ReplayState:
    """Tell a fresh policy the complete stored batches, in order.

    Parameters
    ----------
    policy : Policy
        A policy in the state it had before batch ``first_batch`` (a fresh
        one, with the study's seed and settings, for ``first_batch = 0``).
    rows : sequence of PullRow
        The study's rows of kind ``policy`` with ``batch >= first_batch``.
    first_batch : int, default=0
    error_reward : float, optional
        Reward told for failed pulls (else the worst seen; see :func:`batch_rewards`).
    worst : dict, optional
        Running worst reward per fidelity, updated in place (pass the same
        dict to successive calls that continue one replay).

    Returns
    -------
    ReplayState
        The first incomplete (or not yet stored) batch.

    Raises
    ------
    StudyMismatchError
        The policy asks something else than what is stored.
    """
    worst = {} if worst is None else worst
    by_batch: dict[int, list[PullRow]] = {}
    for r in rows:
        by_batch.setdefault(r.batch, []).append(r)
    b = first_batch
    while not policy.done:
        stored = by_batch.get(b)
        if not stored:
            return ReplayState(b, None, [])
        pulls = policy.ask()
        n = len(stored)
        if (len(pulls) < n or [r.pos for r in stored] != list(range(n))
                or not np.array_equal(pulls.arms[:n], [r.arm for r in stored])
                or not np.array_equal(pulls.fidelities[:n], [r.fidelity for r in stored])):
            raise StudyMismatchError(
                f"batch {b}: the policy asks {list(pulls)[:8]}... but the study stored "
                f"{[(r.arm, r.fidelity) for r in stored][:8]}...; the study was written with "
                "another algorithm, seed or mftune version")
        if n < len(pulls) or not all(r.finished for r in stored):
            return ReplayState(b, pulls, stored)
        rewards = batch_rewards(stored, worst, error_reward)
        policy.tell(pulls, rewards, [r.cost or 0.0 for r in stored])
        b += 1
    return ReplayState(b, None, [])
