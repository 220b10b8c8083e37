"""What an evaluation returns: one :class:`Outcome` per pull, :class:`Outcomes` per batch."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["STATUSES", "Outcome", "Outcomes"]

STATUSES = ("done", "failed", "timed-out")


@dataclass
class Outcome:
    """The result of one pull."""

    reward: float
    cost: float
    status: str = "done"
    error: str | None = None


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
        )

    @property
    def n_failed(self) -> int:
        return sum(s != "done" for s in self.status)
