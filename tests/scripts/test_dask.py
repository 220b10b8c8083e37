"""A real dask cluster: two worker processes on loopback run MFTuner's and a CLI study's pulls.

Both runs are checked against a local run with the same seed: the policies
are deterministic here (fixed costs; seeded scripts), so the pulls, their
scores and the answer must be identical, and every pull must have run on one
of the cluster's worker processes.
"""

from __future__ import annotations

import collections
import os
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

distributed = pytest.importorskip("distributed")
joblib = pytest.importorskip("joblib")

from sklearn.datasets import make_classification  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from mftune import MFTuner, Real  # noqa: E402
from mftune.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  host="127.0.0.1", dashboard_address=None) as cl, \
            distributed.Client(cl) as client:
        yield cl.scheduler_address, set(client.run(os.getpid).values())


def tuner(n_jobs):
    return MFTuner(LogisticRegression(), {"C": Real(1e-3, 1e2, log=True)}, n_candidates=4,
                   cv=3, costs="levels", max_pulls=30, n_jobs=n_jobs, random_state=0)


def test_tuner_runs_its_pulls_on_the_dask_workers(cluster):
    _, pids = cluster
    X, y = make_classification(600, 8, random_state=0)
    local = tuner(1).fit(X, y)
    with joblib.parallel_config(backend="dask"):
        remote = tuner(-1).fit(X, y)
    ran_on = collections.Counter(int(w.rsplit(":", 1)[1]) for w in remote.pulls_["worker"])
    assert set(ran_on) == pids  # every pull on a dask worker, and both workers used
    assert {int(w.rsplit(":", 1)[1]) for w in local.pulls_["worker"]} == {os.getpid()}
    for key in ("candidate", "fidelity", "split", "phase", "score"):
        np.testing.assert_array_equal(np.asarray(remote.pulls_[key]),
                                      np.asarray(local.pulls_[key]))
    assert remote.best_index_ == local.best_index_
    assert remote.best_params_ == local.best_params_
    assert remote.stopping_reason_ == local.stopping_reason_


def rows_of(db) -> list[tuple]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT batch, pos, kind, arm, fidelity, status, score FROM pulls "
                            "ORDER BY batch, pos").fetchall()


# The example script ($0), behind a shell that records which process started the run: the
# parent of the reaper ($PPID) that leads the run's process group.
TRACED = (f'echo "$MFTUNE_PULL_ID $(cut -d" " -f4 /proc/$PPID/stat)" >> "$0.trace"; '
          f'exec "{sys.executable}" "$0" "$@"')


def tune(tmp_path, study, *extra):
    script = tmp_path / f"{study}.train.py"  # one trace file per study: script + ".trace"
    script.write_text((EXAMPLES / "train_synthetic.py").read_text())
    res = CliRunner().invoke(main, [
        "tune", str(EXAMPLES / "space_python.toml"), "--n-candidates", "4", "--epsilon",
        "0.05", "--study", f"{study}.db", "--quiet", *extra, "--", "sh", "-c", TRACED,
        str(script)])
    assert res.exit_code == 0, res.output
    trace = [line.split() for line in (tmp_path / f"{study}.train.py.trace").read_text()
             .splitlines()]
    return rows_of(tmp_path / f"{study}.db"), trace


def test_cli_study_runs_on_the_dask_workers(cluster, tmp_path, monkeypatch):
    address, pids = cluster
    monkeypatch.chdir(tmp_path)
    # the runs import mftune (for mftune.report) wherever they start
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH",
                                                                                   "")]))
    local_rows, local_trace = tune(tmp_path, "local", "--workers", "2")
    rows, trace = tune(tmp_path, "dask", "--scheduler", address)
    assert rows == local_rows  # same pulls, same scores, same decisions
    assert all(r[5] == "done" for r in rows)
    ids = [pull_id for pull_id, _ in trace]
    assert len(ids) == len(set(ids)) == len(rows)  # every pull ran exactly once
    ran_on = collections.Counter(int(ppid) for _, ppid in trace)
    assert set(ran_on) == pids  # started by the dask worker processes, both of them
    assert not {int(ppid) for _, ppid in local_trace} & pids


def test_unreachable_scheduler_is_a_clear_error():
    from mftune.scripts.cluster import connect

    with pytest.raises(ValueError, match="scheduler: cannot connect to 'tcp://127.0.0.1:9'"):
        connect("tcp://127.0.0.1:9", timeout=0.5)
