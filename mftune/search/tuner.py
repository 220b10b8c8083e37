"""``MFTuner``: multi-fidelity hyperparameter search with a scikit-learn interface."""

from __future__ import annotations

import time
from copy import deepcopy

import numpy as np
from joblib import effective_n_jobs
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, MetaEstimatorMixin, is_classifier, is_regressor
from sklearn.model_selection import check_cv
from sklearn.utils import assert_all_finite, check_random_state, get_tags
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import indexable

from ..engine.candidates import draw_candidates, resolve_adaptive, resolve_wave_size
from ..engine.search import Search, raise_if_all_failed
from ..fidelity import level_is_number, min_subset_size, n_samples_schedule
from ..policies import registry as algorithms
from ..space import Space
from .continuation import fit_at_level, partial_fit_only, resolve_continuation, saved_seconds
from .delegation import Delegation
from .evaluation import CVEvaluator, clone_with
from .params import build_scorers, check_params
from .results import build_cv_results, build_pulls
from .routing import metadata_router, route_fit_params
from .storage import open_recorder, storage_errors, stored_seed, stored_waves, study_signature

__all__ = ["MFTuner"]


#: MFTuner parameters that are the engine's settings (mftune.engine.search.SETTINGS).
_ENGINE_PARAMS = ("algorithm", "algorithm_params", "bias", "n_calibration", "sigma", "costs",
                  "delta", "epsilon", "budget", "max_pulls", "verbose")
#: Fitted attributes the engine sets.
_ENGINE_ATTRS = ("policy_", "sigma_", "epsilon_", "bias_bounds_", "bias_events_",
                 "calibration_cost_", "candidates_", "deterministic_")


class MFTuner(Delegation, MetaEstimatorMixin, BaseEstimator):
    """Multi-fidelity hyperparameter search with a confidence statement.

    Candidates are sampled from ``space`` (or its grid); a multi-fidelity
    best-arm policy (IISE family, see ``algorithm``) decides which candidate to
    evaluate at which fidelity, one pull at a time, until its stopping rule
    (the recommended candidate is within ``epsilon`` of the best candidate's
    score with probability ``1 - delta``, under the bias bounds in force), a
    budget, or Ctrl+C. The best candidate is then refitted on the whole data,
    as ``GridSearchCV`` and ``HalvingRandomSearchCV`` do.

    A *pull* is one (candidate, fidelity, CV split) evaluation; its cost is
    its measured fit + score seconds. See docs/tuner.md.

    Parameters
    ----------
    estimator : estimator object
        The estimator (or ``Pipeline``) to tune.
    space : dict or list of dict
        ``{parameter: Real | Integer | Categorical | list | scipy.stats
        distribution}``; a list of dicts is a conditional space. Pipeline
        names (``svc__C``) work.
    fidelity : str, default="n_samples"
        ``"n_samples"`` (training-subset sizes, stratified for classifiers) or
        the name of an estimator parameter (``"max_iter"``, ``"n_estimators"``).
    fidelities : sequence, optional
        The levels. For ``"n_samples"``: sizes (ints) or fractions of the
        training fold (floats in (0, 1]); the top level is always the whole
        training fold. For a parameter: required, increasing values, the last
        being the target setting.
    min_resources : int or "auto", default="auto"
        Smallest subset of a geometric ``n_samples`` schedule (``"auto"``: at
        most 4 levels, see :func:`mftune.fidelity.n_samples_schedule`).
    factor : float, default=3
        Ratio between consecutive subset sizes.
    validation : {"auto", "proportional", "full"}, default="auto"
        With ``fidelity="n_samples"``, the validation rows of a pull below the
        top fidelity: a stratified share of the fold in the ratio of the
        training subset (``"proportional"``, at least 200 rows, as a halving
        search does) or the whole fold (``"full"``). ``"auto"``: proportional
        when the score is a mean over rows (a classifier or regressor with its
        default score or named scorers), full otherwise. The top fidelity
        always scores the whole fold; ``validation_`` says which was used
        (docs/tuner.md).
    continuation : {"auto", "warm_start", "partial_fit"} or False, default="auto"
        With ``fidelity="<estimator parameter>"``, continue the model of a
        (candidate, CV split) from the lower fidelity it reached instead of
        refitting it: ``"warm_start"`` sets ``warm_start=True`` and the new
        level and fits again; ``"partial_fit"`` counts the levels in
        ``partial_fit`` epochs (every pull and the refit are trained so);
        ``"auto"`` uses ``"warm_start"`` where the continued model is the
        model a direct fit gives (``n_estimators`` of scikit-learn ensembles,
        ``max_iter`` of ``HistGradientBoosting*``), nothing otherwise;
        ``False`` refits every pull. See :mod:`mftune.search.continuation`.
    algorithm : str or policy, default="auto"
        A name of :data:`mftune.policies.registry.REGISTRY` (``"auto"``,
        ``"se"``, ``"iise"``, ``"iise-gamma"``, ``"lucb-a"``/``"-b"``/``"-c"``,
        ``"mf-gp-ucb"``, ``"gp-ucb"``) or a policy object with the ask/tell
        protocol built for ``n_candidates`` arms and the fidelities.
    algorithm_params : dict, optional
        Options of the chosen policy that the tuner does not set itself, e.g.
        ``{"ard": True}`` for the GP policies, ``{"best_first": False}`` for
        IISE; an option the algorithm does not take raises a ``ValueError``
        listing the allowed ones (docs/tuner.md).
    n_candidates : int or "grid", default=32
        Number of candidates sampled from ``space`` with ``random_state``, or
        ``"grid"`` for the full grid (``grid_points`` values per numeric dimension).
    grid_points : int, default=5
    adaptive : {"auto", True, False}, default="auto"
        Candidates that adapt (docs/tuner.md): the first ``n_candidates`` fill the space (a
        Sobol design), then, each time a wave ends (its stopping rule holds, or few candidates
        survive a round at the top fidelity), a surrogate fitted on every evaluation proposes
        ``wave_size`` new candidates and a new wave runs over them and the survivors, until the
        surrogate predicts no new candidate beats the incumbent by more than ``epsilon``
        (:mod:`mftune.engine.waves`). ``"auto"``: waves for a sampled unconditional space with
        an elimination algorithm (``"auto"``, ``"se"``, ``"iise"``, ``"iise-gamma"``), unless
        ``storage`` holds a study written with a fixed list; a fixed list otherwise; ``True``:
        waves or a ``ValueError``; ``False``: the ``n_candidates`` random draws, fixed. A study
        file records how each wave ended, so a resume follows it. ``adaptive_`` says what ran.
    wave_size : int or "auto", default="auto"
        New candidates per wave (``"auto"``: ``n_candidates // 2``, at least 2).
    bias : {"adaptive", "estimate"} or sequence of float, default="adaptive"
        Bias bounds: estimated by a calibration at every fidelity
        (``"estimate"``); estimated and doubled when violated (``"adaptive"``:
        with 3 or more fidelities its calibration skips the expensive ones --
        every fidelity but the top over a fixed list, the cheaper half in
        waves -- and extends the bounds to the top, see
        :func:`mftune.engine.calibration.extend_to_top`); or known (the bound the algorithm
        uses: ξ for ``"iise"``, γ for ``"iise-gamma"``; one non-negative entry per
        fidelity ending in 0, in any order: a fidelity whose bound is not below a
        cheaper one's is skipped).
    n_calibration : int, default=3
        Candidates spread over the space, evaluated on the same two folds at
        the fidelities the ``bias`` mode calibrates, to estimate bias, σ and
        costs (its cost is counted in the run).
    sigma : float, optional
        Standard deviation of a pull's score (sub-Gaussian scale); estimated
        from the calibration's pooled per-fold spread when ``None``.
    costs : "measured", "levels" or sequence of float, default="measured"
        Per-fidelity costs the policy plans with. ``"measured"``: initialised from the
        calibration's mean seconds per pull at each fidelity (or, without a
        calibration, proportional to the fidelity levels) and replaced after
        every batch by the running mean of the measured seconds. ``"levels"``:
        proportional to the fidelity levels (subset sizes, parameter values),
        fixed. A sequence: fixed, strictly increasing, one per fidelity.
        Measured costs make the phase switches depend on timing; fixed costs
        make a run exactly replayable from ``random_state``.
    delta : float, default=0.05
        Error probability of the stopping rule.
    epsilon : float, "auto" or None, default="auto"
        Accept any candidate within ``epsilon`` of the best (in score units).
        ``"auto"``: 0.005 for scores in [0, 1] (half a point of accuracy),
        1 % of the best score's magnitude for scores that are all negative
        (negated losses: a loss 1 % above the best), else 1 % of the
        calibration's score range; never more than a tenth of that range (0
        for a deterministic objective); ``None`` asks for the single best (may
        not end on ties). An ``epsilon`` wider than the scores seen is refused.
    budget : float, optional
        Cap on the summed cost (seconds of fit + score, calibration included).
    max_pulls : int, optional
        Cap on the number of pulls (calibration excluded).
    timeout : float, optional
        Seconds after which one pull is stopped and recorded as timed out
        (score ``error_score``); pulls then run in forked child processes (one
        OpenMP thread each: see :mod:`mftune.search.evaluation`).
    scoring : str, callable, list or dict, optional
        As in ``GridSearchCV``; with several metrics ``refit`` names the one
        that is optimised.
    cv : int or splitter, default=5
    refit : bool or str, default=True
    error_score : "raise" or float, default=np.nan
        Score of a failing pull (recorded with its traceback). A ``nan`` score
        is told to the policy as the lowest score seen so far.
    n_jobs : int, optional
        Parallel pulls within a batch, through joblib as in ``GridSearchCV``
        (``None``: the ``joblib.parallel_config`` in force, else 1; ``-1``: all
        cores, or all the workers of a dask cluster under
        ``joblib.parallel_config(backend="dask")``). Round-based algorithms
        (the IISE family) run a round's pulls in parallel; algorithms with a
        batch rule (LUCB, MF-UCB, the GP policies) are built with
        ``batch_size`` = the effective number of jobs. See docs/parallel.md.
    verbose : int, default=0
        ``>= 1``: schedule, calibration, algorithm choice and a progress line
        (pulls, cost, current best) each second; ``>= 2``: every batch.
    random_state : int, RandomState or None
        Seeds candidates, subsets, fold reshuffles and the policy.
    storage : str or path-like, optional
        A SQLite study file (the store of ``mftune tune``; JSON, never
        pickle). The study (space, candidates, fidelities, algorithm and
        settings, seed) and one row per pull (status, score, cost, times,
        error) are written as the search runs, so ``mftune status/report/
        export`` read it. ``fit`` on a file that holds a study *resumes* it:
        the stored pulls are replayed into a fresh policy (same seed ⇒ same
        asks) and only the unfinished ones are evaluated; with
        ``random_state=None`` the stored seed is used. A stored study written
        with other candidates, fidelities, algorithm, data or settings raises
        a ``ValueError``. ``budget`` and ``max_pulls`` count from the start of
        the study, so raise them to continue a capped search. See
        docs/tuner.md.

    Attributes
    ----------
    best_index_, best_params_, best_score_, best_estimator_, refit_time_
        As in ``GridSearchCV``; ``best_score_`` is the mean score of the best
        candidate at the highest fidelity it reached.
    cv_results_ : dict of arrays
        One row per candidate (params, ``param_*``, mean/std and per-fold test
        scores at the highest fidelity reached, that fidelity, pulls and cost per
        fidelity, elimination fidelity/round/time, failures, rank, and the
        ``wave`` it entered: 1 without waves). The calibration's pulls count
        in it when the policy takes them as evidence (the elimination
        algorithms and the waves), as they do in the recommendation.
    pulls_ : dict of arrays
        One row per pull (calibration included, ``phase`` column; ``worker``:
        the ``"host:pid"`` of the process that ran it; ``n_train`` and
        ``n_valid``: the rows it was fitted and scored on).
    fidelities_ : list
        The levels used.
    costs_ : ndarray
        Measured mean seconds per pull at each fidelity (the policy's planning
        estimate for a fidelity never pulled).
    bias_bounds_ : ndarray
        Bounds in force at the end; ``bias_mode_`` says how they were obtained
        and ``bias_events_`` lists the adaptive growths.
    sigma_ : ndarray of shape (M,)
        Per-fidelity σ in force at the end (calibration pooled with the run's pulls).
    epsilon_, epsilon_achieved_ : float or None, float
        The ε in force; how far below the best candidate evaluated the recommendation can
        be, with probability ``>= 1 − delta`` on ``guarantee_``'s assumptions: ``epsilon_``
        (0 without one) once certified, else what the run had shown when it stopped
        (docs/tuner.md, "What a run stopped early has shown"); ``nan``: nothing.
    validation_ : {"proportional", "full"}
        The validation rows in force (``validation`` with ``"auto"`` resolved).
    adaptive_ : bool
        Whether the candidates came in waves; ``waves_`` lists the waves
        (their δ, candidates, survivors, incumbent and the surrogate's worth).
    algorithm_ : str
        The algorithm run (``algorithm_reason_`` says why, for ``"auto"``).
    stopping_reason_ : str
        ``"stopping-rule"``, ``"budget"``, ``"max-pulls"``, ``"interrupted"``, ``"stalled"``,
        ``"tie"`` or ``"repeated-splits"`` (the rule's end, after evaluations that repeated
        a split of a splitter without ``random_state``: no certificate); ``guarantee_``
        states what the result means.
    n_splits_ : int
        The splits of ``cv`` (reshuffled on repeats where it has a ``random_state``).
    history_ : list of tuple
        ``(seconds, cost, pulls, recommended candidate)`` after each batch, and
        after each calibration pull before it (pulls 0: the best calibrated
        candidate at the highest fidelity reached), so an answer exists from
        the first finished pull on.
    n_pulls_, total_cost_, calibration_cost_ : int, float, float
    n_replayed_ : int
        Pulls answered from ``storage`` instead of being evaluated (0 without it).
    continuation_ : str or None
        The continuation in use (``"warm_start"``, ``"partial_fit"`` or ``None``).
    continuation_saved_ : float
        Estimated seconds the continuation saved: for every continued pull, the cost of the same
        candidate's pulls fitted from scratch at that fidelity minus its cost (or, without any,
        the fit seconds spent on the continued model times the saving ratio measured where there
        are some: :func:`~mftune.search.continuation.saved_estimates`); less all seconds spent
        pickling models for the cache (so it can be negative). ``pulls_`` marks continued pulls
        (``continued``, ``continued_from``, ``reused_cost``, ``saved_cost``, ``cache_time``).
    """

    def __init__(self, estimator, space, *, fidelity="n_samples", fidelities=None,
                 min_resources="auto", factor=3, validation="auto", continuation="auto",
                 algorithm="auto", algorithm_params=None, n_candidates=32,
                 grid_points=5, adaptive="auto", wave_size="auto", bias="adaptive",
                 n_calibration=3, sigma=None, costs="measured", delta=0.05,
                 epsilon="auto", budget=None, max_pulls=None, timeout=None, scoring=None,
                 cv=5, refit=True, error_score=np.nan, n_jobs=None, verbose=0,
                 random_state=None, storage=None):
        self.estimator = estimator
        self.space = space
        self.fidelity = fidelity
        self.fidelities = fidelities
        self.min_resources = min_resources
        self.factor = factor
        self.validation = validation
        self.continuation = continuation
        self.algorithm = algorithm
        self.algorithm_params = algorithm_params
        self.n_candidates = n_candidates
        self.grid_points = grid_points
        self.adaptive = adaptive
        self.wave_size = wave_size
        self.bias = bias
        self.n_calibration = n_calibration
        self.sigma = sigma
        self.costs = costs
        self.delta = delta
        self.epsilon = epsilon
        self.budget = budget
        self.max_pulls = max_pulls
        self.timeout = timeout
        self.scoring = scoring
        self.cv = cv
        self.refit = refit
        self.error_score = error_score
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state
        self.storage = storage

    # -- validation -------------------------------------------------------------------
    def _check_params(self) -> None:
        check_params(self)

    def _validation(self) -> str:
        """The validation rows in force (``validation="auto"`` resolved; docstring)."""
        if self.fidelity != "n_samples" or self.validation == "full":
            return "full"
        if self.validation == "proportional":
            return "proportional"
        # "auto": scikit-learn's named scorers and the default score of classifiers and
        # regressors are means over the rows; a callable, or an estimator's own score
        # that may be a sum (KernelDensity's log-likelihood), is not known to be one
        s = self.scoring
        named = s is None or isinstance(s, str) or (
            isinstance(s, (list, tuple, set, dict)) and all(
                isinstance(v, str) for v in (s.values() if isinstance(s, dict) else s)))
        supervised = is_classifier(self.estimator) or is_regressor(self.estimator)
        return "proportional" if named and supervised else "full"

    def _scorers(self):
        """``({name: scorer}, optimised metric name, multimetric?)``."""
        return build_scorers(self)

    # -- fit --------------------------------------------------------------------------
    def fit(self, X, y=None, groups=None, **fit_params):
        """Run the search, then refit the best candidate on ``X, y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional
        groups : array-like of shape (n_samples,), optional
            Group labels for group-aware splitters.
        **fit_params : dict
            Passed to the estimator's ``fit``; sample-aligned arrays are sliced
            to each pull's training rows. With scikit-learn's metadata routing
            enabled they go where requested (the estimator's ``fit``, a
            scorer, the splitter: :mod:`mftune.search.routing`).

        Returns
        -------
        self
        """
        fit_params, score_params, groups = route_fit_params(self, groups, fit_params)
        return self._fit(X, y, groups, fit_params, score_params=score_params)

    def _fit(self, X, y, groups, fit_params, budget=None, max_pulls=None, score_params=None):
        """``fit`` with caps overriding ``budget``/``max_pulls`` (``resume`` with storage)."""
        self._check_params()
        self._t_start = time.perf_counter()
        for attr in ("_progress", "_evaluator"):
            self.__dict__.pop(attr, None)
        space = Space(self.space)
        skip = {self.fidelity} if self.fidelity != "n_samples" else set()
        space.check_names(set(self.estimator.get_params(deep=True)) - skip,
                          f"the estimator {type(self.estimator).__name__}")
        scorers, metric, multimetric = self._scorers()
        X, y, groups = indexable(X, y, groups)
        classifier = is_classifier(self.estimator)
        if classifier:
            check_classification_targets(y)
        stratify = classifier and type_of_target(y) in ("binary", "multiclass")
        if not get_tags(self.estimator).input_tags.allow_nan:
            data = X.data if issparse(X) else X
            if getattr(data, "dtype", None) is not None and data.dtype.kind in "fc":
                assert_all_finite(data, input_name="X")
        cv = check_cv(self.cv, y, classifier=classifier)
        seed = stored_seed(self.storage) if self.storage is not None and \
            self.random_state is None else None
        if seed is None:
            seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        rng = np.random.default_rng(seed)
        self.adaptive_ = False
        if self.algorithm in algorithms.POINT_ALGORITHMS:
            # The GP policies propose their own configurations; the sampled ones are
            # only the calibration's.
            if space.is_conditional:
                raise ValueError(f"algorithm={self.algorithm!r} needs an unconditional space "
                                 "(one dict): it searches the unit-cube encoding")
            candidates = space.sample(max(int(self.n_calibration), 2), rng)
        else:
            self.adaptive_, why = resolve_adaptive(
                self.adaptive, space=space, algorithm=self.algorithm,
                n_candidates=self.n_candidates)
            if self.adaptive == "auto" and self.adaptive_ and self.storage is not None \
                    and stored_waves(self.storage) is False:
                self.adaptive_, why = False, "a fixed candidate list: the study at storage has one"
            self._say(1, f"candidates: {why}")
            candidates = (space.grid(self.grid_points) if self.n_candidates == "grid"
                          else draw_candidates(space, self.n_candidates, rng, self.adaptive_))
        if len(candidates) < 2:
            raise ValueError("n_candidates: the space yields fewer than 2 candidates")
        levels = self._levels(X, y, groups, cv, stratify)
        self.fidelities_ = levels
        self.scorer_ = scorers if multimetric else scorers["score"]
        self.multimetric_ = multimetric
        self._say(1, f"{len(candidates)} candidates; fidelity {self.fidelity!r} at levels "
                     f"{levels}; {cv.get_n_splits(X, y, groups)}-fold CV")
        spec = resolve_continuation(self.continuation, self.estimator, self.fidelity, levels)
        self.continuation_ = None if spec is None else spec.mode
        self._say(1, "continuation: " + ("off" if spec is None else f"{spec.mode} ({spec.reason})"))
        validation = self._validation()
        if self.fidelity == "n_samples":
            self._say(1, f"validation rows below the top level: {validation}"
                         + (" (validation='auto')" if self.validation == "auto" else ""))
        evaluator = CVEvaluator(
            self.estimator, candidates, X, y, cv, self.fidelity, levels, scorers, metric,
            groups=groups, fit_params=fit_params, score_params=score_params,
            error_score=self.error_score,
            timeout=self.timeout, stratify=stratify and self.fidelity == "n_samples",
            n_jobs=self.n_jobs, random_state=seed, continuation=spec, validation=validation)
        self._evaluator = evaluator
        self.n_splits_ = evaluator.n_splits
        evaluator.warn_fixed_splits()
        self._wave_size = (resolve_wave_size(self.wave_size, len(candidates))
                           if self.adaptive_ else None)
        self.validation_ = validation
        self._metric = metric
        self._engine = Search(
            evaluator, levels, seed=seed, space=space, batch_size=self._batch_size(),
            adaptive=self.adaptive_, wave_size=self._wave_size,
            **{k: getattr(self, k) for k in _ENGINE_PARAMS})
        for attr in ("algorithm_", "algorithm_reason_", "bias_mode_"):
            setattr(self, attr, getattr(self._engine, attr))
        self._algorithm_params = self._engine.algorithm_params_
        self.n_replayed_ = 0
        self.__dict__.pop("_stop_reason", None)
        with storage_errors(self):
            if self.storage is not None:
                self._open_storage(evaluator, candidates, levels, seed, space, X, y, groups)
            self._engine.setup(rng, t_start=self._t_start)
            self._search(budget, max_pulls)
        return self

    def _open_storage(self, evaluator, candidates, levels, seed, space, X, y, groups):
        """Create or reopen the study file; its stored pulls will answer the search."""
        n_cal = self._engine.calibration_pulls(len(candidates), evaluator.n_splits)
        self._recorder = self._engine.recorder = open_recorder(
            self, evaluator, candidates=candidates, levels=levels, seed=seed, space=space,
            calibrate=n_cal > 0, calibration_pulls=n_cal,
            signature=study_signature(self, X, y, groups))
        self._engine.stored_updates = self._recorder.store.updates()
        n_done = sum(r.finished for r in self._recorder.store.rows())
        self._say(1, f"storage {str(self.storage)!r}: "
                     + (f"resuming, {n_done} finished pulls to replay" if n_done
                        else "new study"))

    def _levels(self, X, y, groups, cv, classifier):
        if self.fidelity != "n_samples":
            vals = list(self.fidelities)
            if all(level_is_number(v) for v in vals) and np.any(np.diff(vals) <= 0):
                raise ValueError(f"fidelities must be strictly increasing; got {vals!r}")
            return vals
        n_max = min(len(tr) for tr, _ in cv.split(X, y, groups))
        n_min = min_subset_size(y, cv.get_n_splits(X, y, groups)) if classifier else 1
        return n_samples_schedule(n_max, fidelities=self.fidelities,
                                  min_resources=self.min_resources, factor=self.factor,
                                  n_min=n_min)

    def _say(self, level, msg):
        if self.verbose >= level:
            print(f"[mftune] {msg}", flush=True)

    def _batch_size(self) -> int:
        """Pulls per batch of a batch-rule algorithm: the effective ``n_jobs``."""
        return max(1, int(effective_n_jobs(self.n_jobs)))

    def _search(self, budget=None, max_pulls=None):
        engine = self._engine
        reason = engine.search(budget, max_pulls, t_start=self._t_start)
        for attr in _ENGINE_ATTRS:
            setattr(self, attr, getattr(engine, attr))
        self._progress = engine.progress
        self._finish(reason)

    def _finish(self, reason):
        ev, policy = self._evaluator, self.policy_
        self.stopping_reason_ = self._stop_reason = reason
        best = int(policy.recommend())
        self.best_index_ = best
        self.n_pulls_ = self._progress.n_pulls
        self.total_cost_ = self._progress.cost
        self.history_ = list(self._progress.history)
        recs = ev.records
        raise_if_all_failed(recs)
        levels = self.fidelities_
        self.pulls_ = build_pulls(recs, levels)
        self.continuation_saved_ = saved_seconds(recs)
        if reason != "interrupted":
            ev.cache.clear()
        n_fid = len(levels)
        fid = np.array([r.fidelity for r in recs], dtype=np.int64)
        cost = np.array([r.cost for r in recs])
        counts = np.bincount(fid, minlength=n_fid)
        with np.errstate(invalid="ignore", divide="ignore"):
            measured = np.bincount(fid, cost, n_fid) / counts
        planned = getattr(policy, "nominal_costs", lambda: np.full(n_fid, np.nan))()
        self.costs_ = np.where(counts > 0, measured, planned)
        elim_r = getattr(policy, "eliminated_round", np.full(len(self.candidates_), -1))
        elim_f = getattr(policy, "eliminated_fidelity", np.full(len(self.candidates_), -1))
        # the calibration's pulls count where the policy takes them as evidence
        evidence = recs if hasattr(policy, "add_evidence") else (
            [r for r in recs if r.phase == "search"] or recs)
        n_cand = len(self.candidates_)
        elim_t = self._progress.eliminated_time
        if elim_t.size < n_cand:  # candidates proposed during the run (GP policies)
            elim_t = np.r_[elim_t, np.full(n_cand - elim_t.size, np.nan)]
        self.cv_results_ = build_cv_results(
            self.candidates_, evidence, levels, list(ev.scorers), self._metric, best,
            elim_r, elim_f, elim_t, ev.n_splits)
        self.cv_results_["wave"] = np.asarray(getattr(policy, "wave_of", np.ones(n_cand)),
                                              dtype=np.int64)
        self.waves_ = list(getattr(policy, "waves_", []))
        self.best_params_ = dict(self.candidates_[best])
        self.best_score_ = float(self.cv_results_[f"mean_test_{self._metric}"][best])
        self.guarantee_ = self._engine.guarantee_  # stated by the search for ``reason``
        self.epsilon_achieved_ = self._engine.epsilon_achieved_
        self._say(1, f"stopped: {reason}; {self.guarantee_}")
        self._say(1, f"best #{best} {self.best_params_} score {self.best_score_:.4f} at "
                     f"{self.cv_results_['level_reached'][best]}")
        if reason == "interrupted":
            self._say(1, "interrupted: best candidate so far kept; call resume() to continue")
            return
        self._refit(ev)
        if self.refit is not False or reason not in ("budget", "max-pulls"):
            ev.drop_data()  # nothing can resume it: keep no training data, nor in a pickle
            self._evaluator = None

    def _refit(self, ev):
        refit = self.refit
        if refit is False:
            return
        params = dict(self.best_params_)
        if self.fidelity != "n_samples":
            params[self.fidelity] = self.fidelities_[-1]
        est = clone_with(self.estimator, params)
        t0 = time.perf_counter()
        fit_at_level(est, ev.X, ev.y, ev.fit_params, partial_fit_only(ev.continuation),
                     params.get(self.fidelity), classes=ev.classes)
        self.refit_time_ = time.perf_counter() - t0
        self.best_estimator_ = est
        if hasattr(est, "n_features_in_"):
            self.n_features_in_ = est.n_features_in_
        if hasattr(est, "feature_names_in_"):
            self.feature_names_in_ = est.feature_names_in_

    def resume(self, budget=None, max_pulls=None):
        """Continue an interrupted (or capped) search with new caps, then refit.

        Parameters
        ----------
        budget : float, optional
            New cap on the summed cost (counted from the start of the search).
        max_pulls : int, optional
            New cap on the number of pulls (counted from the start).

        Returns
        -------
        self

        Notes
        -----
        With ``storage`` the search is rebuilt from the study file (its
        finished pulls replayed, as by a new ``fit`` on the kept data) and
        continued, so the file stays the one record of the search. Without
        it, a search stopped during its calibration starts again.
        """
        if getattr(self, "_evaluator", None) is None:
            raise ValueError("resume() needs a search stopped by Ctrl+C (its data is kept); "
                             "this one completed — call fit() to start another")
        if self.storage is not None or not hasattr(self._engine, "policy_"):  # replay, go on
            ev = self._evaluator
            return self._fit(ev.X, ev.y, ev.groups, ev.fit_params, budget, max_pulls,
                             ev.score_params)
        self._search(budget, max_pulls)
        return self

    def get_metadata_routing(self):
        """Where ``fit`` routes metadata (:mod:`mftune.search.routing`)."""
        return metadata_router(self)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        sub = get_tags(self.estimator)
        tags.estimator_type = sub.estimator_type
        tags.classifier_tags = deepcopy(sub.classifier_tags)
        tags.regressor_tags = deepcopy(sub.regressor_tags)
        tags.input_tags.pairwise = sub.input_tags.pairwise
        tags.input_tags.sparse = sub.input_tags.sparse
        tags.input_tags.allow_nan = sub.input_tags.allow_nan
        tags.target_tags.multi_output = sub.target_tags.multi_output
        return tags
