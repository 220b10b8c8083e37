"""What a fitted :class:`~mftune.search.tuner.MFTuner` delegates to its refitted best estimator."""

from __future__ import annotations

from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

__all__ = ["Delegation"]


def _delegate(name):
    def check(self):
        if hasattr(self, "best_estimator_"):
            return hasattr(self.best_estimator_, name)
        return hasattr(self.estimator, name)
    return check


def _method(name: str):
    """``name(X)`` of the refitted best estimator, present when that estimator has it."""

    def method(self, X):
        self._check_refitted(name)
        return getattr(self.best_estimator_, name)(X)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``{name}`` of the refitted best estimator."
    return available_if(_delegate(name))(method)


class Delegation:
    """``classes_``, ``predict``, ``predict_proba``, ``score_samples``... of the refitted best
    estimator."""

    @property
    def classes_(self):
        self._check_refitted("classes_")
        return self.best_estimator_.classes_

    def _check_refitted(self, name):
        if self.refit is False:
            raise AttributeError(f"{name} is available only with refit=True; refit={self.refit}")
        check_is_fitted(self, "best_estimator_")

    predict = _method("predict")
    predict_proba = _method("predict_proba")
    predict_log_proba = _method("predict_log_proba")
    decision_function = _method("decision_function")
    score_samples = _method("score_samples")
    transform = _method("transform")
    inverse_transform = _method("inverse_transform")

    def score(self, X, y=None):
        """Score with the optimised metric's scorer (``scoring``), as ``GridSearchCV``."""
        self._check_refitted("score")
        scorer = self.scorer_[self.refit] if self.multimetric_ else self.scorer_
        return scorer(self.best_estimator_, X, y)
