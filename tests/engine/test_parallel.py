"""Batches through joblib: ``n_jobs`` and ``joblib.parallel_config`` reach every evaluator."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import joblib
import numpy as np
import pytest
from joblib._parallel_backends import ThreadingBackend
from sklearn.datasets import make_classification
from sklearn.linear_model import RidgeClassifier

from mftune import MFTuner, Real
from mftune.engine.driver import parallel_map, runs_in_process
from mftune.policies.base import Pulls
from mftune.scripts.runner import ScriptEvaluator

ROOT = Path(__file__).resolve().parents[2]


class RemoteLike(ThreadingBackend):
    """Stands for a cluster backend (dask, ray): not one of joblib's local backends."""


joblib.register_parallel_backend("remote-like", RemoteLike)


def _thread_name(_):
    return threading.current_thread().name


def test_runs_in_process_follows_joblib_semantics():
    assert runs_in_process(None, 5) and runs_in_process(1, 5) and runs_in_process(4, 1)
    assert not runs_in_process(2, 5)
    with joblib.parallel_config(n_jobs=2):
        assert not runs_in_process(None, 5)  # n_jobs=None defers to parallel_config
        assert runs_in_process(1, 5)
    with joblib.parallel_config(backend="remote-like"):
        # a cluster backend gets every pull, even a single one with n_jobs=1
        assert not runs_in_process(1, 1)


def test_parallel_map_keeps_order_and_uses_the_backend():
    here = threading.current_thread().name
    assert parallel_map(_thread_name, [(i,) for i in range(3)]) == [here] * 3
    with joblib.parallel_config(backend="threading", n_jobs=2):
        names = parallel_map(_thread_name, [(i,) for i in range(6)])
    assert here not in names
    assert parallel_map(pow, [(2, k) for k in range(10)], n_jobs=2, prefer="threads") == \
        [2**k for k in range(10)]


def test_lazy_parallel_map_yields_results_in_order_as_they_come():
    seen = []

    def record(k):
        seen.append(k)
        return 2**k

    lazy = parallel_map(record, [(k,) for k in range(4)], lazy=True)
    assert not isinstance(lazy, list) and seen == []  # in this process: nothing run yet
    assert next(lazy) == 1 and seen == [0]
    assert list(lazy) == [2, 4, 8]
    with joblib.parallel_config(backend="threading", n_jobs=2):
        out = parallel_map(pow, [(2, k) for k in range(6)], lazy=True)
        assert not isinstance(out, list) and list(out) == [2**k for k in range(6)]
    with joblib.parallel_config(backend="multiprocessing", n_jobs=2):
        # a backend without joblib's generator output: a list, in order
        assert parallel_map(pow, [(2, k) for k in range(3)], lazy=True) == [1, 2, 4]


def test_tuner_n_jobs_none_defers_to_parallel_config():
    X, y = make_classification(300, 6, random_state=0)

    def fit(n_jobs):
        return MFTuner(RidgeClassifier(), {"alpha": Real(1e-2, 1e2, log=True)}, n_candidates=4,
                       cv=3, costs="levels", max_pulls=20, n_jobs=n_jobs,
                       random_state=0).fit(X, y)

    me = f":{os.getpid()}"
    seq = fit(None)
    assert all(w.endswith(me) for w in seq.pulls_["worker"])
    with joblib.parallel_config(backend="loky", n_jobs=2):
        par = fit(None)
    # the calibration's batch ran in loky workers (a batch of one pull runs here)
    batch = np.asarray(par.pulls_["phase"]) == "calibration"
    assert batch.sum() > 1
    assert not any(w.endswith(me) for w in np.asarray(par.pulls_["worker"])[batch])
    np.testing.assert_array_equal(par.pulls_["score"], seq.pulls_["score"])
    assert par.best_index_ == seq.best_index_


SCRIPT = """
import os, sys
lr = float(sys.argv[1].split("=")[1])
if lr > 0.5:
    sys.exit(3)
print("mftune-score:", 1.0 - lr)
"""


def test_script_evaluator_batches_in_threads_with_rewards_in_batch_order(tmp_path):
    (tmp_path / "s.py").write_text(SCRIPT)
    configs = [{"lr": 0.1}, {"lr": 0.9}, {"lr": 0.3}, {"lr": 0.7}]
    ev = ScriptEvaluator([sys.executable, str(tmp_path / "s.py")], configs, "epochs", [1],
                         tmp_path / "trials", fidelity_pass="env", n_jobs=4)
    out = ev.evaluate(Pulls([1, 0, 3, 2], [0, 0, 0, 0]))
    assert out.status == ["failed", "done", "failed", "done"]
    # the one failed-pull rule: a failed run is told the lowest reward seen, this batch
    # included (arm 2 scored 0.7, arm 0 0.9)
    np.testing.assert_allclose(out.rewards, [0.7, 0.9, 0.7, 0.7])
    assert ev.next_repeat.tolist() == [[1, 1, 1, 1]]


def test_report_imports_only_the_standard_library():
    code = ("import sys; from mftune import report; "
            "print(sorted(m for m in ('numpy', 'scipy', 'sklearn', 'joblib') "
            "if m in sys.modules))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[]"  # each training run pays no scientific-stack import


def test_study_fixes_the_batch_size_of_batch_rule_policies(tmp_path):
    from mftune.policies import MultiFidelityLUCB
    from mftune.policies import registry as algorithms
    from mftune.policies.registry import policy_from_settings as make_policy
    from mftune.scripts.spacefile import load_spacefile
    from mftune.scripts.study import create_study

    spec = load_spacefile(ROOT / "examples" / "space_python.toml")  # workers = 2
    store = create_study(spec, ["true"], tmp_path / "s.db")
    settings = store.meta["settings"]
    store.close()
    assert settings["batch_size"] == 2
    # the rest of the settings come from the calibration; any values do here
    settings = {**settings, "sigma": 0.1, "delta": 0.05, "costs": [1.0, 3.0, 9.0],
                "xi": [0.5, 0.15, 0.0]}
    algorithms.register("lucb-c-test", lambda c: MultiFidelityLUCB(
        c.n_arms, c.costs, np.r_[c.xi[:-1], 0.0], procedure="C", batch_size=c.batch_size),
        bias="xi", description="test only")
    try:
        pol = make_policy("lucb-c-test", 8, settings, random_state=0)
    finally:
        del algorithms.REGISTRY["lucb-c-test"]
    assert pol.batch_size == 2 and len(pol.ask()) == 2
    assert make_policy("iise", 8, settings).ask().arms.size == 8  # a round: all arms


def test_speedup_table_sums_seeds_and_rejects_bad_jobs():
    from click.testing import CliRunner

    from mftune.benchmarks.parallel_speedup import SpeedupRow, format_rows
    from mftune.cli import main

    rows = [SpeedupRow(1, 0, 100, 10.0, 9.8, "max-pulls", 3),
            SpeedupRow(2, 0, 100, 5.5, 10.4, "max-pulls", 3),
            SpeedupRow(2, 1, 50, 3.0, 5.6, "stopping-rule", 1),
            SpeedupRow(1, 1, 50, 5.0, 4.9, "stopping-rule", 1)]
    info = {"data": "d", "rows": 2000, "seeds": [0, 1], "n_candidates": 64, "cpu_count": 2,
            "load_before": (0.1, 0.2, 0.3), "load_after": (1.0, 0.5, 0.4),
            "loky_start": {2: 1.5}}
    text = format_rows(rows, info)
    # 150 pulls in 15 s vs 8.5 s: 10.00 vs 17.65 pulls/s; per seed 1.82 and 1.67
    assert "10.00" in text and "17.65" in text and "1.76x" in text
    assert "1.67" in text and "1.82" in text and "load average before 0.10" in text
    res = CliRunner().invoke(main, ["bench", "parallel", "--jobs", "1,x"])
    assert res.exit_code == 2 and "--jobs" in res.output


def test_tuner_batch_size_follows_n_jobs_for_batch_rule_algorithms(tmp_path):
    from sklearn.linear_model import LogisticRegression

    X, y = make_classification(400, 6, random_state=0)

    def tuner(algorithm, n_jobs, **kw):
        return MFTuner(LogisticRegression(solver="liblinear"), {"C": Real(1e-4, 1e2, log=True)},
                       algorithm=algorithm, n_candidates=6, cv=3, fidelities=[100, 266],
                       costs="levels", max_pulls=12, n_jobs=n_jobs, random_state=0, **kw)

    with joblib.parallel_config(backend="threading"):  # n_jobs without process start-up
        lucb = tuner("lucb-c", 3).fit(X, y)
        gp = tuner("mf-gp-ucb", 4).fit(X, y)
        iise = tuner("iise", 3).fit(X, y)
    assert lucb.policy_.batch_size == 3
    assert gp.policy_.inner.batch_size == 2  # one query = 3 CV pulls: 2 queries fill 4 jobs
    assert iise.policy_.batch_size == 3  # best-first rounds: n_jobs pulls at a time
    # with storage, the batch size is part of what must match to resume
    path = tmp_path / "lucb.db"
    tuner("lucb-c", 1, storage=path).fit(X, y)
    with pytest.raises(ValueError, match=r"storage=.*batch_size"):
        tuner("lucb-c", 2, storage=path).fit(X, y)
    tuner("iise", 1, storage=tmp_path / "iise.db").fit(X, y)
    with pytest.raises(ValueError, match=r"storage=.*batch_size"):
        tuner("iise", 2, storage=tmp_path / "iise.db").fit(X, y)
    whole = {"algorithm_params": {"best_first": False}}  # whole rounds: any n_jobs resumes
    tuner("iise", 1, storage=tmp_path / "round.db", **whole).fit(X, y)
    tuner("iise", 2, storage=tmp_path / "round.db", **whole).fit(X, y)
