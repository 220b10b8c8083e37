"""C*(µ) by a second, independent route: the dual LP over a grid of alternatives.

Used by the tests to cross-check :func:`mftune.policies.lower_bound.cost_lower_bound`
(docs/algorithms.md, "MF-GRAD and the cost lower bound") [RECON].
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from .lower_bound import LowerBound, _check, _dual_bound, _finish, _pair_functions, gaussian_kl

__all__ = ["cost_lower_bound_lp"]


def cost_lower_bound_lp(mu, costs, xi, sigma, n_grid: int = 801,
                        n_refine: int = 4) -> LowerBound:
    """``C*(µ)`` by an independent route: the dual LP over a grid of alternatives.

    By the minimax theorem (ω ranges over a compact convex set and the
    objective is linear in ω) [RECON]::

        sup_ω F(ω, µ) = min_ν max_{k,m} E_ν[d(µ_{k,m}, θ_{k,m})] / λ_m,

    ν a distribution over alternatives; by the pair reduction, alternatives
    ``(b, η)``: the challenger b and the common top mean η ∈ [µ_{b,M}, µ_{a,M}].
    Restricting η to a grid gives an LP (HiGHS) whose value bounds ``sup F``
    from above; the grid is then refined ``n_refine`` times around the
    support of ν. ω is then read from the primal LP on the final grid
    (``max z`` s.t. ``z <= ⟨ω, c(b, η)⟩`` at every grid point) and ``F(ω)``,
    evaluated exactly, gives the lower bound. No SLSQP, no gradients:
    used by the tests to cross-check :func:`cost_lower_bound`.
    """
    mu, costs, xi, sigma = _check(mu, costs, xi, sigma)
    K, M = mu.shape
    a = int(np.argmax(mu[:, -1]))
    grids = {b: np.linspace(mu[b, -1], mu[a, -1], n_grid) for b in range(K) if b != a}
    for r in range(n_refine + 1):
        f_ub, nu, keys = _dual_bound(mu, costs, xi, sigma, a, grids)
        if r == n_refine:
            break
        for b, g in grids.items():
            step = (mu[a, -1] - mu[b, -1]) / (n_grid - 1) / (8.0 ** r)
            used = [e for (bb, e), v in zip(keys, nu, strict=True) if bb == b and v > 1e-12]
            pts = [g] + [np.linspace(e - step, e + step, 65) for e in used]
            grids[b] = np.unique(np.clip(np.concatenate(pts), mu[b, -1], mu[a, -1]))
    omega = _lp_omega(mu, costs, xi, sigma, a, grids)
    f_lb = float(_pair_functions(mu, costs, xi, sigma, a, omega)[0].min())
    return _finish(mu, costs, xi, sigma, a, omega, f_lb, max(f_ub, f_lb))


def _lp_omega(mu, costs, xi, sigma, a, grids):
    """ω from the primal LP on the final grid: max z s.t. z <= ⟨ω, c(b, η)⟩ for every grid point."""
    K, M = mu.shape
    rows = []
    for b, etas in grids.items():
        c = np.zeros((etas.size, K, M))
        c[:, a] = gaussian_kl(mu[a], np.minimum(mu[a], etas[:, None] + xi), sigma) / costs
        c[:, b] = gaussian_kl(mu[b], np.maximum(mu[b], etas[:, None] - xi), sigma) / costs
        rows.append(c.reshape(etas.size, K * M))
    C = np.concatenate(rows)
    scale = 1.0 / C.max()
    n = K * M
    res = linprog(np.r_[np.zeros(n), -1.0], A_ub=np.hstack([-C * scale, np.ones((len(C), 1))]),
                  b_ub=np.zeros(len(C)), A_eq=np.r_[np.ones(n), 0.0][None, :], b_eq=[1.0],
                  bounds=[(0, None)] * n + [(None, None)], method="highs")
    if res.status != 0:  # pragma: no cover
        raise RuntimeError(f"linprog failed: {res.message}")
    return res.x[:n].reshape(K, M)
