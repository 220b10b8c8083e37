"""DiRect (Jones et al., 1993) at the target fidelity, on the ask/tell protocol.

``scipy.optimize.direct`` drives its own loop (it calls the objective), so
the policy *replays* it: to find the next point it re-runs DiRect on the
values told so far (returned from memory, in order) and stops it at the
first evaluation that has no value yet — that point is the next ask. DiRect
is deterministic, so the replay follows exactly the run DiRect would make,
and no optimiser is re-implemented. Re-running costs ``O(n)`` cheap callback
calls per ask (negligible at the few hundred evaluations a budget allows).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import direct

from .continuous import ContinuousPolicy

__all__ = ["DirectSearch"]


class _Stop(Exception):
    pass


class DirectSearch(ContinuousPolicy):
    """DIviding RECTangles on ``[0, 1]^d`` at the target fidelity (maximisation).

    Parameters
    ----------
    n_dims : int
    costs : array-like, shape (M,)
    capital : float, optional
    locally_biased : bool, default=False
        ``False``: the original DiRect; ``True``: DIRECT-L.
    random_state : ignored
        Accepted for a uniform interface (DiRect is deterministic).
    """

    def __init__(self, n_dims: int, costs, capital: float | None = None, *,
                 locally_biased: bool = False, random_state=None):
        super().__init__(n_dims, costs, capital, random_state)
        self.locally_biased = bool(locally_biased)
        self.exhausted_ = False

    def _next_point(self) -> np.ndarray | None:
        _, values = self.observations(self.n_fidelities - 1)
        seen: list[np.ndarray] = []

        def objective(x):
            i = len(seen)
            seen.append(np.array(x, dtype=float))
            if i < values.size:
                return -float(values[i])
            raise _Stop

        try:
            direct(objective, [(0.0, 1.0)] * self.n_dims, maxfun=values.size + 10_000,
                   maxiter=1_000_000, locally_biased=self.locally_biased, vol_tol=0.0,
                   len_tol=0.0)
        except _Stop:
            return np.clip(seen[-1], 0.0, 1.0)
        return None

    def _propose(self, n: int):
        # One point per ask whatever n: DiRect's next point depends on the values before it.
        if self.n_pending:
            return None, None
        x = self._next_point()
        if x is None:
            self.exhausted_ = True
            return None, None
        return x[None, :], np.array([self.n_fidelities - 1])

    @property
    def done(self) -> bool:
        return super().done or self.exhausted_
