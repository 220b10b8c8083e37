"""The model-based peers of the head-to-head benchmark: Optuna and SMAC3.

``Optuna TPE``
    ``TPESampler(seed)`` over the task's space, each trial the top-fidelity
    CV score, ``timeout`` = the task's budget.
``Optuna TPE+Hyperband``
    the same with ``HyperbandPruner``: a trial trains at each fidelity level
    in turn (training-subset sizes, or the estimator parameter), reports the
    CV score there and stops when pruned.
``SMAC``
    SMAC3's ``MultiFidelityFacade`` (random-forest surrogate, expected
    improvement, ``Hyperband`` intensifier with ``eta`` = the task's factor)
    with the task's fidelity as SMAC's budget: the training-subset size
    (``min_budget`` = the first level, ``max_budget`` = a whole CV training
    fold) or the estimator parameter (first to last level). Deterministic
    scenario, ``seed``, ``walltime_limit`` = the task's budget, no trial
    limit; SMAC's incumbent (its default ``highest_observed_budget`` rule) is
    recorded after every trial. The wall time counts from the facade's
    construction, so SMAC's setup is charged to it.

Every peer scores a configuration with :class:`FoldScorer`: the mean score
over the task's CV folds, at a training-subset size (a seeded random subset
of each training fold) or at a level of the estimator parameter. On a task
with ``warm_start`` a configuration's fold models are kept (a bounded LRU)
and continued to a higher level as ``MFTuner`` continues them
(:func:`mftune.search.continuation.fit_at_level`), so the peers that climb
levels (Hyperband rungs) do not pay a refit either.

With ``centre_first`` (the head-to-head's ``Optuna TPE (with centre)`` and
``SMAC (with centre)`` reference rows) each evaluates the space's centre
early: Optuna enqueues :meth:`~mftune.space.Space.centre` as its first trial;
SMAC3 adds ConfigSpace's default configuration (the same point, up to an
integer's rounding) to its initial design (``use_default_config``), where its
intensifier runs it within the first bracket, not necessarily first.

Both packages are optional benchmark dependencies (``pip install
'mftune[bench]'``); a missing one raises ``ImportError`` and the head-to-head
skips its rows.
"""

from __future__ import annotations

import importlib
import tempfile
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np
from sklearn.base import clone

from ..search.continuation import fit_at_level, resolve_continuation
from ..space import Categorical, Integer, Real, Space
from .tuner_vs_halving import Task

__all__ = ["FoldScorer", "require", "run_optuna", "run_smac", "smac_space"]

#: Configurations whose fold models a warm-start :class:`FoldScorer` keeps.
MAX_KEPT = 64


def require(module: str, method: str):
    """Import the optional package ``module`` of a peer, or raise an ``ImportError`` that says
    which method needs it and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{method} needs the optional package {module!r}, which is not "
                          "installed: pip install 'mftune[bench]'") from exc


def _key(params: dict) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in params.items()))


class FoldScorer:
    """Mean CV score of a configuration at a fidelity level, as the peers compute it.

    Parameters
    ----------
    task : Task
    cv : list of (train, test) index arrays
    X, y : arrays (``y`` is ``None`` for density estimation)
    seed : int
        Seed of the training subsets of an ``n_samples`` fidelity.
    """

    def __init__(self, task: Task, cv: list, X, y, seed: int):
        self.task, self.cv, self.X, self.y = task, cv, X, y
        self.rng = np.random.default_rng(seed)
        self.spec = (resolve_continuation("warm_start", task.estimator, task.fidelity,
                                          task.levels) if task.warm_start else None)
        self.kept: OrderedDict = OrderedDict()
        self.n_continued = 0

    @property
    def top(self) -> int:
        """The top level: a whole training fold, or the last level of the parameter."""
        if self.task.fidelity == "n_samples":
            return min(len(tr) for tr, _ in self.cv)
        return self.task.levels[-1]

    def _score(self, est, te) -> float:
        if self.y is None:
            return float(est.score(self.X[te])) / len(te)
        return float(est.score(self.X[te], self.y[te]))

    def _fit_subset(self, params: dict, level: int, tr) -> object:
        whole = level >= self.top or level >= len(tr)  # folds may differ by a row or two
        sub = tr if whole else self.rng.choice(tr, level, replace=False)
        est = clone(self.task.estimator).set_params(**params)
        return est.fit(self.X[sub]) if self.y is None else est.fit(self.X[sub], self.y[sub])

    def _fit_level(self, params: dict, level, fold: int, tr, kept: list) -> object:
        start, est = kept[fold] if kept[fold] is not None else (None, None)
        if est is None or self.spec is None or start >= level:
            start = None
            est = clone(self.task.estimator).set_params(**params, **{self.task.fidelity: level})
        else:
            self.n_continued += 1
        y = None if self.y is None else self.y[tr]
        fit_at_level(est, self.X[tr], y, {}, self.spec, level, start)
        kept[fold] = (level, est) if self.spec is not None and level < self.top else None
        return est

    def __call__(self, params: dict, level) -> float:
        """Mean score over the folds of ``params`` trained at ``level``."""
        if self.task.fidelity == "n_samples":
            return float(np.mean([self._score(self._fit_subset(params, int(level), tr), te)
                                  for tr, te in self.cv]))
        key = _key(params)
        kept = self.kept.pop(key, [None] * len(self.cv))
        scores = [self._score(self._fit_level(params, level, f, tr, kept), te)
                  for f, (tr, te) in enumerate(self.cv)]
        if any(k is not None for k in kept):
            self.kept[key] = kept
            while len(self.kept) > MAX_KEPT:
                self.kept.popitem(last=False)
        return float(np.mean(scores))


def _optuna_params(trial, space: dict) -> dict:
    out = {}
    for name, dim in space.items():
        if isinstance(dim, Integer):
            out[name] = trial.suggest_int(name, dim.low, dim.high, log=dim.log)
        elif isinstance(dim, Real):
            out[name] = trial.suggest_float(name, dim.low, dim.high, log=dim.log)
        else:
            out[name] = trial.suggest_categorical(name, list(dim.choices))
    return out


def run_optuna(task: Task, seed: int, scorer: FoldScorer, hyperband: bool,
               centre_first: bool = False):
    """Optuna's TPE (with ``HyperbandPruner`` when ``hyperband``) for the task's budget.

    Returns
    -------
    wall : float
    best : dict
        The final recommendation (``{}`` if no trial completed).
    trace : list of (seconds, params)
        The recommendation after every completed trial.
    detail : str
    """
    optuna = require("optuna", "Optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rungs = list(task.levels) if task.fidelity != "n_samples" else (
        list(task.levels[:-1]) + [scorer.top])

    def objective(trial):
        params = _optuna_params(trial, task.space)
        if not hyperband:
            return scorer(params, scorer.top)
        for step, level in enumerate(rungs):
            score = scorer(params, level)
            trial.report(score, step + 1)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return score

    pruner = (optuna.pruners.HyperbandPruner(min_resource=1, max_resource=len(rungs),
                                             reduction_factor=3)
              if hyperband else optuna.pruners.NopPruner())
    study = optuna.create_study(direction="maximize", pruner=pruner,
                                sampler=optuna.samplers.TPESampler(seed=seed))
    if centre_first:
        study.enqueue_trial(Space(task.space).centre())
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


def smac_space(space: dict, seed: int):
    """The task's space as a ConfigSpace ``ConfigurationSpace`` (reals, integers, choices)."""
    from ConfigSpace import Categorical as CSCategorical
    from ConfigSpace import ConfigurationSpace
    from ConfigSpace import Float as CSFloat
    from ConfigSpace import Integer as CSInteger

    cs = ConfigurationSpace(seed=seed)
    for name, dim in space.items():
        if isinstance(dim, Integer):
            cs.add(CSInteger(name, (dim.low, dim.high), log=dim.log))
        elif isinstance(dim, Real):
            cs.add(CSFloat(name, (dim.low, dim.high), log=dim.log))
        elif isinstance(dim, Categorical):
            cs.add(CSCategorical(name, list(dim.choices)))
        else:
            raise TypeError(f"{name}: SMAC takes Real, Integer or Categorical dimensions")
    return cs


def _smac_params(config, space: dict) -> dict:
    """A SMAC configuration as the estimator's parameters (plain Python numbers)."""
    out = {}
    for name, dim in space.items():
        value = config[name]
        out[name] = (int(value) if isinstance(dim, Integer)
                     else float(value) if isinstance(dim, Real) else value)
    return out


def _smac_budgets(task: Task, scorer: FoldScorer) -> tuple[float, float]:
    low = task.levels[0]
    return float(low), float(scorer.top)


def run_smac(task: Task, seed: int, scorer: FoldScorer, centre_first: bool = False):
    """SMAC3's multi-fidelity facade (Hyperband) for the task's budget.

    Returns the same ``(wall, best, trace, detail)`` as :func:`run_optuna`;
    the trace holds SMAC's incumbent after every trial.
    """
    require("smac", "SMAC")
    from smac import MultiFidelityFacade, Scenario
    from smac.callback import Callback

    low, high = _smac_budgets(task, scorer)
    trace: list = []
    t0 = time.perf_counter()

    def target(config, seed: int = 0, budget: float = high) -> float:
        return -scorer(_smac_params(config, task.space), int(round(budget)))

    class Record(Callback):
        def on_tell_end(self, smbo, info, value):
            inc = smbo.intensifier.get_incumbent()
            if inc is not None:
                trace.append((time.perf_counter() - t0, _smac_params(inc, task.space)))
            return None

    with tempfile.TemporaryDirectory(prefix="mftune-smac-") as tmp:
        scenario = Scenario(smac_space(task.space, seed), name=f"{task.name}-{seed}",
                            output_directory=Path(tmp), deterministic=True, n_trials=10**9,
                            walltime_limit=task.budget, min_budget=low, max_budget=high,
                            seed=seed, use_default_config=centre_first)
        intensifier = MultiFidelityFacade.get_intensifier(scenario, eta=int(task.factor))
        facade = MultiFidelityFacade(scenario, target, intensifier=intensifier,
                                     callbacks=[Record()], overwrite=True, logging_level=40)
        incumbent = facade.optimize()
        wall = time.perf_counter() - t0
        n_trials = len(facade.runhistory)
        n_top = sum(k.budget is not None and k.budget >= high for k in facade.runhistory)
    best = _smac_params(incumbent, task.space) if incumbent is not None else {}
    continued = f", {scorer.n_continued} fold fits continued" if scorer.spec else ""
    return wall, best, trace, f"{n_trials} trials ({n_top} at the top budget{continued})"
