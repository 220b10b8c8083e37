"""A failing script stops a study at once, and the terminal says why (one test per cause)."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mftune.cli import main

SPACE = """
[parameters]
x = { type = "real", low = 0.0, high = 1.0 }
[fidelity]
name = "n"
values = [1, 2]
[study]
path = "s.db"
n_candidates = 6
timeout = 1
"""

#: (a program that is not found is refused before the study is written: test_cli_tune.py)
CASES = {
    "missing file": ([sys.executable, "no_such_script.py"], "No such file or directory"),
    "exit code": ([sys.executable, "-c", "import sys; print('boom', file=sys.stderr); "
                   "sys.exit(3)"], "exit code 3"),
    "unparseable": ([sys.executable, "-c", "print('accuracy was fine')"], "no score"),
    "not finite": ([sys.executable, "-c", "print('mftune-score: nan')"], "not finite"),
    "timeout": ([sys.executable, "-c", "import time; time.sleep(30)"], "timed out after 1 s"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_failing_script_stops_the_study_at_once_with_its_cause(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("space.toml").write_text(SPACE)
    command, cause = CASES[case]
    res = CliRunner().invoke(main, ["tune", "space.toml", "--", *command],
                             catch_exceptions=False)
    assert res.exit_code == 1, res.output
    assert "all-failed" in res.output and cause in res.output
    # at once: the first runs of two candidates (one candidate's 2 repeats at 2 fidelities,
    # then the next one's first), not the whole calibration (4 candidates x 2 x 2)
    status = CliRunner().invoke(main, ["status", "s.db", "--json"])
    s = json.loads(status.output)
    assert 2 <= s["failed"] <= 5 and cause in status.output


# -- a study given σ and ξ (no calibration) whose script is fixed after failing -----------

KNOWN = """
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
n_candidates = 4
"""

#: Scores x - shift / n, shift read from data.txt (deterministic: exact replay is checked).
TRAIN = """import json, os, pathlib, sys
runs = pathlib.Path("runs.txt")
n = int(runs.read_text()) if runs.exists() else 0
runs.write_text(str(n + 1))
if n >= int(os.environ.get("BREAK_AFTER", 10**6)) and not pathlib.Path("fixed").exists():
    sys.exit("lost the data")
shift = float(open("data.txt").read())
x = json.loads(os.environ["MFTUNE_PARAMS"])["x"]
print("mftune-score:", x - shift / int(os.environ["MFTUNE_FIDELITY"]))
"""


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def pulls(path):
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT batch, pos, kind, arm, fidelity, status, score, attempts "
                            "FROM pulls ORDER BY batch, pos").fetchall()
    conn.close()
    return rows


@pytest.fixture
def known_study(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("space.toml").write_text(KNOWN)
    Path("train.py").write_text(TRAIN)
    return ["--", sys.executable, "train.py"]


def test_a_study_without_calibration_whose_first_runs_failed_goes_on_once_fixed(known_study):
    res = invoke("tune", "space.toml", "--quiet", *known_study)  # data.txt is missing
    assert res.exit_code == 1 and "all-failed" in res.output, res.output
    assert "No such file or directory: 'data.txt'" in res.output
    failed = pulls("s.db")
    assert failed and {r[2] for r in failed} == {"policy"}
    assert {r[5] for r in failed} == {"failed"}
    Path("data.txt").write_text("0.04")
    res = invoke("resume", "s.db", "--quiet")
    assert res.exit_code == 0, res.output
    assert "finished (stopping-rule)" in res.output
    rows = pulls("s.db")
    assert all(r[5] == "done" for r in rows)
    assert [r[7] for r in rows[:len(failed)]] == [2] * len(failed)  # run again, once
    # exactly the study that runs with the file there from the start
    res = invoke("tune", "space.toml", "--quiet", "--study", "fresh.db", *known_study)
    assert res.exit_code == 0, res.output
    assert [r[:7] for r in pulls("fresh.db")] == [r[:7] for r in rows]
    res = invoke("resume", "s.db", "--quiet")  # finished: nothing runs again
    assert res.exit_code == 0 and pulls("s.db") == rows


def test_failed_batches_decided_from_stay_and_the_last_one_runs_again(known_study,
                                                                        monkeypatch):
    Path("data.txt").write_text("0.04")
    monkeypatch.setenv("BREAK_AFTER", "4")  # the data goes away after 4 runs
    res = invoke("tune", "space.toml", "--quiet", *known_study)
    assert res.exit_code == 1 and "last 3 batch(es) failed" in res.output, res.output
    before = pulls("s.db")
    last = before[-1][0]
    Path("fixed").touch()
    res = invoke("resume", "s.db", "--quiet")
    assert res.exit_code == 0, res.output
    after = pulls("s.db")
    # the batches asked after a failed one replay it as it was; the batch the study
    # stopped on (nothing was decided from it) ran again
    assert [r for r in after if r[0] < last] == [r for r in before if r[0] < last]
    assert {r[5] for r in before if r[0] < last} == {"done", "failed"}
    assert [(r[5], r[7]) for r in after if r[0] == last] == [("done", 2)] * sum(
        r[0] == last for r in before)
