"""Bad arguments to the bench commands: a usage error naming the option, before any run."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from mftune.cli import main

LUCB = ["bench", "lucb-figure1", "--runs", "2", "--tables", "1", "--deltas", "0.25"]

CASES = {
    "instance files missing": (["bench", "iise-table1", "--runs", "2", "--instance-dir",
                                "{tmp}"], "--instance-dir", "no iise_synthetic_a.json"),
    "n_jobs zero": (["bench", "iise-table1", "--generated", "--runs", "2", "--n-jobs", "0"],
                    "--n-jobs", "must be a non-zero integer"),
    "mu1 out of [0, 1]": (LUCB + ["--mu1-tilde", "2"], "--mu1-tilde", "0<=x<=1"),
    "mu1 below mu2": (LUCB + ["--mu1-tilde", "0.5", "--mu2-tilde", "0.9"], "--mu1-tilde",
                      "must exceed --mu2-tilde"),
    "plot folder missing": (LUCB + ["--plot", "{tmp}/no/x.png"], "--plot", "does not exist"),
    "plot format unknown": (LUCB + ["--plot", "{tmp}/x.unknownext"], "--plot",
                            "must end in one of"),
    "rho zero": (["bench", "mfucb-figure2", "--runs", "2", "--rho", "0"], "--rho", "x>0"),
    "mfgrad instances missing": (["bench", "mfgrad-paper", "--instance-dir", "{tmp}",
                                  "--parts", "timing"], "--instance-dir", "no mfgrad_4x5.json"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_bench_argument_is_a_usage_error_before_anything_runs(case, tmp_path):
    args, option, message = CASES[case]
    if option == "--plot":
        pytest.importorskip("matplotlib")  # the --plot checks read its formats
    res = CliRunner().invoke(main, [a.replace("{tmp}", str(tmp_path)) for a in args])
    assert res.exit_code == 2, res.output
    assert f"Invalid value for {option}" in res.output.replace("'", "")
    assert message in res.output and "Traceback" not in res.output
    assert not any(tmp_path.iterdir())


def test_a_lower_bound_run_with_every_family_skipped_says_why(tmp_path):
    res = CliRunner().invoke(main, ["bench", "lower-bound", "--runs", "2", "--families", "iise"])
    assert res.exit_code == 2 and "nothing to run: family iise: no --instance-dir" in res.output


def test_the_proportions_reference_is_the_one_measured_at_that_pull_count():
    import numpy as np

    from mftune.cli.bench_mfgrad import _prop_text

    row = {"mean": np.full((5, 2), 0.1).tolist(), "tv_of_mean": 0.0, "tv_mean": 0.0}
    res = {"instance": "5x2", "runs": 1, "omega_source": "x",
           "omega_star": np.full((5, 2), 0.1).tolist(),
           "policies": {"MF-GRAD": {10**4: row, 20_000: row}}}
    first, second = _prop_text(res)[1:]
    assert "reference 0.485" in first and "reference –" in second
