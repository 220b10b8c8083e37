"""The surrogate that proposes new candidates between waves (docs/tuner.md).

A surrogate is fitted on **every** evaluation of the search, at every
fidelity: one row per (candidate, fidelity) cell that has results, with the
candidate's unit-cube encoding (:meth:`mftune.space.Space.to_unit`) and the
fidelity's position ``m / (M - 1)`` as features, the cell's mean score as
target and its number of pulls as sample weight. It then scores a pool of
a few thousand points of the unit cube at the top fidelity and proposes the
best ones, distinct from every candidate already evaluated.

Two surrogates, both scikit-learn estimators (no hand-written regressor):

``"forest"`` (the default; SMAC-like)
    :class:`sklearn.ensemble.ExtraTreesRegressor`; the spread of its trees'
    predictions is the uncertainty. Acquisition: expected improvement over
    the incumbent's score at the top fidelity. Its upper quantile
    (``µ + z_0.9 σ`` with the trees' mean and spread, as SMAC reads a forest
    as a Gaussian: the trees' own values never exceed the best score seen) is
    what the search's "no new candidate is worth more than ε" test reads
    [RECON].
``"density"`` (TPE/BOHB-like)
    Two :class:`sklearn.neighbors.KernelDensity` models, of the best
    quarter ("good") and of the rest ("bad") of the candidates at the
    highest fidelity with at least ``d + 2`` of them; acquisition
    ``log l(x) - log g(x)`` over draws of the good density and uniform
    points. It has no predictive spread, so it never judges the search
    finished: waves go on until ``max_waves`` or the budget.

``python -m mftune.benchmarks.surrogate_choice`` measured the two on
synthetic multi-fidelity problems (docs/tuner.md has the command and the
figures): the density ratio is ahead in the median, the forest is never
worse than a fixed list where the density ratio is (Hartmann-3), and only
the forest feeds the stopping test, so it is the default [RECON].
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm
from sklearn.ensemble import ExtraTreesRegressor
from sklearn.neighbors import KernelDensity

__all__ = ["SURROGATES", "Proposal", "cell_table", "propose"]

#: The surrogates by name (the first is the default).
SURROGATES = ("forest", "density")
#: Points of the acquisition pool: uniform draws and perturbations of the best cells.
POOL_UNIFORM, POOL_LOCAL = 2048, 1024
#: Quantile of the forest's Gaussian prediction read by the "nothing worth more than ε" test.
UPPER_QUANTILE = 0.9


class Proposal:
    """What a surrogate proposes: new unit-cube points, and its judgement of them.

    Attributes
    ----------
    points : ndarray of shape (n, d)
        New points, best first, distinct from the evaluated candidates.
    worth : float
        The largest upper quantile of the predicted top-fidelity score over
        the acquisition pool (``nan``: the surrogate cannot judge).
    incumbent : float
        The score the worth is compared with (the incumbent's top-fidelity
        mean, or its prediction when it has no top-fidelity result).
    """

    def __init__(self, points, worth: float, incumbent: float):
        self.points, self.worth, self.incumbent = points, float(worth), float(incumbent)


def cell_table(units: np.ndarray, counts: np.ndarray, sums: np.ndarray):
    """Rows ``(features, mean, weight)`` of every (candidate, fidelity) cell with results.

    Parameters
    ----------
    units : ndarray of shape (K, d)
        Unit-cube encodings of the candidates.
    counts, sums : ndarray of shape (M, K)
        Pulls and summed scores per (fidelity, candidate).

    Returns
    -------
    X : ndarray of shape (n, d + 1)
        Encoding and fidelity position ``m / (M - 1)`` (1 for a single fidelity).
    y, w : ndarray of shape (n,)
        Mean score and number of pulls of each cell.
    """
    n_fid = counts.shape[0]
    f, a = np.nonzero(counts)
    pos = f / (n_fid - 1) if n_fid > 1 else np.ones(f.size)
    X = np.column_stack([units[a], pos])
    return X, sums[f, a] / counts[f, a], counts[f, a].astype(float)


def _top(points: np.ndarray) -> np.ndarray:
    return np.column_stack([points, np.ones(len(points))])


def _pool(units: np.ndarray, best: np.ndarray, rng) -> np.ndarray:
    """Uniform points and Gaussian perturbations of the ``best`` candidates' encodings."""
    d = units.shape[1]
    uniform = rng.random((POOL_UNIFORM, d))
    centres = units[rng.choice(best, POOL_LOCAL)]
    scale = rng.choice([0.02, 0.05, 0.15], size=(POOL_LOCAL, 1))
    local = np.clip(centres + scale * rng.standard_normal((POOL_LOCAL, d)), 0.0, 1.0)
    return np.vstack([local, uniform])


def _forest(X, y, w, units, counts, sums, incumbent, rng, seed):
    model = ExtraTreesRegressor(n_estimators=32, min_samples_leaf=1, max_features=1.0,
                                random_state=seed, n_jobs=1).fit(X, y, sample_weight=w)
    means = sums[-1] / np.maximum(counts[-1], 1)
    has_top = counts[-1] > 0
    # the best cells by the surrogate's top-fidelity prediction seed the local pool
    evaluated = np.flatnonzero(counts.sum(axis=0) > 0)
    pred_eval = model.predict(_top(units[evaluated]))
    best = evaluated[np.argsort(-pred_eval)[:5]]
    pool = _pool(units, best, rng)
    trees = np.stack([t.predict(_top(pool)) for t in model.estimators_])
    mu, sd = trees.mean(axis=0), trees.std(axis=0)
    if has_top[incumbent]:
        inc = float(means[incumbent])
    else:
        inc = float(model.predict(_top(units[[incumbent]]))[0])
    sd_safe = np.maximum(sd, 1e-12)
    z = (mu - inc) / sd_safe
    ei = np.where(sd > 1e-12, (mu - inc) * norm.cdf(z) + sd_safe * norm.pdf(z),
                  np.maximum(mu - inc, 0.0))
    worth = float((mu + norm.ppf(UPPER_QUANTILE) * sd).max())
    return pool, ei, worth, inc


def _density(X, y, w, units, counts, sums, incumbent, rng, seed):
    d = units.shape[1]
    n_fid = counts.shape[0]
    fid = next((m for m in range(n_fid - 1, -1, -1) if np.count_nonzero(counts[m]) >= d + 2), 0)
    arms = np.flatnonzero(counts[fid])
    means = sums[fid, arms] / counts[fid, arms]
    order = np.argsort(-means)
    n_good = max(1, int(np.ceil(0.25 * arms.size)))
    good, bad = units[arms[order[:n_good]]], units[arms[order[n_good:]]]
    if bad.shape[0] == 0:
        bad = rng.random((8, d))
    bw = max(0.05, 1.06 * float(np.mean(np.std(units[arms], axis=0)) + 1e-9)
             * arms.size ** (-1.0 / (d + 4)))
    kde_good = KernelDensity(bandwidth=bw).fit(good)
    kde_bad = KernelDensity(bandwidth=bw).fit(bad)
    drawn = np.clip(kde_good.sample(POOL_LOCAL, random_state=seed), 0.0, 1.0)
    pool = np.vstack([drawn, rng.random((POOL_UNIFORM, d))])
    score = kde_good.score_samples(pool) - kde_bad.score_samples(pool)
    return pool, score, np.nan, np.nan


def propose(units: np.ndarray, counts: np.ndarray, sums: np.ndarray, incumbent: int,
            n_new: int, space, *, surrogate: str = "forest", seed: int = 0) -> Proposal:
    """Fit the surrogate on every evaluated cell and propose ``n_new`` new points.

    Parameters
    ----------
    units : ndarray of shape (K, d)
        Unit-cube encodings of the candidates evaluated so far.
    counts, sums : ndarray of shape (M, K)
        Their pulls and summed scores per fidelity.
    incumbent : int
        Index of the recommended candidate.
    n_new : int
        Points to propose.
    space : Space
        Decodes points (``from_unit``) and re-encodes them (``to_unit``), so a
        proposal is compared with the candidates as the configuration it
        decodes to: two points that decode to the same configuration are one.
    surrogate : {"forest", "density"}
    seed : int
        Seeds the pool and the estimator.

    Returns
    -------
    Proposal
    """
    if surrogate not in SURROGATES:
        raise ValueError(f"surrogate must be one of {list(SURROGATES)}; got {surrogate!r}")
    rng = np.random.default_rng(seed)
    X, y, w = cell_table(units, counts, sums)
    fit = _forest if surrogate == "forest" else _density
    pool, acq, worth, inc = fit(X, y, w, units, counts, sums, incumbent, rng, seed)
    order = np.argsort(-acq, kind="stable")
    canon = space.to_unit(space.from_unit(pool[order]))  # what each point decodes to
    points = _distinct(canon, units, n_new, min_dist=0.02 * np.sqrt(units.shape[1]))
    return Proposal(points, worth, inc)


def _distinct(ranked: np.ndarray, existing: np.ndarray, n: int, min_dist: float) -> np.ndarray:
    """The first ``n`` rows of ``ranked`` that are new configurations and at least
    ``min_dist`` apart from each other (re-scanned without the spacing if too few)."""
    key = np.round(existing, 9)
    seen = {row.tobytes() for row in key}
    rk = np.round(ranked, 9)
    fresh = np.array([r.tobytes() not in seen for r in rk])
    _, first = np.unique(rk, axis=0, return_index=True)
    unique = np.zeros(len(rk), dtype=bool)
    unique[first] = True
    cand = ranked[fresh & unique]
    picked: list[int] = []
    for i in range(len(cand)):
        if len(picked) == n:
            break
        if picked and np.min(np.linalg.norm(cand[picked] - cand[i], axis=1)) < min_dist:
            continue
        picked.append(i)
    if len(picked) < n:  # a small discrete space: any new configuration will do
        rest = [i for i in range(len(cand)) if i not in set(picked)]
        picked += rest[: n - len(picked)]
    return cand[np.array(picked, dtype=np.int64)] if picked else cand[:0]
