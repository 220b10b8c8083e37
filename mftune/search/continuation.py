"""Continuing a model from a lower fidelity instead of refitting it.

With ``fidelity="<estimator parameter>"`` (``max_iter``, ``n_estimators``) a
pull at level ``b`` of a (candidate, CV split) whose model was already fitted
at a lower level ``a`` on the same split can *continue* that model instead of
fitting from scratch:

* ``"warm_start"`` — ``set_params(warm_start=True, <fidelity>=b).fit(...)``.
  For scikit-learn's ensembles (``n_estimators`` of forests, extra trees,
  gradient boosting, bagging, isolation forest) and for ``max_iter`` of
  ``HistGradientBoosting*`` the parameter is the size of the model and a
  warm fit only adds what is missing; continuing ``a → b`` then gives the
  model a direct fit at ``b`` gives (same trees, same predictions, verified
  for a fixed ``random_state`` — also with early stopping, see
  :func:`fit_at_level`) [code]. For iterative solvers (``MLP*``, the
  ``SGD*``/``Perceptron``/``PassiveAggressive*`` family,
  ``LogisticRegression``) ``fit`` runs ``max_iter`` *more* iterations from the
  previous coefficients, so the continuation sets ``max_iter = b - a``; the
  optimiser's state (learning-rate schedule, Adam moments, L-BFGS memory) is
  restarted, so the continued model is *not* the model a direct fit at ``b``
  gives [code].
* ``"partial_fit"`` — the level is a number of ``partial_fit`` epochs over
  the training fold: every pull, fresh or continued, is trained that way (and
  so is the final refit), so a model continued ``a → b`` by ``b - a`` more
  epochs is the model ``b`` epochs from scratch give (for a deterministic
  ``partial_fit``) [code].
* ``"auto"`` — ``"warm_start"`` when the continuation is exact (the first
  group above), no continuation otherwise.

The models live in a :class:`ModelCache`: one per (candidate, split), at the
highest fidelity it reached, pickled (the bytes are what travels to and from
joblib workers and forked timeout children, and their size is what the cache
caps). A cached model is continued only to a *higher* fidelity; a pull at a
fidelity the cached model already has (a split repeated after Ctrl+C) is
fitted from scratch.
"""

from __future__ import annotations

import numbers
import pickle
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

__all__ = ["CACHE_BYTES", "Continuation", "ContinuationStep", "ModelCache", "check_option",
           "fit_at_level", "partial_fit_only", "resolve_continuation", "saved_estimates",
           "saved_seconds"]

OPTIONS = ("auto", "warm_start", "partial_fit", False)

#: Default cap on the pickled bytes of the models kept for continuation (LRU eviction).
CACHE_BYTES = 512 * 2**20


def _warm_start_kind(sub, name: str) -> str | None:
    """How ``fit`` with ``warm_start=True`` treats parameter ``name`` of ``sub``.

    ``"exact"``: the parameter is the model's size and a warm fit adds the
    missing part, giving the model of a direct fit; ``"total"``: the same, but
    the early-stopping history restarts (``GradientBoosting*`` with
    ``n_iter_no_change``), so the stopping iteration may differ;
    ``"increment"``: the fit runs ``name`` more iterations (iterative solvers);
    ``None``: unknown. [code: scikit-learn 1.9 sources, checked by tests]
    """
    from sklearn.ensemble._base import BaseEnsemble
    from sklearn.ensemble._gb import BaseGradientBoosting
    from sklearn.ensemble._hist_gradient_boosting.gradient_boosting import (
        BaseHistGradientBoosting,
    )
    from sklearn.linear_model import LogisticRegression
    from sklearn.linear_model._stochastic_gradient import BaseSGD
    from sklearn.neural_network._multilayer_perceptron import BaseMultilayerPerceptron

    if "warm_start" not in sub.get_params(deep=False):
        return None
    if isinstance(sub, BaseHistGradientBoosting) and name == "max_iter":
        return "exact"
    if isinstance(sub, BaseEnsemble) and name == "n_estimators":
        if isinstance(sub, BaseGradientBoosting) and sub.n_iter_no_change is not None:
            return "total"
        return "exact"
    if name == "max_iter" and isinstance(
            sub, (BaseMultilayerPerceptron, BaseSGD, LogisticRegression)):
        return "increment"
    return None


def _owner(estimator, param: str):
    """The (sub-)estimator owning ``param`` and the parameter's own name."""
    prefix, _, name = param.rpartition("__")
    sub = estimator.get_params(deep=True)[prefix] if prefix else estimator
    return sub, name, prefix


@dataclass(frozen=True)
class Continuation:
    """How pulls of an estimator-parameter fidelity continue a lower-fidelity model.

    Attributes
    ----------
    mode : {"warm_start", "partial_fit"}
    param : str
        The fidelity parameter (``"max_iter"``, ``"hgb__max_iter"``).
    warm_param : str or None
        The ``warm_start`` parameter next to it (``"hgb__warm_start"``).
    exact : bool
        Whether a continued model is the model a direct fit at the level gives.
    increment : bool
        Whether a warm fit runs ``param`` *more* iterations (then ``b - a`` is set).
    reason : str
    """

    mode: str
    param: str
    warm_param: str | None
    exact: bool
    increment: bool
    reason: str

    def applies(self, estimator) -> bool:
        """Whether ``estimator`` (a candidate's clone) continues as resolved."""
        try:
            sub, name, _ = _owner(estimator, self.param)
        except KeyError:
            return False
        if self.mode == "partial_fit":
            return hasattr(estimator, "partial_fit")
        kind = _warm_start_kind(sub, name)
        return kind is not None and (kind == "exact" or not self.exact)



def check_option(option) -> None:
    """Raise a ``ValueError`` naming ``continuation`` unless ``option`` is one of its values."""
    if not (option is False or (isinstance(option, str) and option in OPTIONS)):
        raise ValueError(f"continuation must be one of 'auto', 'warm_start', 'partial_fit' or "
                         f"False; got {option!r}")


def resolve_continuation(option, estimator, fidelity: str, levels) -> Continuation | None:
    """Check ``continuation`` against the estimator and fidelity; ``None`` = refit every pull.

    Parameters
    ----------
    option : {"auto", "warm_start", "partial_fit"} or False
    estimator : estimator
    fidelity : str
        ``"n_samples"`` or an estimator parameter.
    levels : sequence
        The fidelity levels.

    Returns
    -------
    Continuation or None

    Raises
    ------
    ValueError
        Naming ``continuation`` when the option is invalid, or explicitly asks
        for a continuation the estimator or fidelity does not support.
    """
    check_option(option)
    if option is False:
        return None
    explicit = option != "auto"

    def refuse(why: str):
        if explicit:
            raise ValueError(f"continuation={option!r}: {why}")
        return None

    if fidelity == "n_samples":
        return refuse("needs fidelity='<estimator parameter>' (training subsets of different "
                      "sizes are different data, not more of the same fit)")
    numeric = all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in levels)
    if not numeric or np.any(np.diff(np.asarray(levels, dtype=float)) <= 0):
        return refuse(f"needs increasing numeric fidelities; got {list(levels)!r}")
    sub, name, prefix = _owner(estimator, fidelity)
    warm_param = f"{prefix}__warm_start" if prefix else "warm_start"
    kind = type(sub).__name__
    if option == "partial_fit":
        if not hasattr(estimator, "partial_fit"):
            return refuse(f"{type(estimator).__name__} has no partial_fit method")
        if not all(isinstance(v, numbers.Integral) and v >= 1 for v in levels):
            return refuse(f"the levels count partial_fit epochs and must be integers >= 1; "
                          f"got {list(levels)!r}")
        return Continuation("partial_fit", fidelity, None, True, False,
                            f"each level is a number of partial_fit epochs of {kind}")
    how = _warm_start_kind(sub, name)
    if how == "exact":
        return Continuation("warm_start", fidelity, warm_param, True, False,
                            f"{kind}.fit with warm_start=True adds the missing {name} "
                            "(the model of a direct fit)")
    if explicit and how == "total":
        return Continuation("warm_start", fidelity, warm_param, False, False,
                            f"{kind}.fit with warm_start=True adds the missing {name} but "
                            "restarts the early-stopping history (may stop later than a "
                            "direct fit)")
    if explicit and how == "increment":
        return Continuation("warm_start", fidelity, warm_param, False, True,
                            f"{kind}.fit with warm_start=True runs {name} more iterations from "
                            "the previous solution (optimiser state restarted: not the model "
                            "of a direct fit)")
    if how is not None:
        return None  # "auto": a continuation that changes the model is opt-in
    return refuse(f"{kind} is not known to continue {name!r} with warm_start (supported: "
                  "n_estimators of scikit-learn ensembles with warm_start, max_iter of "
                  "HistGradientBoosting*, and max_iter of MLP*, SGD*/Perceptron/"
                  "PassiveAggressive*, LogisticRegression)")


def _realised_size(sub) -> int | None:
    """Iterations / members a fitted ensemble really has (fewer after early stopping)."""
    if hasattr(sub, "n_iter_") and np.ndim(sub.n_iter_) == 0:
        return int(sub.n_iter_)
    if hasattr(sub, "n_estimators_"):
        return int(sub.n_estimators_)
    if hasattr(sub, "estimators_"):
        return len(sub.estimators_)
    return None


def _stopped_early(sub, level) -> bool:
    """Whether a fitted ensemble's early stopping ended it (before or at ``level``).

    Fewer members than ``level`` means it stopped; with exactly ``level``,
    ``HistGradientBoosting*`` asks its own stopping test on the recorded
    scores (a warm fit would add one iteration before testing again).
    """
    size = _realised_size(sub)
    if size is None:
        return False
    if size < level:
        return True
    if getattr(sub, "do_early_stopping_", False) and hasattr(sub, "_should_stop"):
        scores = sub.validation_score_ if len(sub.validation_score_) else sub.train_score_
        return bool(sub._should_stop(scores))
    return False


def _partial_fit(est, X, y, fit_params, epochs: int, classes) -> None:
    kw = dict(fit_params)
    if classes is not None:
        kw["classes"] = classes
    for _ in range(int(epochs)):
        if y is None:
            est.partial_fit(X, **kw)
        else:
            est.partial_fit(X, y, **kw)


def fit_at_level(est, X, y, fit_params: dict, spec: Continuation | None, level,
                 start_level=None, classes=None) -> bool:
    """Train ``est`` to ``level``: from scratch, or continuing it from ``start_level``.

    ``est`` is a fresh clone (``start_level=None``) or a model already trained
    to ``start_level`` on the same rows. Returns whether a fit ran: a warm
    start from a model whose early stopping ended it before ``start_level``
    is left as it is, because a direct fit at ``level`` stops at the same
    iteration (same validation split — the estimators keep their seed across
    warm fits — and the same score history) [code].
    """
    if spec is None or spec.mode == "warm_start" and start_level is None:
        if y is None:
            est.fit(X, **fit_params)
        else:
            est.fit(X, y, **fit_params)
        return True
    if spec.mode == "partial_fit":
        _partial_fit(est, X, y, fit_params, level - (start_level or 0), classes)
        return True
    sub, _, _ = _owner(est, spec.param)
    if spec.exact and _stopped_early(sub, start_level):
        return False  # the direct fit at `level` stops at the same iteration: this model
    value = level - start_level if spec.increment else level
    est.set_params(**{spec.warm_param: True, spec.param: value})
    if y is None:
        est.fit(X, **fit_params)
    else:
        est.fit(X, y, **fit_params)
    return True


def partial_fit_only(spec: Continuation | None) -> Continuation | None:
    """``spec`` when it trains by ``partial_fit`` (the refit must then too), else ``None``."""
    return spec if spec is not None and spec.mode == "partial_fit" else None


def saved_estimates(records) -> np.ndarray:
    """Estimated seconds each pull saved by continuing a model (0 for the others).

    For a continued pull of candidate ``k`` at fidelity ``m``: the cost a fit
    from scratch would have had, minus the pull's fit + score seconds.

    * When the run has pulls of ``k`` at ``m`` fitted from scratch (other
      splits of the same size), that cost is their mean fit + score seconds
      (measured).
    * Otherwise the saving is ``q`` times the fit seconds already spent on
      the continued model (``reused``), where ``q`` is the median, over the
      continued pulls of the first kind, of their measured saving divided by
      their ``reused`` (clipped to [0, 1]) [calibrated]; ``q = 1`` (an upper
      bound) when there are none. ``q < 1`` because a warm fit repeats fixed
      work: boosting recomputes the existing trees' predictions on the
      training rows, HistGradientBoosting bins the data again [code].

    Pickling seconds are not included (see :func:`saved_seconds`).
    """
    n = len(records)
    arm = np.array([r.arm for r in records], dtype=np.int64)
    fid = np.array([r.fidelity for r in records], dtype=np.int64)
    own = np.array([r.fit_time + r.score_time for r in records], dtype=float)
    done = np.array([r.status == "done" for r in records], dtype=bool)
    cont = np.array([r.continued_from >= 0 for r in records], dtype=bool) & done
    reused = np.array([r.reused for r in records], dtype=float)
    saved = np.zeros(n)
    if not cont.any():
        return saved
    fresh = done & ~cont
    key = fid * (arm.max() + 1) + arm
    size = int(key.max()) + 1
    count = np.bincount(key[fresh], minlength=size)
    total = np.bincount(key[fresh], own[fresh], minlength=size)
    ref = cont & (count[key] > 0)
    saved[ref] = total[key[ref]] / count[key[ref]] - own[ref]
    q = 1.0
    ok = ref & (reused > 0)
    if ok.any():
        q = float(np.clip(np.median(saved[ok] / reused[ok]), 0.0, 1.0))
    saved[cont & ~ref] = q * reused[cont & ~ref]
    return saved


def saved_seconds(records) -> float:
    """Net seconds saved by continuation: :func:`saved_estimates` minus all pickling seconds."""
    return float(saved_estimates(records).sum() - sum(r.cache_time for r in records))


@dataclass
class ContinuationStep:
    """What one pull's worker needs to continue (or start) a cached model.

    Attributes
    ----------
    spec : Continuation
    level : number
        The pull's fidelity level.
    start : bytes or None
        The pickled model to continue, or ``None`` to fit from scratch.
    start_level : number or None
    keep : bool
        Return the trained model (pickled) so the cache keeps it.
    classes : ndarray or None
        All classes (``partial_fit`` of classifiers).
    start_fidelity : int
        Fidelity index of the start model (``-1``: none).
    start_work : float
        Fit seconds already spent on the start model.
    """

    spec: Continuation
    level: object
    start: bytes | None = None
    start_level: object = None
    keep: bool = False
    classes: np.ndarray | None = None
    start_fidelity: int = -1
    start_work: float = 0.0


def load_model(step: ContinuationStep):
    """Unpickle the start model; returns ``(model, seconds)``."""
    t0 = time.perf_counter()
    model = pickle.loads(step.start)
    return model, time.perf_counter() - t0


def dump_model(model) -> tuple[bytes, float]:
    """Pickle a trained model for the cache; returns ``(bytes, seconds)``."""
    t0 = time.perf_counter()
    data = pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
    return data, time.perf_counter() - t0


@dataclass
class CachedModel:
    """A model of one (candidate, split) at the highest fidelity it reached."""

    fidelity: int
    data: bytes
    work: float  # fit seconds spent on this model since it was fitted from scratch


class ModelCache:
    """Pickled models per (candidate, split), capped in bytes (least recently used first out).

    Parameters
    ----------
    max_bytes : int
        Cap on the summed size of the pickled models; ``0`` keeps none.
    """

    def __init__(self, max_bytes: int = CACHE_BYTES):
        self.max_bytes = int(max_bytes)
        self._models: OrderedDict[tuple[int, int], CachedModel] = OrderedDict()
        self.n_bytes = 0
        self.peak_bytes = 0
        self.n_evicted = 0

    def __len__(self) -> int:
        return len(self._models)

    def __contains__(self, key) -> bool:
        return key in self._models

    def start_for(self, arm: int, split: int, fidelity: int) -> CachedModel | None:
        """The cached model to continue for a pull at ``fidelity`` (lower fidelities only)."""
        entry = self._models.get((arm, split))
        if entry is None or entry.fidelity >= fidelity:
            return None
        self._models.move_to_end((arm, split))
        return entry

    def put(self, arm: int, split: int, entry: CachedModel) -> None:
        """Keep ``entry`` unless a model at a higher fidelity is already kept."""
        key = (arm, split)
        old = self._models.get(key)
        if old is not None and old.fidelity > entry.fidelity:
            return
        self.drop(arm, split)
        if len(entry.data) > self.max_bytes:
            return
        self._models[key] = entry
        self.n_bytes += len(entry.data)
        while self.n_bytes > self.max_bytes:
            _, gone = self._models.popitem(last=False)
            self.n_bytes -= len(gone.data)
            self.n_evicted += 1
        self.peak_bytes = max(self.peak_bytes, self.n_bytes)

    def drop(self, arm: int, split: int) -> None:
        """Forget the model of one (candidate, split)."""
        old = self._models.pop((arm, split), None)
        if old is not None:
            self.n_bytes -= len(old.data)

    def forget(self, arms) -> None:
        """Forget every model of the candidates in ``arms`` (eliminated or finished)."""
        gone = {int(a) for a in np.asarray(arms).reshape(-1)}
        for key in [k for k in self._models if k[0] in gone]:
            self.drop(*key)

    def clear(self) -> None:
        self._models.clear()
        self.n_bytes = 0
