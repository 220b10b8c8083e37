"""The run's tables (mftune.results): pulls_, cv_results_ and the progress trace."""

import io
from types import SimpleNamespace

import numpy as np
import pytest

from mftune.engine.progress import Progress
from mftune.policies import Pulls
from mftune.search.results import build_cv_results, build_pulls
from mftune.study.outcomes import Outcomes, PullRecord

LEVELS = [100, 400]


def _rec(arm, fid, split, score, fit=1.0, score_time=0.1, **kw):
    scores = score if isinstance(score, dict) else {"score": score}
    return PullRecord(arm, fid, split, scores, fit, score_time, **kw)


# -- build_pulls -------------------------------------------------------------------------


def test_build_pulls_one_row_per_pull():
    records = [
        _rec(0, 0, 0, 0.5, fit=1.0, score_time=0.5, n_train=100, n_valid=50, started=10.0,
             worker="h:1"),
        _rec(1, 0, 1, np.nan, fit=0.2, score_time=0.0, status="error", error="boom",
             phase="calibration"),
        _rec(0, 1, 0, 0.7, fit=0.5, score_time=0.5, continued_from=0, reused=1.0,
             cache_time=0.25),
    ]
    cols = build_pulls(records, LEVELS)
    assert {len(v) for v in cols.values()} == {3}
    np.testing.assert_array_equal(cols["candidate"], [0, 1, 0])
    np.testing.assert_array_equal(cols["fidelity"], [0, 0, 1])
    assert cols["level"] == [100, 100, 400]
    np.testing.assert_array_equal(cols["split"], [0, 1, 0])
    np.testing.assert_array_equal(cols["n_train"], [100, 0, 0])
    np.testing.assert_array_equal(cols["n_valid"], [50, 0, 0])
    # cost = fit + score + cache seconds: 1.0 + 0.5, 0.2 + 0, 0.5 + 0.5 + 0.25
    np.testing.assert_allclose(cols["cost"], [1.5, 0.2, 1.25])
    np.testing.assert_allclose(cols["fit_time"], [1.0, 0.2, 0.5])
    np.testing.assert_allclose(cols["score_time"], [0.5, 0.0, 0.5])
    assert cols["status"] == ["done", "error", "done"]
    assert cols["error"] == [None, "boom", None]
    assert cols["phase"] == ["search", "calibration", "search"]
    np.testing.assert_allclose(cols["started"], [10.0, 0.0, 0.0])
    assert cols["worker"] == ["h:1", "", ""]
    # one metric: a single "score" column, nan for the failed pull
    np.testing.assert_array_equal(cols["score"], [0.5, np.nan, 0.7])
    assert not any(k.startswith("score_") for k in cols if k != "score_time")


def test_build_pulls_continuation_columns():
    records = [
        _rec(0, 0, 0, 0.5),
        _rec(0, 1, 0, 0.7, fit=0.5, continued_from=0, reused=1.0, cache_time=0.25),
    ]
    cols = build_pulls(records, LEVELS)
    np.testing.assert_array_equal(cols["continued"], [False, True])
    np.testing.assert_array_equal(cols["continued_from"], [-1, 0])
    np.testing.assert_allclose(cols["reused_cost"], [0.0, 1.0])
    np.testing.assert_allclose(cols["cache_time"], [0.0, 0.25])
    # no pull of arm 0 at fidelity 1 fitted from scratch, no calibrated ratio:
    # the saving is q · reused with q = 1 (saved_estimates) -> 1.0
    np.testing.assert_allclose(cols["saved_cost"], [0.0, 1.0])


def test_build_pulls_several_metrics_get_one_column_each():
    records = [_rec(0, 0, 0, {"acc": 0.9, "f1": 0.8}), _rec(1, 0, 0, {"acc": 0.7})]
    cols = build_pulls(records, LEVELS)
    assert "score" not in cols
    np.testing.assert_allclose(cols["score_acc"], [0.9, 0.7])
    np.testing.assert_array_equal(cols["score_f1"], [0.8, np.nan])  # missing metric: nan


def test_build_pulls_without_records():
    cols = build_pulls([], LEVELS)
    assert cols["candidate"].shape == (0,) and cols["saved_cost"].shape == (0,)
    assert {len(v) for v in cols.values()} == {0}


def test_build_pulls_loads_into_pandas():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(build_pulls([_rec(0, 0, 0, 0.5), _rec(1, 1, 2, 0.6)], LEVELS))
    assert df.shape[0] == 2 and df["level"].tolist() == [100, 400]


# -- build_cv_results --------------------------------------------------------------------

CANDIDATES = [{"C": 1}, {"C": 10, "gamma": 0.1}, {"C": 100}, {"C": 1000}]


def _cv_records():
    # arm 0: two pulls at fid 0, two at fid 1 (0.8, 0.6)      -> reached 1, mean 0.7, std 0.1
    # arm 1: two pulls at fid 0: 0.95 and a failure scored 0.65 -> reached 0, mean 0.8, std 0.15
    # arm 2: one pull at fid 0: 0.4                             -> reached 0, mean 0.4, std 0
    # arm 3: never pulled                                       -> reached -1, nan
    return [
        _rec(0, 0, 0, 0.5, fit=1.0), _rec(0, 0, 1, 0.7, fit=1.0),
        _rec(0, 1, 0, 0.8, fit=2.0), _rec(0, 1, 1, 0.6, fit=2.0),
        _rec(1, 0, 0, 0.95, fit=1.0), _rec(1, 0, 1, 0.65, fit=3.0, status="error", error="x"),
        _rec(2, 0, 0, 0.4, fit=0.5),
    ]


def _cv(records=None, best_index=2, metrics=("score",), metric="score"):
    records = _cv_records() if records is None else records
    return build_cv_results(CANDIDATES, records, LEVELS, list(metrics), metric, best_index,
                            [-1, 2, 1, -1], [-1, 0, 0, -1], [np.nan, 3.5, 1.5, np.nan])


def test_cv_results_summarise_the_highest_fidelity_reached():
    res = _cv()
    assert res["params"] == CANDIDATES
    np.testing.assert_array_equal(res["fidelity_reached"], [1, 0, 0, -1])
    assert res["level_reached"] == [400, 100, 100, None]
    # means and (population) standard deviations over the pulls at that fidelity only
    np.testing.assert_allclose(res["mean_test_score"], [0.7, 0.8, 0.4, np.nan])
    np.testing.assert_allclose(res["std_test_score"], [0.1, 0.15, 0.0, np.nan], atol=1e-12)


def test_cv_results_rank_puts_the_recommendation_first_then_fidelity_then_mean():
    # best_index = 2 first; then arm 0 (fidelity 1) before arm 1 (fidelity 0) although
    # arm 1's mean is higher; the never-pulled arm 3 last
    np.testing.assert_array_equal(_cv(best_index=2)["rank_test_score"], [2, 3, 1, 4])
    np.testing.assert_array_equal(_cv(best_index=0)["rank_test_score"], [1, 2, 3, 4])
    # same fidelity: by mean (arm 1, 0.8, before arm 2, 0.4)
    np.testing.assert_array_equal(_cv(best_index=3)["rank_test_score"], [2, 3, 4, 1])


def test_cv_results_counts_times_costs_and_failures():
    res = _cv()
    # fit seconds over all pulls / pulls: arm 0 (1 + 1 + 2 + 2)/4 = 1.5, arm 1 (1 + 3)/2 = 2,
    # arm 2 0.5; score seconds 0.1 each
    np.testing.assert_allclose(res["mean_fit_time"], [1.5, 2.0, 0.5, np.nan])
    np.testing.assert_allclose(res["mean_score_time"], [0.1, 0.1, 0.1, np.nan])
    np.testing.assert_array_equal(res["n_pulls_fidelity_0"], [2, 2, 1, 0])
    np.testing.assert_array_equal(res["n_pulls_fidelity_1"], [2, 0, 0, 0])
    # cost = fit + score: fid 0: arm 0 1.1 + 1.1, arm 1 1.1 + 3.1, arm 2 0.6; fid 1: 2.1 + 2.1
    np.testing.assert_allclose(res["cost_fidelity_0"], [2.2, 4.2, 0.6, 0.0])
    np.testing.assert_allclose(res["cost_fidelity_1"], [4.2, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(res["n_failed"], [0, 1, 0, 0])
    np.testing.assert_array_equal(res["eliminated_round"], [-1, 2, 1, -1])
    np.testing.assert_array_equal(res["eliminated_fidelity"], [-1, 0, 0, -1])
    np.testing.assert_array_equal(res["eliminated_time"], [np.nan, 3.5, 1.5, np.nan])


def test_cv_results_param_columns_are_masked_where_absent():
    res = _cv()
    assert res["param_C"].tolist() == [1, 10, 100, 1000]
    assert not res["param_C"].mask.any()
    np.testing.assert_array_equal(res["param_gamma"].mask, [True, False, True, True])
    assert res["param_gamma"][1] == 0.1


def test_cv_results_several_metrics():
    records = [_rec(0, 0, 0, {"acc": 0.9, "f1": 0.2}), _rec(1, 0, 0, {"acc": 0.5, "f1": 0.6}),
               _rec(2, 0, 0, {"acc": 0.7, "f1": 0.4})]
    res = build_cv_results(CANDIDATES[:3], records, LEVELS, ["acc", "f1"], "f1", 0,
                           [-1] * 3, [-1] * 3, [np.nan] * 3)
    np.testing.assert_allclose(res["mean_test_acc"], [0.9, 0.5, 0.7])
    np.testing.assert_allclose(res["mean_test_f1"], [0.2, 0.6, 0.4])
    # arm 0 recommended first, then by the optimised metric f1: arm 1 (0.6) before
    # arm 2 (0.4); acc has its own ranking, as in GridSearchCV (arm 2's 0.7 before 0.5)
    np.testing.assert_array_equal(res["rank_test_f1"], [1, 2, 3])
    np.testing.assert_array_equal(res["rank_test_acc"], [1, 3, 2])
    assert "mean_test_score" not in res
    # the recommendation is first only in the optimised metric's ranking
    res = build_cv_results(CANDIDATES[:3], records, LEVELS, ["acc", "f1"], "f1", 2,
                           [-1] * 3, [-1] * 3, [np.nan] * 3)
    np.testing.assert_array_equal(res["rank_test_f1"], [3, 2, 1])
    np.testing.assert_array_equal(res["rank_test_acc"], [1, 3, 2])


def test_cv_results_without_records():
    res = _cv(records=[], best_index=1)
    np.testing.assert_array_equal(res["fidelity_reached"], [-1, -1, -1, -1])
    assert np.isnan(res["mean_test_score"]).all()
    np.testing.assert_array_equal(res["rank_test_score"], [1, 1, 1, 1])  # all tied, unseen
    np.testing.assert_array_equal(res["n_failed"], [0, 0, 0, 0])
    assert np.isnan(res["mean_fit_time"]).all()


def test_cv_results_columns_have_one_row_per_candidate():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(_cv())
    assert df.shape[0] == len(CANDIDATES)


# -- Progress ----------------------------------------------------------------------------


class _Policy:
    def __init__(self, best, active=None, fidelity=None):
        self.best = best
        if active is not None:
            self.active = np.asarray(active, dtype=bool)
        if fidelity is not None:
            self.fidelity_ = fidelity

    def recommend(self):
        return self.best


def _batch(costs):
    n = len(costs)
    return Pulls(np.arange(n), np.zeros(n, dtype=int)), Outcomes(np.zeros(n), costs)


def test_progress_accumulates_cost_pulls_and_the_trace():
    prog = Progress(0, CANDIDATES, "score", start_cost=5.0, start_pulls=3)
    pulls, out = _batch([1.0, 2.0])
    prog(pulls, out, _Policy(2, active=[True, False, True, True]))
    assert prog.cost == pytest.approx(8.0) and prog.n_pulls == 5
    t1, cost, n, best = prog.history[-1]
    assert (cost, n, best) == (pytest.approx(8.0), 5, 2) and t1 >= 0
    # arm 1 eliminated now; the others still alive
    assert np.isfinite(prog.eliminated_time[1])
    assert np.isnan(prog.eliminated_time[[0, 2, 3]]).all()
    first = prog.eliminated_time[1]
    pulls, out = _batch([0.5])
    prog(pulls, out, _Policy(3, active=[False, False, True, True]))
    assert len(prog.history) == 2 and prog.history[-1][1:] == (pytest.approx(8.5), 6, 3)
    assert prog.history[-1][0] >= t1
    assert prog.eliminated_time[1] == first  # the first elimination time is kept
    assert np.isfinite(prog.eliminated_time[0]) and prog.eliminated_time[0] >= first
    assert np.isnan(prog.eliminated_time[[2, 3]]).all()


def test_progress_without_active_records_no_elimination():
    prog = Progress(0, CANDIDATES, "score")
    pulls, out = _batch([1.0])
    prog(pulls, out, SimpleNamespace(recommend=lambda: 0))
    assert prog.history[-1][1:] == (1.0, 1, 0)
    assert np.isnan(prog.eliminated_time).all()


def test_progress_prints_per_verbosity():
    quiet = io.StringIO()
    prog = Progress(0, CANDIDATES, "score", stream=quiet)
    prog(*_batch([1.0]), _Policy(1, active=[True] * 4))
    assert quiet.getvalue() == ""

    out = io.StringIO()
    prog = Progress(1, CANDIDATES, "score", start_cost=2.0, budget=100, stream=out)
    prog(*_batch([1.0, 1.0]), _Policy(1, active=[True, True, False, True], fidelity=1))
    prog(*_batch([1.0]), _Policy(1, active=[True, True, False, True], fidelity=1))
    lines = out.getvalue().splitlines()
    assert len(lines) == 1  # verbose 1: at most one line a second
    line = lines[0]
    assert line.startswith("[mftune]")
    assert "     2 pulls" in line and "cost      4.0/100 s" in line
    assert "3 alive" in line and "fidelity 1" in line and "best #1 {'C': 10, 'gamma': 0.1}" in line

    out = io.StringIO()
    prog = Progress(2, CANDIDATES, "score", stream=out)
    for _ in range(3):
        prog(*_batch([1.0]), SimpleNamespace(recommend=lambda: 0))
    lines = out.getvalue().splitlines()
    assert len(lines) == 3  # verbose 2: every batch
    # a policy with no survivors (a GP policy) counts the candidates proposed
    assert "4 proposed" in lines[-1] and "fidelity" not in lines[-1] and "/" not in lines[-1]
