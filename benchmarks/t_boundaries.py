"""The top phase's paired t-test boundary against an anytime-valid t confidence sequence.

The top phase certifies a leader when every survivor's paired t statistic
``T = √t (d̄ + ε) / s_d`` reaches ``q_t``, the ``1 − δ' w_t`` quantile of
Student's t with ``t − 1`` degrees of freedom, ``δ' = δ_g/(K − 1)`` and
``w_t = t^(−3/2) / (ζ(3/2) − 1)`` (:mod:`mftune.policies.top_glr`): a union
over the rounds ``t``. An
alternative without that union is a confidence sequence for a Gaussian mean
with unknown variance [RECON, after Lai (1976) and Wang & Ramdas (2023)]:
with ``S = Σ x_i`` and ``V = Σ x_i²`` after ``n`` rounds, mixing the
standardised mean ``θ = µ/σ`` over ``N(0, 1/c)`` and the scale over the right
Haar measure ``dσ/σ`` gives the likelihood ratio of the scale-invariant data

    M_n = √(c/(c + n)) · (V / (V − S²/(c + n)))^(n/2),

a nonnegative martingale under ``µ = 0`` that starts at 1, so by Ville's
inequality it exceeds ``1/δ'`` at some round with probability at most ``δ'``.
In terms of ``T`` (``S²/V = n T²/(n − 1 + T²)``) the crossing is
``T² >= A (n − 1)/(n − A)`` with ``A = (c + n)(1 − ((c/(c + n)) δ'²)^(1/n))``
(never when ``A >= n``); ``c`` is fixed in advance.

Printed, per round count: the union's ``q_t`` and the mixture's boundary for
each ``c``; then, with ``--check``, the share of simulated Gaussian sequences
under the null that cross the mixture's boundary within ``--rounds`` rounds
(Ville's bound: at most δ').

Run: ``python benchmarks/t_boundaries.py`` (the defaults are the first wave
of ``mlp-letter``: δ_g = 0.0038, 16 candidates).
"""

from __future__ import annotations

import argparse

import numpy as np

from mftune.policies.top_glr import paired_t_quantile


def mixture_boundary(n: np.ndarray, delta: float, c: float) -> np.ndarray:
    """The |T| the mixture confidence sequence needs after ``n`` rounds (``inf``: none)."""
    n = np.asarray(n, dtype=float)
    a = (c + n) * (1.0 - (c / (c + n) * delta**2) ** (1.0 / n))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(a < n, np.sqrt(a * (n - 1.0) / (n - a)), np.inf)


def crossing_rate(delta: float, c: float, rounds: int, runs: int, seed: int = 0) -> float:
    """Share of ``runs`` null sequences (N(0, 1)) whose mixture crosses ``1/delta`` within
    ``rounds`` rounds."""
    x = np.random.default_rng(seed).standard_normal((runs, rounds))
    n = np.arange(1, rounds + 1)
    s, v = np.cumsum(x, axis=1), np.cumsum(x * x, axis=1)
    log_m = 0.5 * np.log(c / (c + n)) - 0.5 * n * np.log1p(-s * s / ((c + n) * v))
    return float(np.mean(np.any(log_m >= np.log(1.0 / delta), axis=1)))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delta-g", type=float, default=0.0038)
    ap.add_argument("--arms", type=int, default=16)
    ap.add_argument("--c", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--runs", type=int, default=20000)
    args = ap.parse_args(argv)
    delta = args.delta_g / (args.arms - 1)
    n = np.array([3, 4, 6, 8, 9, 12, 16, 24, 32, 64])
    print(f"delta' = {delta:.3g} (delta_g {args.delta_g:g} over {args.arms - 1} comparisons)")
    print("rounds " + " ".join(f"{k:>6d}" for k in n))
    print("union  " + " ".join(f"{q:6.2f}" for q in
                              paired_t_quantile(n, args.delta_g, args.arms)))
    for c in args.c:
        print(f"c={c:<4g} " + " ".join(f"{q:6.2f}" for q in mixture_boundary(n, delta, c)))
    if args.check:
        for c in args.c:
            rate = crossing_rate(0.05, c, args.rounds, args.runs)
            print(f"c={c:g}: {rate:.4f} of {args.runs} null sequences cross 1/0.05 within "
                  f"{args.rounds} rounds (Ville: at most 0.05)")


if __name__ == "__main__":
    main()
