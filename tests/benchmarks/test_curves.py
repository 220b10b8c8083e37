"""Simulated learning-curve instances and the certificate's failure mode
(mftune.benchmarks.curves, ``mftune bench curves``)."""

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import binom

from mftune.benchmarks.curves import CURVE_KINDS, METHODS, curve_instance, run_search
from mftune.cli import main


@pytest.mark.parametrize("kind", CURVE_KINDS)
def test_instances_have_the_stated_shape(kind):
    for seed in range(20):
        inst = curve_instance(seed, kind)
        assert inst.means.shape == (5, 16)
        assert np.allclose(inst.costs[1:] / inst.costs[:-1], 4.0) and inst.costs[-1] == 1
        top = np.sort(inst.means[-1])[::-1]
        assert np.all((np.diff(-top[:4]) >= 0.002 - 1e-12) & (np.diff(-top[:4]) <= 0.04))
        assert 0.005 <= inst.sigma <= 0.05
        bias = inst.means[-1] - inst.means[0]
        assert np.all(bias >= 0) and bias.max() <= 0.36


def test_ranked_instances_rank_the_leaders_at_every_fidelity():
    for seed in range(20):
        inst = curve_instance(seed, "ranked")
        lead = np.argsort(-inst.means[-1])[:4]
        for m in range(5):
            assert np.array_equal(np.argsort(-inst.means[m])[:4], lead)


def test_trap_instances_hide_the_best_below_the_top():
    for seed in range(20):
        inst = curve_instance(seed, "trap")
        below = inst.means[-2]
        assert np.argmax(below) != inst.best  # another candidate leads below the top
        assert below[inst.best] < below.max()


#: The rule before the certificate's guard (the paper's radius, δ/(K M) everywhere, no
#: late-bloomer guard): the failure this test reproduces.
UNGUARDED = METHODS["paper-rules"]


def _wrong(settings, runs, stop_above=None):
    wrong = 0
    for r in range(runs):
        inst = curve_instance(10_000 + r, "trap", n_arms=8)
        wrong += not run_search(inst, r, max_pulls=50_000, **settings)["correct"]
        if stop_above is not None and wrong > stop_above:
            break
    return wrong


def test_the_certificate_survives_flat_calibrations_and_late_bloomers():
    # 200 seeded runs of the default (δ = 0.05, ε "auto" = 0.005) on trap instances:
    # each run's certificate is wrong with probability <= δ if the rule is sound, so
    # the count of wrong certificates is at most Binomial(200, 0.05), whose 0.999
    # quantile is the bound. The unguarded rule blows through it (counted until it does).
    bound = int(binom.ppf(0.999, 200, 0.05))
    assert _wrong({}, 200) <= bound
    assert _wrong(UNGUARDED, 200, stop_above=bound) > bound


def test_the_top_phase_glr_test_keeps_the_certificate():
    # The default with the GLR test in its top phase (default-glr), on the same 200
    # trap instances: at most the Binomial(200, δ) 0.999 quantile of wrong certificates.
    bound = int(binom.ppf(0.999, 200, 0.05))
    assert _wrong(METHODS["default-glr"], 200) <= bound


def test_bench_curves_prints_the_table():
    res = CliRunner().invoke(main, ["bench", "curves", "--runs", "1", "--arms", "4",
                                    "--kinds", "ranked"])
    assert res.exit_code == 0, res.output
    assert "ranked  default" in res.output and "se-mixture" in res.output
    res = CliRunner().invoke(main, ["bench", "curves", "--runs", "1", "--arms", "4",
                                    "--kinds", "ranked", "--methods",
                                    "default,default-glr,default-glr-practical,se"])
    assert res.exit_code == 0, res.output
    assert "ranked  default-glr-practical " in res.output


@pytest.mark.parametrize("args, name", [
    (["--kinds", "easy"], "--kinds"), (["--methods", "smac"], "--methods"),
    (["--epsilon", "-1"], "--epsilon"), (["--epsilon", "tiny"], "--epsilon"),
    (["--reference", "se-mixture", "--methods", "default,se"], "--reference"),
])
def test_bench_curves_names_a_bad_option(args, name):
    res = CliRunner().invoke(main, ["bench", "curves", "--runs", "1", *args])
    assert res.exit_code == 2 and name in res.output
