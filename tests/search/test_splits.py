"""Cross-validation splits of MFTuner's pulls: reshuffled repeats, and splitters that have none."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import check_scoring
from sklearn.model_selection import (
    GroupKFold,
    GroupShuffleSplit,
    KFold,
    LeaveOneGroupOut,
    PredefinedSplit,
    RepeatedStratifiedKFold,
    ShuffleSplit,
    StratifiedKFold,
    StratifiedShuffleSplit,
    check_cv,
)
from sklearn.neighbors import KNeighborsClassifier

from mftune import Integer, MFTuner
from mftune.search.evaluation import CVEvaluator


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True)
    return X[:300], y[:300], np.arange(300) % 6


def _groups(cv, data):
    return data[2] if "Group" in type(cv).__name__ else None  # else scikit-learn warns


def evaluator(cv, data, random_state=0):
    X, y, _ = data
    est = KNeighborsClassifier()
    return CVEvaluator(est, [{"n_neighbors": 5}], X, y, check_cv(cv, y, classifier=True),
                       "n_samples", [100, 200], {"score": check_scoring(est)}, "score",
                       groups=_groups(cv, data), random_state=random_state)


def _same(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("cv", [
    KFold(3), StratifiedKFold(3, shuffle=True, random_state=1), ShuffleSplit(3, random_state=0),
    StratifiedShuffleSplit(3, random_state=0), GroupShuffleSplit(3, random_state=0),
    RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=0), GroupKFold(3)])
def test_splitters_with_a_random_state_give_new_splits_on_every_repeat(cv, data):
    ev = evaluator(cv, data)
    n = ev.n_splits
    assert not ev.fixed_splits
    first, again = ev.split(0), ev.split(n)  # fold 0 of repeat 0 and of repeat 1
    assert not _same(first, again)
    assert _same(ev.split(n), evaluator(cv, data).split(n))  # seeded: the same on a rerun
    assert not _same(ev.split(n), evaluator(cv, data, random_state=1).split(n))
    own = next(iter(cv.split(data[0], data[1], _groups(cv, data))))
    assert _same(first, own)  # repeat 0: the splitter's own first fold


def test_kfold_repeats_are_the_reshuffled_kfold_of_the_seed(data):
    # The repeats a stored study replays: KFold with shuffle on and the seed of the repeat.
    ev = evaluator(KFold(3), data, random_state=5)
    want = list(KFold(3, shuffle=True, random_state=5 + 7919 * 2).split(data[0]))
    got = [ev.split(2 * 3 + f) for f in range(3)]
    assert all(_same(g, w) for g, w in zip(got, want, strict=True))


@pytest.mark.parametrize("cv", [LeaveOneGroupOut(), PredefinedSplit(np.arange(300) % 2),
                                "list"])
def test_splitters_without_a_random_state_repeat_their_splits(cv, data):
    if cv == "list":
        cv = list(KFold(3, shuffle=True, random_state=0).split(data[0]))
    ev = evaluator(cv, data)
    assert ev.fixed_splits
    assert _same(ev.split(0), ev.split(ev.n_splits))
    assert not ev.repeats_splits()


def test_a_rule_that_counted_repeated_splits_gives_no_certificate(tmp_path):
    X, y = load_breast_cancer(return_X_y=True)
    splits = list(KFold(3, shuffle=True, random_state=0).split(X))
    kw = dict(n_candidates=4, costs="levels", max_pulls=500, random_state=0, epsilon=0.05,
              adaptive=False)
    space = {"n_neighbors": Integer(1, 30)}
    with pytest.warns(UserWarning, match="^cv=a list of splits gives the same 3 split"):
        t = MFTuner(KNeighborsClassifier(), space, cv=splits, storage=str(tmp_path / "s.db"),
                    **kw).fit(X, y)
    # Without the repeats the rule would have certified: the same search with new splits
    # on every repeat (the KFold the list came from) ends by its rule.
    assert t.n_splits_ == 3 and max(t.pulls_["split"]) >= 3
    assert t.stopping_reason_ == "repeated-splits"
    assert t.guarantee_.startswith("no confidence statement: the stopping rule ended")
    from mftune.engine.summary import study_summary

    summary = study_summary(tmp_path / "s.db")  # the study file says the same
    assert summary["status"] == "finished"
    assert summary["statement"].startswith("no confidence statement")
    fresh = MFTuner(KNeighborsClassifier(), space, cv=KFold(3, shuffle=True, random_state=0),
                    **kw).fit(X, y)
    assert fresh.stopping_reason_ == "stopping-rule"
