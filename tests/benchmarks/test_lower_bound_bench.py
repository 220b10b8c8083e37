"""``bench lower-bound`` and ``bench mfgrad-paper``: tiny runs, with and without the optional
``mftune.policies.lower_bound`` / ``mftune.policies.mf_grad`` (stand-ins injected here)."""

from __future__ import annotations

import json
import sys
import types
from collections import namedtuple

import numpy as np
import pytest
from click.testing import CliRunner

from mftune.benchmarks.lower_bound import (
    bound_sigma,
    instance_bound,
    load_family,
    lucb_view,
    optional_status,
    run_cells,
    summarise,
)
from mftune.cli import main
from mftune.policies.iise import SuccessiveElimination

LowerBound = namedtuple("LowerBound", "c_star omega optimal_fidelity best_arm")


def _stub_modules(monkeypatch, c_star):
    """Install stand-ins with the agreed interfaces (the real modules come with MF-GRAD)."""
    lb = types.ModuleType("mftune.policies.lower_bound")

    def cost_lower_bound(mu, costs, xi, sigma):
        mu = np.asarray(mu)
        K, M = mu.shape
        return LowerBound(c_star, np.full((K, M), 1.0 / (K * M)), np.full(K, M - 1),
                          int(np.argmax(mu[:, -1])))

    lb.cost_lower_bound = cost_lower_bound
    grad = types.ModuleType("mftune.policies.mf_grad")

    class MFGRAD(SuccessiveElimination):  # pulls the top fidelity only: enough for the harness
        def __init__(self, n_arms, costs, xi, delta=0.01, variance_proxy=1.0,
                     learning_rate=None, threshold="practical", random_state=None):
            super().__init__(n_arms, costs, delta, variance_proxy)

    class GRAD(SuccessiveElimination):  # single fidelity: given only the top cost
        def __init__(self, n_arms, costs, delta=0.01, variance_proxy=1.0, learning_rate=None,
                     random_state=None):
            super().__init__(n_arms, costs, delta, variance_proxy)

    grad.MFGRAD, grad.GRAD = MFGRAD, GRAD
    monkeypatch.setitem(sys.modules, "mftune.policies.lower_bound", lb)
    monkeypatch.setitem(sys.modules, "mftune.policies.mf_grad", grad)


def test_families_load(data_dir):
    names = {f: [i.name for i in load_family(f, data_dir)[0]]
             for f in ("iise", "wang", "mfgrad", "mfucb")}
    assert names["mfgrad"] == ["4x5", "5x2", "mu2", "mu3", "forever", "lucb_only_M"]
    assert len(names["wang"]) == 6 and names["iise"] == ["synthetic-a", "synthetic-b", "yahtzee"]
    again = [i.env.theta for i in load_family("mfucb", seed=0)[0]]
    assert all(np.array_equal(a, i.env.theta)
               for a, i in zip(again, load_family("mfucb", seed=0)[0], strict=True))
    assert load_family("iise")[0] == [] and "instance-dir" in load_family("mfgrad")[1]


def test_bound_sigma_and_lucb_view(data_dir):
    wang = load_family("wang")[0][0]
    sigma, kind = bound_sigma(wang.env)  # means in [0.3, 0.9]: min t(1-t) = 0.09
    assert kind == "bernoulli-envelope" and sigma == pytest.approx(0.3)
    forever = [i for i in load_family("mfgrad", data_dir)[0] if i.name == "forever"][0]
    assert forever.mu_tilde == (0.6, 0.5)
    view, m1, m2, clip = lucb_view(forever)
    assert not clip and view.sigma == 0.5 and (m1 + m2) / 2 == pytest.approx(0.5)
    assert m1 - m2 == pytest.approx(0.05)  # (0.6 - 0.5) / (2σ), σ = 1


def test_cells_without_optional_modules(data_dir):
    if optional_status()["MF-GRAD"]:
        pytest.skip("mftune.policies.mf_grad is installed")
    inst = [i for i in load_family("mfgrad", data_dir)[0] if i.name == "5x2"]
    cells = run_cells(inst, ("SE", "IISE-gamma", "LUCB-C", "MF-GRAD"), 0.01, 2, n_jobs=1,
                      max_pulls=5000)
    by = {c.policy: c for c in cells}
    assert by["SE"].mean_cost > 0 and by["SE"].n_errors == 0
    assert by["IISE-gamma"].note.startswith("skipped: refuses")  # true γ = (0, 0) on 5x2
    assert by["MF-GRAD"].mean_cost is None and "mf_grad" in by["MF-GRAD"].note
    assert by["LUCB-C"].n_capped + by["LUCB-C"].n_runs >= 2


def test_cells_with_stand_ins(monkeypatch, data_dir):
    _stub_modules(monkeypatch, c_star=1e6)  # a bound far above every cost: all flagged
    inst = [i for i in load_family("mfgrad", data_dir)[0] if i.name == "4x5"]
    assert instance_bound(inst[0].env).kind == "gaussian"
    cells = run_cells(inst, ("SE", "IISE-gamma", "GRAD", "MF-GRAD"), 0.01, 2, n_jobs=1)
    by = {c.policy: c for c in cells}
    assert by["GRAD"].pulls_per_fidelity[:-1] == [0, 0, 0, 0]  # ran on the top fidelity only
    assert by["GRAD"].mean_cost == by["SE"].mean_cost  # the stand-in is SE
    assert by["MF-GRAD"].bound == pytest.approx(1e6 * np.log(1 / 0.024))
    assert by["MF-GRAD"].below_bound and not by["IISE-gamma"].below_bound  # γ: not checked
    summary = {s["policy"]: s for s in summarise(cells)}
    assert summary["SE"]["below_bound"] == ["4x5 (δ=0.01)"]


def test_cli_lower_bound_text_with_stand_ins(monkeypatch, data_dir):
    _stub_modules(monkeypatch, c_star=1e6)
    res = CliRunner().invoke(main, ["bench", "lower-bound", "--runs", "2", "--families",
                                    "mfgrad", "--instances", "5x2", "--instance-dir",
                                    str(data_dir), "--policies", "SE,MF-GRAD"])
    assert res.exit_code == 0, res.output
    assert "C* = 1e+06" in res.output and "BELOW THE BOUND" in res.output
    assert "MF-GRAD          median ratio" in res.output


def test_cli_lower_bound_json(data_dir):
    res = CliRunner().invoke(main, ["bench", "lower-bound", "--runs", "2", "--families",
                                    "wang,mfgrad,iise", "--instances", "wang-table1,mu3",
                                    "--instance-dir", str(data_dir), "--policies",
                                    "IISE,LUCB-A", "--max-pulls", "20000", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    cells = [c for f in out["families"] for c in f["cells"]]
    assert {(c["instance"], c["policy"]) for c in cells} == {
        (i, p) for i in ("wang-table1", "mu3") for p in ("IISE", "LUCB-A")}
    assert all(c["mean_cost"] > 0 for c in cells)
    assert set(out["available"]) == {"bound", "GRAD", "MF-GRAD"}


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
        (["lower-bound", "--families", "wang", "--instances", "nope"], "--instances"),
        (["mfgrad-paper"], "--instance-dir"),
        (["mfgrad-paper", "--instance-dir", str(data_dir), "--parts", "x"], "--parts"),
        (["mfgrad-paper", "--instance-dir", str(data_dir), "--instances", "9x9"], "--instances"),
    ]
    for args, option in bad:
        res = runner.invoke(main, ["bench", *args])
        assert res.exit_code == 2 and option in res.output, (args, res.output)


def test_cli_mfgrad_paper_json(monkeypatch, data_dir):
    _stub_modules(monkeypatch, c_star=2.0)
    res = CliRunner().invoke(main, ["bench", "mfgrad-paper", "--instance-dir", str(data_dir),
                                    "--runs", "2", "--prop-runs", "2", "--prop-pulls", "10000",
                                    "--forever-runs", "1", "--forever-cap", "3000", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert [c["policy"] for c in out["cost"]] == ["MF-GRAD", "MF-GRAD-CONST", "GRAD", "IISE"]
    assert all(c["mean_cost"] > 0 for c in out["cost"])
    props = out["proportions"]["policies"]["MF-GRAD"]["10000"]
    assert np.isclose(np.sum(props["mean"]), 1.0)
    assert [r["policy"] for r in out["forever"]] == ["LUCB-A", "LUCB-B", "LUCB-top"]
    assert out["forever"][0]["stopped"] == 0  # Explore-A does not stop on "forever"


def test_cli_mfgrad_paper_text_without_mf_grad(data_dir):
    if optional_status()["MF-GRAD"]:
        pytest.skip("mftune.policies.mf_grad is installed")
    res = CliRunner().invoke(main, ["bench", "mfgrad-paper", "--instance-dir", str(data_dir),
                                    "--runs", "2", "--parts", "cost,proportions"])
    assert res.exit_code == 0, res.output
    assert "skipped: mftune.policies.mf_grad not available" in res.output
    assert "224 ± 9 (100)" in res.output  # the reference printed next to ours
