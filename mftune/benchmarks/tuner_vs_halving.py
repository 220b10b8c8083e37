"""Time to quality: ``MFTuner`` (defaults) against successive halving on the same candidates.

For each task and seed, the same candidate list is searched by

* ``MFTuner`` with its defaults (``algorithm="auto"``, adaptive bias bounds,
  ``delta=0.05``, ``epsilon="auto"``) and a cost ``budget`` so the run ends
  in a bounded time, and
* ``HalvingGridSearchCV`` over exactly those candidates — the search that
  ``HalvingRandomSearchCV`` runs once it has sampled its candidates — with the
  same ``factor`` and the same CV, in two variants when the fidelity is
  ``n_samples``:

  ``Halving``
      the same *training* rows per fit as MFTuner's levels. MFTuner's level
      ``n`` trains on ``n`` rows of a CV training fold (and, by default,
      scores on a part of the validation fold in the same ratio, at least 200
      rows: ``MFTuner(validation=...)``); halving's resource ``r`` is the size
      of a subset that is then split by the CV, so it trains on
      ``r (k − 1) / k`` rows and scores on ``r / k``. Here
      ``min_resources = ceil(n_1 k / (k − 1))``.
  ``Halving-r``
      ``min_resources = n_1``: the same resource numbers, i.e. fits on
      ``(k − 1) / k`` of MFTuner's rows — a cheaper, smaller-data search, kept as
      a second reference.

  With an estimator-parameter fidelity (``max_iter``) both read the level
  the same way and only ``Halving`` runs.

Both run one pull at a time (``n_jobs=1``), one after the other, in the same
process, without refit. Test accuracy of a configuration = fit on the whole
training pool, score on the held-out test rows (outside the timed region,
cached per configuration).

Time-to-target (issue 5): the target of a seed is the best test accuracy any
method's final recommendation reached on that seed, minus 0.3 points. For
``MFTuner`` it is the wall time (calibration included) after which its
recommendation (recorded after every batch) is on target and stays there to
the end of the run; for halving, whose only recommendation comes at the end,
its total wall time when that recommendation is on target. ``inf`` = never.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.model_selection import HalvingGridSearchCV, StratifiedKFold, train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils import check_random_state

from ..search.tuner import MFTuner
from ..space import Integer, Real, Space
from .datasets import load_keel

__all__ = ["TASKS", "Task", "format_rows", "halving_min_resources", "run_task", "tuner_options"]

TARGET_GAP = 0.003


@dataclass
class Task:
    """One benchmark task (data, estimator, space, fidelities, caps)."""

    name: str
    dataset: str
    n_pool: int
    estimator: object
    space: dict
    fidelity: str
    levels: list
    n_candidates: int
    cv: int
    budget: float
    description: str
    factor: float = 3
    #: Whether a configuration's models continue across the fidelity levels (an
    #: estimator-parameter fidelity): MFTuner gets ``continuation="warm_start"``
    #: and the peers that train a configuration at rising levels keep its fold models.
    warm_start: bool = False


def tuner_options(task: Task) -> dict:
    """Keyword arguments of ``MFTuner`` that the task itself fixes (its continuation)."""
    return {"continuation": "warm_start"} if task.warm_start else {}


def _svc():
    return make_pipeline(StandardScaler(), SVC(cache_size=500))


def _mlp():
    return make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(64,),
                                                         random_state=0))


#: The RBF SVM's space (C and gamma of the standardised features), shared by its tasks.
SVM_SPACE = {"svc__C": Real(1e-1, 1e3, log=True), "svc__gamma": Real(1e-3, 1e1, log=True)}


TASKS = {
    "svm-magic-15k": Task(
        "svm-magic-15k", "magic", 15000, _svc(),
        SVM_SPACE, "n_samples", [500, 1500, 4500, 10000], 24, 3, 150.0,
        "RBF SVM, MAGIC 15,000-row pool, n_samples 500/1500/4500/10000 (3-fold CV)"),
    "hgb-letter": Task(
        "hgb-letter", "letter", 15000,
        HistGradientBoostingClassifier(early_stopping=False, random_state=0),
        {"learning_rate": Real(0.01, 0.5, log=True), "max_leaf_nodes": Integer(4, 64, log=True),
         "min_samples_leaf": Integer(2, 100, log=True),
         "l2_regularization": Real(1e-4, 10.0, log=True)},
        "max_iter", [8, 24, 72], 16, 3, 60.0,
        "HistGradientBoosting, letter 15,000-row pool, max_iter 8/24/72 (3-fold CV)",
        warm_start=True),
    "svm-magic-2k": Task(
        "svm-magic-2k", "magic", 2000, _svc(),
        SVM_SPACE, "n_samples", [400, 1600], 24, 5, 30.0,
        "the paper's SVM setting: MAGIC 2,000 rows, n_samples 400/1600 (5-fold CV)", 4),
    "svm-letter": Task(
        "svm-letter", "letter", 12000, _svc(), SVM_SPACE, "n_samples", [300, 900, 2700, 8000],
        16, 3, 120.0,
        "RBF SVM, letter 12,000-row pool, n_samples 300/900/2700/8000 (3-fold CV)"),
    "mlp-letter": Task(
        "mlp-letter", "letter", 10000, _mlp(),
        {"mlpclassifier__learning_rate_init": Real(1e-4, 0.3, log=True),
         "mlpclassifier__alpha": Real(1e-6, 1e-1, log=True),
         "mlpclassifier__batch_size": Integer(32, 512, log=True)},
        "mlpclassifier__max_iter", [3, 9, 27, 81], 16, 3, 90.0,
        "MLP (64 units, Adam), letter 10,000-row pool, max_iter 3/9/27/81 epochs continued "
        "by warm start (3-fold CV)", warm_start=True),
}


@dataclass
class Row:
    """One method on one seed."""

    task: str
    seed: int
    method: str
    wall: float
    time_to_target: float
    final_test: float
    target: float
    detail: str
    #: Test scores of the recommendation held at 25 %, 50 % and 100 % of the task's
    #: budget in wall seconds (``nan``: the method had nothing to recommend by then);
    #: :data:`mftune.benchmarks.head_to_head.HELD_AT` gives the shares.
    test_held: tuple = ()
    #: How the run ended (MFTuner's ``stopping_reason_``; ``None`` for the other methods).
    stopping: str | None = None
    #: The data the run used (``Dataset.source``; ``None`` when not recorded).
    data: str | None = None


def halving_min_resources(task: Task) -> dict[str, int]:
    """``min_resources`` of each halving variant (module docstring)."""
    if task.fidelity != "n_samples":
        return {"Halving": task.levels[0]}
    k = task.cv
    return {"Halving": int(np.ceil(task.levels[0] * k / (k - 1))), "Halving-r": task.levels[0]}


def _split(task: Task, seed: int):
    data = load_keel(task.dataset)
    X_pool, X_test, y_pool, y_test = train_test_split(
        data.X, data.y, train_size=task.n_pool, stratify=data.y, random_state=seed)
    if task.n_pool < 5000:  # the paper's setting keeps a large test set but a small pool
        X_test, y_test = X_test[:5000], y_test[:5000]
    return X_pool, X_test, y_pool, y_test, data.source


def run_task(task: Task, seed: int, log=print) -> list[Row]:
    """Run both methods on one seed, after logging where its data came from (as
    :func:`mftune.benchmarks.head_to_head.run_task` does); return their rows, each
    naming that data (``Row.data``)."""
    X, X_te, y, y_te, source = _split(task, seed)
    log(f"  seed {seed} data: {source}")
    # The candidates MFTuner samples for random_state=seed (same derivation as MFTuner.fit).
    sub = int(check_random_state(seed).randint(np.iinfo(np.int32).max))
    cand = Space(task.space).sample(task.n_candidates, np.random.default_rng(sub))
    cache: dict[int, float] = {}

    def test_acc(i: int) -> float:
        if i not in cache:
            params = dict(cand[i])
            if task.fidelity != "n_samples":
                params[task.fidelity] = task.levels[-1]
            est = clone(task.estimator).set_params(**params).fit(X, y)
            cache[i] = float(est.score(X_te, y_te))
        return cache[i]

    cv = StratifiedKFold(task.cv, shuffle=True, random_state=seed)
    # MFTuner with its defaults, a budget, the same candidates (same sampler and seed: a
    # fixed list, so that halving searches the very configurations MFTuner searched)
    tuner = MFTuner(
        task.estimator, task.space, fidelity=task.fidelity,
        fidelities=task.levels if task.fidelity != "n_samples" else task.levels[:-1],
        n_candidates=task.n_candidates, cv=cv, budget=task.budget, refit=False,
        random_state=seed, adaptive=False, **tuner_options(task))
    t0 = time.perf_counter()
    tuner.fit(X, y)
    wall_mf = time.perf_counter() - t0
    if tuner.candidates_ != cand:
        raise RuntimeError("MFTuner and halving must search the same candidates")
    # Halving over exactly the same candidates (and, for "Halving", the same training rows).
    grid = [{k: [v] for k, v in c.items()} for c in cand]
    halvings = {}
    resource = ({"resource": "n_samples"} if task.fidelity == "n_samples"
                else {"resource": task.fidelity, "max_resources": task.levels[-1]})
    for method, min_res in halving_min_resources(task).items():
        halving = HalvingGridSearchCV(task.estimator, grid, factor=task.factor,
                                      min_resources=min_res, cv=cv, refit=False,
                                      random_state=seed, **resource)
        t0 = time.perf_counter()
        halving.fit(X, y)
        wall_h = time.perf_counter() - t0
        best_h = cand.index({k: v for k, v in halving.best_params_.items()
                             if k != task.fidelity})
        halvings[method] = (halving, wall_h, test_acc(best_h))
    hist = tuner.history_
    final_mf = test_acc(tuner.best_index_)
    target = max([final_mf] + [h[2] for h in halvings.values()]) - TARGET_GAP
    # MFTuner: first time after which every recommendation is on target.
    ttt = np.inf
    for t, _, _, arm in reversed(hist):
        if test_acc(arm) < target:
            break
        ttt = t
    rows = [
        Row(task.name, seed, "MFTuner", wall_mf, ttt, final_mf, target,
            f"{tuner.algorithm_}, {tuner.stopping_reason_}, {tuner.n_pulls_} pulls, "
            f"reached f{int(tuner.cv_results_['fidelity_reached'][tuner.best_index_])}",
            data=source),
    ] + [Row(task.name, seed, method, wall_h, wall_h if final_h >= target else np.inf,
             final_h, target, f"{h.n_iterations_} iterations, resources {h.n_resources_}",
             data=source)
         for method, (h, wall_h, final_h) in halvings.items()]
    for r in rows:
        log(f"  seed {seed} {r.method:8s} wall {r.wall:7.1f} s  time-to-target "
            f"{r.time_to_target:7.1f} s  test acc {r.final_test:.4f} (target {r.target:.4f})  "
            f"{r.detail}")
    return rows


def _stat(v):
    v = np.asarray(v, dtype=float)
    return f"{np.median(v):7.1f} [{v.min():.1f}–{v.max():.1f}]"


def format_rows(rows: list[Row]) -> str:
    """Median and min–max per task and method, with the paired ratio of medians."""
    out = ["task            method    time-to-target s (median [min–max])  wall s "
           "(median [min–max])  final test acc (median)  reached"]
    for task in dict.fromkeys(r.task for r in rows):
        methods = list(dict.fromkeys(r.method for r in rows if r.task == task))
        for method in methods:
            rs = [r for r in rows if r.task == task and r.method == method]
            reached = sum(np.isfinite(r.time_to_target) for r in rs)
            out.append(f"{task:15s} {method:8s}  {_stat([r.time_to_target for r in rs]):28s}"
                       f"        {_stat([r.wall for r in rs]):22s}"
                       f"  {np.median([r.final_test for r in rs]):.4f}"
                       f"                   {reached}/{len(rs)}")
        mf = {r.seed: r.time_to_target for r in rows if r.task == task and r.method == "MFTuner"}
        for method in (m for m in methods if m != "MFTuner"):
            hv = {r.seed: r.time_to_target for r in rows if r.task == task and r.method == method}
            ratios = [mf[s] / hv[s] for s in mf
                      if s in hv and np.isfinite(mf[s]) and np.isfinite(hv[s])]
            if ratios:
                out.append(f"{'':15s} ratio MFTuner/{method} time-to-target, paired by seed: "
                           f"median {np.median(ratios):.2f} [{min(ratios):.2f}–"
                           f"{max(ratios):.2f}] over {len(ratios)} seeds where both reached it")
    return "\n".join(out)
