"""Every result of a search, in the order it came, per (fidelity, candidate).

A search with waves answers a carried candidate's pulls from here
(:class:`~mftune.engine.waves.Waves`): the ``s``-th pull of a candidate at a
fidelity is its ``s``-th result there, whichever wave (or the calibration)
ran it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ResultsLog"]


class ResultsLog:
    """The rewards of every pull, kept in arrival order.

    Attributes
    ----------
    arms, fidelities : ndarray of int
        Candidate and fidelity of each result.
    rewards : ndarray of float
    """

    def __init__(self):
        self.arms = np.empty(0, dtype=np.int64)
        self.fidelities = np.empty(0, dtype=np.int64)
        self.rewards = np.empty(0)

    def __len__(self) -> int:
        return int(self.rewards.size)

    def add(self, arms, fidelities, rewards) -> None:
        """Append results (one per pull, in the order they came).

        Parameters
        ----------
        arms, fidelities : array-like of int
        rewards : array-like of float
        """
        self.arms = np.r_[self.arms, np.asarray(arms, dtype=np.int64).reshape(-1)]
        self.fidelities = np.r_[self.fidelities,
                                np.asarray(fidelities, dtype=np.int64).reshape(-1)]
        self.rewards = np.r_[self.rewards, np.asarray(rewards, dtype=float).reshape(-1)]

    def nth(self, arms, fidelities, index) -> np.ndarray:
        """The ``index``-th result (0-based) of each (candidate, fidelity) pair.

        Parameters
        ----------
        arms, fidelities, index : array-like of int
            One entry per result wanted; ``index`` must be below the pair's count.

        Returns
        -------
        ndarray of float
        """
        arms = np.asarray(arms, dtype=np.int64).reshape(-1)
        fidelities = np.asarray(fidelities, dtype=np.int64).reshape(-1)
        index = np.asarray(index, dtype=np.int64).reshape(-1)
        if not arms.size:
            return np.empty(0)
        if not len(self):
            raise IndexError("nth() asked for a result the log does not hold")
        width = int(max(arms.max(), self.arms.max(initial=0))) + 1
        keys = self.fidelities * width + self.arms
        order = np.argsort(keys, kind="stable")  # arrival order within each pair
        wanted = fidelities * width + arms
        pos = np.searchsorted(keys[order], wanted) + index
        if np.any(index < 0) or np.any(pos >= keys.size) or np.any(keys[order[
                np.minimum(pos, keys.size - 1)]] != wanted):
            raise IndexError("nth() asked for a result the log does not hold")
        return self.rewards[order[pos]]
