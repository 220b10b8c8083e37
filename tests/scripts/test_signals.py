"""Signals: SIGTERM ends a study like Ctrl+C; SIGKILL leaves no script running; resume is safe."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="process-death handling is Linux-specific")

# A run: holds a lock on its pull while it runs (a second holder at once is logged as an
# overlap), records its pid, then sleeps until the file "go" exists and reports a score.
SLOW = """
import fcntl, os, sys, time
pull = os.environ["MFTUNE_PULL_ID"]
lock = open(f"lock-{pull}", "w")
try:
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    open("overlaps.log", "a").write(pull + "\\n")
open(f"pid-{os.getpid()}", "w").write(pull)
while not os.path.exists("go"):
    time.sleep(0.05)
x = float(os.environ["MFTUNE_PARAMS"].split(":")[1].strip(" }"))
print(f"mftune-score: {1 - (x - 0.3) ** 2}")
"""

SPACE = """
[parameters]
x = { type = "real", low = 0.0, high = 1.0 }
[fidelity]
name = "n"
values = [1, 2]
pass = "env"
xi = [0.05, 0]
[objective]
sigma = 0.01
[study]
path = "s.db"
n_candidates = 3
epsilon = 0.5
seed = 0
workers = 3
"""


@pytest.fixture
def study_dir(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW)
    # the shell runs python as its child (no exec): python is mftune's grandchild
    (tmp_path / "run.sh").write_text(f'echo $$ > "sh-$$"\n{sys.executable} slow.py\n'
                                     "echo finished\n")
    (tmp_path / "space.toml").write_text(SPACE)
    return tmp_path


def mftune(folder, *args) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "mftune", *map(str, args)], cwd=folder,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def wait_for(pred, what: str, limit: float = 60.0):
    deadline = time.monotonic() + limit
    while not pred():
        assert time.monotonic() < deadline, f"waited {limit} s for {what}"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def pids(folder, prefix) -> list[int]:
    return [int(p.name.split("-")[1]) for p in folder.glob(f"{prefix}-*")]


def rows(folder):
    with sqlite3.connect(folder / "s.db") as conn:
        out = conn.execute("SELECT id, status, attempts FROM pulls ORDER BY id").fetchall()
    conn.close()
    return out


def start_tune(folder) -> subprocess.Popen:
    proc = mftune(folder, "tune", "space.toml", "--quiet", "--", "sh", "run.sh")
    wait_for(lambda: len(pids(folder, "pid")) == 3, "the three first runs to start")
    return proc


def resume_to_the_end(folder):
    for p in folder.glob("pid-*"):
        p.unlink()
    (folder / "go").write_text("")
    res = mftune(folder, "resume", "s.db", "--quiet")
    out, err = res.communicate(timeout=120)
    assert res.returncode == 0, out + err
    return out, err


def test_sigterm_ends_the_runs_and_puts_their_pulls_back(study_dir):
    proc = start_tune(study_dir)
    scripts = pids(study_dir, "pid") + pids(study_dir, "sh")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err  # like Ctrl+C
    assert "interrupted" in out and "Traceback" not in err
    assert not any(alive(p) for p in scripts)
    # interrupted, not finished: pending again, and resume runs them (attempt 2)
    assert [(s, a) for _, s, a in rows(study_dir)] == [("pending", 1)] * 3
    out, err = resume_to_the_end(study_dir)
    assert "command: sh run.sh" in err and f"working directory: {study_dir}" in err
    assert err.index("command:") < err.index("working directory:")
    first = rows(study_dir)[:3]
    assert [(s, a) for _, s, a in first] == [("done", 2)] * 3
    assert not (study_dir / "overlaps.log").exists()


def test_sigkill_leaves_no_script_and_resume_never_runs_a_pull_twice(study_dir):
    proc = start_tune(study_dir)
    shells, grandchildren = pids(study_dir, "sh"), pids(study_dir, "pid")
    proc.kill()
    proc.wait()
    # the shells and the python runs they started (mftune's grandchildren) die with it
    wait_for(lambda: not any(alive(p) for p in shells + grandchildren),
             "the scripts and their children to die with mftune", 10)
    assert [s for _, s, _ in rows(study_dir)] == ["running"] * 3
    resume_to_the_end(study_dir)
    assert not (study_dir / "overlaps.log").exists()
    assert [(s, a) for _, s, a in rows(study_dir)[:3]] == [("done", 2)] * 3


def test_worker_prints_the_command_before_running(study_dir):
    (study_dir / "go").write_text("")
    proc = mftune(study_dir, "tune", "space.toml", "--quiet", "--max-pulls", "1", "--",
                  "sh", "run.sh")
    proc.communicate(timeout=120)
    worker = mftune(study_dir, "worker", "s.db", "--json", "--max-pulls", "2")
    out, err = worker.communicate(timeout=120)
    first = out.splitlines()[0]
    assert '"type": "command"' in first and '"sh", "run.sh"' in first
    assert str(study_dir) in first
