"""Bias bounds, noise level and costs measured on a tuning problem.

The guarantees of the multi-fidelity policies assume a known maximal bias
``ξ_m`` of each fidelity (and, for IISE-γ, a bound ``γ_m`` on its variation
across configurations). docs/algorithms.md (calibration) offers three modes:

``known``
    the user gives the bounds;
``estimate``
    a calibration evaluates a few random candidates at every fidelity on the
    same folds; the bound is the largest observed bias inflated by its own
    uncertainty; its cost counts in the run;
``adaptive``
    estimated, then grown during the run whenever a candidate evaluated at
    two fidelities violates it (doubling, as MF-GP-UCB does with ζ).

How the estimate is built [RECON — the papers assume known bounds]: for
calibration candidate ``k`` and fidelity ``m``, ``d_km`` is the mean over the
same folds of the per-fold difference ``score_m − score_M`` and ``s_km`` its
standard error. With ``z = Φ⁻¹(1 − δ / (2 n_cal M))`` (a union bound over the
calibration's differences), ``ξ̂_m = max_k |d_km| + z s_km`` and
``γ̂_m = max_{k,k'} |d_km − d_k'm| + z (s_km + s_k'm)``; both are made strictly
decreasing to 0 (a bound is raised to 1.01 × the next one's plus a tiny
constant when needed). σ_m is the pooled per-fold standard deviation of the
scores of a candidate at fidelity ``m``, raised to the largest σ of the
more expensive fidelities (a cheaper fidelity is not assumed less noisy);
during the run it is pooled with the
spread of the run's own repeated pulls (:func:`pooled_variance`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

__all__ = [
    "EPSILON_RELATIVE", "EPSILON_UNIT", "BiasEstimate", "SettingRefused", "curve_steps",
    "default_epsilon", "estimate_bias", "extend_to_top", "grow_violated", "monotone_bounds",
    "pooled_variance", "running_costs",
]

_TINY = 1e-6


def monotone_bounds(bounds) -> np.ndarray:
    """Make bias bounds strictly decreasing with a final 0, raising earlier entries."""
    b = np.maximum(np.asarray(bounds, dtype=float).copy(), 0.0)
    b[-1] = 0.0
    for m in range(b.size - 2, -1, -1):
        b[m] = max(b[m], 1.01 * b[m + 1] + _TINY)
    return b


def curve_steps(levels) -> np.ndarray:
    """Steps of rise left to the top, per fidelity: the tuner's ``curve_check`` [RECON].

    For numeric levels ``L`` (training sizes, iterations), fidelity ``m``'s
    entry is ``(log L_M − log L_m) / (log L_m − log L_{m−1})``: the distance
    to the top in units of the step just taken, on a log scale. A score that
    is concave in ``log L`` (each ×-step gains no more than the one before,
    as learning curves do) rises by at most that many times its last gain
    before the top. Other levels count fidelities: ``M − 1 − m``. The first
    entry (no step taken yet: the policy eliminates nothing there) is
    ``M − 1`` and the last 0.
    """
    n = len(levels)
    steps = np.arange(n - 1, -1, -1, dtype=float)
    try:
        lv = np.log(np.asarray(levels, dtype=float))
        if np.all(np.isfinite(lv)) and np.all(np.diff(lv) > 0):
            steps[1:] = (lv[-1] - lv[1:]) / np.diff(lv)
    except (TypeError, ValueError):
        pass
    steps[0] = n - 1
    return steps


#: The default ε of scores in [0, 1] (accuracy, AUC, F1...): half a point.
EPSILON_UNIT = 0.005
#: The default ε of scores that are all negative (negated losses, log-likelihoods): this
#: share of the best score's magnitude, i.e. 1 % more loss than the best seen.
EPSILON_RELATIVE = 0.01
#: The default ε never exceeds this share of the observed score range.
EPSILON_SHARE = 0.1


class SettingRefused(ValueError):
    """A setting that the calibration's results show to be unusable (an ``epsilon``
    wider than every score seen); the message names it and what to give instead."""


def default_epsilon(scores, fallback: float) -> float:
    """The ``epsilon="auto"`` of a search: what "as good as the best" means for its scores.

    Scores that all lie in [0, 1] (accuracy-like) get an absolute tolerance of
    :data:`EPSILON_UNIT` (half a point of accuracy). Scores that are all
    negative (scikit-learn's negated losses such as ``neg_mean_squared_error``,
    log-likelihoods) get :data:`EPSILON_RELATIVE` of the best score's
    magnitude: a loss 1 % above the best seen counts as as good, whatever the
    worst candidates scored. Other scores get 1 % of their observed range.
    Each is capped at :data:`EPSILON_SHARE` of the observed range, so ε
    stays small next to the differences the search sees. ``fallback`` (the
    top fidelity's σ) serves when no score was seen.

    Parameters
    ----------
    scores : array-like
        The scores seen so far (the calibration's); ``nan`` ignored.
    fallback : float

    Returns
    -------
    float
    """
    s = np.asarray(scores, dtype=float)
    s = s[np.isfinite(s)]
    if s.size == 0:
        return float(fallback)
    span = float(s.max() - s.min())
    if s.min() >= 0.0 and s.max() <= 1.0:
        eps = EPSILON_UNIT
    elif s.max() < 0.0:
        eps = EPSILON_RELATIVE * -float(s.max())
    else:
        eps = 0.01 * span
    if span > 0:
        eps = min(eps, EPSILON_SHARE * span)
    return float(eps) if eps > 0 else float(fallback)


def running_costs(cost_sums, counts, prior) -> np.ndarray:
    """Per-fidelity mean measured cost, the prior where unmeasured, made strictly increasing.

    A fidelity measured as no cheaper than the one below it is given 1.01 × that
    cost (the policies need ``λ_1 < … < λ_M``; such a fidelity is nearly
    dominated and the run says so in ``costs_``).
    """
    cost_sums = np.asarray(cost_sums, dtype=float)
    counts = np.asarray(counts, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = np.where(counts > 0, cost_sums / np.maximum(counts, 1), np.asarray(prior, float))
    lam = np.maximum(lam, 1e-6)
    for m in range(1, lam.size):
        lam[m] = max(lam[m], 1.01 * lam[m - 1])
    return lam


class CostTally:
    """Measured seconds and pulls per fidelity over a growing list of pull records.

    Each call adds the records told since the last one, in order: the sums are those
    of one pass over them all, at a cost per new record rather than per record.
    """

    def __init__(self, n_fidelities: int) -> None:
        self.sums, self.counts, self.seen = [0.0] * n_fidelities, [0] * n_fidelities, 0

    def __call__(self, records) -> tuple[list[float], list[int]]:
        """The sums and counts after adding ``records[seen:]`` (``fidelity``, ``cost``)."""
        for r in records[self.seen:]:
            self.sums[r.fidelity] += r.cost
            self.counts[r.fidelity] += 1
        self.seen = len(records)
        return self.sums, self.counts


@dataclass
class BiasEstimate:
    """Result of a calibration.

    Attributes
    ----------
    xi, gamma : ndarray of shape (M,)
        Bounds on the bias and on its variation (strictly decreasing to 0).
    sigma : float
        Pooled per-fold standard deviation of the scores at the noisiest fidelity.
    sigmas : ndarray of shape (M,)
        The same, per fidelity.
    dof : int
        Degrees of freedom behind each entry of ``sigmas``.
    costs : ndarray of shape (M,)
        Mean measured seconds per pull at each fidelity.
    raw_bias : ndarray of shape (n_cal, M)
        Observed mean differences ``d_km`` (before inflation).
    """

    xi: np.ndarray
    gamma: np.ndarray
    sigma: float
    costs: np.ndarray
    raw_bias: np.ndarray
    sigmas: np.ndarray | None = None
    dof: int = 0


def estimate_bias(scores, costs, delta: float) -> BiasEstimate:
    """Estimate ξ, γ, σ and λ from a calibration.

    Parameters
    ----------
    scores : ndarray of shape (n_cal, M, n_folds)
        Score of calibration candidate ``k`` at fidelity ``m`` on fold ``f``
        (the same folds at every fidelity); ``nan`` for failed pulls.
    costs : ndarray of shape (n_cal, M, n_folds)
        Measured seconds of the same pulls.
    delta : float
        Confidence of the run; sets the inflation ``z`` (module docstring).

    Returns
    -------
    BiasEstimate
    """
    scores = np.asarray(scores, dtype=float)
    n_cal, n_fid, n_folds = scores.shape
    usable = np.all(np.isfinite(scores), axis=(1, 2))
    if usable.sum() < 1:
        raise ValueError("bias calibration: every calibration candidate failed at some "
                           "fidelity; give bias=[...] and sigma=... or check the estimator")
    s = scores[usable]
    diff = s - s[:, -1:, :]
    d = diff.mean(axis=2)
    se = (diff.std(axis=2, ddof=1) / np.sqrt(n_folds) if n_folds > 1
          else np.zeros_like(d))
    z = float(norm.ppf(1.0 - delta / (2.0 * max(s.shape[0], 1) * n_fid)))
    xi = (np.abs(d) + z * se).max(axis=0)
    spread = np.abs(d[:, None, :] - d[None, :, :]) + z * (se[:, None, :] + se[None, :, :])
    gamma = spread.max(axis=(0, 1)) if s.shape[0] > 1 else z * 2 * se.max(axis=0)
    var = s.var(axis=2, ddof=1) if n_folds > 1 else np.zeros(s.shape[:2])
    # A cheaper fidelity is never assumed less noisy than a more expensive one: a few
    # calibration folds can show no spread at all at a tiny subset (every candidate
    # predicting the majority class), which would make the radius far too small.
    sigmas = np.maximum.accumulate(np.sqrt(var.mean(axis=0))[::-1])[::-1]
    sigmas = np.maximum(sigmas, _TINY)
    sigma = float(sigmas.max())
    lam = np.nanmean(np.asarray(costs, dtype=float).reshape(n_cal, n_fid, n_folds),
                     axis=(0, 2))
    return BiasEstimate(monotone_bounds(xi), monotone_bounds(gamma), max(sigma, _TINY),
                        running_costs(lam, np.ones(n_fid), lam), d, sigmas,
                        int(s.shape[0] * max(n_folds - 1, 0)))


def extend_to_top(est: BiasEstimate, levels) -> BiasEstimate:
    """Extend a calibration made below the top fidelity to the top [RECON].

    ``est`` was measured on the ``r + 1`` cheapest fidelities with ``r`` as the
    reference; ``k = M − 1 − r`` steps up to the top are missing. Each missing
    step is taken as large as the largest measured bound of the step just
    below the reference (``est.xi[-2]``: biases are assumed not to grow
    towards the top), so the fidelity ``j`` steps above the reference gets
    ``(k − j)`` such steps and every measured bound is shifted by ``k`` of them
    (triangle inequality); σ above the reference is that of the reference
    (pooled with the run's own pulls later); costs above it are extrapolated
    along the log-log slope of the two highest measured fidelities (numeric
    levels) or ×3 per step. In the adaptive mode the run then doubles any
    bound a candidate seen at two fidelities violates.
    """
    n_meas, k = est.costs.size, len(levels) - est.costs.size
    up = np.arange(k, -1, -1, dtype=float)  # steps left to the top: reference .. top

    def ext(b):
        step = float(b[-2]) if b.size >= 2 else 0.0
        return monotone_bounds(np.r_[b[:-1] + k * step, up * step])

    lam = est.costs
    ratios = 3.0 ** np.arange(1, k + 1)
    try:
        lv = np.asarray(levels, dtype=float)
        if n_meas >= 2 and np.all(lv > 0):
            slope = np.log(lam[-1] / lam[-2]) / np.log(lv[n_meas - 1] / lv[n_meas - 2])
            ratios = (lv[n_meas:] / lv[n_meas - 1]) ** np.clip(slope, 0.5, 3.0)
    except (TypeError, ValueError):
        pass
    sig = est.sigmas if est.sigmas is not None else np.full(n_meas, est.sigma)
    full = np.r_[lam, lam[-1] * ratios]
    return BiasEstimate(ext(est.xi), ext(est.gamma), est.sigma,
                        running_costs(full, np.ones(full.size), full),
                        est.raw_bias, np.r_[sig, np.full(k, sig[-1])], est.dof)


def pooled_variance(stats, prior_var, prior_dof: int, min_dof: int = 20) -> np.ndarray:
    """Per-fidelity σ² pooling a calibration's estimate with the run's own pulls.

    ``σ²_m = (ν₀ s²₀ + Σ_k (n_km − 1) s²_km) / (ν₀ + Σ_k (n_km − 1))`` over
    arms with at least two pulls at ``m``; the calibration value alone is kept
    until the run adds ``min_dof`` degrees of freedom at that fidelity.
    """
    counts = stats.counts.astype(float)
    var = np.nan_to_num(stats.variances(), nan=0.0)
    dof = np.where(counts >= 2, counts - 1, 0.0)
    run_dof = dof.sum(axis=1)
    num = prior_dof * np.asarray(prior_var, float) + (dof * var).sum(axis=1)
    pooled = num / np.maximum(prior_dof + run_dof, 1)
    return np.where(run_dof >= min_dof, np.maximum(pooled, _TINY**2), prior_var)


def grow_violated(stats, bounds, radius, kind: str = "xi") -> tuple[np.ndarray, list[int]]:
    """Double the bounds of fidelities that a candidate seen at two fidelities violates.

    For a candidate with means ``µ̂_m`` and ``µ̂_m'`` (``m < m'``) at two
    fidelities, ``|µ_m − µ_m'| <= ξ_m + ξ_m'`` must hold (``γ_m + γ_m'`` for
    differences between candidates' biases is not checkable from one
    candidate, so γ is checked with the same per-candidate test). The bound of
    fidelity ``m`` is doubled when the observed gap exceeds the sum of the
    bounds plus both confidence radii.

    Parameters
    ----------
    stats : ArmStats
        Per (fidelity, arm) counts and sums.
    bounds : ndarray of shape (M,)
    radius : callable
        ``radius(counts) -> ndarray`` confidence radius of a mean of ``counts`` rewards.
    kind : str
        Only used in messages.

    Returns
    -------
    bounds : ndarray
        The new bounds (strictly decreasing).
    grown : list of int
        Fidelities whose bound was doubled.
    """
    means = stats.means()
    counts = stats.counts
    rad = np.where(counts > 0, radius(np.maximum(counts, 1)), np.inf)
    bounds = np.asarray(bounds, dtype=float).copy()
    low, high = np.triu_indices(bounds.size, 1)  # every pair of fidelities m < m'
    both = (counts[low] > 0) & (counts[high] > 0)
    with np.errstate(invalid="ignore"):
        gap = np.abs(means[low] - means[high]) - rad[low] - rad[high]
        violated = np.any(both & (gap > (bounds[low] + bounds[high])[:, None]), axis=1)
    grown = np.unique(low[violated])
    bounds[grown] = 2.0 * np.maximum(bounds[grown], _TINY)
    return monotone_bounds(bounds), grown.tolist()
