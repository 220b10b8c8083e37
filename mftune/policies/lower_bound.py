"""The multi-fidelity cost lower bound C*(µ) and its inner (alternative) problem.

Poiani, Degenne, Kaufmann, Metelli, Restelli, *Optimal Multi-Fidelity
Best-Arm Identification*, NeurIPS 2024 (arXiv 2406.03033); authors' code
riccardopoiani/adv-mf-bai. Notation of docs/algorithms.md, section "MF-GRAD
and the cost lower bound". Means are ``mu[k, m]`` (arms × fidelities, the
last column the target fidelity M), Gaussian rewards of standard deviation
σ, so ``d(x, y) = (x − y)² / (2σ²)``.

Every δ-correct algorithm spends ``E[c_τ] >= C*(µ) log(1/(2.4δ))`` [summ];
``1/C*(µ) = sup_ω F(ω, µ)`` over cost proportions ω on the K×M simplex, with
``F(ω, µ) = inf_{θ ∈ Alt(µ)} Σ_{k,m} (ω_{k,m}/λ_m) d(µ_{k,m}, θ_{k,m})``
[summ for the objects; formula RECON].

The inner infimum [RECON, as the authors' ``utils/lb_tools_fast.py``]:
only the best arm ``a`` and one challenger ``b`` move, and with weights
``w`` the pair value is a one-dimensional convex problem in the common top
mean ``η`` of the two alternative columns::

    g_k(η) = Σ_m w_{k,m} d(µ_{k,m}, clip(µ_{k,m}, η − ξ_m, η + ξ_m))   (convex in η)
    V(i, b) = min_{η_i <= η_b} g_i(η_i) + g_b(η_b).

:func:`pair_values` solves it exactly and vectorised: each ``g`` is a sum
of one-sided quadratics, whose derivative is piecewise linear and
non-decreasing; the root is located among the sorted breakpoints and solved
on its segment (never "no candidate", zero weights handled) [RECON; fixes the
``None``/NaN cases of the authors' search; :mod:`mftune.policies.one_sided`].
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.optimize import linprog, minimize

from .one_sided import argmin_one_sided, clip, column_terms, take_last

__all__ = [
    "LowerBound",
    "cost_lower_bound",
    "gaussian_kl",
    "pair_values",
    "characteristic_value",
    "characteristic_values",
    "best_pair_values",
    "feasible_best",
    "max_min",
    "pair_upper_bound",
]


def gaussian_kl(x, y, sigma: float):
    """``d(x, y) = (x − y)² / (2σ²)`` (Gaussian, standard deviation σ)."""
    return (np.asarray(x) - np.asarray(y)) ** 2 / (2.0 * sigma * sigma)


def _check(mu, costs, xi, sigma):
    mu = np.asarray(mu, dtype=float)
    if mu.ndim != 2 or mu.shape[0] < 2 or mu.shape[1] < 1 or not np.all(np.isfinite(mu)):
        raise ValueError(f"mu must be a finite (K, M) array with K >= 2; got shape {mu.shape}")
    K, M = mu.shape
    costs = np.asarray(costs, dtype=float).reshape(-1)
    xi = np.asarray(xi, dtype=float).reshape(-1)
    if costs.size != M or xi.size != M:
        raise ValueError(f"costs and xi need one entry per fidelity ({M})")
    if np.any(costs <= 0) or not np.all(np.isfinite(costs)):
        raise ValueError(f"costs must be positive; got {costs.tolist()}")
    if np.any(xi < 0) or xi[-1] != 0:
        raise ValueError(f"xi must be non-negative and end with 0; got {xi.tolist()}")
    sigma = float(sigma)
    if not sigma > 0:
        raise ValueError(f"sigma must be positive; got {sigma!r}")
    return mu, costs, xi, sigma


def pair_values(mu, w, xi, sigma, i, b, epsilon: float = 0.0, minima=None):
    """Exact pair values ``V(i, b)``: the cheapest MF-feasible move making ``b`` beat ``i``.

    Valid for any ``mu`` (also outside the multi-fidelity set: the columns
    are then projected too) [code: ``solve_stop_problem_fast``; RECON: exact
    segment solver].

    With ``epsilon = ε > 0`` the alternative must make ``b`` beat ``i`` by
    more than ε at the top (``η_i + ε <= η_b``): the ε-GLR pair value of
    ε-good answers [RECON]. The multi-fidelity set is invariant under a
    shift of a whole column, so this is the plain pair value with ``b``'s
    column moved down by ε (and ``b``'s alternative column moved back up).
    For one fidelity (``ξ = [0]``) it is
    ``(µ̂_i − µ̂_b + ε)²₊ / (2σ² (1/w_i + 1/w_b))``.

    Parameters
    ----------
    mu, w : ndarray, shape (..., K, M)
        Means and weights (counts for the GLR, ``ω/λ`` for F); leading axes
        (independent runs) are broadcast through, each run solved alone.
    xi : ndarray, shape (M,)
    sigma : float
    i, b : ndarray of int, shape (P,)
        The pairs (``i`` the arm to beat, ``b`` the challenger).
    epsilon : float, default=0.0
        The margin ε >= 0 by which ``b`` must beat ``i``.
    minima : tuple of ndarray, optional
        Every column's own minimiser and minimum ``(x, g)``, shapes (..., K),
        when already known (they are computed here otherwise).

    Returns
    -------
    value : ndarray, shape (..., P)
        ``V(i, b) = min_{η_i <= η_b} g_i(η_i) + g_b(η_b)``.
    excess : ndarray, shape (..., P)
        ``V(i, b) − min g_i − min g_b`` (the generalised likelihood ratio of the pair).
    theta_i, theta_b : ndarray, shape (..., P, M)
        The minimising alternative columns.
    """
    # single columns: their minima (projection on the MF set; 0 for a feasible column),
    # once per arm
    x, g = argmin_one_sided(*column_terms(mu, w, xi)) if minima is None else minima
    eps = _check_epsilon(epsilon)
    value, excess, theta_i, theta_b = _pairs_of_columns(
        mu[..., i, :], w[..., i, :], mu[..., b, :] - eps, w[..., b, :], xi, sigma,
        (x[..., i], g[..., i], x[..., b] - eps, g[..., b]))
    return value, excess, theta_i, theta_b + eps


def _check_epsilon(epsilon) -> float:
    """ε of the pair values: a finite number >= 0."""
    eps = float(epsilon)
    if not (np.isfinite(eps) and eps >= 0.0):
        raise ValueError(f"epsilon must be a finite number >= 0; got {epsilon!r}")
    return eps


def _pairs_of_columns(mu_i, w_i, mu_b, w_b, xi, sigma, minima=None):
    """:func:`pair_values` from the pairs' columns, shapes (..., P, M) (each pair alone).

    ``minima``: the columns' own minimisers and minima ``(x_i, g_i, x_b, g_b)`` when
    already known (each is the same computation as here).

    A pair whose own minimisers are in order (``x_i <= x_b``) has ``V = g_i(x_i) +
    g_b(x_b)``: that point is feasible and no pair of values does better. Only the
    other pairs ("crossed") need the joint problem ``min_η g_i(η) + g_b(η)``, which
    is then ``V`` (when the minimisers are unique; when they are intervals that
    overlap, the joint minimum is again ``g_i + g_b``).
    """
    s = 1.0 / (2.0 * sigma * sigma)
    if minima is None:
        x_i, g_i = argmin_one_sided(*column_terms(mu_i, w_i, xi))
        x_b, g_b = argmin_one_sided(*column_terms(mu_b, w_b, xi))
    else:
        x_i, g_i, x_b, g_b = minima
    apart = g_i + g_b
    value = apart * s
    eta_i = np.array(x_i, dtype=float)
    eta_b = np.array(x_b, dtype=float)
    crossed = x_i > x_b
    if crossed.any():
        # the joint problem of the crossed pairs only
        eta, hmin = argmin_one_sided(*column_terms((mu_i[crossed], mu_b[crossed]),
                                                    (w_i[crossed], w_b[crossed]), xi, columns=2))
        value[crossed] = hmin * s
        eta_i[crossed] = eta
        eta_b[crossed] = eta
    theta_i = clip(mu_i, eta_i[..., None] - xi, eta_i[..., None] + xi)
    theta_b = clip(mu_b, eta_b[..., None] - xi, eta_b[..., None] + xi)
    excess = np.maximum(value - apart * s, 0.0)
    return value, excess, theta_i, theta_b


def feasible_best(mu, xi):
    """Per run: whether every column of ``mu`` (R, K, M) is MF-feasible and the top-fidelity
    best arm unique, and that arm. Feasibility is read with the solver's own float
    expressions (every one-sided term vanishes at η = µ_{k,M}), so the solver finds 0
    for each column alone."""
    _, R, S = column_terms(mu, mu, xi)
    feasible = np.all(S * (mu[..., -1:] - R) <= 0.0, axis=(1, 2))
    top = mu[..., -1]
    a = np.argmax(top, axis=1)
    unique = np.sum(top == top[np.arange(mu.shape[0]), a][:, None], axis=1) == 1
    return feasible & unique, a


def best_pair_values(mu, w, xi, sigma, a, minima=None):
    """:func:`pair_values` of the pairs ``(a_r, b)``, ``b ≠ a_r`` in increasing order, per run.

    ``a`` has shape (R,); returns arrays with P = K − 1 pairs per run and the
    challengers (R, K − 1). ``minima``, optional: every column's own minimiser
    and minimum ``(x, g)``, shapes (R, K), when already known.
    """
    R, K = mu.shape[0], mu.shape[1]
    rows = np.arange(R)[:, None]
    others = _others(K)[a]
    aa = np.repeat(a[:, None], K - 1, axis=1)
    if minima is not None:
        x, g = minima
        minima = (x[rows, aa], g[rows, aa], x[rows, others], g[rows, others])
    return (*_pairs_of_columns(mu[rows, aa], w[rows, aa], mu[rows, others], w[rows, others],
                               xi, sigma, minima), others)


@lru_cache(maxsize=64)
def _others(K: int) -> np.ndarray:
    """Row ``a``: the arms other than ``a`` in increasing order, shape (K, K − 1), read-only."""
    out = np.array([[b for b in range(K) if b != a] for a in range(K)], dtype=np.int64)
    out = out.reshape(K, K - 1)
    out.flags.writeable = False
    return out


def pair_upper_bound(mu_i, w_i, mu_b, w_b, xi, sigma, eta_i, eta_b):
    """An upper bound on ``V(i, b)``: the objective at given top means ``eta_i <= eta_b``.

    Any feasible ``(η_i, η_b)`` gives ``g_i(η_i) + g_b(η_b) >= V(i, b)``
    (``η_i`` is lowered to ``η_b`` where it exceeds it). Columns (..., M),
    ``eta_*`` (...); a handful of numpy calls, no solve.
    """
    eta_i = np.minimum(eta_i, eta_b)[..., None]
    eta_b = eta_b[..., None]
    d_i = mu_i - clip(mu_i, eta_i - xi, eta_i + xi)
    d_b = mu_b - clip(mu_b, eta_b - xi, eta_b + xi)
    return np.sum(w_i * d_i * d_i + w_b * d_b * d_b, axis=-1) / (2.0 * sigma * sigma)


@lru_cache(maxsize=64)
def _all_pairs(K):
    """The K(K−1) ordered pairs ``(i, b)``, ``i`` major, as read-only index arrays."""
    i, b = np.nonzero(~np.eye(K, dtype=bool))
    i.flags.writeable = b.flags.writeable = False
    return i, b


#: Up to this many pairs in a call (runs × K(K−1)), :func:`characteristic_values` solves
#: every pair at once (fewer numpy calls) instead of the best arm's first (less work).
_ALL_PAIRS_AT_ONCE = 256


def characteristic_values(mu, w, xi, sigma, excess: bool = False, epsilon: float = 0.0):
    """:func:`characteristic_value` of many runs at once: ``mu``, ``w`` of shape (R, K, M).

    Returns ``(value, i*, b̂, theta_i, theta_b)`` with shapes (R,), (R,), (R,),
    (R, M), (R, M). Every run is solved by the same element-wise expressions
    as a run alone, so a batch of one is the single-run computation.

    Shortcut [RECON, exact]: let ``x_k``, ``g_k`` be each column's own
    minimiser and minimum and ``a = argmax_k x_k`` (the arm with the best
    projected top mean). First only the K − 1 pairs ``(a, b)`` are solved:
    ``L = min_b V(a, b)``. Any other arm ``i`` with ``x_i <= x_a`` has
    ``min_b V(i, b) <= V(i, a) = g_i + g_a`` (the unconstrained minimisers
    are already in order; 0 for the GLR excess), so when that is below ``L``
    (by a relative margin of 1e-9, against rounding) ``i`` cannot be the
    maximising arm. When every other arm is so ruled out the answer is ``a``
    and its first minimising challenger; otherwise the K − 1 pairs ``(i, b)``
    of each arm ``i`` not ruled out are solved too, and the answer is the
    max-min over those arms (ties as in :func:`max_min`: the first
    minimising challenger, then the first maximising arm). With MF-feasible
    means (every ``g_k = 0``, ``x_k`` the top mean) this is: the unique
    empirical best arm, whenever ``L > 0``. With ``epsilon > 0`` (the ε pair
    values of :func:`pair_values`) the pairs ``(i, a)`` need not vanish, so
    all pairs are solved.
    """
    eps = _check_epsilon(epsilon)
    R = mu.shape[0]
    if mu.shape[2] == 1:
        return _single_fidelity_values(mu[..., 0], w[..., 0], sigma, eps)
    if eps > 0.0:
        return _all_pairs_max_min(mu, w, xi, sigma, excess, eps)
    x, g = argmin_one_sided(*column_terms(mu, w, xi))
    if R * mu.shape[1] * (mu.shape[1] - 1) <= _ALL_PAIRS_AT_ONCE:
        return _all_pairs_max_min(mu, w, xi, sigma, excess, minima=(x, g))
    a = np.argmax(x, axis=1)
    r = np.arange(R)
    val, exc, ti, tb, others = best_pair_values(mu, w, xi, sigma, a, (x, g))
    v = exc if excess else val
    j = np.argmin(v, axis=1)
    value, istar, bhat, ti, tb = v[r, j], a, others[r, j], ti[r, j], tb[r, j]
    bound = 0.0 if excess else (g + g[r, a][:, None]) / (2.0 * sigma * sigma)
    ruled_out = (x <= x[r, a][:, None]) & (bound < value[:, None] * (1.0 - 1e-9))
    ruled_out[r, a] = True
    f = np.flatnonzero(~ruled_out.all(axis=1))
    if f.size:
        # the arms not ruled out, each against its K − 1 challengers
        fr, arm = np.nonzero(~ruled_out[f])
        rows = f[fr]
        val2, exc2, ti2, tb2, others2 = best_pair_values(mu[rows], w[rows], xi, sigma, arm,
                                                         (x[rows], g[rows]))
        v2 = exc2 if excess else val2
        q, j2 = np.arange(rows.size), np.argmin(v2, axis=1)
        # per row and arm: its min over challengers, with that challenger and alternative
        r, K = np.arange(f.size), mu.shape[1]
        per = [np.full((f.size, K), -np.inf), np.zeros((f.size, K), dtype=bhat.dtype),
               np.zeros((f.size, K, ti.shape[1])), np.zeros((f.size, K, tb.shape[1]))]
        for out, mine, other in zip(per, (value, bhat, ti, tb), (v2, others2, ti2, tb2),
                                    strict=True):
            out[fr, arm] = other[q, j2]
            out[r, a[f]] = mine[f]
        best = np.argmax(per[0], axis=1)  # the first maximising arm, as max_min
        istar[f] = best
        for out, mine in zip(per, (value, bhat, ti, tb), strict=True):
            mine[f] = out[r, best]
    return value, istar, bhat, ti, tb


def _all_pairs_max_min(mu, w, xi, sigma, excess: bool, epsilon: float = 0.0, minima=None):
    """:func:`characteristic_values` by solving all K(K−1) pairs of every run
    (``minima`` as in :func:`pair_values`)."""
    i, b = _all_pairs(mu.shape[1])
    val, exc, ti, tb = pair_values(mu, w, xi, sigma, i, b, epsilon, minima)
    value, istar, p = max_min(exc if excess else val)
    q = np.arange(p.size)
    return value, istar, b[p], ti[q, p], tb[q, p]


def _single_fidelity_values(mu, w, sigma, epsilon: float = 0.0):
    """:func:`characteristic_values` with one fidelity, in closed form; ``mu``, ``w`` (R, K).

    ``V(i, b) = w_i w_b (µ_i − µ_b + ε)₊² / (2σ² (w_i + w_b))``, the
    alternative moving ``µ_i`` and ``µ_b − ε`` to their weighted mean (the
    Gaussian GLR of Garivier & Kaufmann 2016, with the ε shift of
    :func:`pair_values`) [paper]; ``b`` already ε above ``i`` costs nothing
    and moves nothing. Every column's own minimum is 0, so the GLR excess is
    the same value.
    """
    i, b = _all_pairs(mu.shape[1])
    mu_i, mu_b, w_i, w_b = mu[:, i], mu[:, b] - epsilon, w[:, i], w[:, b]
    gap = np.maximum(mu_i - mu_b, 0.0)
    value, istar, p = max_min(w_i * w_b / (w_i + w_b) * gap * gap / (2.0 * sigma * sigma))
    r = np.arange(mu.shape[0])
    mu_i, mu_b, w_i, w_b, moved = mu_i[r, p], mu_b[r, p], w_i[r, p], w_b[r, p], gap[r, p] > 0
    eta = (w_i * mu_i + w_b * mu_b) / (w_i + w_b)
    return (value, istar, b[p], np.where(moved, eta, mu_i)[:, None],
            np.where(moved, eta, mu_b)[:, None] + epsilon)


def max_min(v):
    """``max_i min_{b≠i}`` of pair values ``v`` (R, K(K−1)) in :func:`_all_pairs` order.

    Returns ``(value, i*, pair index)``, shapes (R,): the first minimising
    challenger per arm, then the first maximising arm.
    """
    R = v.shape[0]
    K = int(round(0.5 + np.sqrt(0.25 + v.shape[1])))
    v = v.reshape(R, K, K - 1)
    j = np.argmin(v, axis=2)
    per_arm = take_last(v, j[:, :, None])
    istar = np.argmax(per_arm, axis=1)
    rows = np.arange(R)
    return per_arm[rows, istar], istar, istar * (K - 1) + j[rows, istar]


def characteristic_value(mu, w, xi, sigma, excess: bool = False, epsilon: float = 0.0):
    """``max_i min_{b≠i} V(i, b)`` over all K(K−1) ordered pairs [code: ``solve_stopping``].

    Returns ``(value, i*, b̂, theta_i, theta_b)``: the maximising arm, its
    minimising challenger and their alternative columns. With
    ``excess=True`` the pair values are the GLR excesses, with ``epsilon``
    the ε pair values (see :func:`pair_values`).
    """
    value, i, b, ti, tb = characteristic_values(np.asarray(mu, dtype=float)[None],
                                                np.asarray(w, dtype=float)[None], xi, sigma,
                                                excess, epsilon)
    return float(value[0]), int(i[0]), int(b[0]), ti[0], tb[0]


# -- C*(µ) ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LowerBound:
    """The cost lower bound of one instance.

    Attributes
    ----------
    c_star : float
        ``C*(µ)``: ``E[c_τ] >= C*(µ) log(1/(2.4δ))`` for every δ-correct algorithm.
    omega : ndarray, shape (K, M)
        Optimal cost proportions ω* (sum to 1).
    optimal_fidelity : ndarray of int, shape (K,)
        The fidelity carrying each arm's largest share of ω*.
    best_arm : int
    gap : float
        Certified relative gap ``(UB − LB)/UB`` of ``1/C*`` (0 for an exact solver).
    """

    c_star: float
    omega: np.ndarray
    optimal_fidelity: np.ndarray
    best_arm: int
    gap: float = 0.0


def _pair_functions(mu, costs, xi, sigma, a, omega):
    """Values ``F_b(ω)`` and gradients ``∂F_b/∂ω`` (K−1, K, M) for every challenger b."""
    K, M = mu.shape
    bs = np.delete(np.arange(K), a)
    ia = np.full(bs.size, a)
    w = np.maximum(omega, 0.0) / costs
    val, _, ta, tb = pair_values(mu, w, xi, sigma, ia, bs)
    grad = np.zeros((bs.size, K, M))
    rows = np.arange(bs.size)
    grad[rows, a] = gaussian_kl(mu[a], ta, sigma) / costs
    grad[rows, bs] = gaussian_kl(mu[bs], tb, sigma) / costs
    return val, grad


def _dual_bound(mu, costs, xi, sigma, a, etas_by_pair):
    """Upper bound on ``sup_ω F``: an LP over mixtures of the given alternatives.

    For any distribution ν over alternatives θ, ``sup_ω F <= max_{k,m}
    E_ν[d(µ_{k,m}, θ_{k,m})] / λ_m`` (F is a minimum over alternatives,
    weak duality). ``etas_by_pair`` maps a challenger b to candidate top
    means η of the pair (a, b); returns ``(bound, ν weights, list of (b, η))``.
    """
    K, M = mu.shape
    cols, keys = [], []
    for b, etas in etas_by_pair.items():
        etas = np.asarray(etas, dtype=float)
        c = np.zeros((etas.size, K, M))
        ta = np.minimum(mu[a], etas[:, None] + xi)
        tb = np.maximum(mu[b], etas[:, None] - xi)
        c[:, a] = gaussian_kl(mu[a], ta, sigma) / costs
        c[:, b] = gaussian_kl(mu[b], tb, sigma) / costs
        cols.append(c.reshape(etas.size, K * M))
        keys.extend((b, float(e)) for e in etas)
    C = np.concatenate(cols).T  # (K M, n)
    n = C.shape[1]
    scale = 1.0 / max(C.max(), 1e-300)
    # variables (ν_1..ν_n, t): minimise t s.t. C ν <= t, Σν = 1, ν >= 0
    res = linprog(np.r_[np.zeros(n), 1.0],
                  A_ub=np.hstack([C * scale, -np.ones((K * M, 1))]), b_ub=np.zeros(K * M),
                  A_eq=np.r_[np.ones(n), 0.0][None, :], b_eq=[1.0],
                  bounds=[(0, None)] * n + [(None, None)], method="highs")
    if res.status != 0:  # pragma: no cover - HiGHS solves these small LPs
        raise RuntimeError(f"linprog failed: {res.message}")
    return res.x[-1] / scale, res.x[:n], keys


def _finish(mu, costs, xi, sigma, a, omega, f_lb, f_ub):
    omega = np.maximum(omega, 0.0)
    omega = omega / omega.sum()
    return LowerBound(c_star=1.0 / f_lb, omega=omega,
                      optimal_fidelity=np.argmax(omega, axis=1), best_arm=a,
                      gap=max(0.0, (f_ub - f_lb) / f_ub))


def cost_lower_bound(mu, costs, xi, sigma, tol: float = 1e-12,
                     max_iter: int = 500) -> LowerBound:
    """``C*(µ)`` and the optimal cost proportions ω* (SLSQP on the epigraph, certified).

    Method [RECON]: ``F(·, µ)`` is concave (an infimum of linear functions of
    ω), and ``F = min_b F_b`` over the K−1 challengers, each ``F_b`` the
    exact pair value of :func:`pair_values`, differentiable wherever its
    minimising ``η`` is unique with gradient ``d(µ, θ̂^b)/λ`` (Danskin). So
    ``sup_ω F`` is the smooth concave program ``max z s.t. z <= F_b(ω)``
    over the simplex, with K·M + 1 variables and K−1 constraints; SLSQP
    (``scipy.optimize.minimize``) solves it in a few dozen iterations with
    analytic gradients -- much faster than cutting planes or mirror ascent,
    which converge at first order (see :func:`cost_lower_bound_lp` for
    the independent check). The result is then certified: ``F(ω̂)`` is a
    lower bound on ``sup F``, and the LP of :func:`_dual_bound` over the
    K−1 alternatives ``θ̂^b(ω̂)`` (and the last iterates') an upper bound;
    :attr:`LowerBound.gap` is their relative gap.

    Parameters
    ----------
    mu : array-like, shape (K, M)
        Means, arms × fidelities (last column the target fidelity);
        assumed in the multi-fidelity set, with a unique best arm.
    costs : array-like, shape (M,)
        Cost λ_m of one pull at each fidelity.
    xi : array-like, shape (M,)
        Maximal biases ξ_m (last one 0).
    sigma : float
        Standard deviation of the Gaussian rewards.
    tol : float
        SLSQP's ``ftol``.
    max_iter : int

    Returns
    -------
    LowerBound
    """
    mu, costs, xi, sigma = _check(mu, costs, xi, sigma)
    K, M = mu.shape
    a = int(np.argmax(mu[:, -1]))
    if np.sum(mu[:, -1] == mu[a, -1]) > 1:
        raise ValueError("the best arm at the top fidelity must be unique")
    n = K * M
    x0 = np.full(n, 1.0 / n)
    v0, _ = _pair_functions(mu, costs, xi, sigma, a, x0.reshape(K, M))
    scale = 1.0 / max(float(v0.min()), 1e-300)  # F of order 1 at the start

    def cons(x):
        v, _ = _pair_functions(mu, costs, xi, sigma, a, x[:n].reshape(K, M))
        return v * scale - x[n]

    def cons_jac(x):
        _, g = _pair_functions(mu, costs, xi, sigma, a, x[:n].reshape(K, M))
        return np.hstack([g.reshape(K - 1, n) * scale, -np.ones((K - 1, 1))])

    res = minimize(
        lambda x: -x[n], np.r_[x0, float(v0.min()) * scale],
        jac=lambda x: np.r_[np.zeros(n), -1.0], method="SLSQP",
        bounds=[(0.0, 1.0)] * n + [(None, None)],
        constraints=[{"type": "ineq", "fun": cons, "jac": cons_jac},
                     {"type": "eq", "fun": lambda x: x[:n].sum() - 1.0,
                      "jac": lambda x: np.r_[np.ones(n), 0.0]}],
        options={"ftol": tol, "maxiter": max_iter})
    omega = np.maximum(res.x[:n], 0.0)
    omega = (omega / omega.sum()).reshape(K, M)
    f_lb = float(_pair_functions(mu, costs, xi, sigma, a, omega)[0].min())
    # certificate: the alternatives at ω̂ (one per challenger)
    bs = np.delete(np.arange(K), a)
    _, _, ta, _ = pair_values(mu, omega / costs, xi, sigma, np.full(K - 1, a), bs)
    f_ub, _, _ = _dual_bound(mu, costs, xi, sigma, a,
                             {int(b): [ta[j, -1]] for j, b in enumerate(bs)})
    return _finish(mu, costs, xi, sigma, a, omega, f_lb, max(f_ub, f_lb))
