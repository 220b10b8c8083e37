"""Calibration of the bias bounds, the noise and the costs (mftune.bias, mftune.calibration).

Every expected value is worked out by hand from the formulas in the modules' docstrings
on a small made-up array (the arithmetic is in the comments), so that a change to an
inflation term, to the pooling of σ or to the growing of violated bounds fails a test.
"""

import numpy as np
import pytest
from scipy.stats import norm

from mftune.engine.calibration import (
    BiasEstimate,
    estimate_bias,
    extend_to_top,
    grow_violated,
    monotone_bounds,
    pooled_variance,
    running_costs,
)
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


def test_extend_to_top_adds_one_measured_step_per_missing_fidelity():
    # measured on [100, 200] (reference 200); 400 and 1600 are missing: k = 2 steps
    est = _est([0.1, 0.0], [0.06, 0.0], [1.0, 2.0], sigmas=(0.3, 0.2))
    ext = extend_to_top(est, [100, 200, 400, 1600])
    # step = ξ[-2] = 0.1: [0.1 + 2·0.1, 2·0.1, 0.1, 0]
    np.testing.assert_allclose(ext.xi, [0.3, 0.2, 0.1, 0.0], rtol=1e-12)
    np.testing.assert_allclose(ext.gamma, [0.18, 0.12, 0.06, 0.0], rtol=1e-12)
    # cost slope log(2/1)/log(200/100) = 1: 400 -> 4, 1600 -> 16
    np.testing.assert_allclose(ext.costs, [1.0, 2.0, 4.0, 16.0], rtol=1e-12)
    np.testing.assert_allclose(ext.sigmas, [0.3, 0.2, 0.2, 0.2])
    # non-numeric levels: ×3 per missing step
    ext = extend_to_top(est, ["a", "b", "c", "d"])
    np.testing.assert_allclose(ext.costs, [1.0, 2.0, 6.0, 18.0], rtol=1e-12)


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


# -- curve_steps / default_epsilon -----------------------------------------------------


def test_curve_steps_count_log_steps_left_to_the_top():
    from mftune.engine.calibration import curve_steps

    # ×4 levels: one step of the same log length per fidelity -> 2, 1, 0 steps left
    assert curve_steps([100, 400, 1600, 6400]) == pytest.approx([3.0, 2.0, 1.0, 0.0])
    # 10 -> 20 is one log2 step, 20 -> 80 two: at fidelity 1, log(80/20)/log(20/10) = 2
    assert curve_steps([10, 20, 80]).tolist() == pytest.approx([2.0, 2.0, 0.0])
    assert curve_steps(["small", "medium", "large"]).tolist() == [2.0, 1.0, 0.0]


def test_default_epsilon_for_accuracy_like_and_other_scores():
    from mftune.engine.calibration import EPSILON_UNIT, default_epsilon

    assert default_epsilon([0.7, 0.9, np.nan], 0.3) == EPSILON_UNIT  # scores in [0, 1]
    # a range of 0.02: a tenth of it (0.002) caps half a point
    assert default_epsilon([0.90, 0.92], 0.3) == pytest.approx(0.002)
    # negative MSE over [-50, -10]: 1 % of the best MSE, 10
    assert default_epsilon([-50.0, -10.0, -20.0], 3.0) == pytest.approx(0.1)
    # the worst candidates do not move it: one diverged fit at -30,000 (the range rule
    # gave 300, three times the best MSE)
    assert default_epsilon([-30000.0, -10.0, -20.0], 3.0) == pytest.approx(0.1)
    # capped at a tenth of the range: losses of 100.0 and 100.5
    assert default_epsilon([-100.5, -100.0], 3.0) == pytest.approx(0.05)
    # scores of both signs (an R² with failed candidates, a log-likelihood above 0):
    # 1 % of the range
    assert default_epsilon([-3.0, 0.5, 2.0], 1.0) == pytest.approx(0.05)
    # a perfect loss of 0 among the scores: not all negative, 1 % of the range
    assert default_epsilon([-8.0, 0.0], 1.0) == pytest.approx(0.08)
    assert default_epsilon([np.nan], 0.25) == 0.25  # nothing seen: the fallback (σ)


def test_an_epsilon_larger_than_the_scores_range_is_refused():
    from mftune.benchmarks.curves import curve_instance, run_search

    inst = curve_instance(0, "ranked", n_arms=4)
    with pytest.raises(ValueError, match="epsilon=5 is larger than the range"):
        run_search(inst, 0, epsilon=5.0)
