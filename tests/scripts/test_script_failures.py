"""A failed script run records its cause: not found, exit code, no score, non-finite, timeout."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mftune.cli import main
from mftune.scripts.runner import ScriptEvaluator


def evaluator(tmp_path, command, **kw) -> ScriptEvaluator:
    return ScriptEvaluator(command, [{"x": 0.5}], "n", [1, 2], tmp_path / "trials",
                           cwd=tmp_path, **kw)


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_missing_executable_says_command_not_found(tmp_path):
    res = evaluator(tmp_path, ["no-such-trainer-xyz", "train"]).run_pull(0, 0)
    assert res.status == "failed"
    assert res.error == "command not found: no-such-trainer-xyz"


def test_missing_script_of_a_shell_says_exit_127_and_the_shell_message(tmp_path):
    res = evaluator(tmp_path, ["sh", "-c", "no-such-trainer-xyz"]).run_pull(0, 0)
    first = res.error.splitlines()[0]
    assert first.startswith("exit code 127 (command not found); stderr ends: ")
    assert "no-such-trainer-xyz" in first


def test_non_zero_exit_gives_the_code_and_the_last_stderr_lines(tmp_path):
    code = ("import sys\n"
            "for i in range(30): print(f'line {i}', file=sys.stderr)\n"
            "print('ValueError: diverged at step 7', file=sys.stderr); sys.exit(3)")
    res = evaluator(tmp_path, python(code)).run_pull(0, 0)
    assert res.status == "failed"
    first, *rest = res.error.splitlines()
    assert first == "exit code 3; stderr ends: ValueError: diverged at step 7"
    assert rest[0] == "stderr tail:"
    assert rest[1:] == [f"line {i}" for i in range(11, 30)] + ["ValueError: diverged at step 7"]


def test_killed_run_names_the_signal(tmp_path):
    res = evaluator(tmp_path, python("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
                    ).run_pull(0, 0)
    assert res.error.startswith("killed by SIGSEGV (exit code -11)")


def test_no_score_says_what_was_expected_and_quotes_the_last_line(tmp_path):
    res = evaluator(tmp_path, python("print('epoch 1'); print('loss is about 0.3')")
                    ).run_pull(0, 0)
    assert res.status == "failed"
    first = res.error.splitlines()[0]
    assert "no score" in first and "mftune-score: <float>" in first
    assert "MFTUNE_RESULT_FILE" in first
    assert first.endswith("; last output line: 'loss is about 0.3'")
    res = evaluator(tmp_path, python("pass")).run_pull(0, 0)
    assert "no output at all" in res.error
    res = evaluator(tmp_path, python("print('mftune-score: good')")).run_pull(0, 0)
    assert res.error.startswith("unparseable score 'good': expected 'mftune-score: <float>'")


@pytest.mark.parametrize("text, value", [("nan", "nan"), ("inf", "inf"), ("-Infinity", "-inf")])
def test_non_finite_score_says_so_with_the_value(tmp_path, text, value):
    res = evaluator(tmp_path, python(f"print('mftune-score: {text}')")).run_pull(0, 0)
    assert res.status == "failed"
    assert res.error.startswith(f"score is not finite: {value} (in the line "
                                f"'mftune-score: {text}')")


def test_non_finite_score_in_the_result_file(tmp_path):
    code = ("import os; open(os.environ['MFTUNE_RESULT_FILE'], 'w')"
            ".write('{\"score\": NaN}')")
    res = evaluator(tmp_path, python(code)).run_pull(0, 0)
    assert res.error.startswith("score is not finite: nan (in the result file)")


def test_timeout_says_the_limit(tmp_path):
    code = "import sys, time; print('warming up', file=sys.stderr, flush=True); time.sleep(30)"
    res = evaluator(tmp_path, python(code), timeout=0.5).run_pull(0, 0)
    assert res.status == "timed-out"
    assert res.error.splitlines()[0] == ("timed out after 0.5 s (the time limit of a run; "
                                         "killed); stderr ends: warming up")


def test_the_cause_is_what_the_study_stores_and_status_shows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("train.py").write_text(
        "import sys\nx = float(sys.argv[1].split('=')[1])\n"
        "if x < 0.5: sys.exit('out of memory at x')\nprint('mftune-score: nan')\n")
    Path("space.toml").write_text("""
[parameters]
x = { type = "real", low = 0.0, high = 1.0 }
[fidelity]
name = "n"
values = [1, 2]
pass = "env"
xi = [0.1, 0]
[objective]
sigma = 0.1
[study]
path = "s.db"
n_candidates = 4
seed = 0
""")
    res = CliRunner().invoke(main, ["tune", "space.toml", "--quiet", "--", sys.executable,
                                    "train.py"])
    assert res.exit_code == 1, res.output  # every run fails
    with sqlite3.connect("s.db") as conn:
        errors = [e for (e,) in conn.execute("SELECT error FROM pulls ORDER BY id")]
    conn.close()
    firsts = {e.splitlines()[0] for e in errors}
    assert firsts <= {"exit code 1; stderr ends: out of memory at x",
                      "score is not finite: nan (in the line 'mftune-score: nan')"}
    res = CliRunner().invoke(main, ["status", "s.db"])
    assert res.exit_code == 0, res.output
    line = next(ln for ln in res.output.splitlines() if ln.startswith("failed pulls:"))
    assert line.startswith(f"failed pulls: {len(errors)}; last: ")
    assert line.split("; last: ", 1)[1] in firsts
    s = json.loads(CliRunner().invoke(main, ["status", "s.db", "--json"]).output)
    assert s["failures"]["count"] == len(errors)
    assert sum(c["count"] for c in s["failures"]["causes"]) == len(errors)
