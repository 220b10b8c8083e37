"""Calibration of the bias bounds, the noise and the costs (mftune.bias, mftune.calibration).

Every expected value is worked out by hand from the formulas in the modules' docstrings
on a small made-up array (the arithmetic is in the comments), so that a change to an
inflation term, to the pooling of σ or to the growing of violated bounds fails a test.
"""

import numpy as np
import pytest
from scipy.stats import chi2, norm

from mftune.bias import (
    BiasEstimate,
    estimate_bias,
    extend_to_top,
    grow_violated,
    monotone_bounds,
    pooled_variance,
    running_costs,
)
from mftune.calibration import calibration_plan, estimate_settings, needs_calibration
from mftune.policies import ArmStats

TINY = 1e-6  # mftune.bias._TINY


# -- monotone_bounds / running_costs ---------------------------------------------------


def test_monotone_bounds_raises_earlier_entries_and_ends_at_zero():
    # b = [0.1, 0.5, 0.3] -> last set to 0; b1 = max(0.5, 1.01*0 + 1e-6) = 0.5;
    # b0 = max(0.1, 1.01*0.5 + 1e-6) = 0.505001
    given = np.array([0.1, 0.5, 0.3])
    np.testing.assert_allclose(monotone_bounds(given), [0.505001, 0.5, 0.0], rtol=1e-12)
    np.testing.assert_array_equal(given, [0.1, 0.5, 0.3])  # the input is not modified
    # negatives are clipped to 0 first: [-1, 0.2, 0.7] -> [0, 0.2, 0];
    # b0 = max(0, 1.01*0.2 + 1e-6) = 0.202001
    np.testing.assert_allclose(monotone_bounds([-1.0, 0.2, 0.7]), [0.202001, 0.2, 0.0],
                               rtol=1e-12)
    # already strictly decreasing (each >= 1.01 x the next + 1e-6): unchanged
    np.testing.assert_array_equal(monotone_bounds([0.4, 0.2, 0.1, 0.0]), [0.4, 0.2, 0.1, 0.0])


def test_running_costs_uses_the_prior_where_unmeasured_and_increases():
    # means where counted: 2/2 = 1, (unmeasured -> prior 4), 9/3 = 3 -> [1, 4, 3];
    # then lam2 = max(3, 1.01*4) = 4.04
    lam = running_costs([2.0, 0.0, 9.0], [2, 0, 3], [5.0, 4.0, 1.0])
    np.testing.assert_allclose(lam, [1.0, 4.0, 4.04], rtol=1e-12)
    # zero measured cost is floored at 1e-6, the next raised to 1.01e-6
    np.testing.assert_allclose(running_costs([0.0, 0.0], [1, 1], [1.0, 2.0]),
                               [1e-6, 1.01e-6], rtol=1e-12)


# -- estimate_bias -----------------------------------------------------------------------

# n_cal = 2 candidates, M = 2 fidelities, 2 folds; fidelity 1 is the reference.
#   candidate 0: fid 0 [0.90, 0.86], fid 1 [0.80, 0.80] -> per-fold diff [0.10, 0.06]
#   candidate 1: fid 0 [0.50, 0.64], fid 1 [0.60, 0.64] -> per-fold diff [-0.10, 0.00]
# With two folds a, b: mean (a+b)/2, sd (ddof=1) |a-b|/√2, se = sd/√2 = |a-b|/2.
#   d_00 = 0.08, se_00 = 0.02;  d_10 = -0.05, se_10 = 0.05;  d_k1 = se_k1 = 0.
# delta = 0.08: z = Φ⁻¹(1 − 0.08 / (2·2·2)) = Φ⁻¹(0.99) = 2.3263478740408408.
SCORES = np.array([
    [[0.90, 0.86], [0.80, 0.80]],
    [[0.50, 0.64], [0.60, 0.64]],
])
COSTS = np.array([
    [[1.0, 2.0], [5.0, 7.0]],
    [[np.nan, 3.0], [6.0, 6.0]],
])
Z99 = 2.3263478740408408


def test_z_is_the_union_bound_quantile():
    assert norm.ppf(1 - 0.08 / (2 * 2 * 2)) == pytest.approx(Z99, rel=1e-12)


def test_estimate_bias_xi_is_the_largest_inflated_difference():
    est = estimate_bias(SCORES, COSTS, delta=0.08)
    # |d| + z·se: candidate 0: 0.08 + 0.02·2.32635 = 0.126527
    #             candidate 1: 0.05 + 0.05·2.32635 = 0.166317  <- the max (larger se)
    # top fidelity: 0; monotone_bounds keeps [0.166317, 0].
    np.testing.assert_allclose(est.xi, [0.05 + 0.05 * Z99, 0.0], rtol=1e-9)
    np.testing.assert_allclose(est.xi[0], 0.16631739370204204, rtol=1e-9)
    np.testing.assert_allclose(est.raw_bias, [[0.08, 0.0], [-0.05, 0.0]], atol=1e-12)


def test_estimate_bias_gamma_is_the_largest_inflated_spread():
    est = estimate_bias(SCORES, COSTS, delta=0.08)
    # |d_k − d_k'| + z (se_k + se_k') over pairs (k = k' included):
    #   (0,0): 0 + z·0.04 = 0.093054;  (1,1): 0 + z·0.10 = 0.232635;
    #   (0,1): |0.08 − (−0.05)| + z·0.07 = 0.13 + 0.162844 = 0.292844  <- the max
    np.testing.assert_allclose(est.gamma, [0.13 + 0.07 * Z99, 0.0], rtol=1e-9)
    np.testing.assert_allclose(est.gamma[0], 0.2928443511828589, rtol=1e-9)


def test_estimate_bias_sigma_costs_and_dof():
    est = estimate_bias(SCORES, COSTS, delta=0.08)
    # variance of two values (ddof=1) = (a−b)²/2:
    #   fid 0: cand 0 0.04²/2 = 0.0008, cand 1 0.14²/2 = 0.0098 -> mean 0.0053
    #   fid 1: cand 0 0,                cand 1 0.04²/2 = 0.0008 -> mean 0.0004
    # σ = [√0.0053, √0.0004] = [0.0728011, 0.02] (already non-increasing); σ = max.
    np.testing.assert_allclose(est.sigmas, [np.sqrt(0.0053), 0.02], rtol=1e-9)
    assert est.sigma == pytest.approx(np.sqrt(0.0053), rel=1e-9)
    # costs: nanmean per fidelity: fid 0 (1 + 2 + 3)/3 = 2, fid 1 (5 + 7 + 6 + 6)/4 = 6
    np.testing.assert_allclose(est.costs, [2.0, 6.0], rtol=1e-12)
    # dof: 2 usable candidates × (2 folds − 1)
    assert est.dof == 2


def test_estimate_bias_cheap_fidelity_is_never_less_noisy():
    # fid 0 has no spread at all, fid 1 has: σ_0 is raised to σ_1.
    # fid 1 variances: [0.3, 0.5] -> 0.2²/2 = 0.02; [0.1, 0.1] -> 0; mean 0.01 -> σ = 0.1
    scores = np.array([
        [[0.5, 0.5], [0.3, 0.5]],
        [[0.2, 0.2], [0.1, 0.1]],
    ])
    est = estimate_bias(scores, np.ones_like(scores), delta=0.05)
    np.testing.assert_allclose(est.sigmas, [0.1, 0.1], rtol=1e-9)


def test_estimate_bias_drops_failed_candidates_and_rejects_all_failed():
    bad = SCORES.copy()
    bad[1, 0, 1] = np.nan
    # only candidate 0 is usable: n_cal = 1, z = Φ⁻¹(1 − 0.08/(2·1·2)) = Φ⁻¹(0.98)
    z98 = norm.ppf(0.98)  # 2.0537489
    est = estimate_bias(bad, COSTS, delta=0.08)
    # ξ_0 = 0.08 + z·0.02;  γ_0 (a single candidate) = z·2·se_max = z·0.04
    np.testing.assert_allclose(est.xi, [0.08 + 0.02 * z98, 0.0], rtol=1e-9)
    np.testing.assert_allclose(est.gamma, [0.04 * z98, 0.0], rtol=1e-9)
    assert est.dof == 1
    bad[0, 1, 0] = np.nan
    with pytest.raises(ValueError, match="every calibration candidate failed"):
        estimate_bias(bad, COSTS, delta=0.08)


def test_estimate_bias_one_fold_has_no_inflation():
    # one fold: se = 0, so ξ is the raw max |d|: |0.9 − 0.8| = 0.1, |0.5 − 0.6| = 0.1
    # (monotone_bounds leaves 0.1 > 1e-6 alone); σ has no dof and is floored at 1e-6.
    est = estimate_bias(SCORES[:, :, :1], COSTS[:, :, 1:], delta=0.08)
    np.testing.assert_allclose(est.xi, [0.1, 0.0], rtol=1e-9)
    assert est.dof == 0
    assert est.sigma == TINY


# -- extend_to_top -----------------------------------------------------------------------


def _est(xi, gamma, costs, sigmas=(0.3, 0.2, 0.1)):
    sigmas = None if sigmas is None else np.array(sigmas, float)
    return BiasEstimate(np.array(xi, float), np.array(gamma, float), 0.3,
                        np.array(costs, float), np.zeros((2, len(xi))), sigmas, 4)


def test_extend_to_top_shifts_bounds_by_the_last_measured_step():
    est = _est([0.3, 0.1, 0.0], [0.2, 0.05, 0.0], [1.0, 2.0, 4.0])
    ext = extend_to_top(est, [100, 200, 400, 1600])
    # step = ξ[-2] = 0.1: [0.3 + 0.1, 0.1 + 0.1, 0.1, 0] = [0.4, 0.2, 0.1, 0]
    np.testing.assert_allclose(ext.xi, [0.4, 0.2, 0.1, 0.0], rtol=1e-12)
    # step = γ[-2] = 0.05: [0.25, 0.1, 0.05, 0]
    np.testing.assert_allclose(ext.gamma, [0.25, 0.1, 0.05, 0.0], rtol=1e-12)
    # cost slope: log(4/2) / log(400/200) = 1 -> ratio (1600/400)^1 = 4 -> top 16
    np.testing.assert_allclose(ext.costs, [1.0, 2.0, 4.0, 16.0], rtol=1e-12)
    # σ at the top is that of the old reference
    np.testing.assert_allclose(ext.sigmas, [0.3, 0.2, 0.1, 0.1])
    assert ext.sigma == 0.3 and ext.dof == 4


def test_extend_to_top_clips_the_cost_slope_and_falls_back_to_three():
    est = _est([0.3, 0.1, 0.0], [0.2, 0.05, 0.0], [1.0, 2.0, 2.2], sigmas=None)
    # slope log(1.1)/log(2) = 0.1375 is clipped to 0.5: ratio 4^0.5 = 2 -> top 4.4
    ext = extend_to_top(est, [100, 200, 400, 1600])
    np.testing.assert_allclose(ext.costs, [1.0, 2.0, 2.2, 4.4], rtol=1e-12)
    np.testing.assert_allclose(ext.sigmas, [0.3] * 4)  # no per-fidelity σ: σ everywhere
    # non-numeric levels: the top costs 3 × the last measured one
    ext = extend_to_top(est, ["a", "b", "c", "d"])
    np.testing.assert_allclose(ext.costs, [1.0, 2.0, 2.2, 6.6], rtol=1e-12)


# -- pooled_variance ---------------------------------------------------------------------


def _stats(pulls, n_arms=2, n_fid=2):
    """ArmStats from (arm, fidelity, reward) triples."""
    st = ArmStats(n_arms, n_fid)
    arms, fids, rewards = (np.array(c) for c in zip(*pulls, strict=True))
    st.add(arms, fids, rewards, np.ones(len(pulls)))
    return st


def test_pooled_variance_pools_the_prior_with_the_run():
    # fid 0: arm 0 rewards [1, 3] (n = 2, s² = 2), arm 1 [0, 2, 4] (n = 3, s² = 4)
    #   run dof = 1 + 2 = 3, Σ (n−1) s² = 1·2 + 2·4 = 10
    #   prior s²₀ = 1 with ν₀ = 3: σ² = (3·1 + 10) / (3 + 3) = 13/6
    # fid 1: arm 0 has one reward: no dof -> the prior 0.5 is kept
    st = _stats([(0, 0, 1.0), (0, 0, 3.0), (1, 0, 0.0), (1, 0, 2.0), (1, 0, 4.0),
                 (0, 1, 5.0)])
    var = pooled_variance(st, np.array([1.0, 0.5]), prior_dof=3, min_dof=3)
    np.testing.assert_allclose(var, [13 / 6, 0.5], rtol=1e-12)
    # a heavier prior pulls towards it: ν₀ = 30 -> (30 + 10) / 33
    var = pooled_variance(st, np.array([1.0, 0.5]), prior_dof=30, min_dof=3)
    np.testing.assert_allclose(var, [40 / 33, 0.5], rtol=1e-12)


def test_pooled_variance_keeps_the_prior_until_min_dof():
    st = _stats([(0, 0, 1.0), (0, 0, 3.0), (1, 0, 0.0), (1, 0, 2.0), (1, 0, 4.0)])
    # run dof at fid 0 is 3 < 4: the calibration value alone
    var = pooled_variance(st, np.array([1.0, 0.5]), prior_dof=3, min_dof=4)
    np.testing.assert_allclose(var, [1.0, 0.5])


# -- grow_violated -----------------------------------------------------------------------


def _radius(counts):
    # 0.1 / √n: 0.1 for a single pull
    return 0.1 / np.sqrt(counts)


def test_grow_violated_doubles_a_violated_bound():
    # arm 0 seen once at fid 0 (1.0) and once at fid 2 (0.5):
    #   gap − radii = 0.5 − 0.1 − 0.1 = 0.3 > ξ0 + ξ2 = 0.2 + 0 -> ξ0 doubled to 0.4
    st = _stats([(0, 0, 1.0), (0, 2, 0.5)], n_arms=2, n_fid=3)
    bounds = np.array([0.2, 0.1, 0.0])
    new, grown = grow_violated(st, bounds, _radius)
    assert grown == [0]
    np.testing.assert_allclose(new, [0.4, 0.1, 0.0])
    np.testing.assert_array_equal(bounds, [0.2, 0.1, 0.0])  # the input is not modified


def test_grow_violated_checks_every_pair_of_fidelities():
    # arm 1 at fid 0 (0.0) and fid 1 (0.6): 0.6 − 0.2 = 0.4 > ξ0 + ξ1 = 0.3 -> ξ0 = 0.4
    # arm 0 at fid 1 (0.0) and fid 2 (0.5): 0.5 − 0.2 = 0.3 > ξ1 + ξ2 = 0.1 -> ξ1 = 0.2
    # monotone: [0.4, 0.2, 0] already strictly decreasing (0.4 >= 1.01·0.2 + 1e-6)
    st = _stats([(1, 0, 0.0), (1, 1, 0.6), (0, 1, 0.0), (0, 2, 0.5)], n_arms=2, n_fid=3)
    new, grown = grow_violated(st, [0.2, 0.1, 0.0], _radius)
    assert grown == [0, 1]
    np.testing.assert_allclose(new, [0.4, 0.2, 0.0])


def test_grow_violated_grows_a_zero_bound_from_tiny():
    # ξ = [0, 0]: 2·max(0, 1e-6) = 2e-6 (then monotone: max(2e-6, 1.01·0 + 1e-6))
    st = _stats([(0, 0, 1.0), (0, 1, 0.0)])
    new, grown = grow_violated(st, [0.0, 0.0], _radius)
    assert grown == [0]
    np.testing.assert_allclose(new, [2 * TINY, 0.0])


def test_grow_violated_allows_the_confidence_radii():
    # gap 0.35 exceeds ξ0 + ξ2 = 0.2 but not once the two radii (0.1 each) are taken off:
    # 0.35 − 0.2 = 0.15 <= 0.2 -> nothing grows. With 4 pulls each the radii are 0.05:
    # 0.35 − 0.1 = 0.25 > 0.2 -> ξ0 grows.
    st = _stats([(0, 0, 0.85), (0, 2, 0.5)], n_fid=3)
    new, grown = grow_violated(st, [0.2, 0.1, 0.0], _radius)
    assert grown == []
    np.testing.assert_allclose(new, [0.2, 0.1, 0.0])
    st = _stats([(0, 0, 0.85)] * 4 + [(0, 2, 0.5)] * 4, n_fid=3)
    new, grown = grow_violated(st, [0.2, 0.1, 0.0], _radius)
    assert grown == [0]
    np.testing.assert_allclose(new, [0.4, 0.1, 0.0])


def test_grow_violated_ignores_arms_seen_at_one_fidelity():
    st = _stats([(0, 0, 5.0), (1, 1, -5.0)])
    new, grown = grow_violated(st, [0.2, 0.0], _radius)
    assert grown == []
    np.testing.assert_allclose(new, [0.2, 0.0])


# -- calibration.needs_calibration / calibration_plan ------------------------------------


def test_needs_calibration():
    known = {"sigma": 0.1, "xi": [0.2, 0.0], "gamma": None, "costs": [1.0, 2.0]}
    assert not needs_calibration(["xi"], known)
    assert needs_calibration(["gamma"], known)  # an unknown bound the policy needs
    assert not needs_calibration([], known)
    assert needs_calibration([], {**known, "sigma": None})
    assert needs_calibration([], {**known, "costs": "measured"})


def test_calibration_plan_repeats_every_fidelity_cheapest_first():
    plan = calibration_plan(10, 3, 4, 2, seed=0)
    assert len(plan) == 4 * 3 * 2
    arms = plan.arms[:4]
    assert np.all(np.diff(arms) > 0) and arms.min() >= 0 and arms.max() < 10
    # one round: the 4 arms at fidelity 0, then 1, then 2; the round repeated twice
    np.testing.assert_array_equal(plan.fidelities, np.tile(np.repeat([0, 1, 2], 4), 2))
    np.testing.assert_array_equal(plan.arms, np.tile(arms, 6))
    # seeded: the same seed gives the same arms (None counts as 0), another seed others
    np.testing.assert_array_equal(calibration_plan(10, 3, 4, 2, seed=0).arms, plan.arms)
    np.testing.assert_array_equal(calibration_plan(10, 3, 4, 2, seed=None).arms, plan.arms)
    assert any(not np.array_equal(calibration_plan(10, 3, 4, 2, seed=s).arms[:4], arms)
               for s in range(1, 6))
    # more calibration arms than arms: every arm once
    np.testing.assert_array_equal(calibration_plan(3, 2, 8, 1, seed=1).arms,
                                  [0, 1, 2, 0, 1, 2])


# -- calibration.estimate_settings -------------------------------------------------------

# Two calibration arms (ids 3 and 7), two fidelities, two repeats each:
#   arm 3: fid 0 [0.50, 0.54] mean 0.52   fid 1 [0.70, 0.74] mean 0.72
#   arm 7: fid 0 [0.40, 0.40] mean 0.40   fid 1 [0.50, 0.52] mean 0.51
# Differences to the top: arm 3: 0.52 − 0.72 = −0.20; arm 7: 0.40 − 0.51 = −0.11.
CAL_ARMS = [3, 7, 3, 7, 3, 7, 3, 7]
CAL_FIDS = [0, 0, 1, 1, 0, 0, 1, 1]
CAL_REWARDS = [0.50, 0.40, 0.70, 0.50, 0.54, 0.40, 0.74, 0.52]
CAL_COSTS = [1.0, 3.0, 5.0, 1.0, 2.0, 2.0, 1.0, 1.0]
DONE = ["done"] * 8


def _settings(known, needs=("xi",), rewards=CAL_REWARDS, status=DONE, costs=CAL_COSTS,
              arms=CAL_ARMS, fids=CAL_FIDS):
    return estimate_settings(arms, fids, rewards, costs, status, 2, known, needs)


def test_estimate_settings_xi_is_inflated_max_difference_plus_two_sigma():
    out = _settings({"sigma": 0.01, "xi": None, "costs": [1.0, 2.0]})
    # ξ_0 = 1.5 · max(|−0.20|, |−0.11|) + 2σ = 0.30 + 0.02 = 0.32; ξ_1 = 0
    np.testing.assert_allclose(out["xi"], [0.32, 0.0], rtol=1e-9)
    assert out["estimated"] == ["xi"]
    assert out["sigma"] == 0.01 and out["costs"] == [1.0, 2.0]  # known values kept


def test_estimate_settings_gamma_uses_the_range_of_the_differences():
    out = _settings({"sigma": 0.01, "gamma": None, "costs": [1.0, 2.0]}, needs=("gamma",))
    # γ_0 = 1.5 · (max − min of [−0.20, −0.11]) + 2σ = 1.5·0.09 + 0.02 = 0.155; γ_1 = 0
    np.testing.assert_allclose(out["gamma"], [0.155, 0.0], rtol=1e-9)
    assert out["estimated"] == ["gamma"]


def test_estimate_settings_sigma_is_the_chi_square_upper_bound():
    out = _settings({"sigma": None, "xi": [0.5, 0.0], "costs": [1.0, 2.0]})
    # within-(arm, fidelity) sums of squares: arm 3 fid 0: 2·0.02² = 0.0008,
    # arm 3 fid 1: 0.0008, arm 7 fid 0: 0, arm 7 fid 1: 2·0.01² = 0.0002 -> 0.0018
    # df = 4 × (2 − 1) = 4; σ² = 0.0018 / χ²_{0.05, 4} = 0.0018 / 0.7107230 = 0.0025326,
    # σ = 0.0503253
    assert chi2.ppf(0.05, 4) == pytest.approx(0.7107230213973239, rel=1e-12)
    assert out["sigma"] == pytest.approx(np.sqrt(0.0018 / 0.7107230213973239), rel=1e-9)
    assert out["sigma"] == pytest.approx(0.0503253, rel=1e-6)
    assert out["estimated"] == ["sigma"]
    assert out["xi"] == [0.5, 0.0]


def test_estimate_settings_sigma_of_a_deterministic_script_is_floored():
    rewards = [0.5, 0.4, 0.7, 0.5, 0.5, 0.4, 0.7, 0.5]  # repeats identical: no spread
    out = _settings({"sigma": None, "xi": [0.5, 0.0], "costs": [1.0, 2.0]}, rewards=rewards)
    # floor 1e-3 × ptp(rewards) = 1e-3 × (0.7 − 0.4) = 3e-4
    assert out["sigma"] == pytest.approx(3e-4, rel=1e-9)


def test_estimate_settings_measured_costs_are_increasing_medians():
    out = _settings({"sigma": 0.01, "xi": [0.5, 0.0], "costs": "measured"})
    # fid 0 costs [1, 3, 2, 2] -> median 2; fid 1 [5, 1, 1, 1] -> median 1, raised to
    # 2·(1 + 1e-6) + 1e-9 = 2.000002001
    np.testing.assert_allclose(out["costs"], [2.0, 2.000002001], rtol=1e-12)
    assert out["estimated"] == ["costs"]
    assert out["calibration"] == {"arms": [3, 7], "pulls": 8, "succeeded": 8,
                                  "cost": pytest.approx(16.0)}


def test_estimate_settings_ignores_failed_pulls():
    # arm 3's second fid-1 pull fails (0.74 gone) and arm 7's first fid-0 reward is nan:
    #   arm 3: fid 1 mean 0.70 -> diff 0.52 − 0.70 = −0.18; arm 7: fid 0 mean 0.40 -> −0.11
    #   ξ_0 = 1.5·0.18 + 2·0.01 = 0.29
    status = list(DONE)
    status[6] = "error"
    rewards = list(CAL_REWARDS)
    rewards[1] = np.nan
    out = _settings({"sigma": 0.01, "xi": None, "costs": [1.0, 2.0]}, rewards=rewards,
                    status=status)
    np.testing.assert_allclose(out["xi"], [0.29, 0.0], rtol=1e-9)
    assert out["calibration"]["succeeded"] == 6


def test_estimate_settings_errors_name_what_cannot_be_estimated():
    # one pull per (arm, fidelity): no degrees of freedom for σ
    with pytest.raises(ValueError, match="sigma"):
        _settings({"sigma": None, "xi": [0.5, 0.0], "costs": [1.0, 2.0]},
                  arms=CAL_ARMS[:4], fids=CAL_FIDS[:4], rewards=CAL_REWARDS[:4],
                  costs=CAL_COSTS[:4], status=DONE[:4])
    # every fidelity-0 pull failed: no arm seen at fidelity 0 and the top
    status = ["error" if f == 0 else "done" for f in CAL_FIDS]
    with pytest.raises(ValueError, match="xi"):
        _settings({"sigma": 0.01, "xi": None, "costs": [1.0, 2.0]}, status=status)
