"""Bias bounds that are not monotone in the fidelity: useless fidelities are skipped."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from mftune._validation import useful_fidelities
from mftune.benchmarks.bandits import GaussianBandit
from mftune.benchmarks.simulate import simulate_policy
from mftune.policies.iise import IISE, MFE, IISEGamma, iise_thresholds


@pytest.mark.parametrize(
    ("bias", "kept"),
    [
        ([0.3, 0.2, 0.1, 0.0], [0, 1, 2, 3]),  # decreasing: every fidelity
        ([0.05, 0.05, 0.033, 0.017, 0.0], [0, 2, 3, 4]),  # a tie: the dearer one goes
        ([0.3, 0.4, 0.1, 0.0], [0, 2, 3]),  # a dearer, looser bound
        ([0.1, 0.0, 0.05, 0.0], [0, 1]),  # a cheaper fidelity as good as the target
        ([0.0, 0.0], [0]),
        # bounds computed from means: rounding noise is not a difference
        ([5.551115123125783e-17, 0.0, 0.0], [0]),
        ([0.08000000000000007, 0.04000000000000015, 0.040000000000000036,
          0.039999999999999925, 0.0], [0, 1, 4]),
    ],
)
def test_useful_fidelities(bias, kept):
    np.testing.assert_array_equal(useful_fidelities(bias), kept)


def _run(policy, theta, sigma, seed):
    """Ask/tell to the end with Gaussian rewards from one seeded stream."""
    rng = np.random.default_rng(seed)
    pulls = []
    while not policy.done:
        p = policy.ask()
        policy.tell(p, rng.normal(theta[p.fidelities, p.arms], sigma))
        pulls.append((p.arms.copy(), p.fidelities.copy()))
    return pulls, policy.recommend()


@pytest.mark.parametrize("cls", [IISE, IISEGamma])
def test_a_useless_fidelity_is_skipped_as_if_absent(cls):
    # Fidelity 1 costs more than fidelity 0 and is no less biased: the run is the
    # run of the three-fidelity problem without it, pull for pull.
    costs, bias = np.array([1.0, 2.0, 8.0, 32.0]), np.array([0.3, 0.4, 0.1, 0.0])
    theta = np.array([[0.5, 0.4, 0.3, 0.1], [0.0, 0.0, 0.0, 0.0],
                      [0.6, 0.5, 0.45, 0.2], [0.7, 0.6, 0.5, 0.3]])
    keep = np.array([0, 2, 3])
    full = cls(4, costs, bias, delta=0.05, variance_proxy=0.01)
    sub = cls(4, costs[keep], bias[keep], delta=0.05, variance_proxy=0.01)
    assert full.delta_prime == sub.delta_prime == 0.05 / (4 * 3)
    np.testing.assert_array_equal(full.phases, keep)
    np.testing.assert_allclose(full.thresholds[keep], sub.thresholds)
    pulls_full, best_full = _run(full, theta, 0.1, seed=3)
    pulls_sub, best_sub = _run(sub, theta[keep], 0.1, seed=3)
    assert len(pulls_full) == len(pulls_sub) > 0
    for (arms_f, fid_f), (arms_s, fid_s) in zip(pulls_full, pulls_sub, strict=True):
        np.testing.assert_array_equal(arms_f, arms_s)
        np.testing.assert_array_equal(fid_f, keep[fid_s])
    assert best_full == best_sub == 0
    assert full.stats.counts[1].sum() == 0


def test_decreasing_bounds_are_the_papers_algorithm():
    costs, xi = [1.0, 4.0, 16.0], [0.2, 0.1, 0.0]
    p = IISE(5, costs, xi, delta=0.01)
    np.testing.assert_array_equal(p.phases, [0, 1, 2])
    np.testing.assert_allclose(p.thresholds, iise_thresholds(costs, xi, 4.0))
    assert p.delta_prime == 0.01 / 15


def test_mfe_skips_a_useless_fidelity_too():
    p = MFE(4, [1.0, 2.0, 8.0, 32.0], [0.3, 0.4, 0.1, 0.0], c=0.1, delta=0.05)
    np.testing.assert_array_equal(p.phases, [0, 2, 3])
    np.testing.assert_allclose(p.thresholds, [0.03, 0.0, 0.01, 0.0])
    assert p.delta_prime == 0.05 / 12


def test_iise_gamma_with_a_zero_bound_below_the_top_never_pays_for_the_top():
    # Every arm has the same bias at fidelity 0 (γ_0 = 0): fidelity 0 orders the arms
    # as the top does, so IISE-γ ends there. Errors over 200 seeded runs stay within
    # the Binomial(200, δ) 0.999 quantile (δ = 0.1: at most 34).
    theta = np.array([[0.25, 0.375, 0.5, 0.75], [0.5, 0.625, 0.75, 1.0]])  # exact in binary
    env = GaussianBandit(theta, [1.0, 10.0], sigma=0.2)
    np.testing.assert_array_equal(env.true_gamma, [0.0, 0.0])
    wrong, top_pulls = 0, 0
    for run in range(200):
        policy = IISEGamma(4, [1.0, 10.0], env.true_gamma, delta=0.1, variance_proxy=0.04)
        rec = simulate_policy(policy, env, run)
        wrong += not rec.correct
        top_pulls += int(policy.stats.counts[1].sum())
    assert top_pulls == 0
    assert wrong <= stats.binom.ppf(0.999, 200, 0.1)


def test_new_bounds_drop_later_phases_and_never_add_one():
    p = IISE(4, [1.0, 2.0, 8.0, 32.0], [0.3, 0.2, 0.1, 0.0], delta=0.05)
    p.update_bounds(xi=[0.3, 0.35, 0.1, 0.0])
    np.testing.assert_array_equal(p.phases, [0, 2, 3])
    p.update_bounds(xi=[0.3, 0.2, 0.1, 0.0])  # fidelity 1 useful again: not re-added
    np.testing.assert_array_equal(p.phases, [0, 2, 3])
    np.testing.assert_allclose(p.xi, [0.3, 0.2, 0.1, 0.0])


def test_a_bound_that_would_end_the_run_below_the_top_changes_nothing():
    p = IISEGamma(4, [1.0, 2.0, 8.0], [0.2, 0.0, 0.0], delta=0.05)
    np.testing.assert_array_equal(p.phases, [0, 1])
    before = (p.thresholds.copy(), p.widths.copy(), p.gamma.copy())
    with pytest.raises(ValueError, match="gamma: the bound of fidelity 1, the last of this run"):
        p.update_bounds(xi=[0.2, 0.1, 0.0])
    for a, b in zip(before, (p.thresholds, p.widths, p.gamma), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(p.phases, [0, 1])
