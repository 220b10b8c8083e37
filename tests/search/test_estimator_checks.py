"""scikit-learn's own estimator checks on MFTuner wrapping simple estimators."""

from __future__ import annotations

from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from mftune import MFTuner, Real

# Checks that cannot apply to a search object, with the reason.
EXPECTED_FAILED = {
    "check_dtype_object": (
        "expects the estimator's own TypeError for a dict inside X; a search records each "
        "failing fit as error_score (GridSearchCV semantics) and, when every pull failed, "
        "raises ValueError('All the N pulls failed ...') quoting that TypeError's traceback"
    ),
}


def _instances():
    # fixed costs: decisions must not depend on timing (check_fit_idempotent)
    common = dict(n_candidates=3, cv=2, max_pulls=12, n_calibration=2, costs="levels",
                  random_state=0)
    return [
        MFTuner(RidgeClassifier(), {"alpha": Real(0.1, 10.0, log=True)}, **common),
        MFTuner(Ridge(), {"alpha": Real(0.1, 10.0, log=True)}, **common),
    ]


@parametrize_with_checks(_instances(), expected_failed_checks=lambda est: EXPECTED_FAILED)
def test_sklearn_compatible(estimator, check):
    check(estimator)
