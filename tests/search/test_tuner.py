"""MFTuner: the search, failures, timeouts, replayability, the scikit-learn contract."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression, Ridge, SGDClassifier
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from mftune import MFTuner, Real
from mftune.space import Categorical, Integer


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(600, 8, n_informative=5, random_state=0)
    return X, y


def small(**kw):
    base = dict(estimator=LogisticRegression(solver="liblinear"),
                space={"C": Real(1e-4, 1e2, log=True)},
                n_candidates=6, cv=3, max_pulls=60, random_state=0)
    base.update(kw)
    return MFTuner(**base)


def test_fit_gives_search_results(data):
    X, y = data
    t = small().fit(X, y)
    n = len(t.cv_results_["params"])
    assert n == 6 and t.best_params_ == t.cv_results_["params"][t.best_index_]
    assert t.cv_results_["rank_test_score"][t.best_index_] == 1
    # the answer first (a survivor parked by the top phase's tests may show a higher mean
    # on fewer splits), then each rank is 2 + the other candidates strictly ahead (fidelity
    # reached, then mean); ties share it, as GridSearchCV's rankdata(method="min")
    res, b = t.cv_results_, t.best_index_
    key = list(zip(res["fidelity_reached"], res["mean_test_score"], strict=True))
    ahead = [sum(k2 > k for i, k2 in enumerate(key) if i != b) for k in key]
    want = [1 if i == b or (k == key[b] and a == 0) else 2 + a
            for i, (k, a) in enumerate(zip(key, ahead, strict=True))]
    assert want == list(res["rank_test_score"])
    assert t.fidelities_[-1] == 400 and t.fidelities_ == sorted(t.fidelities_)
    assert len(t.pulls_["candidate"]) == len(t.pulls_["cost"]) > 0
    assert t.n_pulls_ == sum(p == "search" for p in t.pulls_["phase"]) <= 60
    assert np.isfinite(t.best_score_)
    assert t.algorithm_ == "iise-gamma" and "gamma" in t.algorithm_reason_
    assert t.stopping_reason_ in ("stopping-rule", "max-pulls")
    assert t.predict(X).shape == (600,) and t.predict_proba(X).shape == (600, 2)
    assert 0.5 < t.score(X, y) <= 1.0 and t.refit_time_ > 0
    # costs per fidelity are measured seconds, increasing with the subset size
    assert np.all(t.costs_ > 0)
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(t.cv_results_)
    assert len(df) == 6 and "param_C" in df and "n_pulls_fidelity_0" in df
    assert len(pd.DataFrame(t.pulls_)) == len(t.pulls_["cost"])


def test_cv_results_has_grid_search_columns_read_off_the_pulls(data):
    # every key of GridSearchCV's cv_results_ (return_train_score=False), and the split
    # columns are the means over the pulls of each fold at the fidelity the row reports
    from sklearn.model_selection import GridSearchCV

    X, y = data
    t = small(max_pulls=120).fit(X, y)
    grid = GridSearchCV(LogisticRegression(solver="liblinear"), {"C": [0.1, 1.0]}, cv=3)
    assert set(grid.fit(X, y).cv_results_) <= set(t.cv_results_)
    assert t.cv_results_["param_C"].dtype == grid.cv_results_["param_C"].dtype == float
    res, pulls = t.cv_results_, t.pulls_
    fold = np.asarray(pulls["split"]) % t.n_splits_
    repeated = False
    for k in range(len(res["params"])):
        at = ((np.asarray(pulls["candidate"]) == k)
              & (np.asarray(pulls["fidelity"]) == res["fidelity_reached"][k]))
        for i in range(t.n_splits_):
            scores = np.asarray(pulls["score"])[at & (fold == i)]
            repeated |= scores.size > 1
            want = scores.mean() if scores.size else np.nan
            assert res[f"split{i}_test_score"][k] == pytest.approx(want, nan_ok=True)
        assert res["mean_test_score"][k] == pytest.approx(np.asarray(pulls["score"])[at].mean())
        mine = np.asarray(pulls["candidate"]) == k
        assert res["std_fit_time"][k] == pytest.approx(np.asarray(pulls["fit_time"])[mine].std())
    assert repeated  # some fold was pulled again (a reshuffled repeat): its mean is reported


def test_a_completed_search_keeps_no_training_data():
    # as GridSearchCV: a fitted search pickles with its best estimator, not the data
    # (a search stopped by a cap with refit=False keeps it, for resume())
    import pickle

    X, y = make_classification(4000, 50, random_state=0)  # 1.6 MB of features
    done = small(max_pulls=None, epsilon=0.05).fit(X, y)
    assert done.stopping_reason_ == "stopping-rule"
    assert len(pickle.dumps(done)) < X.nbytes / 10
    assert len(pickle.dumps(small(refit=True).fit(X, y))) < X.nbytes / 10
    capped = small(refit=False).fit(X, y)
    assert capped.stopping_reason_ == "max-pulls" and len(pickle.dumps(capped)) > X.nbytes
    before = capped.n_pulls_
    assert capped.resume(max_pulls=before + 20).n_pulls_ > before


def test_tied_candidates_share_their_rank(data):
    # C = 1e3 and 1e4 fit the same model on every fold (no regularisation left): equal
    # means at the same fidelity share rank 1 (rankdata "min", as GridSearchCV's); the
    # strongly regularised C = 1e-4 is third. (Without the top phase's paired tests, which
    # would park one twin once it is shown within ε, leaving it fewer splits.)
    X, y = data
    t = small(space={"C": [1e3, 1e4, 1e-4]}, n_candidates="grid", max_pulls=30,
              algorithm_params={"top_glr": None}).fit(X, y)
    res = t.cv_results_
    rank = {p["C"]: r for p, r in zip(res["params"], res["rank_test_score"], strict=True)}
    assert res["mean_test_score"][0] == res["mean_test_score"][1]  # the tie this needs
    assert rank == {1e3: 1, 1e4: 1, 1e-4: 3}


def test_metadata_routing_sends_each_keyword_where_it_is_requested(data):
    # as GridSearchCV with enable_metadata_routing: a scorer requesting sample_weight gets
    # the weights of each pull's validation rows, the estimator those of its training rows,
    # GroupKFold the groups; metadata nothing requested raises scikit-learn's error
    import sklearn
    from sklearn.exceptions import UnsetMetadataPassedError
    from sklearn.metrics import make_scorer

    X, y = data
    weights = np.where(y == 1, 5.0, 1.0)
    seen = []

    def accuracy(y_true, y_pred, sample_weight=None):
        seen.append(None if sample_weight is None else (len(sample_weight), len(y_true)))
        return float(np.average(y_true == y_pred, weights=sample_weight))

    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_scorer(accuracy).set_score_request(sample_weight=True)
        est = LogisticRegression(solver="liblinear").set_fit_request(sample_weight=True)
        t = small(estimator=est, scoring=scorer, cv=GroupKFold(3)).fit(
            X, y, groups=np.arange(len(y)) % 6, sample_weight=weights)
        assert t.n_pulls_ > 0 and seen and all(s is not None and s[0] == s[1] for s in seen)
        assert set(t.pulls_["n_valid"]) == {200}  # GroupKFold's folds of 2 groups of 6
        with pytest.raises(UnsetMetadataPassedError, match="sample_weight"):
            small().fit(X, y, sample_weight=weights)  # LogisticRegression did not request it


def test_a_small_space_gives_each_configuration_once_and_warns(data):
    # 3 configurations for n_candidates=6: each once (duplicates are exact ties an
    # elimination cannot separate), with RandomizedSearchCV's kind of warning
    X, y = data
    with pytest.warns(UserWarning, match="3 distinct configurations, fewer than n_candidates=6"):
        t = small(space={"C": [0.01, 1.0, 100.0]}, adaptive=False, max_pulls=30).fit(X, y)
    assert sorted(c["C"] for c in t.candidates_) == [0.01, 1.0, 100.0]


def test_epsilon_none_asks_for_the_single_best(data, capsys):
    # two candidates far apart: the rule separates them without any tolerance
    X, y = data
    t = small(space={"C": [1e-5, 1.0]}, n_candidates="grid", max_pulls=None, epsilon=None,
              verbose=1).fit(X, y)
    assert t.epsilon_ is None and t.stopping_reason_ == "stopping-rule"
    assert t.best_params_ == {"C": 1.0} and "within epsilon" not in t.guarantee_
    assert "epsilon=None" in capsys.readouterr().out


def test_bias_bounds_and_guarantee_are_reported(data):
    X, y = data
    # two candidates far apart (C=1e-5 predicts nearly one class): the stopping rule ends it
    t = small(space={"C": [1e-5, 1.0]}, n_candidates="grid", max_pulls=None,
              bias="estimate").fit(X, y)
    b = t.bias_bounds_
    assert b[-1] == 0 and np.all(np.diff(b) < 0)
    assert t.bias_mode_ == "estimate" and t.calibration_cost_ > 0
    assert t.stopping_reason_ == "stopping-rule" and "probability" in t.guarantee_
    assert t.best_params_ == {"C": 1.0}
    t2 = small(max_pulls=5).fit(X, y)
    assert t2.stopping_reason_ == "max-pulls" and t2.guarantee_.startswith("no certificate")
    # one round of the first fidelity: the survivors' bounds there, widened by its bias bound
    assert t2.bias_bounds_[0] < t2.epsilon_achieved_ < np.inf
    assert f"within {t2.epsilon_achieved_:.4g} of the best" in t2.guarantee_
    # the recommendation of a capped run is a surviving candidate at its highest fidelity
    reached = t2.cv_results_["fidelity_reached"]
    assert reached[t2.best_index_] == reached.max()


def test_known_bias_and_sigma_skip_calibration(data):
    X, y = data
    t = small(fidelities=[50, 150], bias=[0.2, 0.1, 0.0], sigma=0.05, algorithm="iise").fit(X, y)
    assert t.fidelities_ == [50, 150, 400]
    assert t.calibration_cost_ == 0 and set(t.pulls_["phase"]) == {"search"}
    assert t.algorithm_ == "iise" and t.bias_mode_ == "known"


def test_known_bias_bounds_need_not_decrease(data):
    # fidelity 1 (150 rows) costs more than fidelity 0 and is bounded no tighter: its
    # phase is skipped, not refused
    X, y = data
    t = small(fidelities=[50, 150], bias=[0.2, 0.3, 0.0], sigma=0.05, algorithm="iise",
              costs="levels").fit(X, y)
    used = set(t.pulls_["fidelity"].tolist())
    assert 1 not in used and {0, 2} <= used
    assert t.bias_mode_ == "known" and np.allclose(t.bias_bounds_, [0.2, 0.3, 0.0])


def test_an_answer_from_the_first_finished_calibration_pull(data):
    X, y = data
    t = small(fidelities=[50, 150], costs="levels").fit(X, y)
    phase = np.array(t.pulls_["phase"])
    cal = np.flatnonzero(phase == "calibration")
    assert cal.size > 1 and t.history_[cal.size][2] > 0  # search batches follow
    trace = t.history_[: cal.size]
    assert [h[2] for h in trace] == [0] * cal.size
    np.testing.assert_allclose([h[1] for h in trace], np.cumsum(t.pulls_["cost"][cal]))
    assert trace[0][3] == t.pulls_["candidate"][cal[0]]
    assert trace[-1][0] <= t.history_[cal.size][0]
    # the last: the best calibrated candidate at the highest fidelity reached
    fid, arm = t.pulls_["fidelity"][cal], t.pulls_["candidate"][cal]
    top = arm[fid == fid.max()]
    means = [t.pulls_["score"][cal][(fid == fid.max()) & (arm == a)].mean()
             for a in np.unique(top)]
    assert trace[-1][3] == np.unique(top)[int(np.argmax(means))]


def test_replayable_with_random_state(data):
    X, y = data
    # fixed costs: measured seconds would make the phase switches depend on timing
    a, b = small(costs="levels").fit(X, y), small(costs="levels", n_jobs=2).fit(X, y)
    assert a.cv_results_["params"] == b.cv_results_["params"]
    for key in ("candidate", "fidelity", "split", "n_train", "n_valid", "score"):
        assert np.array_equal(a.pulls_[key], b.pulls_[key])
    c = small(random_state=1, costs="levels").fit(X, y)
    assert c.cv_results_["params"] != a.cv_results_["params"]
    # with measured costs the candidates, folds and subsets still replay exactly
    d, e = small().fit(X, y), small().fit(X, y)
    assert d.cv_results_["params"] == e.cv_results_["params"] == a.cv_results_["params"]
    cal = np.array(d.pulls_["phase"]) == "calibration"
    for key in ("candidate", "fidelity", "split", "n_train", "n_valid", "score"):
        assert np.array_equal(d.pulls_[key][cal], e.pulls_[key][cal])


def test_param_fidelity_and_pipeline_names(data):
    X, y = data
    pipe = Pipeline([("scale", StandardScaler()), ("sgd", SGDClassifier(tol=None))])
    t = MFTuner(pipe, {"sgd__alpha": Real(1e-6, 1e-1, log=True)}, fidelity="sgd__max_iter",
                fidelities=[2, 8, 32], n_candidates=5, cv=3, max_pulls=40,
                random_state=0).fit(X, y)
    assert t.fidelities_ == [2, 8, 32]
    assert t.best_estimator_.named_steps["sgd"].max_iter == 32
    assert set(t.pulls_["n_train"]) == {400}  # parameter fidelities train on the whole fold
    assert set(t.pulls_["n_valid"]) == {200}  # ... and score on it


class Flaky(ClassifierMixin, BaseEstimator):
    """Fails to fit when ``c`` is below 0.3 (30% of a uniform [0, 1] space)."""

    def __init__(self, c=1.0):
        self.c = c

    def fit(self, X, y):
        if self.c < 0.3:
            raise RuntimeError("flaky configuration")
        self.inner_ = LogisticRegression(C=self.c, solver="liblinear").fit(X, y)
        self.classes_ = self.inner_.classes_
        return self

    def predict(self, X):
        return self.inner_.predict(X)


def test_failures_are_recorded_and_never_recommended(data):
    X, y = data
    t = MFTuner(Flaky(), {"c": Real(0.0, 1.0)}, n_candidates=20, cv=3, max_pulls=150,
                random_state=1).fit(X, y)
    failing = np.array([p["c"] < 0.3 for p in t.cv_results_["params"]])
    # a candidate of a later wave may be listed and not yet pulled when the cap hits
    pulled = sum(v for k, v in t.cv_results_.items() if k.startswith("n_pulls_")) > 0
    assert (failing & pulled).any() and not failing.all()
    assert np.all(t.cv_results_["n_failed"][failing & pulled] > 0)
    assert np.all(t.cv_results_["n_failed"][~failing] == 0)
    assert t.best_params_["c"] >= 0.3
    st = np.array(t.pulls_["status"])
    err = [e for e, s in zip(t.pulls_["error"], st, strict=True) if s == "failed"]
    assert err and all("flaky configuration" in e for e in err)
    assert np.all(np.isnan(t.pulls_["score"][st == "failed"]))
    t0 = MFTuner(Flaky(), {"c": Real(0.0, 1.0)}, n_candidates=20, cv=3, max_pulls=150,
                 error_score=0.0, random_state=1).fit(X, y)
    assert np.all(t0.pulls_["score"][np.array(t0.pulls_["status"]) == "failed"] == 0.0)
    with pytest.raises(RuntimeError, match="flaky"):
        MFTuner(Flaky(), {"c": Real(0.0, 1.0)}, n_candidates=20, cv=3, max_pulls=150,
                error_score="raise", random_state=1).fit(X, y)


def test_a_certificate_with_failed_pulls_says_how_they_were_scored(data):
    X, y = data
    t = MFTuner(Flaky(), {"c": Real(0.0, 1.0)}, n_candidates=8, cv=3, epsilon=0.05,
                adaptive=False, random_state=1).fit(X, y)
    n_failed = int(np.sum(np.array(t.pulls_["status"]) == "failed"))
    assert t.stopping_reason_ == "stopping-rule" and n_failed > 0
    assert f"{n_failed} failed pull(s) scored as error_score" in t.guarantee_


class Sleepy(ClassifierMixin, BaseEstimator):
    """Sleeps ``delay`` seconds in fit."""

    def __init__(self, delay=0.0):
        self.delay = delay

    def fit(self, X, y):
        import time
        time.sleep(self.delay)
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


def test_timeout_stops_a_pull_and_records_it(data):
    X, y = data
    t = MFTuner(Sleepy(), {"delay": [0.0, 30.0]}, n_candidates="grid", cv=2, timeout=0.5,
                bias=[0.0], sigma=0.1, max_pulls=4, refit=False, error_score=-1.0,
                fidelities=[1.0], random_state=0)
    import time
    start = time.perf_counter()
    t.fit(X, y)
    assert time.perf_counter() - start < 10  # never waits for the 30 s fit
    st = np.array(t.pulls_["status"])
    slow = np.array([t.cv_results_["params"][a]["delay"] == 30.0 for a in t.pulls_["candidate"]])
    assert np.all(st[slow] == "timed-out") and np.all(st[~slow] == "done")
    assert np.all(t.pulls_["score"][slow] == -1.0)
    assert np.allclose(t.pulls_["cost"][slow], 0.5)
    assert t.best_params_["delay"] == 0.0


class Dies(ClassifierMixin, BaseEstimator):
    """Kills its own process when ``die`` (as a crash in compiled code would)."""

    def __init__(self, die=False):
        self.die = die

    def fit(self, X, y):
        if self.die:
            import os
            os._exit(3)
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


def test_a_pull_whose_process_dies_is_a_failed_pull_not_a_dead_study(data):
    X, y = data
    t = MFTuner(Dies(), {"die": [False, True]}, n_candidates="grid", cv=2, timeout=30,
                bias=[0.0], sigma=0.1, max_pulls=4, refit=False, error_score=-1.0,
                fidelities=[1.0], random_state=0).fit(X, y)
    dead = np.array([t.cv_results_["params"][a]["die"] for a in t.pulls_["candidate"]])
    assert dead.any() and (~dead).any()
    assert np.all(np.asarray(t.pulls_["status"])[dead] == "failed")
    assert all("exit code 3" in e for e in np.asarray(t.pulls_["error"])[dead])
    assert np.all(np.asarray(t.pulls_["score"])[dead] == -1.0) and t.best_params_ == {"die": False}


def test_timeout_children_after_openmp_ran_in_this_process(data):
    # HistGradientBoosting runs OpenMP here first; a forked child that used the
    # inherited (dead) GNU OpenMP pool used to crash, and its EOF killed the search.
    X, y = data
    HistGradientBoostingClassifier(max_iter=5).fit(X, y)
    t = MFTuner(HistGradientBoostingClassifier(), {"learning_rate": [0.05, 0.2]},
                n_candidates="grid", fidelity="max_iter", fidelities=[3, 9], cv=2, timeout=60,
                costs="levels", max_pulls=8, refit=False, random_state=0).fit(X, y)
    assert len(t.pulls_["status"]) >= 4 and np.all(np.asarray(t.pulls_["status"]) == "done")


def test_scoring_dict_groups_and_fit_params(data):
    X, y = data
    groups = np.arange(600) % 6
    w = np.ones(600)
    t = small(scoring={"acc": "accuracy", "auc": "roc_auc"}, refit="auc",
              cv=GroupKFold(3)).fit(X, y, groups=groups, sample_weight=w)
    assert "mean_test_auc" in t.cv_results_ and "mean_test_acc" in t.cv_results_
    assert t.cv_results_["rank_test_auc"][t.best_index_] == 1  # the answer first
    acc = t.cv_results_["rank_test_acc"]  # every metric ranked, as in GridSearchCV
    assert sorted(acc) == list(range(1, 7))
    assert t.best_score_ == t.cv_results_["mean_test_auc"][t.best_index_]
    with pytest.raises(ValueError, match="refit"):
        small(scoring={"acc": "accuracy", "auc": "roc_auc"}).fit(X, y)


def test_refit_false_says_so_for_what_needs_the_refitted_estimator(data):
    X, y = data
    t = small(refit=False, max_pulls=20).fit(X, y)
    for name in ("classes_", "predict"):
        with pytest.raises(AttributeError, match=f"^{name} is available only with refit=True"):
            getattr(t, name)(X) if name == "predict" else getattr(t, name)
    assert not hasattr(t, "classes_") and small(max_pulls=20).fit(X, y).classes_.size == 2


@pytest.mark.parametrize("scoring", [{"acc": "accuracy"}, ["accuracy"]])
def test_multimetric_scoring_with_one_metric_is_named_as_gridsearchcv_names_it(data, scoring):
    X, y = data
    name = "acc" if isinstance(scoring, dict) else "accuracy"
    t = small(scoring=scoring, refit=name).fit(X, y)
    assert t.multimetric_ and f"mean_test_{name}" in t.cv_results_
    assert f"rank_test_{name}" in t.cv_results_ and "mean_test_score" not in t.cv_results_
    assert t.best_score_ == t.cv_results_[f"mean_test_{name}"][t.best_index_]
    assert f"score_{name}" in t.pulls_ and "score" not in t.pulls_


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"costs": [1.0, 2.0]}, r"^costs must have one entry per fidelity \(3"),
    ({"bias": [0.1, -0.1, 0.0]}, r"^bias must be non-negative"),
    ({"bias": [0.1, 0.05, 0.01]}, r"^bias must end with 0"),
    ({"bias": [np.nan, 0.05, 0.0]}, r"^bias must contain finite numbers"),
])
def test_bias_and_costs_are_checked_before_anything_runs(data, tmp_path, kwargs, match):
    X, y = data
    path = tmp_path / "s.db"
    t = small(storage=str(path), fidelities=[50, 150, 400], **kwargs)
    with pytest.raises(ValueError, match=match):
        t.fit(X, y)
    assert not path.exists()  # nothing written, nothing fitted
    assert not hasattr(t, "pulls_")


def test_regressor_and_clone():
    X, y = make_regression(300, 5, noise=5.0, random_state=0)
    t = MFTuner(Ridge(), {"alpha": Real(1e-3, 1e3, log=True)}, n_candidates=5, cv=3,
                max_pulls=40, random_state=0)
    c = clone(t)
    assert c.get_params()["n_candidates"] == 5
    c.set_params(n_candidates=4).fit(X, y)
    assert (c.cv_results_["wave"] == 1).sum() == 4 and c.predict(X).shape == (300,)


@pytest.mark.parametrize("algorithm", ["iise-gamma", "lucb-b"])
def test_interrupt_keeps_best_and_resumes(data, monkeypatch, algorithm):
    # The interrupt comes before the batch reaches the evaluator: its pulls took no
    # CV split, so giving them back must not move any (lucb-b's third batch pulls
    # fidelities never pulled before: a double give-back made a split negative).
    X, y = data
    from mftune.search import evaluation

    calls = {"n": 0}
    original = evaluation.CVEvaluator.evaluate

    def interrupting(self, pulls):
        if self.phase == "search":
            calls["n"] += 1
            if calls["n"] == 3:
                raise KeyboardInterrupt
        return original(self, pulls)

    monkeypatch.setattr(evaluation.CVEvaluator, "evaluate", interrupting)
    t = small(max_pulls=None, algorithm=algorithm).fit(X, y)
    assert t.stopping_reason_ == "interrupted" and "C" in t.best_params_
    assert t._evaluator.next_split.min() >= 0
    assert not hasattr(t, "best_estimator_")
    assert t.policy_.n_pending == 0
    before = t.n_pulls_
    t.resume(max_pulls=before + 30)
    assert t.n_pulls_ > before and hasattr(t, "best_estimator_")
    with pytest.raises(ValueError, match="resume"):
        t.resume()


@pytest.mark.parametrize("kwargs, name", [
    ({"fidelity": 3}, "fidelity"),
    ({"fidelity": "bogus"}, "fidelity"),
    ({"fidelity": "max_iter"}, "fidelities"),
    ({"fidelities": [300, 100]}, "fidelities"),
    ({"fidelities": 5}, "fidelities"),
    ({"min_resources": 0}, "min_resources"),
    ({"factor": 1}, "factor"),
    ({"continuation": "yes"}, "continuation"),
    ({"continuation": "warm_start"}, "continuation"),
    ({"algorithm": "nope"}, "algorithm"),
    ({"algorithm": "mf-gp-ucb", "max_pulls": None}, "budget"),
    ({"algorithm": "gp-ucb", "space": [{"C": Real(1e-2, 1e2, log=True)},
                                       {"C": Real(1e-2, 1e2, log=True)}]}, "unconditional"),
    ({"algorithm": object()}, "algorithm"),
    ({"algorithm_params": {"ard": True}}, "algorithm_params"),  # auto -> iise-gamma
    ({"algorithm": "iise", "algorithm_params": {"kernel": "rbf"}}, "algorithm_params"),
    ({"algorithm_params": "ard"}, "algorithm_params"),
    ({"algorithm": object(), "algorithm_params": {"ard": True}}, "algorithm"),
    ({"n_candidates": 1}, "n_candidates"),
    ({"n_candidates": "all"}, "n_candidates"),
    ({"grid_points": 1}, "grid_points"),
    ({"bias": "guess"}, "bias"),
    ({"bias": 0.1}, "bias"),
    ({"bias": [0.1, 0.0]}, "bias"),
    ({"n_calibration": 0}, "n_calibration"),
    ({"sigma": -1.0}, "sigma"),
    ({"delta": 1.5}, "delta"),
    ({"epsilon": -0.1}, "epsilon"),
    ({"epsilon": "big"}, "epsilon"),
    ({"budget": 0}, "budget"),
    ({"max_pulls": 0}, "max_pulls"),
    ({"timeout": -2}, "timeout"),
    ({"scoring": "no-such-metric"}, "scoring"),
    ({"scoring": 3}, "scoring"),
    ({"cv": "five"}, "cv"),
    ({"refit": 2}, "refit"),
    ({"error_score": "ignore"}, "error_score"),
    ({"n_jobs": 0}, "n_jobs"),
    ({"verbose": -1}, "verbose"),
    ({"random_state": "seed"}, "random_state"),
    ({"validation": "half"}, "validation"),
    ({"space": {"C": Real(10, 1)}}, "C"),
    ({"space": {"C": Real(0, 1, log=True)}}, "C"),
    ({"space": {"max_iter": Integer(9, 3)}}, "max_iter"),
    ({"space": {"solver": Categorical([])}}, "solver"),
    ({"space": {"not_a_param": [1, 2]}}, "not_a_param"),
    ({"estimator": "svm"}, "estimator"),
])
def test_invalid_arguments_raise_value_error_naming_them(data, kwargs, name, monkeypatch):
    X, y = data
    from mftune.search import evaluation

    def no_fit(*a, **k):  # the error must come before any fitting
        raise AssertionError("fitted before validating")

    monkeypatch.setattr(evaluation, "fit_and_score", no_fit)
    with pytest.raises(ValueError, match=name):
        small(**kwargs).fit(X, y)


def test_proportional_validation_scores_a_shared_stratified_share_of_the_fold(data):
    # Below the top n_samples level a pull scores ceil(n |fold| / |training fold|)
    # validation rows, at least MIN_VALIDATION_ROWS (200: the floor holds at 200
    # training rows, whose share is 100; 600 rows get 300), stratified, the same
    # rows for every candidate of a split; the top level scores the whole fold;
    # the training rows are those of validation="full".
    from sklearn.metrics import check_scoring
    from sklearn.model_selection import StratifiedKFold

    from mftune.search.evaluation import MIN_VALIDATION_ROWS, CVEvaluator

    Xb, yb = make_classification(3000, 8, weights=[0.7], random_state=1)
    est = LogisticRegression(solver="liblinear")
    args = (est, [{"C": c} for c in (0.1, 1.0, 10.0)], Xb, yb, StratifiedKFold(3),
            "n_samples", [200, 600, 2000], {"score": check_scoring(est)}, "score")
    ev = CVEvaluator(*args, stratify=True, validation="proportional")
    full = CVEvaluator(*args, stratify=True)
    train, test = ev.split(0)
    for m, (n, expected) in enumerate([(200, MIN_VALIDATION_ROWS), (600, 300)]):
        assert expected == max(int(np.ceil(n * test.size / train.size)), MIN_VALIDATION_ROWS)
        rows = [ev.train_rows(arm, m, 0) for arm in range(3)]
        for tr, te in rows:
            assert tr.size == n and te.size == expected
            assert np.isin(te, test).all()
            # the fold's class shares, to within one row
            assert abs(np.sum(yb[te]) - np.mean(yb[test]) * te.size) <= 1
        assert all(np.array_equal(rows[0][1], te) for _, te in rows[1:])
        assert not np.array_equal(rows[0][1], ev.train_rows(0, m, 1)[1][:expected])
        np.testing.assert_array_equal(rows[0][0], full.train_rows(0, m, 0)[0])
        np.testing.assert_array_equal(full.train_rows(0, m, 0)[1], test)
    np.testing.assert_array_equal(ev.train_rows(0, 2, 0)[1], test)
    # through the tuner (the default): the search runs
    X, y = data
    t = small(fidelities=[40, 120], max_pulls=40).fit(X, y)
    assert t.validation_ == "proportional" and np.isfinite(t.best_score_)
    assert set(t.pulls_["n_valid"]) == {200}  # the floor is the whole 200-row fold here
    # a parameter fidelity trains and scores on whole folds: the option is ignored
    p = small(estimator=SGDClassifier(random_state=0), fidelity="max_iter",
              fidelities=[2, 8], validation="proportional",
              space={"alpha": Real(1e-5, 1e-1, log=True)}, max_pulls=12)
    assert p._validation() == "full"


def test_auto_validation_subsets_only_scores_that_are_means(data):
    # validation="auto": a share of the fold for classifiers/regressors scored by
    # their default score or named scorers; the whole fold for a callable scorer or
    # an unsupervised estimator, whose score may be a sum over the rows
    # (KernelDensity's log-likelihood would change scale with the rows)
    from sklearn.metrics import accuracy_score, make_scorer
    from sklearn.neighbors import KernelDensity

    X, y = data
    assert small()._validation() == "proportional"
    assert small(scoring=["accuracy", "f1"], refit="f1")._validation() == "proportional"
    assert small(scoring=make_scorer(accuracy_score))._validation() == "full"
    assert small(validation="proportional",
                 scoring=make_scorer(accuracy_score))._validation() == "proportional"
    kde = MFTuner(KernelDensity(), {"bandwidth": Real(0.1, 2.0, log=True)}, n_candidates=4,
                  cv=3, fidelities=[100], max_pulls=12, random_state=0).fit(X)
    assert kde.validation_ == "full" and set(kde.pulls_["n_valid"]) == {200}
    # the refitted best estimator's methods are delegated where it has them, as
    # BaseSearchCV does (score_samples for a density; no predict)
    np.testing.assert_allclose(kde.score_samples(X[:5]), kde.best_estimator_.score_samples(X[:5]))
    assert not hasattr(kde, "predict") and hasattr(small(), "decision_function")


def test_conditional_pipeline_space_does_not_mutate_candidates(data):
    X, y = data
    from sklearn.svm import LinearSVC

    lin, svc = LogisticRegression(solver="liblinear"), LinearSVC()
    pipe = Pipeline([("scale", StandardScaler()), ("model", lin)])
    space = [{"model": [lin], "model__C": Real(1e-2, 1e2, log=True)},
             {"model": [svc], "model__C": Real(1e-2, 1e2, log=True)}]
    t = small(estimator=pipe, space=space, n_candidates=6).fit(X, y)
    assert lin.C == 1.0 and svc.C == 1.0  # the user's objects are untouched
    assert t.best_estimator_.named_steps["model"].C == t.best_params_["model__C"]


def test_demo_command_runs():
    from click.testing import CliRunner

    from mftune.cli import main

    res = CliRunner().invoke(main, ["demo", "--no-contrast", "--budget", "2",
                                    "--n-candidates", "6"])
    assert res.exit_code == 0, res.output
    assert "best params" in res.output and "test score" in res.output
