"""``mftune bench iise-table1`` and ``mftune demo`` through click's test runner."""

import json

from click.testing import CliRunner

from mftune.cli import main


def test_table1_json_on_reference_yahtzee(data_dir):
    res = CliRunner().invoke(main, ["bench", "iise-table1", "--runs", "3", "--domains", "yahtzee",
                                    "--instance-dir", str(data_dir), "--n-jobs", "1", "--json"])
    assert res.exit_code == 0, res.output
    rows = {r["algorithm"]: r for r in json.loads(res.output)["rows"]}
    assert set(rows) == {"MFE", "SE", "IISE", "IISE-gamma"}
    assert rows["SE"]["mean"] == 100.0
    assert rows["IISE-gamma"]["mean"] < rows["IISE"]["mean"] < 100 < rows["MFE"]["mean"]
    assert all(r["n_errors"] == 0 for r in rows.values())
    assert rows["MFE"]["shortcut"] == "mfe-phase-skip"


def test_table1_text_output_generated():
    res = CliRunner().invoke(main, ["bench", "iise-table1", "--runs", "2", "--domains",
                                    "synthetic-b", "--generated", "--seed", "1", "--n-jobs", "1"])
    assert res.exit_code == 0, res.output
    assert "synthetic-b" in res.output and "IISE-gamma" in res.output
    assert "27.06" in res.output  # the paper's value printed beside ours


def test_table1_argument_errors():
    runner = CliRunner()
    res = runner.invoke(main, ["bench", "iise-table1", "--runs", "2"])
    assert res.exit_code != 0 and "--instance-dir" in res.output
    res = runner.invoke(main, ["bench", "iise-table1", "--generated", "--domains", "chess"])
    assert res.exit_code != 0 and "chess not allowed" in res.output
    res = runner.invoke(main, ["bench", "iise-table1", "--generated", "--runs", "1"])
    assert res.exit_code != 0 and "--runs" in res.output
