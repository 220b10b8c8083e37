"""What an evaluation returns: one :class:`Outcome` per pull, :class:`Outcomes` per batch."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["STATUSES", "Outcome", "Outcomes", "PullRecord", "stand_in_rewards"]

STATUSES = ("done", "failed", "timed-out")


@dataclass
class Outcome:
    """The result of one pull (``info``: the evaluator's JSON-able details, as in
    :attr:`Outcomes.info`)."""

    reward: float
    cost: float
    status: str = "done"
    error: str | None = None
    info: dict | None = None


@dataclass
class Outcomes:
    """Results of a batch, parallel to its pulls.

    ``info`` optionally holds, per pull, a JSON-able dict of the evaluator's
    details (the study store keeps it so a resumed run can rebuild its records).
    """

    rewards: np.ndarray
    costs: np.ndarray
    status: list[str] = field(default_factory=list)
    errors: list[str | None] = field(default_factory=list)
    info: list[dict | None] = field(default_factory=list)

    def __post_init__(self):
        self.rewards = np.asarray(self.rewards, dtype=float).reshape(-1)
        self.costs = np.asarray(self.costs, dtype=float).reshape(-1)
        n = self.rewards.size
        if self.costs.size != n:
            raise ValueError(f"costs must have one entry per reward ({n}); got {self.costs.size}")
        if not self.status:
            self.status = ["done"] * n
        if not self.errors:
            self.errors = [None] * n
        if not self.info:
            self.info = [None] * n

    @classmethod
    def from_list(cls, outcomes: Iterable[Outcome]) -> Outcomes:
        outcomes = list(outcomes)
        return cls(
            [o.reward for o in outcomes],
            [o.cost for o in outcomes],
            [o.status for o in outcomes],
            [o.error for o in outcomes],
            [o.info for o in outcomes],
        )

    @property
    def n_failed(self) -> int:
        return sum(s != "done" for s in self.status)


@dataclass
class PullRecord:
    """Everything measured in one pull (one row of ``MFTuner.pulls_``)."""

    arm: int
    fidelity: int
    split: int
    scores: dict
    fit_time: float
    score_time: float
    status: str = "done"
    error: str | None = None
    phase: str = "search"
    started: float = 0.0
    n_train: int = 0
    n_valid: int = 0
    extra: dict = field(default_factory=dict)
    worker: str = ""
    continued_from: int = -1
    reused: float = 0.0
    cache_time: float = 0.0

    @property
    def cost(self) -> float:
        return self.fit_time + self.score_time + self.cache_time


def stand_in_rewards(rewards, worst: float = np.inf) -> tuple[np.ndarray, float]:
    """The failed-pull rule of every search: a failed pull is told the lowest reward seen.

    Parameters
    ----------
    rewards : array-like
        Rewards of a batch in batch order, ``nan`` for failed pulls (a pull
        with a numeric ``error_score`` has that score as its reward).
    worst : float
        The lowest finite reward of the earlier batches (``inf`` before any).

    Returns
    -------
    rewards : ndarray
        Finite rewards: failed pulls get the lowest finite reward seen so far,
        this batch included (0 before any succeeded), so a failing candidate
        is never preferred.
    worst : float
        The updated lowest reward.
    """
    rewards = np.asarray(rewards, dtype=float)
    ok = np.isfinite(rewards)
    if ok.any():
        worst = min(worst, float(rewards[ok].min()))
    return np.where(ok, rewards, worst if np.isfinite(worst) else 0.0), worst
