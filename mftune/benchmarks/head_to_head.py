"""Head-to-head: ``MFTuner`` against the tuners people use today, side by side.

For each task and seed every method runs in the same process, one after the
other, one evaluation at a time (``n_jobs=1``), on the same pool/test split:

``MFTuner``
    defaults (``algorithm="auto"``) and, with ``--algorithms``, each named
    algorithm; a cost ``budget`` (seconds of fit + score) of the task.
``RandomizedSearchCV``
    the task's ``n_candidates`` configurations, sampled as ``MFTuner`` samples
    them, evaluated at the top fidelity (``GridSearchCV`` over that list is
    exactly what ``RandomizedSearchCV`` runs once it has sampled).
``HalvingRandomSearchCV``
    the same list through ``HalvingGridSearchCV`` (factor 3, the task's
    fidelity levels).
``Optuna TPE``
    ``TPESampler(seed)`` over the same space, each trial the top-fidelity CV
    score, ``timeout`` = the task's budget.
``Optuna TPE + Hyperband``
    the same with ``HyperbandPruner``: a trial trains at each fidelity level
    in turn (training-subset sizes, or the estimator parameter), reports the
    CV score there and stops when pruned.

Optuna is an optional benchmark dependency (not a package dependency); the
Optuna rows are skipped when it is not installed.

Time-to-target: the target of a task is the test score of the best
configuration of a dense grid (when ``grid_file`` holds one for the task and
seed: :func:`dense_grid`) or else the best test score any method's final
recommendation reached, minus the task's tolerance. A method's time-to-target
is the wall time after which its recommendation is on target and stays there
(MFTuner and Optuna record their recommendation after every batch/trial;
the scikit-learn searches recommend only at the end, so theirs is their total
time when on target). ``inf`` = never.
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.model_selection import (
    GridSearchCV,
    HalvingGridSearchCV,
    KFold,
    StratifiedKFold,
    cross_val_score,
)
from sklearn.neighbors import KernelDensity
from sklearn.utils import check_random_state

from ..search.tuner import MFTuner
from ..space import Real, Space
from .tuner_vs_halving import TASKS as HALVING_TASKS
from .tuner_vs_halving import Row, Task, _split

__all__ = ["METHODS", "TASKS", "Row", "dense_grid", "format_table", "run_task"]


def _kde_data(seed: int, n: int = 6000):
    """A bimodal sample (the mixture of :class:`~mftune.benchmarks.tasks.KDEBandwidth`)."""
    rng = np.random.default_rng(1000 + seed)
    comp = rng.random(n) < 0.5
    return np.where(comp, rng.normal(-1.0, 0.3, n), rng.normal(1.5, 0.6, n))[:, None]


TASKS: dict[str, Task] = dict(HALVING_TASKS)
TASKS["kde"] = Task(
    "kde", "kde-mixture", 3000, KernelDensity(),
    {"bandwidth": Real(1e-2, 1.0, log=True)},
    "n_samples", [300, 1000, 2000], 16, 5, 20.0,
    "Gaussian KDE bandwidth, 3,000-point pool, n_samples 300/1000/2000 (5-fold CV log-lik.)")
#: Tolerance of the target, in the task's score units (accuracy points / nats per point).
TOLERANCE = {"svm-magic-15k": 0.003, "hgb-letter": 0.003, "svm-magic-2k": 0.003, "kde": 0.005}
METHODS = ("MFTuner", "RandomizedSearchCV", "HalvingRandomSearchCV", "Optuna TPE",
           "Optuna TPE+Hyperband")


def _data(task: Task, seed: int):
    if task.dataset == "kde-mixture":
        data = _kde_data(seed)
        return data[: task.n_pool], data[task.n_pool:], None, None, "synthetic mixture"
    return _split(task, seed)


def _cv(task: Task, seed: int):
    cls = KFold if task.dataset == "kde-mixture" else StratifiedKFold
    return cls(task.cv, shuffle=True, random_state=seed)


class _TestScore:
    """Test score of a configuration (fit on the whole pool), cached by its parameters."""

    def __init__(self, task: Task, X, y, X_te, y_te):
        self.task, self.X, self.y, self.X_te, self.y_te = task, X, y, X_te, y_te
        self.cache: dict = {}

    def __call__(self, params: dict) -> float:
        key = tuple(sorted((k, repr(v)) for k, v in params.items()))
        if key not in self.cache:
            p = dict(params)
            if self.task.fidelity != "n_samples":
                p[self.task.fidelity] = self.task.levels[-1]
            est = clone(self.task.estimator).set_params(**p)
            if self.y is None:
                est.fit(self.X)
                self.cache[key] = float(est.score(self.X_te)) / len(self.X_te)
            else:
                est.fit(self.X, self.y)
                self.cache[key] = float(est.score(self.X_te, self.y_te))
        return self.cache[key]


def _candidates(task: Task, seed: int) -> list[dict]:
    """The list ``MFTuner(random_state=seed, adaptive=False)`` samples (as ``fit`` does)."""
    sub = int(check_random_state(seed).randint(np.iinfo(np.int32).max))
    return Space(task.space).sample(task.n_candidates, np.random.default_rng(sub))


def _mftuner(task, seed, X, y, algorithm):
    kw = {} if algorithm == "auto" else {"algorithm": algorithm}
    levels = task.levels if task.fidelity != "n_samples" else task.levels[:-1]
    tuner = MFTuner(task.estimator, task.space, fidelity=task.fidelity, fidelities=levels,
                    n_candidates=task.n_candidates, cv=_cv(task, seed), budget=task.budget,
                    refit=False, random_state=seed, **kw)
    t0 = time.perf_counter()
    tuner.fit(X, y)
    wall = time.perf_counter() - t0
    trace = [(t, dict(tuner.candidates_[arm])) for t, _, _, arm in tuner.history_]
    detail = (f"{tuner.algorithm_}, {tuner.stopping_reason_}, {tuner.n_pulls_} pulls, "
              f"best at f{int(tuner.cv_results_['fidelity_reached'][tuner.best_index_])}")
    return wall, dict(tuner.best_params_), trace, detail


def _sklearn(task, seed, X, y, halving: bool):
    grid = [{k: [v] for k, v in c.items()} for c in _candidates(task, seed)]
    if halving:
        kw = {"resource": task.fidelity, "min_resources": task.levels[0], "factor": task.factor,
              "random_state": seed}
        if task.fidelity != "n_samples":
            kw["max_resources"] = task.levels[-1]
        search = HalvingGridSearchCV(task.estimator, grid, cv=_cv(task, seed), refit=False,
                                     **kw)
    else:
        est = task.estimator
        if task.fidelity != "n_samples":
            est = clone(est).set_params(**{task.fidelity: task.levels[-1]})
        search = GridSearchCV(est, grid, cv=_cv(task, seed), refit=False)
    t0 = time.perf_counter()
    search.fit(X, y)
    wall = time.perf_counter() - t0
    best = {k: v for k, v in search.best_params_.items() if k != task.fidelity}
    detail = (f"{search.n_iterations_} rungs" if halving
              else f"{len(grid)} candidates at the top fidelity")
    return wall, best, [(wall, best)], detail


def _optuna(task, seed, X, y, hyperband: bool):
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    cv = list(_cv(task, seed).split(X, y))
    rng = np.random.default_rng(seed)
    levels = task.levels

    def suggest(trial):
        out = {}
        for name, dim in task.space.items():
            if hasattr(dim, "low"):
                if type(dim).__name__ == "Integer":
                    out[name] = trial.suggest_int(name, dim.low, dim.high, log=dim.log)
                else:
                    out[name] = trial.suggest_float(name, dim.low, dim.high, log=dim.log)
            else:
                out[name] = trial.suggest_categorical(name, list(dim.choices))
        return out

    def cv_score(params, level):
        p = dict(params)
        est = clone(task.estimator)
        if task.fidelity == "n_samples":
            scores = []
            for tr, te in cv:
                sub = tr if level >= len(tr) else rng.choice(tr, level, replace=False)
                e = clone(est).set_params(**p)
                if y is None:
                    e.fit(X[sub])
                    scores.append(e.score(X[te]) / len(te))
                else:
                    e.fit(X[sub], y[sub])
                    scores.append(e.score(X[te], y[te]))
            return float(np.mean(scores))
        p[task.fidelity] = level
        return float(np.mean(cross_val_score(est.set_params(**p), X, y, cv=cv)))

    top = levels[-1] if task.fidelity != "n_samples" else len(X)

    def objective(trial):
        params = suggest(trial)
        if not hyperband:
            return cv_score(params, top)
        rungs = list(levels[:-1]) + [top] if task.fidelity == "n_samples" else list(levels)
        for step, level in enumerate(rungs):
            score = cv_score(params, level)
            trial.report(score, step + 1)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return score

    pruner = (optuna.pruners.HyperbandPruner(min_resource=1, max_resource=len(levels),
                                             reduction_factor=3)
              if hyperband else optuna.pruners.NopPruner())
    study = optuna.create_study(direction="maximize", pruner=pruner,
                                sampler=optuna.samplers.TPESampler(seed=seed))
    trace, t0 = [], time.perf_counter()

    def record(study, trial):
        done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
        if done:
            trace.append((time.perf_counter() - t0, dict(study.best_params)))

    study.optimize(objective, timeout=task.budget, callbacks=[record])
    wall = time.perf_counter() - t0
    n_pruned = sum(t.state == optuna.trial.TrialState.PRUNED for t in study.trials)
    best = dict(study.best_params) if trace else {}
    return wall, best, trace, f"{len(study.trials)} trials ({n_pruned} pruned)"


def dense_grid(task: Task, seed: int, n_points: int, X, y, X_te, y_te) -> dict:
    """Test score of every point of a dense grid (``n_points`` per dimension)."""
    test = _TestScore(task, X, y, X_te, y_te)
    grid = Space(task.space).grid(n_points)
    scores = [test(p) for p in grid]
    i = int(np.argmax(scores))
    return {"task": task.name, "seed": seed, "n_points": n_points, "best_params": grid[i],
            "best_test": scores[i], "n_configs": len(grid)}


def _time_to_target(trace, test, target, end_only: bool, wall: float) -> float:
    if end_only:
        return wall if trace and test(trace[-1][1]) >= target else np.inf
    ttt = np.inf
    for t, params in reversed(trace):
        if test(params) < target:
            break
        ttt = t
    return ttt


def _test_at(trace, test, t_cap: float) -> float:
    """Test score of the last recommendation made by wall time ``t_cap`` (nan if none)."""
    held = [params for t, params in trace if t <= t_cap]
    return test(held[-1]) if held else np.nan


def run_task(task: Task, seed: int, methods=METHODS, algorithms=(), grid_file=None,
             log=print) -> list[Row]:
    """Run every method on one seed; return their rows (targets filled in)."""
    X, X_te, y, y_te, source = _data(task, seed)
    test = _TestScore(task, X, y, X_te, y_te)
    runs = []
    jobs = [(m, None) for m in methods if m != "MFTuner"]
    if "MFTuner" in methods:
        jobs = [("MFTuner", "auto")] + [("MFTuner", a) for a in algorithms] + jobs
    for method, algo in jobs:
        name = method if algo in (None, "auto") else f"MFTuner[{algo}]"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if method == "MFTuner":
                    out = _mftuner(task, seed, X, y, algo)
                elif method == "RandomizedSearchCV":
                    out = _sklearn(task, seed, X, y, halving=False)
                elif method == "HalvingRandomSearchCV":
                    out = _sklearn(task, seed, X, y, halving=True)
                else:
                    out = _optuna(task, seed, X, y, hyperband="Hyperband" in method)
        except ImportError as exc:
            log(f"  {name}: skipped ({exc})")
            continue
        runs.append((name, method, *out))
    grid = _load_grid(grid_file, task.name, seed)
    best_any = max(test(best) for *_, best, _, _ in runs if best)
    ref = grid["best_test"] if grid is not None else best_any
    target = ref - TOLERANCE[task.name]
    rows = []
    for name, method, wall, best, trace, detail in runs:
        end_only = method in ("RandomizedSearchCV", "HalvingRandomSearchCV")
        ttt = _time_to_target(trace, test, target, end_only, wall)
        final = test(best) if best else np.nan
        at_budget = _test_at(trace, test, task.budget)
        rows.append(Row(task.name, seed, name, wall, ttt, final, target, detail, at_budget))
        log(f"  seed {seed} {name:24s} wall {wall:7.1f} s  time-to-target {ttt:7.1f} s  "
            f"test {final:.4f} (target {target:.4f}{' grid' if grid else ''})  "
            f"test at {task.budget:g} s {at_budget:.4f}  {detail}")
    return rows


def _load_grid(path, task: str, seed: int):
    if path is None or not Path(path).exists():
        return None
    for entry in json.loads(Path(path).read_text()):
        if entry["task"] == task and entry["seed"] == seed:
            return entry
    return None


def _stat(v) -> str:
    v = np.asarray(v, dtype=float)
    return f"{np.median(v):7.1f} [{v.min():.1f}–{v.max():.1f}]"


def _at_budget(rows: list[Row]) -> str:
    """Median test score at the budget over the seeds that had a recommendation by then."""
    v = np.array([r.test_at_budget for r in rows], dtype=float)
    ok = np.isfinite(v)
    if not ok.any():
        return "none"
    return f"{np.median(v[ok]):.4f} {ok.sum()}/{len(v)}"


def format_table(rows: list[Row]) -> str:
    """Per task and method: time-to-target, final test score, wall time (median
    [min–max]) and the test score held at the task's wall budget (median over the
    seeds that had a recommendation by then, and how many did); and MFTuner's paired
    time-to-target ratio against the best peer."""
    out = [f"{'task':14s} {'method':24s} {'time-to-target s':>24s} {'reached':>8s} "
           f"{'final test (median)':>20s} {'wall s':>22s} {'test at budget':>15s}"]
    peers = ("RandomizedSearchCV", "HalvingRandomSearchCV", "Optuna TPE",
             "Optuna TPE+Hyperband")
    for task in dict.fromkeys(r.task for r in rows):
        tr = [r for r in rows if r.task == task]
        for method in dict.fromkeys(r.method for r in tr):
            rs = [r for r in tr if r.method == method]
            reached = sum(np.isfinite(r.time_to_target) for r in rs)
            out.append(f"{task:14s} {method:24s} {_stat([r.time_to_target for r in rs]):>24s} "
                       f"{reached:>5d}/{len(rs):<2d} {np.median([r.final_test for r in rs]):20.4f} "
                       f"{_stat([r.wall for r in rs]):>22s} {_at_budget(rs):>15s}")
        med = {m: np.median([r.time_to_target for r in tr if r.method == m])
               for m in peers if any(r.method == m for r in tr)}
        if med and any(r.method == "MFTuner" for r in tr):
            best_peer = min(med, key=med.get)
            mf = {r.seed: r.time_to_target for r in tr if r.method == "MFTuner"}
            pe = {r.seed: r.time_to_target for r in tr if r.method == best_peer}
            ratios = [mf[s] / pe[s] for s in mf if s in pe and np.isfinite(pe[s])
                      and pe[s] > 0]
            if ratios:
                out.append(f"{'':14s} MFTuner / {best_peer} (best peer by median), paired by "
                           f"seed: median {np.median(ratios):.2f} "
                           f"[{min(ratios):.2f}–{max(ratios):.2f}] (inf = MFTuner never "
                           "reached the target)")
    return "\n".join(out)


def rows_to_json(rows: list[Row]) -> list[dict]:
    """Rows as JSON-ready dicts (``inf`` as ``null``)."""
    def num(x):
        return None if not np.isfinite(x) else float(x)
    return [{"task": r.task, "seed": r.seed, "method": r.method, "wall": num(r.wall),
             "time_to_target": num(r.time_to_target), "final_test": num(r.final_test),
             "target": num(r.target), "detail": r.detail,
             "test_at_budget": num(r.test_at_budget)} for r in rows]
