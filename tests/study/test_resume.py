"""Exact resume after SIGKILL, and two worker processes sharing one study file."""

from __future__ import annotations

import collections
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mftune.cli import main
from mftune.study.store import StudyStore

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "train_synthetic.sh"
SPACE = """
[parameters]
x = { type = "real", low = -1.0, high = 1.0 }
y = { type = "real", low = -1.0, high = 1.0 }
[fidelity]
name = "epochs"
min = 1
max = 27
factor = 3
[objective]
name = "loss"
direction = "minimize"
[calibration]
arms = 3
[study]
path = "study.db"
n_candidates = 8
seed = 5
epsilon = 0.05
"""


def cli_env(trace: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), MFTUNE_TRACE=str(trace))
    env.pop("COVERAGE_PROCESS_START", None)
    return env


def rows_of(db) -> list[tuple]:
    """The study's pulls in order as (kind, arm, fidelity, status, score).

    Not their batch numbers: a round is asked in chunks of about a second of
    measured pulls, so where batches split depends on the machine's speed;
    the pulls, their order and their scores do not.
    """
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT kind, arm, fidelity, status, score FROM pulls "
                            "ORDER BY batch, pos").fetchall()


def waves_of(db) -> tuple[list, list]:
    """How each wave ended and the candidates, as the study recorded them."""
    with StudyStore(db) as store:
        return list(store.waves().items()), store.configs()


def finished_rows(db) -> dict[int, tuple]:
    with closing(sqlite3.connect(db)) as conn:
        return {r[0]: r[1:] for r in conn.execute(
            "SELECT id, status, score, attempts, ended, worker FROM pulls "
            "WHERE status IN ('done', 'failed', 'timed-out')")}


def n_running(db) -> int:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT COUNT(*) FROM pulls WHERE status = 'running'").fetchone()[0]


def trace_counts(trace: Path) -> collections.Counter:
    if not trace.exists():
        return collections.Counter()
    return collections.Counter(int(line.split()[0]) for line in trace.read_text().splitlines())


def slow_script(tmp_path: Path) -> Path:
    """The example script behind a 50 ms sleep: same scores, a pull in flight most of the time.

    The timing-sensitive tests (a kill must catch a pull running, a second
    worker must join before the study is over) use it, so a loaded machine
    does not decide their outcome.
    """
    slow = tmp_path / "slow.sh"
    slow.write_text(f'sleep 0.05\nexec sh "{SCRIPT}" "$@"\n')
    return slow


def recommendation(db) -> dict:
    import json

    res = CliRunner().invoke(main, ["status", str(db), "--json"])
    assert res.exit_code == 0, res.output
    s = json.loads(res.output)
    return {"status": s["status"], "arm": s["best"]["arm"], "score": s["best"]["score"]}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted run (in-process) with the same seed."""
    d = tmp_path_factory.mktemp("ref")
    (d / "space.toml").write_text(SPACE)
    old = os.getcwd()
    os.chdir(d)
    try:
        res = CliRunner().invoke(main, ["tune", "space.toml", "--quiet", "--", "sh",
                                        str(SCRIPT)], catch_exceptions=False)
    finally:
        os.chdir(old)
    assert res.exit_code == 0, res.output
    waves = waves_of(d / "study.db")
    assert sum(w["n_new"] for _, w in waves[0]) > 0  # candidates proposed during the run
    return {"rows": rows_of(d / "study.db"), "best": recommendation(d / "study.db"),
            "waves": waves}


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume_is_exact(tmp_path, reference):
    (tmp_path / "space.toml").write_text(SPACE)
    trace = tmp_path / "trace.txt"
    db = tmp_path / "study.db"
    n_total = len(reference["rows"])
    rng = np.random.default_rng(2024)  # the kill moments are seeded
    # kill once a random number of pulls has finished (+ a random delay), 4 times
    thresholds = np.sort(rng.choice(np.arange(5, n_total - 5), size=4, replace=False))
    delays = rng.uniform(0.0, 0.005, size=4)
    snapshots, killed_running = [], []
    for k, (threshold, delay) in enumerate(zip(thresholds, delays, strict=True)):
        cmd = (["tune", "space.toml"] if k == 0 else ["resume", "study.db"])
        cmd = [sys.executable, "-m", "mftune", *cmd, "--quiet"]
        if k == 0:
            cmd += ["--", "sh", str(slow_script(tmp_path))]
        proc = subprocess.Popen(cmd, cwd=tmp_path, env=cli_env(trace),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            # past the threshold, and (mostly) while a run is in flight
            if (StudyStore.exists(db) and len(finished_rows(db)) >= threshold
                    and n_running(db)):
                break
            time.sleep(0.005)
        time.sleep(delay)
        assert proc.poll() is None, "the run ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        snapshots.append(finished_rows(db))
        killed_running.append(n_running(db))
    assert [len(s) for s in snapshots] == sorted(len(s) for s in snapshots)
    res = subprocess.run([sys.executable, "-m", "mftune", "resume", "study.db", "--quiet"],
                         cwd=tmp_path, env=cli_env(trace), capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr + res.stdout
    final = finished_rows(db)
    for snap in snapshots:  # nothing finished was lost or run again (same score, attempt, end)
        for pid, row in snap.items():
            assert final[pid] == row
    runs = trace_counts(trace)
    for pid, (_, _, attempts, _, _) in final.items():
        assert runs[pid] <= attempts  # the script ran at most once per claim
        if attempts == 1:
            assert runs[pid] == 1
    rerun = sum(a - 1 for (_, _, a, _, _) in final.values())
    assert rerun == sum(killed_running)  # exactly the pulls caught running were run again
    assert rerun >= 1  # the kills did catch runs in flight (re-issue path exercised)
    print(f"kills after {thresholds.tolist()} finished pulls; running at each kill: "
          f"{killed_running}; pulls run again: {rerun} of {len(final)}")
    # the study is the uninterrupted one: same pulls, same scores, same recommendation
    assert rows_of(db) == reference["rows"]
    assert recommendation(db) == reference["best"] and waves_of(db) == reference["waves"]


def test_two_workers_share_one_study(tmp_path, reference):
    (tmp_path / "space.toml").write_text(SPACE)
    trace = tmp_path / "trace.txt"
    env = cli_env(trace)
    # the worker (which has to start Python and import mftune first) joins before
    # the first process has run the whole study, even on a loaded machine
    slow = slow_script(tmp_path)
    first = subprocess.Popen([sys.executable, "-m", "mftune", "tune", "space.toml", "--quiet",
                              "--", "sh", str(slow)], cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    second = subprocess.Popen([sys.executable, "-m", "mftune", "worker", "study.db", "--quiet"],
                              cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    out1, err1 = first.communicate(timeout=300)
    out2, err2 = second.communicate(timeout=300)
    assert first.returncode == 0, err1 + out1
    assert second.returncode == 0, err2 + out2
    db = tmp_path / "study.db"
    final = finished_rows(db)
    assert len(final) == len(rows_of(db))  # nothing pending or running is left
    assert all(attempts == 1 for (_, _, attempts, _, _) in final.values())
    runs = trace_counts(trace)
    assert set(runs) == set(final) and set(runs.values()) == {1}  # each pull ran once
    workers = collections.Counter(w for (*_, w) in final.values())
    assert len(workers) == 2, workers  # both processes did part of the work
    # sharing the work does not change the decisions (nor the waves' new candidates)
    assert rows_of(db) == reference["rows"]
    assert recommendation(db) == reference["best"] and waves_of(db) == reference["waves"]
