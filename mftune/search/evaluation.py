"""Evaluating pulls of scikit-learn estimators: one (candidate, fidelity, CV split) each.

:class:`CVEvaluator` is the :class:`mftune.engine.driver.Evaluator` behind
:class:`mftune.MFTuner`. A pull of candidate ``k`` at fidelity ``m``
(docs/tuner.md):

* takes the next cross-validation split of that (candidate, fidelity) pair,
  cycling through the folds and then through reshuffled repeats of them (a
  splitter without ``random_state``, e.g. ``LeaveOneGroupOut`` or a list of
  splits, repeats the same folds: :attr:`CVEvaluator.fixed_splits`);
* with ``fidelity="n_samples"`` trains on a random subset of ``n_m`` rows of
  the training fold, stratified for classifiers (every class keeps a row);
  with ``fidelity="<param>"`` sets that estimator parameter to the level and
  trains on the whole fold;
* scores the validation fold with every scorer -- below the top
  ``n_samples`` level, with ``validation="proportional"``, a stratified share
  of it (:meth:`CVEvaluator.train_rows`); the reward is the score of the
  metric the search optimises;
* costs its measured fit + score seconds.

With a :class:`~mftune.search.continuation.Continuation` (``MFTuner(continuation=...)``)
a pull of an estimator-parameter fidelity continues the model of the same
(candidate, split) kept at a lower fidelity instead of fitting from scratch
(:mod:`mftune.search.continuation`); its cost is then the measured seconds of the
continuation, plus the seconds spent (un)pickling models for the cache.
Pulls of one batch that share a (candidate, split) run in waves, lowest
fidelity first, so a higher one continues the lower one.

A failing fit comes back as ``status="failed"`` with the traceback text and
``error_score`` as its score (or raises, with ``error_score="raise"``). With
``timeout`` every pull runs in a child process that is killed when it
overruns; the pull is recorded as ``"timed-out"`` and costs ``timeout``. A
child that dies (a crash in compiled code, say) is recorded as ``"failed"``.

A batch runs through :func:`mftune.engine.driver.parallel_map` (joblib): ``n_jobs``
local processes, or the workers of whatever backend
``joblib.parallel_config`` selects (dask: the cluster's workers). Each pull
records where it ran (``"host:pid"``, the ``worker`` column of
``MFTuner.pulls_``). Pulls with a ``timeout`` run in children of this
process instead (a joblib worker cannot be killed mid-task). A forked child
runs its pull with one OpenMP thread: GNU libgomp's thread pool does not
survive ``fork``, so in a process that has already run OpenMP code
(``HistGradientBoosting*``, for one) a multi-threaded child would crash or
hang. Forking (not ``forkserver``/``spawn``) keeps scripts without an
``if __name__ == "__main__":`` guard working and costs no start-up.
"""

from __future__ import annotations

import copy
import os
import socket
import time
import traceback
import warnings
from collections.abc import Iterable

import numpy as np
from joblib import effective_n_jobs
from sklearn.base import clone, is_classifier
from sklearn.utils import _safe_indexing

from ..engine.driver import Evaluator, Outcome, Outcomes, parallel_map
from ..fidelity import stratified_subset
from ..policies.base import Pulls
from ..study.outcomes import PullRecord, stand_in_rewards
from ..study.replay import StudyMismatchError
from .continuation import (
    CACHE_BYTES,
    CachedModel,
    Continuation,
    ContinuationStep,
    ModelCache,
    dump_model,
    fit_at_level,
    load_model,
)
from .timeout import run_with_timeout

__all__ = ["CVEvaluator", "MIN_VALIDATION_ROWS", "PullRecord", "clone_with", "fit_and_score"]

#: Fewest validation rows a pull scores with ``validation="proportional"``.
MIN_VALIDATION_ROWS = 200


def _index_params(params: dict, n_samples: int, rows) -> dict:
    """Slice the sample-aligned fit parameters to ``rows`` (others pass through)."""
    out = {}
    for k, v in params.items():
        if hasattr(v, "__len__") and not isinstance(v, str) and len(v) == n_samples:
            out[k] = _safe_indexing(v, rows)
        else:
            out[k] = v
    return out


def clone_with(estimator, params: dict):
    """A clone of ``estimator`` with ``params`` set; estimator-valued params are cloned too.

    As in GridSearchCV: a candidate like ``{"model": SVC(), "model__C": 3}``
    must not mutate the ``SVC()`` object shared by the candidate list.
    """
    params = {k: clone(v, safe=False) for k, v in params.items()}
    return clone(clone(estimator).set_params(**params))


def fit_and_score(estimator, params, X, y, train, test, scorers, fit_params, error_score,
                  step: ContinuationStep | None = None, score_params=None):
    """Fit a clone of ``estimator`` with ``params`` on ``train``, score it on ``test``.

    Returns a dict with ``scores`` (one per scorer), ``fit_time``,
    ``score_time``, ``status``, ``error`` (traceback text) and ``worker``
    (``"host:pid"`` of the process that ran it). Raises the fit's exception
    when ``error_score == "raise"``.

    With a continuation ``step`` the model is trained to ``step.level`` by
    :func:`mftune.search.continuation.fit_at_level`, continuing the pickled
    ``step.start`` model when there is one; ``cache_time`` is the seconds spent
    (un)pickling, and with ``step.keep`` the trained model comes back pickled
    as ``model``. ``score_params``: ``{scorer name: metadata}`` routed to each scorer
    (:mod:`mftune.search.routing`), sliced to ``test`` as the fit parameters to ``train``.
    """
    out = _fit_and_score(estimator, params, X, y, train, test, scorers, fit_params,
                         error_score, step, score_params or {})
    out["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    return out


def _fit_and_score(estimator, params, X, y, train, test, scorers, fit_params, error_score,
                   step=None, score_params=None):
    cache_time = 0.0
    start_level = None
    if step is not None and step.start is not None:
        est, cache_time = load_model(step)
        start_level = step.start_level
    else:
        est = clone_with(estimator, params)
    n = len(y) if y is not None else X.shape[0]
    X_tr, X_te = _safe_indexing(X, train), _safe_indexing(X, test)
    y_tr = None if y is None else _safe_indexing(y, train)
    y_te = None if y is None else _safe_indexing(y, test)
    fp = _index_params(fit_params, n, train)
    start = time.perf_counter()
    try:
        if step is None:
            est.fit(X_tr, y_tr, **fp)
        else:
            fit_at_level(est, X_tr, y_tr, fp, step.spec, step.level, start_level, step.classes)
    except Exception:
        if error_score == "raise":
            raise
        fit_time = time.perf_counter() - start
        return {"scores": dict.fromkeys(scorers, float(error_score)), "fit_time": fit_time,
                "score_time": 0.0, "status": "failed", "error": traceback.format_exc(),
                "cache_time": cache_time}
    fit_time = time.perf_counter() - start
    start = time.perf_counter()
    try:
        scores = {name: float(sc(est, X_te, y_te, **_index_params(
            (score_params or {}).get(name, {}), n, test))) for name, sc in scorers.items()}
    except Exception:
        if error_score == "raise":
            raise
        return {"scores": dict.fromkeys(scorers, float(error_score)), "fit_time": fit_time,
                "score_time": time.perf_counter() - start, "status": "failed",
                "error": traceback.format_exc(), "cache_time": cache_time}
    out = {"scores": scores, "fit_time": fit_time, "score_time": time.perf_counter() - start,
           "status": "done", "error": None}
    if step is not None and step.keep:
        try:
            out["model"], seconds = dump_model(est)
            cache_time += seconds
        except Exception:  # noqa: BLE001 - an unpicklable model is simply not kept
            pass
    out["cache_time"] = cache_time
    return out


def _short(cv) -> str:
    """``repr`` of a splitter, or its type for a list of splits (whose repr holds them all)."""
    if type(cv).__name__ == "_CVIterableWrapper":  # what check_cv makes of a list
        return "a list of splits"
    text = repr(cv)
    return text if len(text) <= 80 else f"<{type(cv).__name__}>"


#: The details of a pull that its ``info`` (and so the study file) keeps.
_INFO_KEYS = ("scores", "fit_time", "score_time", "split", "n_train", "n_valid", "started",
              "worker", "continued_from", "reused", "cache_time")


def _ran(result: dict, split: int, task: tuple, started: float) -> dict:
    """A pull just run: :func:`fit_and_score`'s ``result`` with where and how it ran
    (``task``: its arguments; ``started``: seconds since the evaluator was made)."""
    step = task[9]
    continued = step is not None and step.start is not None
    return {"scores": result["scores"], "fit_time": result["fit_time"],
            "score_time": result["score_time"], "split": split, "n_train": len(task[4]),
            "n_valid": len(task[5]), "started": float(started),
            "worker": result.get("worker", ""),
            "continued_from": int(step.start_fidelity) if continued else -1,
            "reused": float(step.start_work) if continued and result["status"] == "done"
            else 0.0,
            "cache_time": float(result.get("cache_time", 0.0)),
            "status": result["status"], "error": result["error"]}


def _info(result: dict) -> dict:
    """The ``info`` of a pull (:func:`_ran`): its details without status and error."""
    return {k: result[k] for k in _INFO_KEYS}


def _outcome(result: dict, metric: str) -> Outcome:
    """A pull (:func:`_ran`) as :meth:`CVEvaluator.report` tells it: the raw reward."""
    return Outcome(result["scores"][metric],
                   result["fit_time"] + result["score_time"] + result["cache_time"],
                   result["status"], result["error"], _info(result))


class CVEvaluator(Evaluator):
    """Fit-and-score pulls of scikit-learn candidates at given fidelities.

    Parameters
    ----------
    estimator : estimator
        The unfitted base estimator.
    candidates : list of dict
        Parameters of each arm.
    X, y : array-like
        Training data (``y`` may be ``None`` for unsupervised estimators).
    cv : cross-validation splitter
        Its ``split(X, y, groups)`` gives the folds of repeat 0.
    fidelity : str
        ``"n_samples"`` or the name of an estimator parameter.
    levels : list
        Fidelity values (subset sizes, or parameter values), cheapest first.
    scorers : dict
        ``{name: scorer}``.
    metric : str
        Name of the scorer whose score is the reward.
    groups : array-like, optional
    fit_params : dict, optional
    score_params : dict, optional
        ``{scorer name: metadata}`` (routed by :mod:`mftune.search.routing`).
    error_score : "raise" or float
    timeout : float, optional
        Seconds after which a pull is stopped (forked child processes).
    stratify : bool
        Stratify training subsets by ``y`` (classifiers).
    n_jobs : int, optional
    random_state : int
        Seed of the subsets and of the reshuffled fold repeats.
    continuation : Continuation, optional
        Continue cached lower-fidelity models (:mod:`mftune.search.continuation`).
    validation : {"full", "proportional"}, default="full"
        Rows a ``n_samples`` pull below the top fidelity scores: the whole
        validation fold, or a subset of it in the split's own proportion to
        the training subset (:meth:`train_rows`).
    cache_bytes : int, default=CACHE_BYTES
        Cap on the pickled size of the cached models (least recently used
        evicted first).
    """

    def __init__(self, estimator, candidates, X, y, cv, fidelity, levels, scorers, metric, *,
                 groups=None, fit_params=None, score_params=None, error_score=np.nan,
                 timeout=None, stratify=False, n_jobs=None, random_state=0,
                 continuation: Continuation | None = None, validation: str = "full",
                 cache_bytes: int = CACHE_BYTES):
        super().__init__(n_jobs)
        self.estimator = estimator
        self.candidates = list(candidates)
        self.X, self.y, self.groups = X, y, groups
        self.cv = cv
        self.fidelity = fidelity
        self.levels = list(levels)
        self.scorers = scorers
        self.metric = metric
        self.fit_params = dict(fit_params or {})
        self.score_params = dict(score_params or {})
        self.error_score = error_score
        self.timeout = timeout
        self.stratify = stratify
        self.validation = validation
        # a validation share keeps a row of every class (counted once, not per pull)
        self._n_classes = np.unique(np.asarray(y)).size if stratify and y is not None else 0
        self.random_state = int(random_state)
        self._splits: dict[int, list] = {0: list(cv.split(X, y, groups))}
        self.n_splits = len(self._splits[0])
        self.next_split = np.zeros((len(self.levels), len(self.candidates)), dtype=np.int64)
        # splits taken by batches whose results the policy has not acknowledged yet
        self._unfinished = np.zeros_like(self.next_split)
        self.records: list[PullRecord] = []
        self.phase = "search"
        self._worst = np.inf  # lowest finite reward seen, stand-in for nan error scores
        self._t0 = time.perf_counter()
        self.continuation = continuation
        self.cache = ModelCache(cache_bytes)
        self._continues = self._continuing(self.candidates)
        self.classes = None
        if continuation is not None and is_classifier(estimator) and y is not None:
            self.classes = np.unique(y)

    # -- splits -----------------------------------------------------------------
    def split(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        """Train/test rows of the ``index``-th split (folds, then reshuffled repeats)."""
        repeat, fold = divmod(int(index), self.n_splits)
        if repeat not in self._splits:
            self._splits[repeat] = list(self._repeat_cv(repeat).split(self.X, self.y, self.groups))
        return self._splits[repeat][fold]

    @property
    def fixed_splits(self) -> bool:
        """Whether the splitter gives the same folds on every repeat (it has no
        ``random_state`` to reseed: ``LeaveOneGroupOut``, ``TimeSeriesSplit``,
        ``PredefinedSplit``, a list of splits...)."""
        return not hasattr(self.cv, "random_state")

    def _repeat_cv(self, repeat: int):
        """The splitter of repeat ``repeat >= 1``: a copy shuffling with a seed of its own
        (``shuffle`` turned on where the splitter has it, as for ``KFold``), or the
        splitter itself when its splits are fixed."""
        if self.fixed_splits:
            return self.cv
        cv = copy.deepcopy(self.cv)
        if hasattr(cv, "shuffle"):
            cv.shuffle = True
        cv.random_state = self.random_state + 7919 * repeat
        return cv

    def warn_fixed_splits(self) -> None:
        """Warn (``UserWarning``) when the splitter's splits are fixed."""
        if self.fixed_splits:
            warnings.warn(
                f"cv={_short(self.cv)} gives the same {self.n_splits} split(s) on every "
                "repeat (it has no random_state to reshuffle): a candidate evaluated more "
                "often than that "
                "at a fidelity repeats earlier evaluations, and the search then ends without "
                "a certificate (stopping_reason_='repeated-splits'); a splitter with a "
                "random_state (KFold, ShuffleSplit, GroupShuffleSplit, RepeatedKFold...) gives "
                "new splits", UserWarning, stacklevel=4)

    def repeats_splits(self) -> bool:
        """Whether a pull reused the split of an earlier pull of its (candidate, fidelity):
        a splitter with fixed splits, asked for more than ``n_splits`` pulls of a pair."""
        return self.fixed_splits and bool(np.any(self.next_split > self.n_splits))

    def train_rows(self, arm: int, fidelity: int, split: int) -> tuple[np.ndarray, np.ndarray]:
        """Training and validation rows of one pull (subsets drawn for ``n_samples``).

        Below the top ``n_samples`` level the training rows are a stratified
        subset of ``n_m`` rows of the fold, drawn per (candidate, fidelity,
        split). With ``validation="proportional"`` the validation rows are a
        stratified subset of the validation fold in the split's own ratio,
        ``ceil(n_m |validation fold| / |training fold|)`` rows -- the rows a
        halving search fits and scores on at that size -- but at least
        :data:`MIN_VALIDATION_ROWS` (or the whole fold) and one per class, so
        a score is defined (R² needs two rows) and not dominated by a handful
        of rows; drawn per (fidelity, split), so every candidate is scored on
        the same rows of a split.
        """
        train, test = self.split(split)
        if self.fidelity == "n_samples" and fidelity < len(self.levels) - 1:
            size = self.levels[fidelity]
            labels = self.y if self.stratify else None
            if self.validation == "proportional":
                n_test = max(int(np.ceil(size * test.size / train.size)), MIN_VALIDATION_ROWS,
                             self._n_classes)
                seed = np.random.SeedSequence(self.random_state, spawn_key=(1, fidelity, split))
                test = stratified_subset(test, n_test, labels, np.random.default_rng(seed))
            seed = np.random.SeedSequence([self.random_state, arm, fidelity, split])
            train = stratified_subset(train, size, labels, np.random.default_rng(seed))
        return train, test

    def task(self, arm: int, fidelity: int, split: int) -> tuple:
        """Arguments of :func:`fit_and_score` for one pull."""
        params = dict(self.candidates[arm])
        if self.fidelity != "n_samples":
            params[self.fidelity] = self.levels[fidelity]
        train, test = self.train_rows(arm, fidelity, split)
        return (self.estimator, params, self.X, self.y, train, test, self.scorers,
                self.fit_params, self.error_score, self._step(arm, fidelity, split),
                self.score_params)

    def _step(self, arm: int, fidelity: int, split: int) -> ContinuationStep | None:
        """The continuation of one pull: the cached lower-fidelity model, if any."""
        spec = self.continuation
        if spec is None or not (self._continues[arm] or spec.mode == "partial_fit"):
            return None
        entry = self.cache.start_for(arm, split, fidelity) if self._continues[arm] else None
        keep = fidelity < len(self.levels) - 1 and self.cache.max_bytes > 0
        if entry is None:
            return ContinuationStep(spec, self.levels[fidelity], keep=keep,
                                    classes=self.classes)
        return ContinuationStep(spec, self.levels[fidelity], entry.data,
                                self.levels[entry.fidelity], keep, self.classes,
                                entry.fidelity, entry.work)

    # -- Evaluator API -------------------------------------------------------------
    def evaluate_one(self, arm: int, fidelity: int, point=None, split: int | None = None):
        """Fit and score one pull; ``split`` defaults to the pair's next split."""
        if split is None:
            split = int(self.next_split[fidelity, arm])
            self.next_split[fidelity, arm] += 1
        task = self.task(arm, fidelity, split)
        res = fit_and_score(*task)
        self._keep(arm, fidelity, split, res, task[9])
        return Outcome(res["scores"][self.metric],
                       res["fit_time"] + res["score_time"] + res["cache_time"],
                       res["status"], res["error"])

    #: :class:`mftune.study.recording.RecordingEvaluator` may pass stored results (``known=``).
    accepts_known = True

    def evaluate(self, pulls: Pulls, known: dict[int, dict] | None = None) -> Outcomes:
        """Run a batch (in parallel with ``n_jobs``; in child processes with ``timeout``).

        Each pull run is told to :meth:`report` as soon as it (and those
        before it in its wave) has finished, with the ``info`` it will have in
        the returned :class:`Outcomes`.

        Parameters
        ----------
        pulls : Pulls
        known : dict, optional
            Results already stored for some positions of the batch (a resumed
            study): ``{position: info}`` with the ``info`` this method returns
            in :attr:`Outcomes.info` plus ``status`` and ``error``. Those pulls
            are not run; they take their split, are recorded and rewarded
            exactly as when they ran, so the run continues as if uninterrupted.

        Returns
        -------
        Outcomes
            With ``info[i]``: every metric's score, fit and score seconds,
            split, training rows and start time of pull ``i``.
        """
        known = known or {}
        splits = np.empty(len(pulls), dtype=np.int64)
        for i, (a, f) in enumerate(pulls):  # the split order must follow the batch order
            splits[i] = self.next_split[f, a]
            self.next_split[f, a] += 1
        cells = (pulls.fidelities, pulls.arms)
        np.add.at(self._unfinished, cells, 1)
        results: list[dict] = [{}] * len(pulls)
        for i in known:
            results[i] = self._stored(known[i], splits[i])
        for wave in self._waves(pulls, splits):
            wave = np.array([i for i in wave if i not in known], dtype=np.int64)
            if not wave.size:
                continue
            tasks = [self.task(int(pulls.arms[i]), int(pulls.fidelities[i]), int(splits[i]))
                     for i in wave]
            started = time.perf_counter() - self._t0
            for i, t, r in zip(wave, tasks, self._run(tasks), strict=True):
                arm, fidelity = int(pulls.arms[i]), int(pulls.fidelities[i])
                self._keep(arm, fidelity, int(splits[i]), r, t[9])
                results[i] = _ran(r, int(splits[i]), t, started)
                self.report(int(i), arm, fidelity, _outcome(results[i], self.metric))
        rewards = np.array([r["scores"][self.metric] for r in results], dtype=float)
        # A nan error score is recorded as nan; the policy is told a stand-in.
        rewards, self._worst = stand_in_rewards(rewards, self._worst)
        for (a, f), r in zip(pulls, results, strict=True):
            self.records.append(PullRecord(
                int(a), int(f), r["split"], r["scores"], r["fit_time"], r["score_time"],
                r["status"], r["error"], self.phase, r["started"], r["n_train"],
                r["n_valid"], worker=r["worker"], continued_from=r["continued_from"],
                reused=r["reused"], cache_time=r["cache_time"]))
        return Outcomes(rewards, [r.cost for r in self.records[len(self.records) - len(pulls):]],
                        [r["status"] for r in results], [r["error"] for r in results],
                        [_info(r) for r in results])

    def _stored(self, info: dict, split: int) -> dict:
        """A stored pull as :func:`_ran` gives a pull just run (``null`` scores are nan)."""
        stored = (info or {}).get("split")
        if not info or "scores" not in info or stored != split:
            raise StudyMismatchError(
                f"a stored pull does not match this search (split {stored} stored, {split} "
                "expected): another cv, data or mftune version wrote it")
        scores = {k: np.nan if v is None else float(v) for k, v in info["scores"].items()}
        if set(scores) != set(self.scorers):
            raise StudyMismatchError(f"stored scores {sorted(scores)} differ from this search's "
                                     f"scoring {sorted(self.scorers)}")
        return {**info, "scores": scores, "n_train": int(info["n_train"]),
                "n_valid": int(info["n_valid"]),
                "started": float(info.get("started", time.perf_counter() - self._t0)),
                "worker": info.get("worker", ""),
                "continued_from": int(info.get("continued_from", -1)),
                "reused": float(info.get("reused", 0.0)),
                "cache_time": float(info.get("cache_time", 0.0))}

    def drop_data(self) -> None:
        """Drop the training data, the splits and the model cache (a completed search):
        every object still referring to this evaluator then holds none of them."""
        self.X = self.y = self.groups = None
        self.fit_params, self.score_params, self._splits = {}, {}, {}
        self.cache.clear()

    def add_candidates(self, n: int) -> None:
        """Make room for ``n`` candidates appended to :attr:`candidates` (proposals)."""
        pad = np.zeros((len(self.levels), int(n)), dtype=np.int64)
        self.next_split = np.hstack([self.next_split, pad])
        self._unfinished = np.hstack([self._unfinished, pad])
        new = self.candidates[self._continues.size:]
        self._continues = np.r_[self._continues, self._continuing(new)]

    def _continuing(self, candidates: list) -> np.ndarray:
        """Whether each of ``candidates`` continues its models across the fidelities."""
        if self.continuation is None or not candidates:
            return np.zeros(len(candidates), dtype=bool)
        return np.array([self.continuation.applies(clone_with(self.estimator, c))
                         for c in candidates], dtype=bool)

    def _run(self, tasks: list[tuple]) -> Iterable[dict]:
        """Run independent pulls: through joblib (any backend, results as they come), or
        in timed child processes."""
        if self.timeout is not None and tasks:
            jobs = max(effective_n_jobs(self.n_jobs), 1)
            return run_with_timeout(fit_and_score, tasks, self.timeout, jobs, self.error_score)
        return parallel_map(fit_and_score, tasks, self.n_jobs, lazy=True)

    def _waves(self, pulls: Pulls, splits: np.ndarray) -> list[np.ndarray]:
        """Groups of pulls that can run at once: a (candidate, split) at most once per wave.

        Without continuation the whole batch is one wave. With it, the pulls
        of one (candidate, split) go to successive waves, lowest fidelity
        first, so each can continue the model the previous one trained.
        """
        n = len(pulls)
        if self.continuation is None or n <= 1:
            return [np.arange(n)]
        wave = np.empty(n, dtype=np.int64)
        seen: dict[tuple[int, int], int] = {}
        for i in np.argsort(pulls.fidelities, kind="stable"):
            key = (int(pulls.arms[i]), int(splits[i]))
            wave[i] = seen.get(key, 0)
            seen[key] = wave[i] + 1
        return [np.flatnonzero(wave == w) for w in range(int(wave.max()) + 1)]

    def _keep(self, arm: int, fidelity: int, split: int, result: dict,
              step: ContinuationStep | None) -> None:
        """Cache the model a pull trained (its work includes the model it continued)."""
        data = result.pop("model", None)
        if data is None or result["status"] != "done":
            return
        work = result["fit_time"] + (step.start_work if step.start is not None else 0.0)
        self.cache.put(arm, split, CachedModel(fidelity, data, work))

    def after_batch(self, pulls: Pulls, outcomes: Outcomes, policy) -> None:
        """Driver callback: drop the cached models of eliminated candidates (all once done).

        Called once the policy was told the batch: its splits are acknowledged
        (:meth:`release` no longer gives them back).
        """
        self.acknowledge()
        if self.continuation is None or not len(self.cache):
            return
        if policy.done:
            self.cache.clear()
        elif hasattr(policy, "active"):
            self.cache.forget(np.flatnonzero(~policy.active))

    def release(self, pulls: Pulls) -> None:
        """Give back the splits of pulls that were asked but never run (Ctrl+C).

        Only splits taken by :meth:`evaluate` since the last :meth:`acknowledge`
        are given back: a batch interrupted before it reached the evaluator took
        none, and giving back more would repeat (or make negative) a split of a
        pull the policy was told.
        """
        asked = np.zeros_like(self.next_split)
        np.add.at(asked, (pulls.fidelities, pulls.arms), 1)
        back = np.minimum(asked, self._unfinished)
        self.next_split -= back
        self._unfinished -= back

    def acknowledge(self) -> None:
        """Mark the splits taken so far as used (their pulls were told to the policy)."""
        self._unfinished[:] = 0
