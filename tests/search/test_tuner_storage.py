"""MFTuner(storage=...): the study file, exact resume, mismatches, and the study commands."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from mftune import MFTuner, Real
from mftune.cli import main
from mftune.search import evaluation
from mftune.study.store import StudyStore

# Columns of pulls_ that do not depend on timing.
EXACT = ("candidate", "fidelity", "split", "n_train", "n_valid", "score", "status", "phase")


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(300, 6, n_informative=4, random_state=0)
    return X, y


def small(**kw):
    base = dict(estimator=LogisticRegression(solver="liblinear"),
                space={"C": Real(1e-4, 1e2, log=True)}, n_candidates=5, cv=3,
                max_pulls=40, costs="levels", random_state=0,
                adaptive=False)  # the references run without a study file: fixed lists too
    base.update(kw)
    return MFTuner(**base)


def rows_of(path):
    with StudyStore(path) as store:
        return store.rows()


def assert_same_pulls(a, b):
    for key in EXACT:
        assert np.array_equal(np.asarray(a.pulls_[key]), np.asarray(b.pulls_[key])), key


@pytest.fixture
def fits(monkeypatch):
    """Count the pulls actually fitted; ``fits["interrupt_at"] = k`` raises Ctrl+C in the k-th.

    The KeyboardInterrupt comes from inside a fit, where a real Ctrl+C lands.
    """
    calls = {"n": 0, "interrupt_at": None}
    original = evaluation.fit_and_score

    def counting(*args):
        calls["n"] += 1
        if calls["n"] == calls["interrupt_at"]:
            calls["interrupt_at"] = None
            raise KeyboardInterrupt
        return original(*args)

    monkeypatch.setattr(evaluation, "fit_and_score", counting)
    return calls


def test_storage_writes_the_study_and_one_row_per_pull(data, tmp_path):
    X, y = data
    path = tmp_path / "study.db"
    t = small(storage=str(path))
    assert clone(t).get_params()["storage"] == str(path)
    t.fit(X, y)
    rows = rows_of(path)
    # one finished row per pull, in pulls_ order (calibration = batch 0, then the rounds)
    assert len(rows) == len(t.pulls_["candidate"]) and all(r.status == "done" for r in rows)
    assert [r.kind for r in rows] == ["calibration" if p == "calibration" else "policy"
                                      for p in t.pulls_["phase"]]
    assert [r.arm for r in rows] == t.pulls_["candidate"].tolist()
    assert [r.fidelity for r in rows] == t.pulls_["fidelity"].tolist()
    assert np.allclose([r.score for r in rows], t.pulls_["score"])
    assert np.allclose([r.cost for r in rows], t.pulls_["cost"])
    assert all(r.started <= r.ended for r in rows)
    assert [r.info["split"] for r in rows] == t.pulls_["split"].tolist()
    with StudyStore(path) as store:
        meta, configs = store.meta, store.configs()
    assert configs == t.cv_results_["params"] and meta["seed"] is not None
    assert meta["algorithm"] == t.algorithm_ == "iise-gamma"
    assert meta["fidelities"] == {"name": "n_samples", "values": list(t.fidelities_)}
    assert meta["settings"]["sigma"] == pytest.approx(float(np.max(meta["settings"]["sigma"])))
    assert meta["settings"]["gamma"][-1] == 0 and meta["state"]["last_reason"] == "max-pulls"
    # JSON text, never pickled blobs
    conn = sqlite3.connect(path)
    types = conn.execute("SELECT DISTINCT typeof(config) FROM arms UNION "
                         "SELECT DISTINCT typeof(info) FROM pulls").fetchall()
    assert {t for (t,) in types} == {"text"}
    conn.close()


N_CAL = 12  # calibration pulls of small(): 3 candidates x 2 fidelities x 2 folds


@pytest.mark.parametrize("best_first", [True, False])
def test_interrupted_fit_resumes_exactly_without_rerunning_finished_pulls(data, tmp_path,
                                                                          fits, best_first):
    # best-first rounds one pull per batch (n_jobs=1, no chunk cost; the default chunk
    # is a second of pulls, a whole round of these cheap fits): Ctrl+C loses only the
    # pull it interrupted; whole rounds lose the round.
    X, y = data
    kw = {"algorithm_params": {"chunk_cost": None} if best_first else {"best_first": False}}
    ref = small(**kw).fit(X, y)  # uninterrupted, no storage
    n_ref = len(ref.pulls_["candidate"])
    assert (np.asarray(ref.pulls_["phase"]) == "calibration").sum() == N_CAL
    path = tmp_path / "study.db"
    fits.update(n=0, interrupt_at=N_CAL + 8)  # Ctrl+C inside the second round of 5
    t = small(storage=path, **kw).fit(X, y)
    assert t.stopping_reason_ == "interrupted"
    rows = rows_of(path)
    finished = sum(r.finished for r in rows)
    lost = 1 if best_first else 5  # the interrupted batch: one pull, or the whole round
    # consistent file: nothing left running; the interrupted batch is pending (re-run later)
    assert finished == N_CAL + (7 if best_first else 5)
    assert [r.status for r in rows[finished:]] == ["pending"] * lost
    assert [r.arm for r in rows if r.finished] == t.pulls_["candidate"].tolist()
    fits["n"] = 0
    t2 = small(storage=path, **kw).fit(X, y)
    assert_same_pulls(t2, ref)
    assert t2.best_params_ == ref.best_params_ and t2.stopping_reason_ == ref.stopping_reason_
    # no finished pull is evaluated twice: only the rest of the uninterrupted run is fitted
    assert fits["n"] == n_ref - finished and t2.n_replayed_ == finished
    rows = rows_of(path)
    assert len(rows) == n_ref and all(r.status == "done" for r in rows)
    # only the batch Ctrl+C interrupted was started twice (it had not finished)
    assert [r.attempts for r in rows] == ([1] * finished + [2] * lost
                                          + [1] * (n_ref - finished - lost))
    # a third fit replays everything and evaluates nothing
    fits["n"] = 0
    t3 = small(storage=path, **kw).fit(X, y)
    assert fits["n"] == 0 and t3.best_params_ == ref.best_params_
    assert_same_pulls(t3, ref)


def test_in_memory_resume_after_ctrl_c_continues_the_study(data, tmp_path, fits):
    X, y = data
    ref = small().fit(X, y)
    path = tmp_path / "study.db"
    fits.update(n=0, interrupt_at=N_CAL + 3)
    t = small(storage=path, max_pulls=None).fit(X, y)
    assert t.stopping_reason_ == "interrupted"
    t.resume(max_pulls=40)
    assert_same_pulls(t, ref)
    assert t.best_params_ == ref.best_params_ and hasattr(t, "best_estimator_")
    rows = rows_of(path)
    assert len(rows) == len(ref.pulls_["candidate"]) and all(r.finished for r in rows)


def test_capped_fit_continues_with_a_larger_cap(data, tmp_path, fits):
    X, y = data
    ref = small().fit(X, y)
    n_ref = len(ref.pulls_["candidate"])
    path = tmp_path / "study.db"
    # 13 pulls: the third round is cut short, so the resume completes a stored partial batch
    first = small(storage=path, max_pulls=13).fit(X, y)
    assert first.stopping_reason_ == "max-pulls" and len(rows_of(path)) == N_CAL + 13
    fits["n"] = 0
    t = small(storage=path).fit(X, y)
    assert_same_pulls(t, ref)
    assert t.best_params_ == ref.best_params_
    assert fits["n"] == n_ref - (N_CAL + 13)


def test_resume_with_measured_costs_replays_the_stored_costs(data, tmp_path, fits):
    X, y = data
    path = tmp_path / "study.db"
    fits["interrupt_at"] = N_CAL + 12
    t = small(storage=path, costs="measured").fit(X, y)
    assert t.stopping_reason_ == "interrupted"
    finished = sum(r.finished for r in rows_of(path))
    fits["n"] = 0
    # decisions depend on the measured costs: they are replayed from the stored rows,
    # so the stored pulls match the fresh policy's asks (no mismatch) and none re-runs
    t2 = small(storage=path, costs="measured").fit(X, y)
    for key in (*EXACT, "cost"):
        assert np.array_equal(np.asarray(t2.pulls_[key])[:finished],
                              np.asarray(t.pulls_[key])[:finished]), key
    assert fits["n"] == len(t2.pulls_["candidate"]) - finished > 0


# Columns of cv_results_ that do not depend on timing.
EXACT_RESULTS = ("params", "mean_test_score", "std_test_score", "rank_test_score",
                 "fidelity_reached", "eliminated_round", "n_failed")


def assert_same_results(a, b):
    assert_same_pulls(a, b)
    assert a.best_params_ == b.best_params_ and a.stopping_reason_ == b.stopping_reason_
    for key in EXACT_RESULTS:
        assert np.array_equal(np.asarray(a.cv_results_[key]),
                              np.asarray(b.cv_results_[key])), key


@pytest.mark.parametrize("interrupt_at", [1, 5, N_CAL])
def test_ctrl_c_during_calibration_keeps_its_finished_pulls(data, tmp_path, fits,
                                                            interrupt_at):
    # the calibration is one batch of N_CAL pulls: each is stored as it finishes, so
    # Ctrl+C in the k-th keeps the k - 1 before it and the resume fits only the rest
    X, y = data
    ref = small().fit(X, y)
    n_ref = len(ref.pulls_["candidate"])
    path = tmp_path / "study.db"
    fits.update(n=0, interrupt_at=interrupt_at)
    with pytest.raises(KeyboardInterrupt):  # before the search has a policy: as GridSearchCV
        small(storage=path).fit(X, y)
    kept = interrupt_at - 1
    rows = rows_of(path)
    assert [r.kind for r in rows] == ["calibration"] * N_CAL
    assert [r.status for r in rows] == ["done"] * kept + ["pending"] * (N_CAL - kept)
    stored = ref.pulls_["score"][:kept]
    assert np.array_equal([r.score for r in rows[:kept]], stored)
    assert [r.info["split"] for r in rows[:kept]] == ref.pulls_["split"][:kept].tolist()
    fits["n"] = 0
    t = small(storage=path).fit(X, y)
    assert fits["n"] == n_ref - kept and t.n_replayed_ == kept  # none fitted twice
    assert_same_results(t, ref)
    rows = rows_of(path)
    assert len(rows) == n_ref and all(r.status == "done" for r in rows)
    # only the pulls that had not finished were started again
    assert [r.attempts for r in rows] == [1] * kept + [2] * (N_CAL - kept) + [1] * (n_ref - N_CAL)


class ProbedClassifier(ClassifierMixin, BaseEstimator):
    """Logistic regression that appends a line to ``probe/fits`` per fit, from any
    process, and raises Ctrl+C in the fit numbered by ``probe/stop`` (when it exists)."""

    def __init__(self, C=1.0, probe=""):
        self.C, self.probe = C, probe

    def fit(self, X, y):
        log, stop = Path(self.probe, "fits"), Path(self.probe, "stop")
        with log.open("a") as f:
            f.write("fit\n")
        if stop.exists() and len(log.read_text().splitlines()) == int(stop.read_text()):
            raise KeyboardInterrupt
        self.model_ = LogisticRegression(C=self.C, solver="liblinear").fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict(self, X):
        return self.model_.predict(X)


def test_ctrl_c_during_a_calibration_run_in_child_processes_keeps_its_finished_pulls(
        data, tmp_path):
    # with timeout= each fit runs in a forked child, whose Ctrl+C comes back to the parent
    X, y = data
    probe = tmp_path / "probe"
    probe.mkdir()

    def tuner(**kw):
        return small(estimator=ProbedClassifier(probe=str(probe)), timeout=60, max_pulls=10,
                     **kw)

    def n_fits():
        return len((probe / "fits").read_text().splitlines())

    ref = tuner().fit(X, y)
    n_ref = n_fits()
    assert n_ref == len(ref.pulls_["candidate"]) + 1  # and the refit
    (probe / "fits").unlink()
    (probe / "stop").write_text("7")
    path = tmp_path / "study.db"
    with pytest.raises(KeyboardInterrupt):
        tuner(storage=path).fit(X, y)
    assert [r.status for r in rows_of(path)] == ["done"] * 6 + ["pending"] * (N_CAL - 6)
    (probe / "stop").unlink()
    (probe / "fits").unlink()
    t = tuner(storage=path).fit(X, y)
    assert n_fits() == n_ref - 6 and t.n_replayed_ == 6
    assert_same_results(t, ref)


def test_ctrl_c_during_calibration_without_storage_raises_and_keeps_nothing(data, fits):
    X, y = data
    ref = small().fit(X, y)
    fits.update(n=0, interrupt_at=5)
    t = small()
    with pytest.raises(KeyboardInterrupt):
        t.fit(X, y)
    assert not hasattr(t, "pulls_") and not hasattr(t, "best_params_")
    # resume() has no policy to continue: it starts again, as the uninterrupted run
    fits["n"] = 0
    t.resume()
    assert fits["n"] == len(ref.pulls_["candidate"])
    assert_same_results(t, ref)


@pytest.mark.parametrize("change, what", [
    ({"n_candidates": 6}, "candidates"),
    ({"fidelities": [30, 90]}, "fidelities"),
    ({"algorithm": "iise"}, "algorithm"),
    ({"random_state": 1}, "random_state"),
    ({"delta": 0.1}, "delta"),
    ({"estimator": LogisticRegression(solver="liblinear", penalty="l1")}, "estimator"),
    ({"adaptive": True}, "waves"),
    ({"n_jobs": 2}, r"n_jobs \(batches of 1 pulls stored, 2 now\)"),  # best-first rounds
])
def test_incompatible_study_raises_naming_storage(data, tmp_path, change, what):
    X, y = data
    path = tmp_path / "study.db"
    small(storage=path, max_pulls=10).fit(X, y)
    n = len(rows_of(path))
    with pytest.raises(ValueError, match=rf"storage=.*{what}"):
        small(storage=path, max_pulls=10, **change).fit(X, y)
    assert len(rows_of(path)) == n  # nothing written


def test_a_study_with_a_fixed_list_resumes_with_it_under_adaptive_auto(data, tmp_path,
                                                                        fits):
    # a file written with a fixed list (adaptive=False, or before waves were stored)
    # resumes as it was written: adaptive="auto" keeps its list rather than refuse it
    X, y = data
    path = tmp_path / "study.db"
    first = small(storage=path, max_pulls=13).fit(X, y)
    fits["n"] = 0
    t = small(storage=path, adaptive="auto").fit(X, y)
    assert t.adaptive_ is False and t.candidates_ == first.candidates_
    assert t.n_replayed_ == len(rows_of(path)) - fits["n"] > 0


def test_storage_argument_and_foreign_files_are_rejected(data, tmp_path):
    X, y = data
    with pytest.raises(ValueError, match="storage"):
        small(storage=3).fit(X, y)
    with pytest.raises(ValueError, match="storage"):
        small(storage=tmp_path).fit(X, y)
    junk = tmp_path / "junk.db"
    junk.write_text("not a database")
    with pytest.raises(ValueError, match="storage"):
        small(storage=junk).fit(X, y)
    with pytest.raises(ValueError, match="storage"):  # other data, same settings
        path = tmp_path / "s.db"
        small(storage=path, max_pulls=10).fit(X, y)
        small(storage=path, max_pulls=10).fit(X[::-1], y[::-1])


def test_multimetric_study_resumes_with_every_metric(data, tmp_path, fits):
    X, y = data
    kw = dict(scoring=["accuracy", "f1"], refit="accuracy")
    ref = small(**kw).fit(X, y)
    path = tmp_path / "study.db"
    small(storage=path, max_pulls=13, **kw).fit(X, y)
    fits["n"] = 0
    t = small(storage=path, **kw).fit(X, y)
    for key in ("score_accuracy", "score_f1", "candidate", "split"):
        assert np.array_equal(t.pulls_[key], ref.pulls_[key]), key
    assert np.array_equal(t.cv_results_["mean_test_f1"], ref.cv_results_["mean_test_f1"])
    assert fits["n"] == len(ref.pulls_["candidate"]) - (N_CAL + 13)
    with StudyStore(path) as store:
        assert store.meta["objective"]["name"] == "accuracy"
    with pytest.raises(ValueError, match="storage=.*scoring"):
        small(storage=path, scoring=["accuracy", "precision"], refit="accuracy").fit(X, y)


def test_random_state_none_resumes_with_the_stored_seed(data, tmp_path, fits):
    X, y = data
    path = tmp_path / "study.db"
    a = small(storage=path, random_state=None).fit(X, y)
    fits["n"] = 0
    b = small(storage=path, random_state=None).fit(X, y)
    assert fits["n"] == 0 and a.best_params_ == b.best_params_
    assert a.cv_results_["params"] == b.cv_results_["params"]


def test_status_report_and_export_read_a_tuner_study(tmp_path):
    X, y = make_classification(600, 8, n_informative=5, random_state=0)
    path = tmp_path / "study.db"
    # two candidates far apart: the stopping rule ends the search after ~30 pulls (no batch
    # cut short), with measured costs and pooled sigma, whose stored updates status replays
    t = small(space={"C": [1e-5, 1.0]}, n_candidates="grid", max_pulls=None, bias="estimate",
              costs="measured", storage=path).fit(X, y)
    assert t.stopping_reason_ == "stopping-rule"
    runner = CliRunner()
    res = runner.invoke(main, ["status", str(path), "--json"])
    assert res.exit_code == 0, res.output
    s = json.loads(res.output)
    assert s["status"] == "finished" and s["study"]["algorithm"] == "iise-gamma"
    assert s["best"]["arm"] == t.best_index_ and s["best"]["config"] == t.best_params_
    assert s["alive"] == int(t.policy_.active.sum())
    assert [f["eliminated"] for f in s["fidelities"]] == [
        int(np.sum(t.policy_.eliminated_fidelity == m)) for m in range(len(t.fidelities_))]
    assert s["pulls"] == len(t.pulls_["candidate"]) and s["cost"] == pytest.approx(
        t.pulls_["cost"].sum())
    assert s["calibration"]["pulls"] == s["calibration"]["planned"] > 0
    assert "probability >= 0.95" in s["statement"] and "MFTuner" not in s["statement"]
    res = runner.invoke(main, ["status", str(path)])
    assert res.exit_code == 0 and "n_samples" in res.output and "finished" in res.output
    res = runner.invoke(main, ["report", str(path)])
    assert res.exit_code == 0 and "elimination timeline" in res.output
    out = tmp_path / "pulls.csv"
    res = runner.invoke(main, ["export", str(path), "--csv", str(out)])
    assert res.exit_code == 0, res.output
    with out.open() as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == len(t.pulls_["candidate"]) and "C" in table[0]
    assert [float(r["C"]) for r in table] == [t.cv_results_["params"][a]["C"]
                                              for a in t.pulls_["candidate"]]
    res = runner.invoke(main, ["export", str(path), "--csv", "-"])  # to standard output
    assert res.exit_code == 0 and list(csv.DictReader(res.stdout.splitlines())) == table
    assert "rows written to standard output" in res.stderr
    # the script runner refuses it cleanly (it resumes through MFTuner.fit)
    res = runner.invoke(main, ["resume", str(path)])
    assert res.exit_code == 1 and "to continue it, fit again with the same storage=" in res.output


def test_status_of_a_capped_tuner_study_says_where_it_stopped(data, tmp_path):
    X, y = data
    path = tmp_path / "study.db"
    # 12 pulls: two rounds of 5 candidates and a third cut short after 2 pulls (in
    # best-first batches of about a second of fits each: timing decides how many)
    t = small(storage=path, max_pulls=12).fit(X, y)
    res = CliRunner().invoke(main, ["status", str(path)])
    assert res.exit_code == 0, res.output
    assert "running (last run stopped: max-pulls)" in res.output
    # the statement the run made, bound included, whoever reads the study
    assert t.guarantee_.startswith("no certificate at epsilon=")
    assert "the search stopped early (max-pulls); it has shown that" in t.guarantee_
    assert t.guarantee_ in res.output
    s = json.loads(CliRunner().invoke(main, ["status", str(path), "--json"]).output)
    assert s["statement"] == t.guarantee_
    # the replay tells the cut round's two pulls, as the tuner did: same recommendation
    batches = {r.batch for r in rows_of(path) if r.kind == "policy"}
    assert len(s["timeline"]) == len(batches) >= 3 and s["best"]["arm"] == t.best_index_


def test_status_counts_the_calibration_in_the_best_so_far_and_the_arms(data, tmp_path):
    X, y = data
    path = tmp_path / "study.db"
    # one pull after the calibration: the answer rests on the calibration's evidence
    t = small(storage=path, max_pulls=1, adaptive=True).fit(X, y)
    s = json.loads(CliRunner().invoke(main, ["status", str(path), "--json"]).output)
    assert s["best"]["arm"] == t.best_index_
    assert s["best"]["score"] == pytest.approx(t.best_score_) and s["best"]["n"] >= 1
    p = t.pulls_
    assert [f["arms"] for f in s["fidelities"]] == [
        len(set(p["candidate"][p["fidelity"] == m])) for m in range(len(t.fidelities_))]


@pytest.mark.parametrize("start, length", [(8192, 4096), (4096, None)])
def test_a_damaged_study_file_is_named_not_a_traceback(data, tmp_path, start, length):
    X, y = data
    path = tmp_path / "study.db"
    small(storage=path, max_pulls=10).fit(X, y)
    length = length or path.stat().st_size - start
    with path.open("r+b") as fh:  # pages overwritten (the first, the header, is kept)
        fh.seek(start)
        fh.write(b"\xff" * length)
    outputs = []
    for args in (["status", str(path)], ["report", str(path)],
                 ["export", str(path), "--csv", str(tmp_path / "p.csv")]):
        res = CliRunner().invoke(main, args)
        assert res.exception is None or isinstance(res.exception, SystemExit), res.output
        assert res.exit_code in (0, 1) and (res.exit_code == 0 or str(path) in res.output)
        outputs.append(res.output)
    assert any("damaged and cannot be read" in o or "no study there" in o for o in outputs)


def test_a_gp_study_resumes_exactly_and_follows_the_points_it_recorded(data, tmp_path, fits,
                                                                       monkeypatch):
    # MF-GP-UCB proposes a configuration with every query; the study records each
    # proposal (unit-cube point and fidelity) and a resume takes the recorded one
    from mftune.engine.summary import study_summary
    from mftune.policies.mf_gp_ucb import MFGPUCB

    X, y = data
    kw = {"algorithm": "mf-gp-ucb", "max_pulls": 45,
          "space": {"C": Real(1e-4, 1e2, log=True), "tol": Real(1e-5, 1e-2, log=True)}}
    ref = small(**kw).fit(X, y)
    n_ref = len(ref.pulls_["candidate"])
    assert len(ref.cv_results_["params"]) > 3  # the GP proposed beyond the calibration's 3
    path = tmp_path / "gp.db"
    fits.update(n=0, interrupt_at=N_CAL + 20)
    t = small(storage=path, **kw).fit(X, y)
    assert t.stopping_reason_ == "interrupted"
    finished = sum(r.finished for r in rows_of(path))
    fits["n"] = 0
    t2 = small(storage=path, **kw).fit(X, y)
    assert_same_pulls(t2, ref)
    assert t2.cv_results_["params"] == ref.cv_results_["params"]
    assert t2.best_params_ == ref.best_params_
    assert fits["n"] == n_ref - finished and t2.n_replayed_ == finished
    with StudyStore(path) as store:
        assert store.configs() == ref.cv_results_["params"]
        assert store.configs(initial=True) == ref.cv_results_["params"][:3]
        assert sum(d["n_new"] for d in store.proposals().values()) == len(store.configs()) - 3
    summary = study_summary(path)
    assert summary["best"]["config"] == ref.best_params_
    assert summary["best"]["score"] == pytest.approx(ref.best_score_)
    assert summary["statement"] == t2.guarantee_ and "no stopping rule" in t2.guarantee_
    # a replay whose GP proposes (slightly) other points, as another machine's floating
    # point may: the points the study recorded are the ones evaluated and kept
    original = MFGPUCB._propose

    def moved(self, n):
        points, fids = original(self, n)
        return (None if points is None else points * (1 - 1e-6)), fids

    monkeypatch.setattr(MFGPUCB, "_propose", moved)
    fits["n"] = 0
    t3 = small(storage=path, **kw).fit(X, y)
    assert fits["n"] == 0 and t3.cv_results_["params"] == ref.cv_results_["params"]
    assert t3.best_params_ == ref.best_params_


def test_a_gp_study_answers_with_the_calibration_until_a_query_is_told(data, tmp_path, fits):
    # the calibration is evidence the GP is told first: stopped in its first query, the
    # tuner and the study file both recommend the calibrated candidate with the best mean
    # at the highest calibrated fidelity (not candidate 0)
    from mftune.engine.summary import study_summary

    X, y = data
    path = tmp_path / "gp.db"
    fits.update(n=0, interrupt_at=N_CAL + 1)
    t = small(storage=path, algorithm="mf-gp-ucb",
              space={"C": Real(1e-4, 1e2, log=True), "tol": Real(1e-5, 1e-2, log=True)}
              ).fit(X, y)
    assert t.stopping_reason_ == "interrupted" and t.n_pulls_ == 0
    cal = [r for r in rows_of(path) if r.kind == "calibration"]
    top = max(r.fidelity for r in cal)
    means = {a: np.mean([r.reward for r in cal if r.arm == a and r.fidelity == top])
             for a in sorted({r.arm for r in cal})}
    best = max(means, key=means.get)
    assert means[best] > min(means.values())  # a real choice among the three
    summary = study_summary(path)
    assert t.best_index_ == summary["best"]["arm"] == best
    assert summary["best"]["score"] == pytest.approx(means[best]) == t.best_score_
    assert summary["best"]["fidelity"] == top and summary["best"]["n"] == 2


def test_an_integrity_error_is_named_for_what_it_is(data, tmp_path, monkeypatch):
    # a UNIQUE clash on a batch is another process writing the study; any other refused
    # row (here: pulls of arms the file never received) is said as it is, not as a race
    from mftune.engine.search import Search

    X, y = data
    gp = {"algorithm": "mf-gp-ucb", "max_pulls": 20}
    monkeypatch.setattr(Search, "_proposed", lambda self, query, points, fids: (points, fids))
    with pytest.raises(ValueError, match=r"storage=.*refused a row \(FOREIGN KEY"):
        small(storage=tmp_path / "a.db", **gp).fit(X, y)
    monkeypatch.undo()

    def clash(*args, **kwargs):
        raise sqlite3.IntegrityError("UNIQUE constraint failed: pulls.batch, pulls.pos")

    monkeypatch.setattr(StudyStore, "insert_batch", clash)
    with pytest.raises(ValueError, match="storage=.*another process is writing this study"):
        small(storage=tmp_path / "b.db").fit(X, y)


def test_a_refused_epsilon_leaves_no_study_file_and_the_corrected_fit_runs(data, tmp_path):
    # the refusal comes after the calibration wrote the file: the file this fit created
    # goes with it, so the advice of the message (a smaller epsilon) can be followed
    X, y = data
    path = tmp_path / "eps.db"
    with pytest.raises(ValueError, match=r"epsilon=100 is larger .* new study file .* removed"):
        small(storage=path, epsilon=100.0).fit(X, y)
    assert not any(tmp_path.iterdir())
    assert small(storage=path, epsilon=0.01).fit(X, y).n_pulls_ > 0 and path.exists()


def test_a_refused_epsilon_without_storage_names_no_study_file(data):
    X, y = data
    with pytest.raises(ValueError, match=r"^epsilon=100 is larger") as info:
        small(epsilon=100.0).fit(X, y)
    assert "storage" not in str(info.value)
