"""CLI wiring of the finite-arm benchmarks (argument checks only; the runs are benchmarks)."""

from click.testing import CliRunner

from mftune.cli import main


def test_commands_registered():
    out = CliRunner().invoke(main, ["bench", "--help"]).output
    for name in ("lucb-table3", "lucb-figure1", "mfucb-figure2"):
        assert name in out


def test_bad_options_are_usage_errors():
    runner = CliRunner()
    res = runner.invoke(main, ["bench", "lucb-table3", "--procedures", "A,Z"])
    assert res.exit_code == 2 and "--procedures" in res.output
    res = runner.invoke(main, ["bench", "lucb-figure1", "--deltas", "0.1,1.5"])
    assert res.exit_code == 2 and "--deltas" in res.output
    res = runner.invoke(main, ["bench", "lucb-figure1", "--tables", "3"])
    assert res.exit_code == 2 and "--tables" in res.output
    res = runner.invoke(main, ["bench", "mfucb-figure2", "--policies", "EXP3"])
    assert res.exit_code == 2 and "--policies" in res.output
