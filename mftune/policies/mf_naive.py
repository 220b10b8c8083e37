"""MF-NAIVE, the naive multi-fidelity baseline of Kandasamy et al. (2016), section 6.

"Use GP-UCB to query at the *first* fidelity a large number of times and
then query at the last fidelity at the points queried at f^(1) in decreasing
order of f^(1)-value" [paper]. How many first-fidelity queries is not
stated; here ``n_low`` (default: half the capital at fidelity 1, at most
``max_low``). Should the ranked points run out, GP-UCB continues at the
target fidelity [RECON].
"""

from __future__ import annotations

import numpy as np

from .gp import single_threaded_blas
from .gp_ucb import GPUCB

__all__ = ["MFNaive"]


class MFNaive(GPUCB):
    """GP-UCB at fidelity 1, then the best fidelity-1 points at the target.

    Parameters
    ----------
    n_dims : int
    costs : array-like, shape (M,)
    capital : float, optional
    n_low : int, optional
        First-fidelity queries (including the initial design). Default
        ``min(max_low, low_fraction · capital / λ^(1))`` (``max_low`` when
        ``capital`` is None).
    low_fraction : float, default=0.5
    max_low : int, default=200
    **kwargs
        See :class:`~mftune.policies.gp_ucb.GPUCB`.
    """

    def __init__(self, n_dims: int, costs, capital: float | None = None, *,
                 n_low: int | None = None, low_fraction: float = 0.5, max_low: int = 200,
                 **kwargs):
        kwargs.pop("fidelity", None)
        super().__init__(n_dims, costs, capital, fidelity=0, **kwargs)
        if not 0 < low_fraction < 1:
            raise ValueError(f"low_fraction must lie in (0, 1); got {low_fraction!r}")
        if n_low is None:
            n_low = max_low if capital is None else min(
                max_low, int(low_fraction * self.capital / self.costs[0]))
        if int(n_low) != n_low or n_low < 1:
            raise ValueError(f"n_low must be a positive integer; got {n_low!r}")
        self.n_low = max(int(n_low), self.n_init)
        self._ranked: list[np.ndarray] | None = None
        self.phase_ = "low"

    @single_threaded_blas
    def _propose(self, n: int):
        # A batch never mixes phases: the next n ranked points, else a GP-UCB batch.
        if self.n_pending:
            return None, None
        if self.phase_ == "low" and self.observations(0)[1].size >= self.n_low:
            X, y = self.observations(0)
            self._ranked = list(X[np.argsort(-y, kind="stable")])
            self.phase_ = "ranked"
        if self.phase_ == "ranked":
            if self._ranked:
                take = [self._ranked.pop(0) for _ in range(min(n, len(self._ranked)))]
                return np.array(take), np.full(len(take), self.n_fidelities - 1)
            self.phase_ = "top"
            self.fidelity = self.n_fidelities - 1
            X, y = self._data()
            self.gp_.fit(X, y, True, self.rng_)
        if self.phase_ == "low" and self._init_asked:
            n = max(1, min(n, self.n_low - self.observations(0)[1].size))
        return super()._propose.__wrapped__(self, n)

    @single_threaded_blas
    def _after_tell(self, pulls, rewards, costs) -> None:
        if self.phase_ == "ranked":
            return
        super()._after_tell.__wrapped__(self, pulls, rewards, costs)

    def _summary_extra(self) -> dict:
        return {**super()._summary_extra(), "phase": self.phase_, "n_low": self.n_low}
