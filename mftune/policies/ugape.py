"""UGapE: unified gap-based exploration for (ε, m)-best-arm identification.

Gabillon, Ghavamzadeh & Lazaric, "Best Arm Identification: A Unified
Approach to Fixed Budget and Fixed Confidence", NIPS 2012 [paper]. Single
fidelity: every pull is at the top fidelity, so UGapE serves as the
single-fidelity best-arm-identification baseline next to the multi-fidelity
policies. Rewards lie in ``[0, b]``. After one pull of every arm, each step::

    U_k = µ̂_k + β_k,  L_k = µ̂_k − β_k
    B_k = (m-th largest U_i over i ≠ k) − L_k
    J   = the m arms with the smallest B_k;  B_J = max_{k∈J} B_k
    u   = argmax_{j∉J} U_j,  l = argmin_{i∈J} L_i        (ties: larger β)
    pull argmax_{k∈{l,u}} β_k

* **UGapEc** (fixed confidence): ``β_k = b sqrt(c log(4K(t−1)³/δ) / T_k)``,
  ``c = 1/2``; stops as soon as ``B_J < ε`` and returns ``J``, which is
  ε-optimal (every arm of ``J`` within ε of the m-th best) with probability
  at least ``1 − δ``.
* **UGapEb** (fixed budget ``n`` pulls): ``β_k = b sqrt(a / T_k)``; returns
  the ``J`` with the smallest ``B_J`` seen over the run. The paper's choice
  ``a = (n − K) / (4 H_ε)`` needs the complexity ``H_ε`` (:func:`ugape_complexity`).

The experiments of the paper's technical report were not available; these
classes are unit-tested against the guarantees (docs/algorithms.md).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_costs, check_delta, check_positive
from ..radii import ugape_radius
from .base import Policy, Pulls

__all__ = ["UGapEb", "UGapEc", "ugape_complexity"]


def ugape_complexity(mu, epsilon: float, n_best: int = 1, value_range: float = 1.0) -> float:
    """``H_ε = Σ_i b² / max((Δ_i + ε)/2, ε)²`` of Gabillon et al. (2012).

    ``Δ_i = µ_i − µ_(m+1)`` for the m best arms and ``µ_(m) − µ_i`` for the others.
    """
    mu = np.asarray(mu, dtype=float)
    srt = np.sort(mu)[::-1]
    top = mu >= srt[n_best - 1]
    gap = np.where(top, mu - srt[n_best], srt[n_best - 1] - mu)
    return float(np.sum(value_range**2 / np.maximum((gap + epsilon) / 2.0, epsilon) ** 2))


class _UGapE(Policy):
    """Shared arm selection of UGapEb and UGapEc."""

    def __init__(self, n_arms, epsilon, n_best, value_range, costs, random_state):
        costs = np.ones(1) if costs is None else check_costs(costs)
        super().__init__(n_arms, costs.size, random_state)
        self.costs = costs
        self.epsilon = check_positive(epsilon, "epsilon", strict=False)
        if int(n_best) != n_best or not 1 <= n_best < n_arms:
            raise ValueError(f"n_best must be an integer in [1, n_arms - 1]; got {n_best!r}")
        self.n_best = int(n_best)
        self.value_range = check_positive(value_range, "value_range")
        self.reward_range = (0.0, self.value_range)  # the radii's [0, b]: tell refuses others
        self._top = self.n_fidelities - 1

    # -- index computations ---------------------------------------------------------
    def _beta(self) -> np.ndarray:
        raise NotImplementedError

    @property
    def t_(self) -> int:
        """Current round ``t`` (pulls so far + 1)."""
        return int(self.stats.counts[self._top].sum()) + 1

    def gap_indices(self):
        """``(B, J, B_J, U, L, β)`` for the current round (cached until the next tell)."""
        key = int(self.stats.counts[self._top].sum())
        cache = self.__dict__.get("_gap_cache")
        if cache is not None and cache[0] == key:
            return cache[1]
        out = self._gap_indices()
        self._gap_cache = (key, out)
        return out

    def _gap_indices(self):
        n = self.stats.counts[self._top]
        mean = self.stats.sums[self._top] / np.maximum(n, 1)
        beta = self._beta()
        U, L = mean + beta, mean - beta
        order = np.argsort(-U, kind="stable")
        rank = np.empty(self.n_arms, dtype=np.int64)
        rank[order] = np.arange(self.n_arms)
        m = self.n_best
        mth_other = np.where(rank < m, U[order[m]], U[order[m - 1]])
        B = mth_other - L
        J = np.sort(np.argsort(B, kind="stable")[:m])
        return B, J, float(B[J].max()), U, L, beta

    def _select(self) -> int:
        _, J, _, U, L, beta = self.gap_indices()
        outside = np.setdiff1d(np.arange(self.n_arms), J)
        # ties -> larger β: sort by (value, β) lexicographically
        u = outside[np.lexsort((-beta[outside], -U[outside]))[0]]
        l_ = J[np.lexsort((-beta[J], L[J]))[0]]
        return int(l_ if beta[l_] >= beta[u] else u)

    # -- protocol -------------------------------------------------------------
    def nominal_costs(self) -> np.ndarray:
        return self.costs

    def _next_pulls(self, n: int) -> Pulls:
        if self.n_pending:
            return Pulls.empty()
        counts = self.stats.counts[self._top]
        if np.any(counts == 0):  # initialisation: pull every arm once
            arms = np.flatnonzero(counts == 0)
            return Pulls(arms, np.full(arms.size, self._top))
        return Pulls([self._select()], [self._top])

    def recommend_set(self) -> np.ndarray:
        """The returned set of ``n_best`` arms."""
        raise NotImplementedError

    def recommend(self) -> int:
        """The best-looking arm of :meth:`recommend_set` (the answer when ``n_best = 1``)."""
        J = self.recommend_set()
        n = self.stats.counts[self._top, J]
        mean = self.stats.sums[self._top, J] / np.maximum(n, 1)
        return int(J[np.argmax(mean)])


class UGapEc(_UGapE):
    """UGapEc: fixed-confidence (ε, m)-best-arm identification (Gabillon et al. 2012).

    Parameters
    ----------
    n_arms : int
    epsilon : float, default=0.0
        Accuracy ε >= 0 (ε = 0 asks for the exact m best arms; needs distinct means).
    delta : float, default=0.05
        Error probability δ in (0, 1).
    n_best : int, default=1
        Number ``m`` of arms to return.
    c : float, default=0.5
        Exploration constant of the radius (``1/2`` is the paper's choice).
    value_range : float, default=1.0
        ``b``: rewards lie in ``[0, b]`` (:meth:`tell` refuses others).
    costs : array-like of shape (M,), optional
        Fidelity costs; UGapE pulls the last (top) fidelity only.
    random_state : None
        Unused (deterministic rule).
    """

    def __init__(self, n_arms, epsilon=0.0, delta=0.05, n_best=1, c=0.5, value_range=1.0,
                 costs=None, random_state=None):
        super().__init__(n_arms, epsilon, n_best, value_range, costs, random_state)
        self.delta = check_delta(delta)
        self.c = check_positive(c, "c")

    def _beta(self):
        return ugape_radius(self.stats.counts[self._top], self.t_, delta=self.delta, c=self.c,
                            n_arms=self.n_arms, value_range=self.value_range)

    @property
    def done(self) -> bool:
        if np.any(self.stats.counts[self._top] == 0):
            return False
        return self.gap_indices()[2] < self.epsilon

    def recommend_set(self) -> np.ndarray:
        """``J(t)``: the m arms with the smallest gap index."""
        if np.any(self.stats.counts[self._top] == 0):
            return np.arange(self.n_best)
        return self.gap_indices()[1]

    def _after_tell(self, pulls, rewards, costs) -> None:
        self.n_rounds += 1


class UGapEb(_UGapE):
    """UGapEb: fixed-budget (ε, m)-best-arm identification (Gabillon et al. 2012).

    Parameters
    ----------
    n_arms : int
    budget : int
        Number of pulls ``n`` (>= K).
    a : float, optional
        Exploration parameter; default ``(n − K) / (4 H_ε)`` from ``H`` if given,
        otherwise ``a`` must be passed.
    epsilon : float, default=0.0
    n_best : int, default=1
    complexity : float, optional
        ``H_ε`` (see :func:`ugape_complexity`) used for the default ``a``.
    value_range : float, default=1.0
        ``b``: rewards lie in ``[0, b]`` (:meth:`tell` refuses others).
    costs : array-like of shape (M,), optional
    random_state : None
    """

    def __init__(self, n_arms, budget, a=None, epsilon=0.0, n_best=1, complexity=None,
                 value_range=1.0, costs=None, random_state=None):
        super().__init__(n_arms, epsilon, n_best, value_range, costs, random_state)
        if int(budget) != budget or budget < n_arms:
            raise ValueError(f"budget must be an integer >= n_arms ({n_arms}); got {budget!r}")
        self.budget = int(budget)
        if a is None:
            if complexity is None:
                raise ValueError("give the exploration parameter a, or the complexity H_eps "
                                 "for the paper's a = (n - K) / (4 H_eps)")
            a = max((self.budget - n_arms) / (4.0 * check_positive(complexity, "complexity")),
                    1e-12)
        self.a = check_positive(a, "a")
        self.best_set_ = np.arange(self.n_best)
        self.best_index_ = np.inf

    def _beta(self):
        return ugape_radius(self.stats.counts[self._top], self.t_, budget_a=self.a,
                            value_range=self.value_range)

    @property
    def done(self) -> bool:
        return int(self.stats.counts[self._top].sum()) >= self.budget

    def _next_pulls(self, n: int) -> Pulls:
        pulls = super()._next_pulls(n)
        room = self.budget - int(self.stats.counts[self._top].sum()) - self.n_pending
        return pulls[: max(room, 0)]

    def recommend_set(self) -> np.ndarray:
        """The ``J(t)`` with the smallest ``B_J(t)`` over the run so far."""
        return self.best_set_

    def _after_tell(self, pulls, rewards, costs) -> None:
        self.n_rounds += 1
        if self.n_pending or np.any(self.stats.counts[self._top] == 0):
            return
        _, J, bj, *_ = self.gap_indices()
        if bj < self.best_index_:
            self.best_index_, self.best_set_ = bj, J
