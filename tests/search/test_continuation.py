"""Continuation: pulls that continue a lower-fidelity model instead of refitting it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.metrics import check_scoring
from sklearn.model_selection import StratifiedKFold
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mftune import Integer, MFTuner, Real
from mftune.policies.base import Pulls
from mftune.search.continuation import (
    CachedModel,
    ModelCache,
    fit_at_level,
    resolve_continuation,
    saved_estimates,
)
from mftune.search.evaluation import CVEvaluator

HGB = HistGradientBoostingClassifier(early_stopping=False, random_state=0)
HGB_SPACE = {"learning_rate": Real(0.05, 0.5, log=True), "max_leaf_nodes": Integer(4, 16)}


@pytest.fixture(scope="module")
def data():
    return make_classification(300, 8, n_informative=5, n_classes=3, random_state=0)


def hgb_tuner(**kw):
    base = dict(estimator=HGB, space=HGB_SPACE, fidelity="max_iter", fidelities=[4, 12, 36],
                n_candidates=5, cv=3, costs="levels", max_pulls=40, refit=False,
                random_state=0)
    base.update(kw)
    return MFTuner(**base)


# -- resolving the option ----------------------------------------------------------------
@pytest.mark.parametrize("estimator, fidelity, option, mode, exact", [
    (HGB, "max_iter", "auto", "warm_start", True),
    (RandomForestClassifier(), "n_estimators", "auto", "warm_start", True),
    (GradientBoostingClassifier(), "n_estimators", "auto", "warm_start", True),
    # early-stopping history restarts at a warm fit: only when asked for
    (GradientBoostingClassifier(n_iter_no_change=3), "n_estimators", "auto", None, None),
    (GradientBoostingClassifier(n_iter_no_change=3), "n_estimators", "warm_start",
     "warm_start", False),
    # iterative solvers restart their optimiser: only when asked for
    (SGDClassifier(), "max_iter", "auto", None, None),
    (MLPClassifier(), "max_iter", "warm_start", "warm_start", False),
    (SGDClassifier(), "max_iter", "partial_fit", "partial_fit", True),
    (LogisticRegression(), "max_iter", "auto", None, None),
    (SVC(), "max_iter", "auto", None, None),
    (HGB, "max_iter", False, None, None),
])
def test_continuation_is_resolved_only_where_supported(estimator, fidelity, option, mode, exact):
    spec = resolve_continuation(option, estimator, fidelity, [4, 12, 36])
    assert (spec is None) == (mode is None)
    if spec is not None:
        assert spec.mode == mode and spec.exact == exact
        assert spec.increment == isinstance(estimator, MLPClassifier)


def test_pipeline_names_the_step_warm_start():
    pipe = Pipeline([("scale", StandardScaler()), ("hgb", clone(HGB))])
    spec = resolve_continuation("auto", pipe, "hgb__max_iter", [4, 12])
    assert spec.warm_param == "hgb__warm_start" and spec.exact


@pytest.mark.parametrize("option, estimator, fidelity, levels, match", [
    ("yes", HGB, "max_iter", [4, 12], "continuation must be one of"),
    (True, HGB, "max_iter", [4, 12], "continuation must be one of"),
    (None, HGB, "max_iter", [4, 12], "continuation must be one of"),
    ("warm_start", HGB, "n_samples", [100, 200], "continuation='warm_start'.*fidelity"),
    ("warm_start", SVC(), "max_iter", [4, 12], "continuation='warm_start'.*SVC"),
    ("partial_fit", HGB, "max_iter", [4, 12], "continuation='partial_fit'.*partial_fit"),
    ("partial_fit", SGDClassifier(), "max_iter", [1.5, 3.0], "continuation='partial_fit'"),
    ("warm_start", HGB, "max_iter", [12, 4], "continuation='warm_start'.*increasing"),
])
def test_invalid_or_unsupported_continuation_raises(option, estimator, fidelity, levels, match):
    with pytest.raises(ValueError, match=match):
        resolve_continuation(option, estimator, fidelity, levels)


def test_tuner_rejects_bad_continuation_before_fitting(data, monkeypatch):
    from mftune.search import evaluation

    def no_fit(*a, **k):
        raise AssertionError("fitted before validating")

    monkeypatch.setattr(evaluation, "fit_and_score", no_fit)
    X, y = data
    with pytest.raises(ValueError, match="continuation"):
        hgb_tuner(continuation="always").fit(X, y)
    with pytest.raises(ValueError, match="continuation"):
        hgb_tuner(estimator=SVC(), space={"C": Real(0.1, 10.0)},
                  continuation="warm_start").fit(X, y)


# -- a continued model is the model of a direct fit ----------------------------------------
@pytest.mark.parametrize("estimator, param", [
    (HGB, "max_iter"),
    # early stopping that ends the fit exactly at the lower level (checked below):
    # a warm fit would add one iteration; the direct fit does not
    (HistGradientBoostingClassifier(early_stopping=True, n_iter_no_change=2,
                                    learning_rate=0.5, random_state=0), "max_iter"),
    (RandomForestClassifier(max_depth=4, random_state=0), "n_estimators"),
    (GradientBoostingClassifier(subsample=0.7, max_depth=2, random_state=0), "n_estimators"),
])
def test_continuing_gives_the_direct_fit(data, estimator, param):
    X, y = data
    spec = resolve_continuation("auto", estimator, param, [1, 2])
    direct = clone(estimator).set_params(**{param: 60}).fit(X, y)
    a = getattr(direct, "n_iter_", 20)  # the early-stopping case: stop exactly at level a
    if a == 60:
        a = 20
    model = clone(estimator).set_params(**{param: a}).fit(X, y)
    fit_at_level(model, X, y, {}, spec, 60, start_level=a)
    np.testing.assert_array_equal(model.predict_proba(X), direct.predict_proba(X))


def test_increment_warm_start_runs_the_missing_iterations(data):
    X, y = data
    spec = resolve_continuation("warm_start", MLPClassifier(), "max_iter", [5, 15])
    model = MLPClassifier(max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning of the short fits
        model.fit(X, y)
        fit_at_level(model, X, y, {}, spec, 15, start_level=5)
    # fit() with warm_start runs max_iter more epochs: 10 more, not 15
    assert model.max_iter == 10 and model.n_iter_ == 10 and len(model.loss_curve_) == 15


# -- the search -----------------------------------------------------------------------------
def test_continued_search_matches_refit_search(data):
    X, y = data
    # costs="levels": the policy's decisions do not depend on timing, so both runs pull
    # the same (candidate, fidelity, split) sequence and must see the same scores
    off = hgb_tuner(continuation=False).fit(X, y)
    on = hgb_tuner().fit(X, y)
    assert off.continuation_ is None and on.continuation_ == "warm_start"
    for col in ("candidate", "fidelity", "split", "score"):
        np.testing.assert_array_equal(off.pulls_[col], on.pulls_[col])
    assert on.best_index_ == off.best_index_
    again = hgb_tuner().fit(X, y)  # replayable: the same run again, pull for pull
    for col in ("candidate", "fidelity", "split", "score", "continued_from"):
        np.testing.assert_array_equal(again.pulls_[col], on.pulls_[col])
    p = on.pulls_
    cont = p["continued"]
    assert cont.any() and not off.pulls_["continued"].any()
    assert np.all(p["continued_from"][cont] < p["fidelity"][cont])
    assert np.all(p["continued_from"][~cont] == -1) and np.all(p["fidelity"][cont] > 0)
    # calibration pulls of one (candidate, fold) at two fidelities run in waves: continued
    assert np.any(cont & (np.array(p["phase"]) == "calibration"))
    assert np.all(p["reused_cost"][cont] > 0) and np.all(p["reused_cost"][~cont] == 0)
    assert np.all(p["saved_cost"][~cont] == 0) and off.continuation_saved_ == 0.0
    assert np.all(p["cache_time"] >= 0)
    assert on.continuation_saved_ == pytest.approx(p["saved_cost"].sum() - p["cache_time"].sum())
    # every continued pull starts from the fit seconds of its start model (reused_cost > 0
    # above); the seconds that saved are measurements (a scratch fit of another split minus
    # this pull's), which on a loaded machine can come out negative for one pull of these
    # small fits: a speed question, measured in docs/benchmarks.md, not asserted here
    assert np.all(np.isfinite(p["saved_cost"]))
    assert len(on._evaluator.cache) == 0  # dropped at the end of the search


def test_no_continuation_where_unsupported(data):
    X, y = data
    t = MFTuner(SGDClassifier(random_state=0), {"alpha": Real(1e-5, 1e-1, log=True)},
                fidelity="max_iter", fidelities=[3, 9], n_candidates=4, cv=3, max_pulls=20,
                random_state=0).fit(X, y)
    assert t.continuation_ is None and not t.pulls_["continued"].any()
    t = MFTuner(LogisticRegression(), {"C": Real(1e-2, 1e2, log=True)}, n_candidates=4, cv=3,
                max_pulls=20, random_state=0).fit(X, y)
    assert t.continuation_ is None and not t.pulls_["continued"].any()


def test_cache_holds_no_model_of_an_eliminated_candidate(data, monkeypatch):
    X, y = data
    seen = {"stale": 0, "batches": 0}
    original = CVEvaluator.after_batch

    def checking(self, pulls, outcomes, policy):
        dead = set(np.flatnonzero(~policy.active).tolist())
        seen["stale"] += any(a in dead for a, _ in self.cache._models)
        original(self, pulls, outcomes, policy)
        assert not any(a in dead for a, _ in self.cache._models)
        seen["batches"] += 1

    monkeypatch.setattr(CVEvaluator, "after_batch", checking)
    # two hopeless learning rates, known small noise and bias: IISE eliminates them early
    t = hgb_tuner(space={"learning_rate": [1e-4, 1e-3, 0.2, 0.4]}, n_candidates="grid",
                  sigma=0.03, bias=[0.2, 0.1, 0.0], algorithm="iise", max_pulls=30).fit(X, y)
    assert (t.cv_results_["eliminated_round"] >= 0).any()
    assert seen["stale"] > 0  # an elimination did leave models to drop
    assert len(t._evaluator.cache) == 0


@pytest.mark.parametrize("kw", [{"n_jobs": 2}, {"timeout": 60}])
def test_continuation_in_workers_and_timeout_children(data, kw):
    X, y = data
    ref = hgb_tuner(continuation=False, max_pulls=20).fit(X, y)
    t = hgb_tuner(max_pulls=20, **kw).fit(X, y)
    np.testing.assert_array_equal(t.pulls_["score"], ref.pulls_["score"])
    continued = np.asarray(t.pulls_["continued"], dtype=bool)
    # a continued pull read its model from the worker's cache, and timed it (a pull at
    # the top with no model below on its split fits from scratch and stores nothing)
    assert continued.any() and np.all(np.asarray(t.pulls_["cache_time"])[continued] > 0)


def test_partial_fit_pulls_and_refit(data):
    X, y = data
    est = SGDClassifier(random_state=0, tol=None)
    t = MFTuner(est, {"alpha": Real(1e-5, 1e-1, log=True)}, fidelity="max_iter",
                fidelities=[2, 6], n_candidates=4, cv=3, costs="levels", max_pulls=20,
                continuation="partial_fit", random_state=0).fit(X, y)
    assert t.continuation_ == "partial_fit" and t.pulls_["continued"].any()
    # the refit trains by partial_fit epochs too: 6 epochs on the whole data
    manual = clone(est).set_params(**t.best_params_)
    for _ in range(6):
        manual.partial_fit(X, y, classes=np.unique(y))
    np.testing.assert_array_equal(t.best_estimator_.coef_, manual.coef_)


def _evaluator(data, estimator, levels, option, **kw):
    X, y = data
    cands = [{"alpha": 1e-4}, {"alpha": 1e-2}] if "SGD" in type(estimator).__name__ \
        else [{"learning_rate": 0.1}, {"learning_rate": 0.3}]
    spec = resolve_continuation(option, estimator, "max_iter", levels)
    scorer = {"score": check_scoring(estimator)}
    return CVEvaluator(estimator, cands, X, y, StratifiedKFold(2), "max_iter", levels, scorer,
                       "score", continuation=spec, **kw)


def test_partial_fit_continued_equals_partial_fit_from_scratch(data):
    est = SGDClassifier(random_state=0, tol=None)
    seq = [Pulls([0, 1, 0, 1], [0, 0, 0, 0]), Pulls([0, 1, 0, 1], [1, 1, 1, 1]),
           Pulls([0, 1], [2, 2])]
    kept = _evaluator(data, est, [2, 5, 9], "partial_fit")
    fresh = _evaluator(data, est, [2, 5, 9], "partial_fit", cache_bytes=0)  # keeps nothing
    for pulls in seq:
        np.testing.assert_array_equal(kept.evaluate(pulls).rewards,
                                      fresh.evaluate(pulls).rewards)
    assert sum(r.continued_from >= 0 for r in kept.records) == 6
    assert all(r.continued_from == -1 for r in fresh.records)


def test_same_fidelity_again_is_refitted_not_continued(data):
    ev = _evaluator(data, HGB, [3, 9, 27], "auto")
    ev.evaluate(Pulls([0, 0], [0, 0]))  # splits 0, 1 at level 3
    first = ev.evaluate(Pulls([0, 0, 0], [1, 1, 1]))  # splits 0, 1, 2 (a reshuffled repeat)
    recs = ev.records[2:]
    assert [r.split for r in recs] == [0, 1, 2]
    # splits 0 and 1 continue their level-3 models; split 2 has none (other folds)
    assert [r.continued_from for r in recs] == [0, 0, -1]
    ev.release(Pulls([0], [1]))  # split 2 at level 9 is asked again (as after Ctrl+C)
    again = ev.evaluate(Pulls([0], [1]))
    assert ev.records[-1].split == 2 and ev.records[-1].continued_from == -1
    assert again.rewards[0] == first.rewards[2]
    # once the policy was told (acknowledge), a batch interrupted before it reached the
    # evaluator gives nothing back: the next pull of that pair takes the next split
    ev.acknowledge()
    ev.release(Pulls([0], [1]))
    assert ev.next_split[1, 0] == 3
    ev.evaluate(Pulls([0], [2]))  # the top level continues split 0's level-9 model
    assert ev.records[-1].continued_from == 1 and (0, 0) in ev.cache
    ev.after_batch(None, None, type("P", (), {"done": True})())
    assert len(ev.cache) == 0


def test_model_cache_cap_and_order():
    cache = ModelCache(max_bytes=25)
    cache.put(0, 0, CachedModel(0, b"x" * 10, 1.0))
    cache.put(1, 0, CachedModel(0, b"x" * 10, 1.0))
    cache.put(0, 0, CachedModel(1, b"y" * 10, 2.0))  # replaces (0, 0), now most recent
    cache.put(0, 0, CachedModel(0, b"z" * 10, 0.5))  # a lower fidelity never replaces it
    assert cache.start_for(0, 0, 2).fidelity == 1 and cache.start_for(0, 0, 1) is None
    cache.put(2, 0, CachedModel(0, b"x" * 10, 1.0))  # over the cap: the oldest, (1, 0), goes
    assert (1, 0) not in cache and (0, 0) in cache and (2, 0) in cache
    assert cache.n_bytes == 20 and cache.n_evicted == 1 and cache.peak_bytes <= 25
    cache.put(3, 0, CachedModel(0, b"x" * 30, 1.0))  # larger than the cap: not kept
    assert (3, 0) not in cache
    cache.forget([0, 2])
    assert len(cache) == 0 and cache.n_bytes == 0


def test_saved_estimate_uses_fresh_pulls_of_the_same_candidate_else_scaled_reused_work():
    from mftune.search.evaluation import PullRecord

    def rec(arm, fid, fit, continued_from=-1, reused=0.0, status="done"):
        return PullRecord(arm, fid, 0, {"score": 0.5}, fit, 0.0, status,
                          continued_from=continued_from, reused=reused)

    recs = [rec(0, 1, 3.0), rec(0, 1, 5.0),  # arm 0 at fidelity 1 from scratch: mean 4 s
            rec(0, 1, 1.5, 0, reused=5.0),  # continued: saves 4 - 1.5 = 2.5 = 0.5 x reused
            rec(1, 1, 2.0, 0, reused=1.2),  # no fresh pull of arm 1: 0.5 x 1.2
            rec(1, 1, 9.0, 0, reused=1.2, status="failed")]  # failed: no saving
    np.testing.assert_allclose(saved_estimates(recs), [0, 0, 2.5, 0.6, 0])
    # without any fresh reference the reused work is the (upper-bound) estimate
    np.testing.assert_allclose(saved_estimates(recs[3:]), [1.2, 0])



def test_candidates_added_later_continue_their_models(data):
    # The candidates a search with waves appends after wave 1 continue their models
    # across the fidelities as the first ones do.
    ev = _evaluator(data, HGB, [4, 12], "warm_start")
    ev.candidates.append({"learning_rate": 0.2})
    ev.add_candidates(1)
    ev.evaluate(Pulls([2, 2], [0, 0]))
    ev.evaluate(Pulls([2, 2], [1, 1]))
    assert [r.continued_from for r in ev.records] == [-1, -1, 0, 0]
