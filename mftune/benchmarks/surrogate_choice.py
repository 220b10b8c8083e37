"""Which surrogate proposes the waves' candidates: a random forest or a density ratio?

``python -m mftune.benchmarks.surrogate_choice [--seeds 8] [--max-pulls 600]``
runs :class:`~mftune.MFTuner` (its default search, waves on) on cheap
synthetic multi-fidelity problems, once per surrogate of
:mod:`mftune.engine.surrogate` and once with a fixed candidate list
(``adaptive=False``), the same pull cap and seeds for all, and prints the
median simple regret (best value minus the true top-fidelity value of the
recommended configuration) per problem and method. docs/tuner.md
("Candidates that adapt") reports the run that chose the default.

The problems are the multi-fidelity test functions of Kandasamy et al.
(:mod:`mftune.benchmarks.mf_functions`: Currin, Park, Hartmann-3) with
Gaussian noise, and a narrow bump on a broad hill (:func:`bump`), whose
good region a first draw of 16 candidates usually misses. A pull is one
(configuration, fidelity, CV split): the estimator :class:`Synthetic`
returns the function's value at its fidelity plus noise seeded by the
split, so the tuner runs exactly as on real data.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ..engine import waves
from ..search.tuner import MFTuner
from ..space import Real
from .bump import SplitKeyed
from .mf_functions import get_mf_function

__all__ = ["PROBLEMS", "Synthetic", "bump", "run", "true_value"]

#: name -> (dimension, fidelities, noise sd, value range used to scale the noise)
PROBLEMS = {
    "bump": (2, 4, 0.01, 1.0),
    "currin": (2, 2, 0.2, 12.0),
    "park": (4, 2, 0.3, 25.0),
    "hartmann3": (3, 3, 0.05, 3.9),
}
_CENTRE = np.array([0.73, 0.27])


def bump(X: np.ndarray, m: int, n_fid: int = 4) -> np.ndarray:
    """A broad hill with a narrow bump (width 0.04) at its top; fidelity ``m`` of ``n_fid``
    is shifted down by ``0.2 / 3**m`` and tilted slightly (a bias that depends on ``x``)."""
    d2 = ((np.atleast_2d(X) - _CENTRE) ** 2).sum(axis=1)
    top = 0.5 - 0.5 * d2 + 0.2 * np.exp(-d2 / (2 * 0.04**2))
    gap = 0.2 / 3.0**m if m < n_fid - 1 else 0.0
    return top - gap * (1.0 + 0.3 * np.atleast_2d(X)[:, 0])


def true_value(problem: str, x: np.ndarray) -> float:
    """The noiseless top-fidelity value at ``x``."""
    d, n_fid, _, _ = PROBLEMS[problem]
    if problem == "bump":
        return float(bump(x, n_fid - 1, n_fid)[0])
    return float(get_mf_function(problem)(np.atleast_2d(x))[0])


def best_value(problem: str) -> float:
    """The maximum of the top fidelity."""
    if problem == "bump":
        return 0.7
    return float(get_mf_function(problem).f_opt)


class Synthetic(SplitKeyed):
    """A stand-in estimator whose score is a test function plus split-seeded noise.

    Parameters
    ----------
    problem : str
        A key of :data:`PROBLEMS`.
    level : int
        The fidelity, 1-based (the tuner's ``fidelity="level"``).
    x0, x1, x2, x3 : float
        The point of the unit cube (the first ``d`` are used).
    """

    def __init__(self, problem="bump", level=1, x0=0.5, x1=0.5, x2=0.5, x3=0.5):
        self.problem, self.level = problem, level
        self.x0, self.x1, self.x2, self.x3 = x0, x1, x2, x3

    def score(self, X, y=None):
        d, n_fid, noise, _ = PROBLEMS[self.problem]
        x = np.array([[self.x0, self.x1, self.x2, self.x3][:d]])
        m = int(self.level) - 1
        value = (bump(x, m, n_fid)[0] if self.problem == "bump"
                 else get_mf_function(self.problem)(x, m)[0])
        seed = abs(hash((self.key_, m, *np.round(x[0], 9).tolist())))  # numbers only
        return float(value + noise * np.random.default_rng(seed).standard_normal())


def _tuner(problem: str, seed: int, max_pulls: int, adaptive: bool) -> MFTuner:
    d, n_fid, _, _ = PROBLEMS[problem]
    space = {f"x{i}": Real(0.0, 1.0) for i in range(d)}
    return MFTuner(Synthetic(problem), space, fidelity="level",
                   fidelities=list(range(1, n_fid + 1)), n_candidates=16, cv=3,
                   costs=[3.0**m for m in range(n_fid)], max_pulls=max_pulls,
                   adaptive=adaptive, refit=False, random_state=seed)


def run(seeds=range(8), max_pulls: int = 600, problems=None, stream=None) -> dict:
    """Median regret per (problem, method) and the wins of each surrogate.

    Returns
    -------
    dict
        ``{problem: {method: [regret per seed]}}`` with methods ``"fixed"``,
        ``"forest"`` and ``"density"``.
    """
    X = np.random.default_rng(0).random((60, 2))
    y = np.zeros(60)
    out: dict = {}
    for problem in problems or PROBLEMS:
        d = PROBLEMS[problem][0]
        res: dict = {"fixed": [], **{s: [] for s in waves.SURROGATES}}
        for seed in seeds:
            for method in res:
                saved = waves.DEFAULT_SURROGATE
                if method != "fixed":
                    waves.DEFAULT_SURROGATE = method
                try:
                    t = _tuner(problem, seed, max_pulls, method != "fixed").fit(X, y)
                finally:
                    waves.DEFAULT_SURROGATE = saved
                x = np.array([t.best_params_[f"x{i}"] for i in range(d)])
                res[method].append(best_value(problem) - true_value(problem, x))
        out[problem] = res
        if stream is not None:
            med = {k: float(np.median(v)) for k, v in res.items()}
            print(f"{problem:10s} " + "  ".join(f"{k} {v:.4f}" for k, v in med.items()),
                  file=stream, flush=True)
    return out


def main(argv=None) -> None:
    import sys

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=8)
    p.add_argument("--max-pulls", type=int, default=600)
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    print("median simple regret (lower is better), "
          f"{args.seeds} seeds, max_pulls={args.max_pulls}")
    res = run(range(args.seeds), args.max_pulls, stream=sys.stdout)
    wins = {s: 0 for s in waves.SURROGATES}
    for r in res.values():
        a, b = (np.asarray(r[s]) for s in waves.SURROGATES)
        wins[waves.SURROGATES[0]] += int((a < b).sum())
        wins[waves.SURROGATES[1]] += int((b < a).sum())
    print(f"paired wins over all problems and seeds: {wins} "
          f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
