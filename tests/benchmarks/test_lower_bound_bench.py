"""``bench lower-bound`` and ``bench mfgrad-paper``: tiny runs of both commands."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from mftune.benchmarks.lower_bound import (
    bound_sigma,
    instance_bound,
    load_family,
    lucb_view,
    run_cells,
    skip_reason,
    summarise,
)
from mftune.cli import main


def test_families_load(data_dir):
    names = {f: [i.name for i in load_family(f, data_dir)[0]]
             for f in ("iise", "wang", "mfgrad", "mfucb")}
    assert names["mfgrad"] == ["4x5", "5x2", "mu2", "mu3", "forever", "lucb_only_M"]
    assert len(names["wang"]) == 6 and names["iise"] == ["synthetic-a", "synthetic-b", "yahtzee"]
    again = [i.env.theta for i in load_family("mfucb", seed=0)[0]]
    assert all(np.array_equal(a, i.env.theta)
               for a, i in zip(again, load_family("mfucb", seed=0)[0], strict=True))
    assert load_family("iise")[0] == [] and "instance-dir" in load_family("mfgrad")[1]


def test_mf_grad_is_skipped_outside_its_model():
    """Wang's Table 2 violates its own ξ at fidelity 4: no bound, MF-GRAD skipped; GRAD
    (top fidelity only) and the others run; Table 1 is inside the model."""
    table1, table2 = load_family("wang")[0][:2]
    assert "outside their bias bounds" in skip_reason("MF-GRAD", table2)
    assert instance_bound(table2.env).c_star is None
    assert all(skip_reason(p, table2) is None for p in ("GRAD", "LUCB-A", "IISE"))
    assert skip_reason("MF-GRAD", table1) is None


def test_bound_sigma_and_lucb_view(data_dir):
    wang = load_family("wang")[0][0]
    sigma, kind = bound_sigma(wang.env)  # means in [0.3, 0.9]: min t(1-t) = 0.09
    assert kind == "bernoulli-envelope" and sigma == pytest.approx(0.3)
    forever = [i for i in load_family("mfgrad", data_dir)[0] if i.name == "forever"][0]
    assert forever.mu_tilde == (0.6, 0.5)
    view, m1, m2, clip, kw = lucb_view(forever)
    assert not clip and view.sigma == 0.5 and (m1 + m2) / 2 == pytest.approx(0.5) and not kw
    assert m1 - m2 == pytest.approx(0.05)  # (0.6 - 0.5) / (2σ), σ = 1
    # the MF-GRAD authors' constants: s = sqrt(2)σ, f-UCB bonus 1/s, commit threshold / sqrt(2)
    view, m1, m2, _, kw = lucb_view(forever, "authors")
    assert m1 - m2 == pytest.approx(0.1 / np.sqrt(2))
    assert kw == {"fucb_bonus": pytest.approx(1 / np.sqrt(2)),
                  "commit_factor": pytest.approx(1 / np.sqrt(2))}
    with pytest.raises(ValueError, match="convention"):
        lucb_view(forever, "other")


def test_cells_against_the_bound(data_dir):
    inst = [i for i in load_family("mfgrad", data_dir)[0] if i.name == "4x5"]
    bound = instance_bound(inst[0].env)
    assert bound.kind == "gaussian" and bound.c_star == pytest.approx(2.0002, rel=1e-3)
    cells = run_cells(inst, ("SE", "GRAD", "MF-GRAD"), 0.01, 3, n_jobs=1, max_pulls=20000)
    by = {c.policy: c for c in cells}
    assert by["GRAD"].pulls_per_fidelity[:-1] == [0, 0, 0, 0]  # the top fidelity only
    assert sum(by["MF-GRAD"].pulls_per_fidelity[:-1]) > 0  # uses the cheap fidelities
    for c in cells:  # a δ-correct policy pays at least the bound
        assert c.n_errors == 0 and c.mean_cost >= c.bound == pytest.approx(
            bound.c_star * np.log(1 / (2.4 * 0.01)))
    assert not any(s["below_bound"] for s in summarise(cells))


def test_cli_lower_bound_text(data_dir):
    res = CliRunner().invoke(main, ["bench", "lower-bound", "--runs", "2", "--families",
                                    "mfgrad", "--instances", "5x2", "--instance-dir",
                                    str(data_dir), "--policies", "SE,MF-GRAD"])
    assert res.exit_code == 0, res.output
    assert "C* = 26.649" in res.output and "BELOW THE BOUND" not in res.output
    assert "MF-GRAD          median ratio" in res.output and "MF-GRAD gradient code" in res.output
    # a progress line per cell as it finishes, on stderr only
    assert res.stderr.count(" cells, ") == 2 and "[2/2 cells" in res.stderr
    assert "cells, " not in res.stdout


def test_cli_lower_bound_json(data_dir):
    res = CliRunner().invoke(main, ["bench", "lower-bound", "--runs", "2", "--families",
                                    "wang,mfgrad,iise", "--instances", "wang-table1,mu3",
                                    "--instance-dir", str(data_dir), "--policies",
                                    "IISE,LUCB-A", "--max-pulls", "20000", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    cells = [c for f in out["families"] for c in f["cells"]]
    assert {(c["instance"], c["policy"]) for c in cells} == {
        (i, p) for i in ("wang-table1", "mu3") for p in ("IISE", "LUCB-A")}
    assert all(c["mean_cost"] > 0 for c in cells)
    assert out["mfgrad_gradient"] == "code"


def test_cli_lower_bound_glr_gradient(data_dir):
    # the option reaches MF-GRAD: on 5x2, whose early empirical columns leave the MF set,
    # the two sub-gradients pull differently (the same seeds, the same noise)
    costs = {}
    for gradient in ("code", "glr"):
        res = CliRunner().invoke(main, ["bench", "lower-bound", "--runs", "3", "--families",
                                        "mfgrad", "--instances", "5x2", "--instance-dir",
                                        str(data_dir), "--policies", "MF-GRAD", "--json",
                                        "--gradient", gradient])
        assert res.exit_code == 0, res.output
        out = json.loads(res.stdout)
        assert out["mfgrad_gradient"] == gradient
        costs[gradient] = out["families"][0]["cells"][0]["mean_cost"]
    assert costs["code"] != costs["glr"]


def test_cli_help_and_errors(data_dir):
    runner = CliRunner()
    for cmd in ("lower-bound", "mfgrad-paper"):
        res = runner.invoke(main, ["bench", cmd, "--help"])
        assert res.exit_code == 0 and "--runs" in res.output
    bad = [
        (["lower-bound", "--families", "chess"], "--families"),
        (["lower-bound", "--policies", "UCB"], "--policies"),
        (["lower-bound", "--delta", "2"], "--delta"),
        (["lower-bound", "--runs", "1"], "--runs"),
        (["lower-bound", "--max-pulls", "0"], "--max-pulls"),
        (["lower-bound", "--learning-rate", "x"], "--learning-rate"),
        (["lower-bound", "--learning-rate", "0"], "--learning-rate"),
        (["lower-bound", "--gradient", "exact"], "--gradient"),
        (["lower-bound", "--families", "wang", "--instances", "nope"], "--instances"),
        (["mfgrad-paper"], "--instance-dir"),
        (["mfgrad-paper", "--instance-dir", str(data_dir), "--parts", "x"], "--parts"),
        (["mfgrad-paper", "--instance-dir", str(data_dir), "--instances", "9x9"], "--instances"),
    ]
    for args, option in bad:
        res = runner.invoke(main, ["bench", *args])
        assert res.exit_code == 2 and option in res.output, (args, res.output)


def test_cli_mfgrad_paper_json(data_dir):
    res = CliRunner().invoke(main, ["bench", "mfgrad-paper", "--instance-dir", str(data_dir),
                                    "--runs", "2", "--prop-runs", "2", "--prop-pulls", "10000",
                                    "--forever-runs", "1", "--forever-cap", "3000", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert [c["policy"] for c in out["cost"]] == ["MF-GRAD", "MF-GRAD-CONST", "GRAD", "IISE",
                                                  "IISE-code"]
    assert all(c["mean_cost"] > 0 for c in out["cost"])
    props = out["proportions"]["policies"]["MF-GRAD"]["10000"]
    assert np.isclose(np.sum(props["mean"]), 1.0)
    assert [(r["convention"], r["policy"]) for r in out["forever"]] == [
        (c, p) for c in ("authors", "wang") for p in ("LUCB-A", "LUCB-B", "LUCB-top")]
    assert out["forever"][0]["stopped"] == 0  # Explore-A does not stop on "forever"


