"""Exact minimisation of sums of one-sided quadratics, many problems at once.

``h(η) = Σ_j W_j ((S_j (η − R_j))₊)²`` along the last axis: the per-column and
per-pair problems of :mod:`mftune.policies.lower_bound` (MF-GRAD's sub-gradient
and GLR statistic) [RECON]. ``h`` is convex and piecewise quadratic; the
minimiser is found on the segment between two breakpoints where ``h'``
changes sign and solved there in closed form, by the same expressions
whichever way the segment was found: every breakpoint against every term
(small calls, fewest numpy calls) or sorted prefix sums (large calls, least
work). A problem's result does not depend on the other problems of its
call, so a batch of runs and each run alone make the same decisions
(tested bit for bit).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["argmin_one_sided", "clip", "column_terms", "take_last"]

#: Up to this many (breakpoint, term) products in a call :func:`argmin_one_sided` compares
#: every breakpoint with every term (fewer numpy calls); above it, it sums sorted prefixes
#: (less work).
_DENSE_TERMS = 16384

#: Terms per block of rows that :func:`argmin_one_sided` solves at a time: a large call's
#: temporaries then stay in the processor's cache (half the time per row, measured).
_BLOCK_TERMS = 12288


def argmin_one_sided(W, R, S):
    """Minimise ``h(η) = Σ_j W_j ((S_j (η − R_j))₊)²`` along the last axis, exactly.

    ``W`` and ``R`` have shape (..., J); the signs ``S`` (J,) are shared by every row.
    ``S_j = +1`` is a term increasing in η (zero left of ``R_j``), ``−1`` a
    decreasing one. Every row is assumed to have both kinds with the same
    breakpoints range, so the minimiser lies in ``[min R, max R]``: ``h'``
    is ``<= 0`` at the smallest breakpoint and ``>= 0`` at the largest.
    Returns ``(η*, h(η*))``, shapes ``W.shape[:-1]``.
    """
    shape, B = R.shape[:-1], R.shape[-1]
    W, R = W.reshape(-1, B), R.reshape(-1, B)
    block = max(1, _BLOCK_TERMS // B)
    if R.shape[0] <= block:
        eta, val = _argmin_rows(W, R, S)
    else:  # each row is solved alone: blocks of rows give the same values
        parts = [_argmin_rows(W[s:s + block], R[s:s + block], S)
                 for s in range(0, R.shape[0], block)]
        eta, val = (np.concatenate(x) for x in zip(*parts, strict=True))
    return eta.reshape(shape), val.reshape(shape)


def _argmin_rows(W, R, S):
    """:func:`argmin_one_sided` of the rows of ``W``, ``R`` (n, B); returns shapes (n,)."""
    B = R.shape[-1]
    rows = np.arange(R.shape[0])
    # h'(P_b)/2 = Σ_active W_j (P_b − R_j) at each breakpoint P_b: increasing terms left
    # of P_b, decreasing ones right of it (terms at R_j = P_b add 0 either way).
    if R.size * B <= _DENSE_TERMS:
        # every breakpoint against every term, (rows, B, B): few numpy calls
        P = np.sort(R, axis=-1)
        d = S * (R[:, None, :] - R[:, :, None])  # S_j (R_j − R_b), ≤ 0 where term j is active
        dh = _sum((S * W)[:, None, :] * np.minimum(d, 0.0))  # -h'/2 at R_b
        n_neg = _sum(dh > 0)
    else:
        # by prefix and suffix sums over the sorted breakpoints (all four in one cumsum;
        # the suffix sums reversed): less work for many rows
        order = np.argsort(R, axis=-1)
        at = (order + (rows * B)[:, None]).ravel()  # flat indices: faster than take_along_axis
        P, Ws = R.ravel()[at].reshape(R.shape), W.ravel()[at].reshape(R.shape)
        up = S[order] > 0
        wu, wd = np.where(up, Ws, 0.0), np.where(up, 0.0, Ws)
        sums = np.empty((4, *P.shape))
        sums[0], sums[2] = wu, wd[..., ::-1]
        np.multiply(wu, P, out=sums[1])
        sums[3] = (wd * P)[..., ::-1]
        np.cumsum(sums, axis=-1, out=sums)
        dh = P * (sums[0] + sums[2, ..., ::-1]) - (sums[1] + sums[3, ..., ::-1])
        n_neg = _sum(dh < 0)
    idx = np.minimum(np.maximum(n_neg, 1), B - 1)
    lo, hi = P[rows, idx - 1][:, None], P[rows, idx][:, None]
    mid = 0.5 * (lo + hi)
    act = W * (S * (mid - R) > 0)
    den = _sum(act)[:, None]
    root = np.divide(_sum(act * R)[:, None], den, out=lo.copy(), where=den > 0)  # lo if den = 0
    eta = clip(root, lo, hi)
    val = _sum(W * np.maximum(S * (eta - R), 0.0) ** 2)
    return eta[:, 0], val


def _sum(x):
    """``np.sum(x, axis=-1)`` (the same reduction) with less call overhead."""
    return np.add.reduce(x, axis=-1)


def clip(x, lo, hi):
    """``np.clip`` (the same values) with less call overhead, for the small arrays here."""
    return np.minimum(np.maximum(x, lo), hi)


def take_last(x, index):
    """``np.take_along_axis(x, index, axis=-1)[..., 0]`` for ``index`` of shape (..., 1)."""
    return np.take(x.reshape(-1), index.reshape(-1) + np.arange(0, x.size, x.shape[-1])
                   ).reshape(x.shape[:-1])


@lru_cache(maxsize=64)
def _signs(M: int, columns: int = 1) -> np.ndarray:
    """Signs ``S`` of the one-sided terms of ``columns`` columns, shape (2M·columns,), read-only."""
    out = np.tile(np.repeat([-1.0, 1.0], M), columns)
    out.flags.writeable = False
    return out


def column_terms(mu, w, xi, columns: int = 1):
    """One-sided terms of ``g_k`` (without 1/2σ²): ``W``, ``R`` (..., 2M), ``S`` (2M,).

    With ``columns=2``, ``mu`` and ``w`` are pairs ``(mu_i, mu_b)``, ``(w_i, w_b)``
    and the terms of ``g_i + g_b`` come back, shapes (..., 4M).
    """
    if columns == 1:
        mu, w = (mu,), (w,)
    R = np.concatenate([x for m in mu for x in (m - xi, m + xi)], axis=-1)
    W = np.concatenate([x for v in w for x in (v, v)], axis=-1)
    return W, R, _signs(mu[0].shape[-1], columns)
