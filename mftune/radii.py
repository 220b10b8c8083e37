"""Confidence radii used by the policies, each with its source.

All functions are vectorised over their count arguments and return ``+inf``
where the count is zero (an arm never pulled is unconstrained).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "gp_ucb_beta",
    "PSI_KINDS",
    "hoeffding_radius",
    "iise_phase_length",
    "iise_radius",
    "mixture_radius",
    "phase_length",
    "lucb_radius",
    "inverse_sqrt_counts",
    "lucb_radius_many",
    "lucb_radius_scale",
    "mf_ucb_radius",
    "psi",
    "psi_inverse",
    "ugape_radius",
]


def _counts(n) -> np.ndarray:
    return np.asarray(n, dtype=float)


def _radius_out(out: np.ndarray, counts: np.ndarray):
    """``out`` with ``inf`` where the count is zero, as a float for a scalar count."""
    out = np.where(counts > 0, out, np.inf)
    return out if out.ndim else float(out)


def iise_radius(t, delta: float, sigma2: float = 1.0):
    """IISE's anytime confidence radius ``B(t, δ) = sqrt(2σ² log(4t²/δ) / t)``.

    Source: Poiani, Metelli & Restelli (2022), Section 4, and the authors'
    ``utils/math.py`` [paper, code]. It is a union bound over rounds of the
    sub-Gaussian tail with variance proxy ``sigma2``; ``B(0, δ) = +inf``.

    Parameters
    ----------
    t : int or array-like of int
        Number of samples behind the empirical mean (rounds in the phase).
    delta : float
        Confidence level of this bound (IISE passes ``δ/(K M)``, SE ``δ/K``).
    sigma2 : float, default=1.0
        Sub-Gaussian variance proxy σ².

    Returns
    -------
    float or ndarray
        The radius, ``inf`` where ``t == 0``.
    """
    t = _counts(t)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.sqrt(2.0 * sigma2 * np.log(4.0 * t * t / delta) / t)
    return _radius_out(out, t)


def mixture_radius(t, delta: float, sigma2: float = 1.0, rho: float = 1.0):
    """Anytime-valid normal-mixture radius ``sqrt(σ²(t+ρ) log((t+ρ)/(ρ δ²))) / t``.

    Source: Robbins' normal mixture, in the form of Howard, Ramdas, McAuliffe
    & Sekhon (2021), "Time-uniform, nonparametric, nonasymptotic confidence
    sequences", Eq. (14) with intrinsic time ``v = σ² t`` and mixture
    precision ``ρ σ²`` [paper]. For σ-sub-Gaussian rewards the mean of the
    first ``t`` lies within this radius of the true mean for *every* ``t``
    at once with probability ``>= 1 − δ`` (Ville's inequality on the
    two-sided mixture supermartingale), so no union bound over rounds is
    needed: from about ten samples on it asks half the samples of
    :func:`iise_radius` at the same δ. ``ρ = 1`` (tightest near ``t = 1``
    to a few tens) is [calib] (docs/algorithms.md).

    Parameters
    ----------
    t : int or array-like of int
        Number of samples behind the mean.
    delta : float
        Error probability of the whole sequence.
    sigma2 : float, default=1.0
        Sub-Gaussian variance proxy σ².
    rho : float, default=1.0
        Mixture precision in units of ``1/σ²``.

    Returns
    -------
    float or ndarray
        The radius, ``inf`` where ``t == 0``.
    """
    t = _counts(t)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.sqrt(sigma2 * (t + rho) * np.log((t + rho) / (rho * delta * delta))) / t
    return _radius_out(out, t)


def lucb_radius(n, t, delta: float, n_arms: int, n_fidelities: int, L: float | None = None):
    """Wang et al.'s radius ``β(n, t, δ) = sqrt(log(L t⁴ / δ) / n)``.

    Source: Wang, Wu, Chen & Lui (2023), Eq. 4-5 [paper]; Theorem 3.4 needs
    ``L >= 4 K M`` and ``L = 4 K M`` is the default [RECON, as in the
    third-party re-implementation]. Rewards are assumed in ``[0, 1]``.

    Parameters
    ----------
    n : int or array-like
        Pulls of the arm at the fidelity in question.
    t : int
        Time index (total pulls so far, see docs/algorithms.md [calib]).
    delta : float
        Confidence level.
    n_arms, n_fidelities : int
        ``K`` and ``M``, used for the default ``L``.
    L : float, optional
        Override of ``4 K M``.
    """
    if L is None:
        L = 4.0 * n_arms * n_fidelities
    n = _counts(n)
    t = max(float(t), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.sqrt(np.log(L * t**4 / delta) / n)
    return _radius_out(out, n)


def hoeffding_radius(n, delta: float, value_range: float = 1.0):
    """Hoeffding's two-sided radius ``range * sqrt(log(2/δ) / (2n))``.

    Source: Hoeffding (1963): for ``n`` i.i.d. rewards in an interval of width
    ``value_range``, ``P(|mean − µ| ≥ r) ≤ 2 exp(−2 n r² / range²)``. It is a
    fixed-``n`` bound; take a union bound (divide ``delta``) for anytime use.
    """
    n = _counts(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = value_range * np.sqrt(np.log(2.0 / delta) / (2.0 * n))
    return _radius_out(out, n)


def phase_length(threshold: float, radius) -> float:
    """Smallest ``t >= 1`` with ``4 radius(t) <= threshold`` (``inf`` if threshold <= 0,
    or if no ``t`` below ``2**62`` reaches it).

    IISE's phase switch (Poiani et al. 2022, Alg. 1) fires at the first round
    whose radius satisfies ``α_m >= 4 B(t, δ')``; as the radii here decrease
    in ``t`` for ``t >= 1`` that round is deterministic and found by a
    doubling search followed by bisection.

    Parameters
    ----------
    threshold : float
    radius : callable
        ``radius(t) -> float`` for an integer ``t >= 1``.
    """
    if not threshold > 0:
        return np.inf
    lo, hi = 0, 1
    while 4.0 * radius(hi) > threshold:
        if hi >= 2**62:
            return np.inf
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if 4.0 * radius(mid) > threshold:
            lo = mid
        else:
            hi = mid
    return float(hi)


def iise_phase_length(threshold: float, delta: float, sigma2: float = 1.0) -> float:
    """:func:`phase_length` of :func:`iise_radius` at ``δ`` and ``σ²``."""
    return phase_length(threshold, lambda t: iise_radius(t, delta, sigma2))


def gp_ucb_beta(t, n_dims: int, kind: str = "practical", delta: float = 0.05,
                n_fidelities: int = 1):
    """GP-UCB / MF-GP-UCB exploration weight ``β_t`` (the UCB is ``µ + β_t^{1/2} σ``).

    ``kind="practical"``: ``β_t = 0.2 · d · log(2 d t)``, what the MF-GP-UCB
    authors run [code, acqMFGPUCB.m; docs/algorithms.md]. ``kind="theory"``:
    Srinivas et al. (2010), Theorem 2, for a compact ``[0, 1]^d`` domain with
    the kernel-derivative constants ``a = b = 1`` and ``δ`` split over the
    ``M`` fidelities as in Kandasamy et al. (2016), Theorem 3:
    ``β_t = 2 log(2 M π² t² / (3 δ)) + 2 d log(t² d sqrt(log(4 d M / δ)))``
    [paper; the constants are ours, the growth ``d log(t/δ)`` is the paper's].

    Parameters
    ----------
    t : int or array-like of int
        Iteration index, ``t >= 1``.
    n_dims : int
        Dimension ``d``.
    kind : {"practical", "theory"}
    delta : float, default=0.05
        Failure probability (theory form only).
    n_fidelities : int, default=1
        ``M`` (theory form only).
    """
    t = np.maximum(_counts(t), 1.0)
    d = float(n_dims)
    if kind == "practical":
        return 0.2 * d * np.log(2.0 * d * t)
    if kind == "theory":
        if not 0 < delta < 1:
            raise ValueError(f"delta must lie in (0, 1); got {delta!r}")
        m = float(n_fidelities)
        return 2.0 * np.log(2.0 * m * np.pi**2 * t**2 / (3.0 * delta)) + 2.0 * d * np.log(
            t**2 * d * np.sqrt(np.log(4.0 * d * m / delta))
        )
    raise ValueError(f"kind must be one of 'practical', 'theory'; got {kind!r}")
def lucb_radius_scale(t, delta: float, L: float):
    """``sqrt(log(L t⁴ / δ))``, the ``n``-free factor of Wang et al.'s radius (``t`` clipped at 1).

    ``β(n, t, δ) = lucb_radius_scale(t, δ, L) / sqrt(n)``; simulations that keep
    ``1/sqrt(n)`` per (fidelity, arm) multiply by this factor each round.
    """
    t = np.maximum(np.asarray(t, dtype=float), 1.0)
    return np.sqrt(np.log(L * t**4 / delta))


def inverse_sqrt_counts(n):
    """``1 / sqrt(n)`` with ``+inf`` where ``n == 0`` (radius factor of an unpulled arm)."""
    n = _counts(n)
    with np.errstate(divide="ignore"):
        return 1.0 / np.sqrt(n)


def lucb_radius_many(n, t, delta: float, L: float):
    """Wang et al.'s ``β(n, t, δ) = sqrt(log(L t⁴ / δ) / n)`` with ``t`` broadcast against ``n``.

    The array form of :func:`lucb_radius` for simulations that advance many
    independent runs at once (each with its own time index ``t``), computed as
    ``lucb_radius_scale(t) * inverse_sqrt_counts(n)`` so that every code path
    gets bit-identical radii. ``t`` is clipped below at 1; ``+inf`` where
    ``n == 0`` [paper Eq. 4-5].

    Parameters
    ----------
    n : array-like
        Pull counts.
    t : array-like
        Time indices, broadcastable against ``n``.
    delta : float
        Confidence level.
    L : float
        The factor ``L`` (Theorem 3.4 needs ``L >= 4 K M``).
    """
    return lucb_radius_scale(t, delta, L) * inverse_sqrt_counts(n)


#: Scale ``κ`` of ``ψ^{-1}(y) = κ sqrt(y)`` for the concentration laws of MF-UCB.
PSI_KINDS = ("sub-gaussian", "hoeffding")


def psi_inverse(y, psi: str = "sub-gaussian", sigma: float = 1.0):
    """Inverse of MF-UCB's concentration function ``ψ`` (Kandasamy et al. 2016, Eq. 2).

    ``ψ(ε) = ε² / (2σ²)`` for σ-sub-Gaussian rewards, so ``ψ^{-1}(y) = σ sqrt(2y)``;
    ``ψ(ε) = 2ε²`` (Hoeffding) for rewards in ``[0, 1]``, so
    ``ψ^{-1}(y) = sqrt(y / 2)`` [paper Sec. 2].

    Parameters
    ----------
    y : float or array-like (>= 0)
    psi : {"sub-gaussian", "hoeffding"}
    sigma : float
        Sub-Gaussian scale (ignored for ``"hoeffding"``).
    """
    y = np.asarray(y, dtype=float)
    if psi == "sub-gaussian":
        out = sigma * np.sqrt(2.0 * y)
    elif psi == "hoeffding":
        out = np.sqrt(y / 2.0)
    else:
        raise ValueError(f"psi must be one of {PSI_KINDS}; got {psi!r}")
    return out if out.ndim else float(out)


def psi(eps, psi: str = "sub-gaussian", sigma: float = 1.0):
    """MF-UCB's concentration function ``ψ`` (see :func:`psi_inverse`)."""
    eps = np.asarray(eps, dtype=float)
    if psi == "sub-gaussian":
        out = eps * eps / (2.0 * sigma * sigma)
    elif psi == "hoeffding":
        out = 2.0 * eps * eps
    else:
        raise ValueError(f"psi must be one of {PSI_KINDS}; got {psi!r}")
    return out if out.ndim else float(out)


def mf_ucb_radius(n, t, rho: float, psi: str = "sub-gaussian", sigma: float = 1.0):
    """MF-UCB's exploration bonus ``ψ^{-1}(ρ log t / n)`` (Kandasamy et al. 2016, Eq. 3).

    ``+inf`` where ``n == 0``; ``t`` is clipped below at 1 (``log 1 = 0``).
    """
    n = _counts(n)
    logt = np.log(max(float(t), 1.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = psi_inverse(rho * logt / n, psi, sigma)
    return _radius_out(out, n)


def ugape_radius(n, t, *, budget_a: float | None = None, delta: float | None = None,
                 c: float = 0.5, n_arms: int = 2, value_range: float = 1.0):
    """UGapE's confidence radius ``β_k(t−1)`` (Gabillon et al. 2012, Eq. 4).

    Fixed budget (UGapEb): ``b sqrt(a / T_k)``; fixed confidence (UGapEc):
    ``b sqrt(c log(4 K (t−1)³ / δ) / T_k)`` with ``c = 1/2`` [paper]. Give
    exactly one of ``budget_a`` and ``delta``. ``+inf`` where ``T_k == 0``.

    Parameters
    ----------
    n : array-like
        Pull counts ``T_k(t−1)``.
    t : int
        Current round ``t`` (the radius uses ``t − 1``, clipped below at 1).
    budget_a : float, optional
        Exploration parameter ``a`` of UGapEb.
    delta : float, optional
        Confidence level of UGapEc.
    c : float, default=0.5
    n_arms : int
    value_range : float, default=1.0
        ``b``: rewards lie in ``[0, b]``.
    """
    if (budget_a is None) == (delta is None):
        raise ValueError("give exactly one of budget_a (UGapEb) and delta (UGapEc)")
    n = _counts(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        if budget_a is not None:
            out = value_range * np.sqrt(budget_a / n)
        else:
            s = max(float(t) - 1.0, 1.0)
            out = value_range * np.sqrt(c * np.log(4.0 * n_arms * s**3 / delta) / n)
    return _radius_out(out, n)
