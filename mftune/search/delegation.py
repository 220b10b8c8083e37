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


class Delegation:
    """``classes_``, ``predict``, ``predict_proba``... of the refitted best estimator."""

    @property
    def classes_(self):
        self._check_refitted("classes_")
        return self.best_estimator_.classes_

    def _check_refitted(self, name):
        if self.refit is False:
            raise AttributeError(f"{name} is available only with refit=True; refit={self.refit}")
        check_is_fitted(self, "best_estimator_")

    @available_if(_delegate("predict"))
    def predict(self, X):
        """Predict with the refitted best estimator."""
        self._check_refitted("predict")
        return self.best_estimator_.predict(X)

    @available_if(_delegate("predict_proba"))
    def predict_proba(self, X):
        """``predict_proba`` of the refitted best estimator."""
        self._check_refitted("predict_proba")
        return self.best_estimator_.predict_proba(X)

    @available_if(_delegate("predict_log_proba"))
    def predict_log_proba(self, X):
        """``predict_log_proba`` of the refitted best estimator."""
        self._check_refitted("predict_log_proba")
        return self.best_estimator_.predict_log_proba(X)

    @available_if(_delegate("decision_function"))
    def decision_function(self, X):
        """``decision_function`` of the refitted best estimator."""
        self._check_refitted("decision_function")
        return self.best_estimator_.decision_function(X)

    @available_if(_delegate("transform"))
    def transform(self, X):
        """``transform`` of the refitted best estimator."""
        self._check_refitted("transform")
        return self.best_estimator_.transform(X)

    @available_if(_delegate("inverse_transform"))
    def inverse_transform(self, X):
        """``inverse_transform`` of the refitted best estimator."""
        self._check_refitted("inverse_transform")
        return self.best_estimator_.inverse_transform(X)
