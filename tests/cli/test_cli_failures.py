"""A failing script stops a study at once, and the terminal says why (one test per cause)."""

from __future__ import annotations

import json
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
