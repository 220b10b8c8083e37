"""A cheap simulated objective for the waves' tests and benchmark: a narrow bump on a broad hill.

``Bump`` is a scikit-learn regressor whose ``score`` is :func:`objective` at its
parameters ``(x1, x2)``, minus ``0.2 / max_iter`` (so ``max_iter`` is a
fidelity), plus noise seeded by the CV split it was fitted on.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

__all__ = ["CENTRE", "Bump", "SplitKeyed", "nominal_costs", "objective"]

#: Where the bump sits.
CENTRE = np.array([0.73, 0.27])


def objective(x1, x2):
    """A broad hill (top 0.5) with a narrow bump (+0.2, width 0.04) at its top."""
    d2 = (np.asarray(x1) - CENTRE[0]) ** 2 + (np.asarray(x2) - CENTRE[1]) ** 2
    return 0.5 - 0.5 * d2 + 0.2 * np.exp(-d2 / (2 * 0.04**2))


class SplitKeyed(RegressorMixin, BaseEstimator):
    """A stand-in estimator: ``fit`` keeps a key of its training rows (``key_``), so a
    subclass's ``score`` can seed its noise by the CV split; ``predict`` gives zeros."""

    def fit(self, X, y=None):
        self.key_ = int(round(float(np.asarray(X)[:, 0].sum()) * 1000))
        return self

    def predict(self, X):
        return np.zeros(len(X))


class Bump(SplitKeyed):
    """Scores ``objective`` minus ``0.2 / max_iter`` plus noise seeded by the CV split."""

    def __init__(self, x1=0.5, x2=0.5, max_iter=27, noise=0.01):
        self.x1, self.x2, self.max_iter, self.noise = x1, x2, max_iter, noise

    def score(self, X, y=None):
        f = float(objective(self.x1, self.x2))
        seed = abs(hash((self.key_, round(self.x1, 9), round(self.x2, 9), self.max_iter)))
        return f - 0.2 / self.max_iter + self.noise * np.random.default_rng(seed).standard_normal()


def nominal_costs(evaluate):
    """``CVEvaluator.evaluate`` with pulls costing ``0.01 s × level / top level``.

    Not the measured seconds: a cost budget then ends a search at the same
    pull on every machine. ``evaluate`` is the method to wrap.
    """

    def wrapped(self, pulls):
        out = evaluate(self, pulls)
        levels = np.asarray(self.levels, dtype=float)
        out.costs = 0.01 * levels[np.asarray(pulls.fidelities)] / levels[-1]
        return out

    return wrapped
