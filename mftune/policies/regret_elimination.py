"""Wang et al.'s elimination algorithm for multi-fidelity regret (Algorithm 3).

Wang, Wu, Chen & Lui, NeurIPS 2023, Section 4.2. Regret is measured as
(Eq. 9) ``R(Λ) = (Λ/λ^(1)) µ^(M)_1 − Σ_{t≤N} µ^(M)_{I_t}``: every play earns
the arm's true mean whatever its fidelity, so the ideal is to play the best
arm at the cheapest fidelity. The algorithm explores at the top fidelity in
phases ``p = 0, 1, ...`` and then exploits the survivors at fidelity 1::

    C_0 = all arms
    while p < log2(2/ε) and |C_p| > 1:
        pull every k ∈ C_p at fidelity M until T^(M)_k = ceil(4^p log(Λ / (4^p λ^(M))))
        C_{p+1} = { k ∈ C_p : µ̂_k + 2^{1−p} > max_{k'∈C_p} µ̂_{k'} }
        p = p + 1
    pull the arms of C_p in turn at fidelity 1 until the budget runs out

Garbled parts of the extracted pseudo-code — the margin ``2^{1−p}`` and the
loop bound ``log2(2/ε)`` — are [RECON]structed from the proof of Theorem F.1
(docs/algorithms.md). The default ``ε = (K log Λ / Λ)^{1/3}`` is the
problem-independent choice of Theorem 4.8 [paper]. The run ends before a pull
would exceed ``Λ``.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_costs, check_positive
from .base import Policy, Pulls

__all__ = ["WangElimination"]


class WangElimination(Policy):
    """Elimination for multi-fidelity regret minimisation (Wang et al. 2023, Alg. 3).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K``.
    costs : array-like of shape (M,)
        Strictly increasing costs λ^(m).
    budget : float
        Capital Λ (> 0); the algorithm's phase lengths depend on it.
    epsilon : float, optional
        Accuracy ε in (0, 1]; default ``(K log Λ / Λ)^{1/3}`` (Theorem 4.8).
    max_batch : int, default=65536
        Largest batch returned by :meth:`ask`.
    random_state : None
        Unused (the rule is deterministic); kept for the protocol.

    Attributes
    ----------
    phase_ : int
        Current phase ``p``.
    exploiting_ : bool
        Whether exploration has ended.
    history_arms_, history_fidelities_ : list of int
        Every told pull, in order.
    """

    def __init__(self, n_arms, costs, budget, epsilon=None, max_batch=65536, random_state=None):
        costs = check_costs(costs)
        super().__init__(n_arms, costs.size, random_state)
        self.costs = costs
        self.budget = check_positive(budget, "budget")
        if epsilon is None:
            epsilon = (self.n_arms * np.log(self.budget) / self.budget) ** (1.0 / 3.0)
            epsilon = float(min(max(epsilon, 1e-12), 1.0))
        elif not (isinstance(epsilon, (int, float)) and 0 < epsilon <= 1):
            raise ValueError(f"epsilon must be a real number in (0, 1]; got {epsilon!r}")
        self.epsilon = float(epsilon)
        if int(max_batch) != max_batch or max_batch < 1:
            raise ValueError(f"max_batch must be a positive integer; got {max_batch!r}")
        self.max_batch = int(max_batch)
        self.n_phases_max = float(np.log2(2.0 / self.epsilon))
        self.phase_ = 0
        self.exploiting_ = False
        self._turn = 0  # next position in the exploitation cycle
        self._spent = 0.0
        self.history_arms_: list[int] = []
        self.history_fidelities_: list[int] = []
        self._maybe_start_exploit()

    def phase_target(self, p: int | None = None) -> int:
        """``T_p = ceil(4^p log(Λ / (4^p λ^(M))))`` (at least 0)."""
        p = self.phase_ if p is None else p
        four = 4.0**p
        return max(int(np.ceil(four * np.log(self.budget / (four * self.costs[-1])))), 0)

    def _maybe_start_exploit(self) -> None:
        while not self.exploiting_:
            if not (self.phase_ < self.n_phases_max and self.active.sum() > 1):
                self.exploiting_ = True
                return
            arms = np.flatnonzero(self.active)
            if np.all(self.stats.counts[-1, arms] >= self.phase_target()):
                self._end_phase()
            else:
                return

    def _end_phase(self) -> None:
        arms = np.flatnonzero(self.active)
        n = self.stats.counts[-1, arms]
        means = np.where(n > 0, self.stats.sums[-1, arms] / np.maximum(n, 1), 0.0)
        out = means + 2.0 ** (1 - self.phase_) <= means.max()
        self.n_rounds += 1
        self._eliminate(arms[out], self.n_fidelities - 1)
        self.phase_ += 1

    # -- protocol -------------------------------------------------------------
    @property
    def done(self) -> bool:
        m = 0 if self.exploiting_ else self.n_fidelities - 1
        return self._spent + self.costs[m] > self.budget * (1 + 1e-12)

    def nominal_costs(self) -> np.ndarray:
        return self.costs

    def recommend(self) -> int:
        """The surviving arm with the best top-fidelity mean."""
        arms = np.flatnonzero(self.active)
        n = self.stats.counts[-1, arms]
        means = np.where(n > 0, self.stats.sums[-1, arms] / np.maximum(n, 1), -np.inf)
        return int(arms[np.argmax(means)])

    def _fit(self, m: int, n_wanted: int) -> int:
        """How many pulls at fidelity ``m`` fit in the remaining budget (and the batch cap)."""
        room = int(np.floor((self.budget - self._spent) / self.costs[m] * (1 + 1e-12)))
        return max(0, min(n_wanted, room, self.max_batch))

    def _next_pulls(self, n: int) -> Pulls:
        if self.n_pending:
            return Pulls.empty()
        arms = np.flatnonzero(self.active)
        if self.exploiting_:
            k = self._fit(0, self.max_batch)
            order = arms[(self._turn + np.arange(k)) % arms.size]
            return Pulls(order, np.zeros(k, dtype=np.int64))
        need = self.phase_target() - self.stats.counts[-1, arms]
        rounds = int(need.max())
        # Round-robin: round r pulls every arm that still needs more than r pulls.
        grid = np.arange(rounds)[:, None] < need[None, :]
        order = np.broadcast_to(arms, grid.shape)[grid]
        k = self._fit(self.n_fidelities - 1, order.size)
        return Pulls(order[:k], np.full(k, self.n_fidelities - 1))

    def _after_tell(self, pulls, rewards, costs) -> None:
        self._spent += float(np.sum(costs))
        self.history_arms_.extend(pulls.arms.tolist())
        self.history_fidelities_.extend(pulls.fidelities.tolist())
        if self.exploiting_:
            self._turn += int(np.sum(pulls.fidelities == 0))
        elif not self.n_pending:
            self._maybe_start_exploit()

    def _summary_extra(self) -> dict:
        return {"phase": self.phase_, "exploiting": self.exploiting_, "epsilon": self.epsilon,
                "phase_targets": [self.phase_target(p) for p in range(self.phase_ + 1)]}
