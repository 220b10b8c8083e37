"""Expected improvement (Jones et al., 1998) at the target fidelity — a baseline."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from .gp_ucb import SingleFidelityGPPolicy

__all__ = ["ExpectedImprovement"]


class ExpectedImprovement(SingleFidelityGPPolicy):
    """Bayesian optimisation with the expected-improvement acquisition.

    ``EI(x) = (µ(x) - y⁺ - ξ) Φ(z) + σ(x) φ(z)``, ``z = (µ(x) - y⁺ - ξ)/σ(x)``,
    ``y⁺`` the best observed value (within a batch, also the values believed
    for its earlier points). The GP prior mean is the data mean
    (an optimistic mean would make EI explore blindly).

    Parameters
    ----------
    xi : float, default=0.0
        Improvement margin.
    **kwargs
        See :class:`~mftune.policies.gp_ucb.SingleFidelityGPPolicy`.
    """

    def __init__(self, n_dims: int, costs, capital: float | None = None, *,
                 xi: float = 0.0, prior_mean: str = "mean", **kwargs):
        super().__init__(n_dims, costs, capital, prior_mean=prior_mean, **kwargs)
        self.xi = float(xi)

    def acquisition(self, X) -> np.ndarray:
        mu, sd = self.gp_.predict(np.atleast_2d(X))
        gain = mu - self.incumbent() - self.xi
        sd = np.maximum(sd, 1e-12)
        z = gain / sd
        return gain * norm.cdf(z) + sd * norm.pdf(z)
