"""Tables of a tuning run: ``cv_results_`` (one row per candidate) and ``pulls_`` (one per pull).

Both are dicts of equal-length columns, importable with ``pandas.DataFrame``.
"""

from __future__ import annotations

import numpy as np

from .continuation import saved_estimates

__all__ = ["build_cv_results", "build_pulls"]


def build_pulls(records, levels) -> dict:
    """One row per pull: arm, fidelity, level, split, training and validation rows
    (``n_train``, ``n_valid``), scores, times, status, error, phase,
    start time and the worker (``"host:pid"``) that ran it.

    With continuation: ``continued`` (the pull continued a lower-fidelity
    model), ``continued_from`` (that model's fidelity, ``-1`` if fitted from
    scratch), ``reused_cost`` (fit seconds already spent on that model),
    ``saved_cost`` (estimated seconds saved,
    :func:`mftune.search.continuation.saved_estimates`) and ``cache_time`` (seconds
    pickling models for the cache, part of ``cost``).
    """
    metrics = sorted({k for r in records for k in r.scores})
    cols = {
        "candidate": np.array([r.arm for r in records], dtype=np.int64),
        "fidelity": np.array([r.fidelity for r in records], dtype=np.int64),
        "level": [levels[r.fidelity] for r in records],
        "split": np.array([r.split for r in records], dtype=np.int64),
        "n_train": np.array([r.n_train for r in records], dtype=np.int64),
        "n_valid": np.array([r.n_valid for r in records], dtype=np.int64),
        "fit_time": np.array([r.fit_time for r in records], dtype=float),
        "score_time": np.array([r.score_time for r in records], dtype=float),
        "cost": np.array([r.cost for r in records], dtype=float),
        "status": [r.status for r in records],
        "error": [r.error for r in records],
        "phase": [r.phase for r in records],
        "started": np.array([r.started for r in records], dtype=float),
        "worker": [getattr(r, "worker", "") for r in records],
        "continued": np.array([r.continued_from >= 0 for r in records], dtype=bool),
        "continued_from": np.array([r.continued_from for r in records], dtype=np.int64),
        "reused_cost": np.array([r.reused for r in records], dtype=float),
        "saved_cost": saved_estimates(records),
        "cache_time": np.array([r.cache_time for r in records], dtype=float),
    }
    for m in metrics:  # a column per metric: "score" (single-metric scoring) or score_<name>
        cols["score" if m == "score" else f"score_{m}"] = np.array(
            [r.scores.get(m, np.nan) for r in records], dtype=float)
    return cols


def _param_columns(candidates) -> dict:
    """``param_<name>`` masked arrays (masked where a candidate lacks the parameter), of
    the values' numeric dtype when they share one, else ``object``, as ``GridSearchCV``."""
    names = sorted({k for c in candidates for k in c})
    out = {}
    for name in names:
        try:
            kind = np.array([c[name] for c in candidates if name in c])
            dtype = kind.dtype if kind.ndim == 1 and kind.dtype.kind in "biuf" else object
        except ValueError:  # ragged values (lists of different lengths)
            dtype = object
        col = np.ma.MaskedArray(np.empty(len(candidates), dtype=dtype),
                                mask=np.ones(len(candidates), dtype=bool))
        for i, c in enumerate(candidates):
            if name in c:
                col[i] = c[name]
        out[f"param_{name}"] = col
    return out


def _means_by(groups, values, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and (population) standard deviation of ``values`` per group; NaN for none."""
    count = np.bincount(groups, minlength=n_groups).astype(float)
    total = np.bincount(groups, values, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / count, np.nan)
        dev = values - mean[groups]
        std = np.sqrt(np.bincount(groups, dev * dev, minlength=n_groups) / count)
    return mean, np.where(count > 0, std, np.nan)


def build_cv_results(candidates, records, levels, metrics, metric, best_index,
                     eliminated_round, eliminated_fidelity, eliminated_time,
                     n_splits: int = 1) -> dict:
    """One row per candidate (see :class:`mftune.MFTuner`'s ``cv_results_``).

    Scores are summarised at the highest fidelity the candidate reached
    (its mean and standard deviation over that fidelity's pulls, failures
    counted with their error score); ``split{i}_test_<name>`` is the mean
    there over the pulls on fold ``i`` of the ``n_splits`` (one per repeat of
    the splitter; NaN for a fold not pulled). ``rank_test_<name>`` orders
    candidates by (highest fidelity reached, mean score) for every metric, ties
    sharing the lowest rank, and puts the recommended candidate first in the
    ranking of the optimised ``metric``. Fit and score times are over all the candidate's pulls.
    """
    n, n_fid = len(candidates), len(levels)
    arm = np.array([r.arm for r in records], dtype=np.int64)
    fid = np.array([r.fidelity for r in records], dtype=np.int64)
    cost = np.array([r.cost for r in records], dtype=float)
    fit_t = np.array([r.fit_time for r in records], dtype=float)
    score_t = np.array([r.score_time for r in records], dtype=float)
    failed = np.array([r.status != "done" for r in records], dtype=bool)
    pulls = np.zeros((n_fid, n), dtype=np.int64)
    costs = np.zeros((n_fid, n))
    if len(records):
        np.add.at(pulls, (fid, arm), 1)
        np.add.at(costs, (fid, arm), cost)
    reached = np.where(pulls.sum(axis=0) > 0, n_fid - 1 - np.argmax(pulls[::-1] > 0, axis=0), -1)
    at_top = (len(records) > 0) & (fid == reached[arm] if len(records) else np.zeros(0, bool))
    res: dict = {"params": list(candidates)}
    res.update(_param_columns(candidates))
    fold = np.array([r.split for r in records], dtype=np.int64) % max(int(n_splits), 1)
    top_arm, top_fold = arm[at_top], fold[at_top]
    for name in metrics:  # "score" with single-metric scoring, as GridSearchCV names it
        vals = np.array([r.scores.get(name, np.nan) for r in records], dtype=float)[at_top]
        by_fold = _means_by(top_arm * n_splits + top_fold, vals, n * n_splits)[0]
        for i, col in enumerate(by_fold.reshape(n, n_splits).T):
            res[f"split{i}_test_{name}"] = col
        res[f"mean_test_{name}"], res[f"std_test_{name}"] = _means_by(top_arm, vals, n)
    for name in metrics:  # every metric ranked, the optimised one with the answer first
        mean = np.nan_to_num(res[f"mean_test_{name}"], nan=-np.inf)
        order = np.lexsort((-mean, -reached))
        if name == metric:
            order = np.concatenate([[best_index], order[order != best_index]])
        # ties (same fidelity reached, same mean) share the lowest rank, as GridSearchCV's
        key = np.stack([reached[order], mean[order]])
        first = np.r_[True, np.any(key[:, 1:] != key[:, :-1], axis=0)]
        rank = np.empty(n, dtype=np.int32)
        rank[order] = np.maximum.accumulate(np.where(first, np.arange(1, n + 1), 0))
        res[f"rank_test_{name}"] = rank
    res["fidelity_reached"] = reached
    res["level_reached"] = [levels[r] if r >= 0 else None for r in reached]
    res["mean_fit_time"], res["std_fit_time"] = _means_by(arm, fit_t, n)
    res["mean_score_time"], res["std_score_time"] = _means_by(arm, score_t, n)
    for m in range(n_fid):
        res[f"n_pulls_fidelity_{m}"] = pulls[m]
        res[f"cost_fidelity_{m}"] = costs[m]
    res["n_failed"] = (np.bincount(arm[failed], minlength=n) if len(records)
                       else np.zeros(n, dtype=np.int64))
    res["eliminated_fidelity"] = np.asarray(eliminated_fidelity, dtype=np.int64)
    res["eliminated_round"] = np.asarray(eliminated_round, dtype=np.int64)
    res["eliminated_time"] = np.asarray(eliminated_time, dtype=float)
    return res
