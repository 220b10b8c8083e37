"""MFTuner's argument checks and scorers (mftune.tuner_params), called directly.

Every bad argument must raise a ValueError whose message names the argument and
says what is allowed; tests/test_tuner.py checks the same through ``fit``.
"""

import re

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from mftune import MFTuner, Real
from mftune.search.params import build_scorers, check_params


def _tuner(**kw):
    kw.setdefault("estimator", LogisticRegression())
    kw.setdefault("space", {"C": Real(1e-3, 1e3, log=True)})
    estimator, space = kw.pop("estimator"), kw.pop("space")
    return MFTuner(estimator, space, **kw)


class _Policy:
    def ask(self):
        pass

    def tell(self, *a):
        pass

    def recommend(self):
        return 0


# (arguments, argument named, the allowed values the message must state)
BAD = [
    ({"estimator": "svm"}, "estimator", "must have a fit method"),
    ({"fidelity": 3}, "fidelity", "must be 'n_samples' or the name of an estimator parameter"),
    ({"fidelity": "nope", "fidelities": [1, 2]}, "fidelity",
     r"is neither 'n_samples' nor a parameter of the estimator; valid: \[.*'max_iter'"),
    ({"fidelity": "max_iter"}, "fidelities", "give the values of 'max_iter'"),
    ({"fidelity": "max_iter", "fidelities": []}, "fidelities", "give the values"),
    ({"fidelities": 5}, "fidelities", "must be a sequence"),
    ({"fidelity": "max_iter", "fidelities": "abc"}, "fidelities", "must be a sequence"),
    ({"fidelity": "max_iter", "fidelities": [10, np.nan]}, "fidelities", "must be finite"),
    ({"fidelities": [100, np.inf]}, "fidelities", "must be finite"),
    ({"min_resources": 0}, "min_resources", "must be 'auto' or an integer >= 1"),
    ({"min_resources": 2.5}, "min_resources", "must be 'auto' or an integer >= 1"),
    ({"min_resources": True}, "min_resources", "must be 'auto' or an integer >= 1"),
    ({"factor": 1}, "factor", "must be a number > 1"),
    ({"factor": "3"}, "factor", "must be a number > 1"),
    ({"factor": np.inf}, "factor", "must be a number > 1"),
    ({"validation": "half"}, "validation", "must be 'auto', 'proportional' or 'full'"),
    ({"continuation": "yes"}, "continuation",
     "must be one of 'auto', 'warm_start', 'partial_fit' or False"),
    ({"continuation": True}, "continuation", "must be one of 'auto'"),
    ({"algorithm": "nope"}, "algorithm", r"must be one of \['auto', 'se', 'iise'.*\]"),
    ({"algorithm": object()}, "algorithm", "must be one of .* or a policy object"),
    ({"algorithm": "mf-gp-ucb"}, "algorithm", "give budget [(]seconds[)] or max_pulls"),
    ({"n_candidates": 1}, "n_candidates", "must be an integer >= 2 or 'grid'"),
    ({"n_candidates": "all"}, "n_candidates", "must be an integer >= 2 or 'grid'"),
    ({"grid_points": 1}, "grid_points", "must be an integer >= 2"),
    ({"bias": "known"}, "bias", "must be 'adaptive', 'estimate' or a sequence of bounds"),
    ({"bias": 0.1}, "bias", "must be 'adaptive', 'estimate' or a sequence of bounds"),
    ({"n_calibration": 0}, "n_calibration", "must be an integer >= 1"),
    ({"costs": "nominal"}, "costs", "must be 'measured', 'levels' or strictly increasing "
                                    "positive numbers, one per fidelity"),
    ({"costs": [2.0, 1.0]}, "costs", "strictly increasing positive numbers"),
    ({"costs": [0.0, 1.0]}, "costs", "strictly increasing positive numbers"),
    ({"costs": [1.0, np.nan]}, "costs", "strictly increasing positive numbers"),
    ({"costs": 5.0}, "costs", "strictly increasing positive numbers"),
    ({"sigma": 0}, "sigma", "must be None or a number > 0"),
    ({"sigma": "x"}, "sigma", "must be None or a number > 0"),
    ({"delta": 0}, "delta", "must be a number in [(]0, 1[)]"),
    ({"delta": 1.0}, "delta", "must be a number in [(]0, 1[)]"),
    ({"epsilon": 0}, "epsilon", "must be None, 'auto' or a number > 0"),
    ({"epsilon": "big"}, "epsilon", "must be None, 'auto' or a number > 0"),
    ({"budget": 0}, "budget", "must be None or a number > 0"),
    ({"max_pulls": 0}, "max_pulls", "must be None or an integer >= 1"),
    ({"max_pulls": 10.0}, "max_pulls", "must be None or an integer >= 1"),
    ({"timeout": -2}, "timeout", "must be None or a number > 0"),
    ({"refit": 1}, "refit", "must be True, False or a metric name"),
    ({"error_score": "ignore"}, "error_score", "must be 'raise' or a number"),
    ({"error_score": True}, "error_score", "must be 'raise' or a number"),
    ({"n_jobs": 0}, "n_jobs", "must be None or a non-zero integer"),
    ({"n_jobs": 1.5}, "n_jobs", "must be None or a non-zero integer"),
    ({"random_state": "seed"}, "random_state", "must be None, an integer or a RandomState"),
    ({"random_state": 1.5}, "random_state", "must be None, an integer or a RandomState"),
    ({"verbose": -1}, "verbose", "must be an integer >= 0"),
    ({"verbose": 1.0}, "verbose", "must be an integer >= 0"),
    ({"storage": 5}, "storage", "must be None or the path of a SQLite study file"),
    ({"storage": ""}, "storage", "must be None or the path of a SQLite study file"),
    ({"storage": "s.db", "algorithm": _Policy()}, "storage",
     "needs the algorithm given by name"),
]


@pytest.mark.parametrize(("kwargs", "name", "allowed"), BAD,
                         ids=[f"{n}-{i}" for i, (_, n, _) in enumerate(BAD)])
def test_bad_argument_raises_naming_it_and_the_allowed_values(kwargs, name, allowed):
    with pytest.raises(ValueError) as exc:
        check_params(_tuner(**kwargs))
    msg = str(exc.value)
    assert re.match(rf"{name}\b", msg), msg
    assert re.search(allowed, msg), msg


def test_storage_must_not_be_a_directory(tmp_path):
    with pytest.raises(ValueError, match="^storage must be a file path, not a directory"):
        check_params(_tuner(storage=tmp_path))


@pytest.mark.parametrize("kwargs", [
    {},
    {"fidelity": "max_iter", "fidelities": [10, 30, 100]},
    {"fidelities": [100, 300]},
    {"min_resources": 50, "factor": 2.5, "validation": "full", "continuation": False},
    {"algorithm": "iise", "n_candidates": "grid", "grid_points": 3},
    {"algorithm": "mf-gp-ucb", "max_pulls": 20},
    {"algorithm": _Policy()},
    {"bias": "estimate", "n_calibration": 1, "costs": "levels"},
    {"bias": [0.2, 0.1, 0.0], "sigma": 0.1, "costs": [1.0, 2.0, 4.0], "delta": 0.01},
    {"epsilon": None, "budget": 3.5, "max_pulls": 5, "timeout": 1},
    {"refit": False, "error_score": "raise", "n_jobs": -1},
    {"refit": "f1", "error_score": 0, "random_state": np.random.RandomState(0), "verbose": 2},
    {"storage": "study.db", "algorithm": "iise"},
])
def test_good_arguments_pass(kwargs):
    check_params(_tuner(**kwargs))


# -- build_scorers -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def fitted():
    X, y = make_classification(n_samples=80, random_state=0)
    return LogisticRegression().fit(X, y), X, y


def test_one_metric_is_named_score(fitted):
    est, X, y = fitted
    for scoring in (None, "accuracy"):
        scorers, metric, multi = build_scorers(_tuner(scoring=scoring))
        assert list(scorers) == ["score"] and metric == "score" and multi is False
        assert scorers["score"](est, X, y) == pytest.approx(est.score(X, y))

    def neg_error(estimator, X_, y_):
        return -float(np.mean(estimator.predict(X_) != y_))

    scorers, metric, multi = build_scorers(_tuner(scoring=neg_error))
    assert (list(scorers), metric, multi) == (["score"], "score", False)
    assert scorers["score"](est, X, y) == pytest.approx(est.score(X, y) - 1)


def test_several_metrics_optimise_the_refit_one(fitted):
    est, X, y = fitted
    scorers, metric, multi = build_scorers(_tuner(scoring=["accuracy", "f1"], refit="f1"))
    assert sorted(scorers) == ["accuracy", "f1"] and metric == "f1" and multi is True
    assert scorers["accuracy"](est, X, y) == pytest.approx(est.score(X, y))
    scorers, metric, multi = build_scorers(
        _tuner(scoring={"acc": "accuracy", "bal": "balanced_accuracy"}, refit="bal"))
    assert sorted(scorers) == ["acc", "bal"] and metric == "bal" and multi is True


@pytest.mark.parametrize(("scoring", "refit", "match"), [
    ("no-such-metric", True, "^scoring: "),
    ({"a": "no-such-metric"}, "a", "^scoring: "),
    (3, True, "^scoring must be a string, a callable, a list or a dict"),
    ({}, True, "^scoring must be a string, a callable, a list or a dict"),
    (["accuracy", "f1"], True,
     r"^refit must name the metric to optimise when scoring has several "
     r"\(\['accuracy', 'f1'\]\); got refit=True"),
    (["accuracy", "f1"], "roc_auc", r"^refit must name the metric .*got refit='roc_auc'"),
])
def test_bad_scoring_raises(scoring, refit, match):
    with pytest.raises(ValueError, match=match):
        build_scorers(_tuner(scoring=scoring, refit=refit))
