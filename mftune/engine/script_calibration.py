"""Calibration: estimate the noise σ, the bias bounds ξ / γ and the costs of a real task.

The guarantees of IISE need a sub-Gaussian noise scale σ and bias bounds ξ_m
(or γ_m for IISE-γ); a user's training script comes with neither. When the
space file does not give them, a study starts with a short calibration: a few
random configurations, each evaluated ``repeats`` times at every fidelity
(cheapest first). Its cost is part of the study's cost. The estimates
(this is the "estimated bounds" mode of DESIGN.md, a [RECON] heuristic — the
papers assume the bounds known):

* σ — pooled within-(arm, fidelity) standard deviation, raised to its
  one-sided 95% chi-square upper bound, floored at 10⁻³ × the spread of all
  calibration rewards (a deterministic script would otherwise get σ = 0);
* ξ_m — ``1.5 · max_i |µ̂_{i,m} − µ̂_{i,M}| + 2σ`` over the calibration arms
  (the ``2σ`` covers the noise of the estimated differences, whose standard
  deviation is about σ with two repeats); γ_m the same with the range of the
  differences in place of their largest magnitude; both then made strictly
  decreasing to ``ξ_M = 0`` as the policies require;
* costs (``costs = "measured"``) — the median measured seconds per
  fidelity, made strictly increasing.

Everything is computed from stored rows only, so every process that reads the
study derives the same settings.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

from ..policies.base import Pulls

__all__ = ["calibration_plan", "estimate_settings", "needs_calibration"]


def needs_calibration(needs: Sequence[str], known: dict) -> bool:
    """Whether some setting (σ, a bias bound in ``needs``, measured costs) is unknown."""
    return (known.get("sigma") is None or known.get("costs") == "measured"
            or any(known.get(n) is None for n in needs))


def calibration_plan(n_arms: int, n_fidelities: int, n_cal_arms: int, repeats: int,
                     seed) -> Pulls:
    """The calibration pulls: ``repeats`` rounds of every fidelity (cheapest first).

    The arms are a seeded random subset of size ``min(n_cal_arms, n_arms)``.
    """
    rng = np.random.default_rng([0 if seed is None else int(seed), 0xCA11B])
    arms = np.sort(rng.choice(n_arms, size=min(int(n_cal_arms), n_arms), replace=False))
    fid = np.repeat(np.arange(n_fidelities), arms.size)
    one = Pulls(np.tile(arms, n_fidelities), fid)
    return Pulls.concat([one] * int(repeats))


def _strictly_decreasing(b: np.ndarray) -> np.ndarray:
    b = b.copy()
    b[-1] = 0.0
    for m in range(b.size - 2, -1, -1):
        b[m] = max(b[m], b[m + 1] * (1 + 1e-6) + 1e-9)
    return b


def estimate_settings(arms, fidelities, rewards, costs, status, n_fidelities: int,
                      known: dict, needs: Sequence[str]) -> dict:
    """Fill in the unknown policy settings from the calibration pulls.

    Parameters
    ----------
    arms, fidelities : array-like of int
        The calibration pulls.
    rewards : array-like of float
        Rewards of the pulls (``nan`` for failures).
    costs : array-like of float
        Measured (or reported) costs.
    status : sequence of str
    n_fidelities : int
    known : dict
        Settings given by the user: ``sigma``, ``xi``, ``gamma``, ``costs``
        (a list, ``"nominal"`` values already substituted, or ``"measured"``).
    needs : sequence of str
        Bias bounds the policy needs.

    Returns
    -------
    dict
        ``known`` completed, plus ``estimated`` (the keys that were estimated)
        and ``calibration`` (what they were estimated from).

    Raises
    ------
    ValueError
        When too few calibration pulls succeeded to estimate what is needed.
    """
    arms = np.asarray(arms, dtype=np.int64)
    fids = np.asarray(fidelities, dtype=np.int64)
    rewards = np.asarray(rewards, dtype=float)
    costs = np.asarray(costs, dtype=float)
    ok = np.array([s == "done" for s in status]) & np.isfinite(rewards)
    out = dict(known)
    estimated = []
    m_top = n_fidelities - 1
    cal_arms = np.unique(arms)
    n = np.zeros((n_fidelities, cal_arms.size))
    s = np.zeros_like(n)
    ss = np.zeros_like(n)
    col = np.searchsorted(cal_arms, arms[ok])
    np.add.at(n, (fids[ok], col), 1)
    np.add.at(s, (fids[ok], col), rewards[ok])
    np.add.at(ss, (fids[ok], col), rewards[ok] ** 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s / n
    if out.get("sigma") is None:
        df = float(np.maximum(n - 1, 0).sum())
        if df < 1:
            raise ValueError("calibration: fewer than two successful runs of one configuration "
                             "at one fidelity; cannot estimate sigma (give objective.sigma)")
        within = np.where(n > 1, ss - n * np.nan_to_num(mean) ** 2, 0.0).sum()
        var = max(within, 0.0) / stats.chi2.ppf(0.05, df)  # df s² / χ²_{0.05, df}
        spread = float(np.ptp(rewards[ok])) if ok.any() else 0.0
        out["sigma"] = float(max(np.sqrt(var), 1e-3 * spread, 1e-9))
        estimated.append("sigma")
    sigma = out["sigma"]
    both = (n[m_top] > 0)[None, :] & (n > 0)
    for bound in needs:
        if out.get(bound) is not None:
            continue
        if n_fidelities > 1 and not both[:-1].any(axis=1).all():
            raise ValueError(f"calibration: no configuration succeeded at every fidelity; "
                             f"cannot estimate {bound} (give fidelity.{bound})")
        diff = np.where(both, mean - mean[m_top][None, :], np.nan)
        if bound == "xi":
            raw = 1.5 * np.nanmax(np.abs(diff), axis=1, initial=0.0) + 2 * sigma
        else:
            spread = np.nanmax(diff, axis=1, initial=-np.inf) - np.nanmin(
                diff, axis=1, initial=np.inf)
            raw = 1.5 * np.where(np.isfinite(spread), spread, 0.0) + 2 * sigma
        out[bound] = _strictly_decreasing(raw).tolist()
        estimated.append(bound)
    if out.get("costs") == "measured":
        med = np.array([np.median(costs[fids == m]) if np.any(fids == m) else np.nan
                        for m in range(n_fidelities)])
        med = np.where(np.isfinite(med) & (med > 0), med, 1e-3)
        for m in range(1, n_fidelities):
            med[m] = max(med[m], med[m - 1] * (1 + 1e-6) + 1e-9)
        out["costs"] = med.tolist()
        estimated.append("costs")
    out["estimated"] = estimated
    out["calibration"] = {"arms": cal_arms.tolist(), "pulls": int(arms.size),
                          "succeeded": int(ok.sum()), "cost": float(np.nansum(costs))}
    return out
