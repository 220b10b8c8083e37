"""SE, IISE, IISE-γ and MFE: thresholds, guarantees, replayability, validation."""

import numpy as np
import pytest
from scipy.stats import binom

from mftune.benchmarks.bandits import GaussianBandit, SimulatedBandit
from mftune.benchmarks.iise_domains import (
    SYNTHETIC_A,
    SYNTHETIC_B,
    YAHTZEE_XI,
    make_iise_synthetic,
    yahtzee,
)
from mftune.benchmarks.simulate import simulate_policy
from mftune.policies import IISE, MFE, IISEGamma, Pulls, SuccessiveElimination
from mftune.policies.base import leader
from mftune.policies.iise import iise_thresholds

YAHTZEE_COSTS = 12.0 ** np.arange(5, 13)


@pytest.mark.parametrize(
    ("costs", "bias", "factor", "expected"),
    [
        (SYNTHETIC_A["costs"], SYNTHETIC_A["xi"], 4, [1.71116, 0.39680, 0.01942, 0]),
        (SYNTHETIC_A["costs"], SYNTHETIC_A["gamma"], 2, [0.23124, 0.04532, 0.00092, 0]),
        (SYNTHETIC_B["costs"], SYNTHETIC_B["xi"], 4, [2.8, 1.38, 0.378, 0.042, 0]),
        (SYNTHETIC_B["costs"], SYNTHETIC_B["gamma"], 2, [0.4, 0.18, 0.018, 0.002, 0]),
        (YAHTZEE_COSTS, YAHTZEE_XI, 4,
         [0.13793, 0.09783, 0.07144, 0.05329, 0.04037, 0.03096, 0.02396, 0]),
        (YAHTZEE_COSTS, YAHTZEE_XI, 2,
         [0.06897, 0.04892, 0.03572, 0.02664, 0.02019, 0.01548, 0.01198, 0]),
    ],
)
def test_thresholds_match_algorithms_table(costs, bias, factor, expected):
    # docs/algorithms.md lists alpha_m to 5 decimals.
    np.testing.assert_allclose(iise_thresholds(costs, bias, factor), expected, atol=6e-6)


def _policies(env, delta=0.001, c=0.1):
    return {
        "SE": SuccessiveElimination(env.n_arms, env.costs, delta, env.variance_proxy),
        "IISE": IISE(env.n_arms, env.costs, env.xi, delta, env.variance_proxy),
        "IISE-gamma": IISEGamma(env.n_arms, env.costs, env.gamma, delta, env.variance_proxy),
        "MFE": MFE(env.n_arms, env.costs, env.xi, c, delta, env.variance_proxy),
    }


def _small_instance(seed, n_arms=6, min_gap=0.3):
    """A clean instance (bounds hold exactly), 3 fidelities, gaps of at least ``min_gap``."""
    env = make_iise_synthetic(n_arms, [1, 4, 16], [0.6, 0.2, 0.0], [0.3, 0.1, 0.0],
                              mode="clean", random_state=seed)
    rng = np.random.default_rng(seed)
    mu = -np.cumsum(rng.uniform(min_gap, 3 * min_gap, n_arms))
    mu = rng.permutation(mu - mu.max())
    bias = env.theta - env.theta[-1]
    return GaussianBandit(mu + bias, env.costs, 1.0, env.xi, env.gamma)


class _NoiseFree(SimulatedBandit):
    def _noisy(self, means, rng):
        return np.array(means, dtype=float)


@pytest.mark.parametrize("seed", range(25))
def test_best_arm_never_eliminated_without_noise(seed):
    # With exact means and bounds that hold, the best arm's upper bound is
    # always >= every lower bound, so no algorithm may drop it.
    base = _small_instance(seed, n_arms=8)
    env = _NoiseFree(base.theta, base.costs, base.xi, base.gamma, 1.0)
    # MFE's correctness does not depend on c; c = 1 keeps its phases short.
    for name, pol in _policies(env, delta=0.05, c=1.0).items():
        rec = simulate_policy(pol, env, seed, name=name)
        assert pol.active[env.best_arm], name
        assert rec.correct, name
        assert pol.eliminated_round[env.best_arm] == -1


def test_delta_correctness_on_small_instances():
    # Each run errs with probability <= delta = 0.2 (the theorem; in practice
    # far less). Over 150 seeded runs per algorithm the error count is then
    # stochastically below Binomial(150, 0.2), whose 0.999 quantile is the bound.
    n_runs, delta = 150, 0.2
    bound = binom.ppf(0.999, n_runs, delta)
    errors = {}
    for run in range(n_runs):
        env = _small_instance(1000 + run, n_arms=4, min_gap=0.2)
        for name, pol in _policies(env, delta=delta, c=1.0).items():
            rec = simulate_policy(pol, env, run, name=name)
            errors[name] = errors.get(name, 0) + (not rec.correct)
    for name, n_err in errors.items():
        assert n_err <= bound, (name, n_err, bound)


def test_block_path_equals_round_by_round():
    # The simulator's block rounds must take exactly the decisions of plain
    # ask/tell with the same generator: same counts, eliminations and answer.
    env = make_iise_synthetic(60, [1, 10, 100], [0.8, 0.2, 0.0], [0.2, 0.05, 0.0],
                              random_state=3)
    for name in ("SE", "IISE", "IISE-gamma", "MFE"):
        fast = _policies(env, 0.05, c=1.0)[name]
        slow = _policies(env, 0.05, c=1.0)[name]
        simulate_policy(fast, env, 11, fast=True, shortcuts=False)
        simulate_policy(slow, env, 11, fast=False, shortcuts=False)
        np.testing.assert_array_equal(fast.stats.counts, slow.stats.counts, err_msg=name)
        np.testing.assert_array_equal(fast.eliminated_round, slow.eliminated_round)
        np.testing.assert_allclose(fast.stats.sums, slow.stats.sums, rtol=0, atol=0)
        assert fast.recommend() == slow.recommend()


def test_replayable_same_tells_same_asks():
    env = _small_instance(5)
    rng = np.random.default_rng(0)
    a = IISE(env.n_arms, env.costs, env.xi, 0.05, random_state=1)
    b = IISE(env.n_arms, env.costs, env.xi, 0.05, random_state=1)
    for _ in range(400):
        if a.done:
            break
        pa, pb = a.ask(), b.ask()
        np.testing.assert_array_equal(pa.arms, pb.arms)
        np.testing.assert_array_equal(pa.fidelities, pb.fidelities)
        rewards = env.pull(pa.arms, pa.fidelities, rng)
        a.tell(pa, rewards)
        b.tell(pb, rewards)
    assert b.done == a.done and a.recommend() == b.recommend()


def test_partial_tells_complete_a_round():
    env = _small_instance(2)
    pol = IISE(env.n_arms, env.costs, env.xi, 0.05)
    batch = pol.ask()
    assert len(batch) == env.n_arms and np.all(batch.fidelities == 0)
    assert len(pol.ask()) == 0  # everything outstanding
    rng = np.random.default_rng(0)
    half = batch[:3]
    pol.tell(half, env.pull(half.arms, half.fidelities, rng))
    assert pol.n_rounds == 0 and pol.n_pending == env.n_arms - 3
    rest = batch[3:]
    pol.tell(rest, env.pull(rest.arms, rest.fidelities, rng))
    assert pol.n_rounds == 1 and pol.n_pending == 0
    with pytest.raises(ValueError, match="not asked"):
        pol.tell(rest, np.zeros(len(rest)))


def test_summary_records_eliminations_and_costs():
    env = _small_instance(7)
    pol = IISE(env.n_arms, env.costs, env.xi, 0.05)
    rec = simulate_policy(pol, env, 0)
    s = pol.summary()
    assert s.done and s.recommendation == rec.recommendation
    alive = s.eliminated_round == -1
    assert alive.sum() == 1 and alive[s.recommendation]
    assert np.all(s.eliminated_fidelity[~alive] >= 0)
    assert s.total_cost == pytest.approx(np.dot(s.pulls_per_fidelity, env.costs))


def test_epsilon_stopping_returns_near_optimal_arm():
    # Two arms 0.01 apart would take SE very long; with epsilon = 0.2 the
    # [RECON] rule stops once 2B <= epsilon and any answer is 0.2-optimal.
    theta = np.array([[0.0, 0.01, -1.0]])
    env = GaussianBandit(theta, [1.0])
    pol = SuccessiveElimination(3, [1.0], 0.05, epsilon=0.2)
    rec = simulate_policy(pol, env, 0)
    assert pol.stopped_early_ and rec.recommendation in (0, 1)
    assert 2 * pol.radius([pol.t_])[0] <= 0.2


def test_yahtzee_iise_matches_paper_on_few_runs():
    # Table 1: IISE 0.53 % of SE (per-run spread ~0.05, so 8 runs stay within 10 %).
    env = yahtzee()
    ratios = []
    for run in range(8):
        se = simulate_policy(_policies(env)["SE"], env, run)
        iise = simulate_policy(_policies(env)["IISE"], env, run)
        assert se.correct and iise.correct
        ratios.append(100 * iise.cost / se.cost)
    assert np.mean(ratios) == pytest.approx(0.53, rel=0.10)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"costs": [1, -1, 10]}, "costs must be positive"),
        ({"costs": [1, 10, 5]}, "costs must be strictly increasing"),
        ({"xi": [0.5, -0.1, 0.0]}, "xi must be non-negative"),
        ({"xi": [0.5, 0.2, 0.1]}, "xi must end with 0"),
        ({"xi": [0.5, 0.0]}, "xi must have one entry per fidelity"),
        ({"delta": 0.0}, r"delta must lie in the interval \(0, 1\)"),
        ({"delta": 1.5}, r"delta must lie in the interval \(0, 1\)"),
        ({"variance_proxy": 0.0}, "variance_proxy must be > 0"),
        ({"n_arms": 1}, "n_arms must be an integer >= 2"),
    ],
)
def test_invalid_policy_arguments(kwargs, match):
    args = {"n_arms": 4, "costs": [1, 4, 16], "xi": [0.5, 0.2, 0.0], "delta": 0.1,
            "variance_proxy": 1.0} | kwargs
    with pytest.raises(ValueError, match=match):
        IISE(**args)


def test_invalid_gamma_and_mfe_constant():
    with pytest.raises(ValueError, match="gamma must end with 0"):
        IISEGamma(4, [1, 4], [0.1, 0.2])
    with pytest.raises(ValueError, match="c must be > 0"):
        MFE(4, [1, 4], [0.5, 0.0], c=0)


@pytest.mark.parametrize(
    ("theta", "kw", "match"),
    [
        (np.zeros(5), {}, "theta must be a 2-D array"),
        (np.zeros((2, 1)), {}, "theta must be a 2-D array"),
        (np.zeros((3, 4)), {}, "costs must have one entry per fidelity"),
        (np.zeros((2, 4)), {"sigma": 0.0}, "sigma must be > 0"),
        (np.zeros((2, 4)), {"sigma": -1.0}, "sigma must be > 0"),
        (np.zeros((2, 4)), {"xi": [1.0]}, "xi must have one entry per fidelity"),
    ],
)
def test_invalid_environment(theta, kw, match):
    with pytest.raises(ValueError, match=match):
        GaussianBandit(theta, [1.0, 2.0], **kw)


def test_pulls_validation():
    with pytest.raises(ValueError, match="same length"):
        Pulls([0, 1, 2], [0, 1])
    p = Pulls([0, 1, 2], 1)
    assert list(p) == [(0, 1), (1, 1), (2, 1)]


def _futile_policies(env, delta):
    return {
        "IISE": IISE(env.n_arms, env.costs, env.xi, delta, env.variance_proxy,
                     futility_switch=True),
        "IISE-gamma": IISEGamma(env.n_arms, env.costs, env.gamma, delta, env.variance_proxy,
                                futility_switch=True),
    }


def test_futility_switch_keeps_delta_correctness():
    # The switch changes when a run moves up, never an elimination test, so the
    # error rate obeys the same Binomial(150, 0.2) 0.999-quantile bound as
    # test_delta_correctness_on_small_instances; noise-free, the best arm survives.
    n_runs, delta = 150, 0.2
    bound = binom.ppf(0.999, n_runs, delta)
    errors = {"IISE": 0, "IISE-gamma": 0}
    for run in range(n_runs):
        env = _small_instance(1000 + run, n_arms=4, min_gap=0.2)
        for name, pol in _futile_policies(env, delta).items():
            errors[name] += not simulate_policy(pol, env, run, name=name).correct
    assert max(errors.values()) <= bound, errors
    for seed in range(10):
        base = _small_instance(seed, n_arms=8)
        env = _NoiseFree(base.theta, base.costs, base.xi, base.gamma, 1.0)
        for name, pol in _futile_policies(env, 0.05).items():
            simulate_policy(pol, env, seed, name=name)
            assert pol.active[env.best_arm], (name, seed)


def test_futility_switch_leaves_a_phase_that_cannot_eliminate():
    # Noise-free, four arms 0.1 apart at every fidelity, bias-variation bounds
    # (2, 1, 0): no arm can be eliminated below the top (gaps < gamma_m), yet
    # Eq. 8's alpha_0 = 0.105 (costs 1, 400, 10000) keeps plain IISE-gamma at
    # fidelity 0 until 4B <= alpha_0, hundreds of rounds. With the futility switch
    # it leaves fidelity 0 after one round (spread 0.3 + 2B(1) = 1.04 < 2) and
    # fidelity 1 after two (0.3 + 2B(2) = 0.88 < 1). Phases never reuse samples,
    # so the top phase is the same in both runs and the saving is exactly the
    # lower phases' cost.
    mu = np.array([0.0, -0.1, -0.2, -0.3])
    env = _NoiseFree(np.vstack([mu, mu, mu]), [1.0, 400.0, 10000.0], [2.0, 1.0, 0.0],
                     [2.0, 1.0, 0.0], 0.01)
    plain = IISEGamma(4, env.costs, env.gamma, 0.05, env.variance_proxy)
    futile = IISEGamma(4, env.costs, env.gamma, 0.05, env.variance_proxy,
                       futility_switch=True)
    rounds_plain = [plain.phase_length(p) for p in (0, 1)]
    rec_plain = simulate_policy(plain, env, 0, shortcuts=False)
    rec_fut = simulate_policy(futile, env, 0, shortcuts=False)
    assert rec_plain.correct and rec_fut.correct
    assert rounds_plain[0] > 100
    np.testing.assert_array_equal(plain.stats.counts[:2].sum(axis=1), 4 * np.array(rounds_plain))
    np.testing.assert_array_equal(futile.stats.counts[:2].sum(axis=1), [4, 8])
    np.testing.assert_array_equal(plain.stats.counts[2], futile.stats.counts[2])
    saved = 4 * ((rounds_plain[0] - 1) * 1.0 + (rounds_plain[1] - 2) * 400.0)
    assert rec_plain.cost - rec_fut.cost == pytest.approx(saved)
    assert futile.summary().extra["futility_switches"] == 2
    assert plain.summary().extra["futility_switches"] == 0


def test_futility_switch_block_path_equals_round_by_round():
    env = make_iise_synthetic(60, [1, 10, 100], [0.8, 0.2, 0.0], [0.2, 0.05, 0.0],
                              random_state=3)
    for name in ("IISE", "IISE-gamma"):
        fast = _futile_policies(env, 0.05)[name]
        slow = _futile_policies(env, 0.05)[name]
        simulate_policy(fast, env, 11, fast=True, shortcuts=False)
        simulate_policy(slow, env, 11, fast=False, shortcuts=False)
        np.testing.assert_array_equal(fast.stats.counts, slow.stats.counts, err_msg=name)
        np.testing.assert_array_equal(fast.eliminated_round, slow.eliminated_round)
        assert fast.futile_switches_ == slow.futile_switches_
        assert fast.recommend() == slow.recommend()


def test_cost_balance_leaves_each_phase_after_one_round_above_in_cost():
    # Noise-free, four arms 0.1 apart, costs (1, 3, 20) and tight bias-variation
    # bounds (0.02, 0.01, 0): every arm is 0.1 from the next, so an elimination at
    # fidelity m needs 2B(t) + gamma_m <= 0.1. Eq. 8's alpha_0 alone keeps plain
    # IISE-gamma at fidelity 0 for phase_length(0) rounds. With cost_balance=1 the
    # phase at fidelity 0 lasts ceil(3/1) = 3 rounds and the one at fidelity 1
    # ceil(20/3) = 7, unless an elimination ends the run first; the rounds it
    # runs at fidelity 0 cost exactly one round of fidelity 1.
    mu = np.array([0.0, -0.1, -0.2, -0.3])
    env = _NoiseFree(np.vstack([mu, mu, mu]), [1.0, 3.0, 20.0], [0.02, 0.01, 0.0],
                     [0.02, 0.01, 0.0], 0.01)
    plain = IISEGamma(4, env.costs, env.gamma, 0.05, env.variance_proxy)
    capped = IISEGamma(4, env.costs, env.gamma, 0.05, env.variance_proxy, cost_balance=1.0)
    assert plain.phase_length(0) > 10
    assert capped.phase_length(0) == 3 and capped.phase_length(1) == 7
    rec_plain = simulate_policy(plain, env, 0, shortcuts=False)
    rec_capped = simulate_policy(capped, env, 0, shortcuts=False)
    assert rec_plain.correct and rec_capped.correct
    assert capped.stats.counts[0].tolist() == [3, 3, 3, 3]
    assert plain.stats.counts[0].min() > 3
    assert capped.summary().extra["balanced_switches"] >= 1
    assert plain.summary().extra["balanced_switches"] == 0


@pytest.mark.parametrize("cost_balance", [0.5, 2.0])
def test_cost_balance_block_path_equals_round_by_round(cost_balance):
    env = make_iise_synthetic(60, [1, 10, 100], [0.8, 0.2, 0.0], [0.2, 0.05, 0.0],
                              random_state=3)
    for cls, bound in ((IISE, env.xi), (IISEGamma, env.gamma)):
        fast = cls(env.n_arms, env.costs, bound, 0.05, env.variance_proxy,
                   futility_switch=True, cost_balance=cost_balance)
        slow = cls(env.n_arms, env.costs, bound, 0.05, env.variance_proxy,
                   futility_switch=True, cost_balance=cost_balance)
        simulate_policy(fast, env, 11, fast=True, shortcuts=False)
        simulate_policy(slow, env, 11, fast=False, shortcuts=False)
        np.testing.assert_array_equal(fast.stats.counts, slow.stats.counts)
        np.testing.assert_array_equal(fast.eliminated_round, slow.eliminated_round)
        assert fast.balanced_switches_ == slow.balanced_switches_
        assert fast.recommend() == slow.recommend()


def test_cost_balance_keeps_delta_correctness():
    # As test_futility_switch_keeps_delta_correctness: the balance decides only
    # when a run moves up, so errors stay below the Binomial(150, 0.2) 0.999 quantile.
    n_runs, delta = 150, 0.2
    bound = binom.ppf(0.999, n_runs, delta)
    errors = 0
    for run in range(n_runs):
        env = _small_instance(1000 + run, n_arms=4, min_gap=0.2)
        pol = IISEGamma(env.n_arms, env.costs, env.gamma, delta, env.variance_proxy,
                        futility_switch=True, cost_balance=1.0)
        errors += not simulate_policy(pol, env, run).correct
    assert errors <= bound


def test_cost_balance_must_be_positive():
    with pytest.raises(ValueError, match="cost_balance"):
        IISE(3, [1.0, 2.0], [0.1, 0.0], cost_balance=0.0)


def _reward_table(n_pulls=400):
    """A 12-arm synthetic instance and ``table[m, arm, k]``: the reward of each arm's
    ``k``-th pull at fidelity ``m`` (seeded)."""
    env = make_iise_synthetic(12, [1, 10, 100], [0.8, 0.2, 0.0], [0.2, 0.05, 0.0],
                              random_state=3)
    rng = np.random.default_rng(5)
    arms = np.repeat(np.arange(env.n_arms), n_pulls)
    table = np.stack([env.pull(arms, np.full(arms.size, m), rng).reshape(env.n_arms, n_pulls)
                      for m in range(env.costs.size)])
    return env, table


def _run_on_table(pol, table, max_batches=5000):
    """Tell ``pol`` the rewards ``table[m, arm, k]`` of each arm's ``k``-th pull at ``m``:
    the rewards do not depend on the order in which pulls are asked."""
    orders = []
    for _ in range(max_batches):
        if pol.done:
            break
        p = pol.ask()
        if not len(p):
            break
        orders.append((p.fidelities.copy(), p.arms.copy()))
        k = pol.stats.counts[p.fidelities, p.arms]
        pol.tell(p, table[p.fidelities, p.arms, k])
    return orders


@pytest.mark.parametrize("batch_size", [1, 3])
def test_best_first_rounds_take_the_same_decisions(batch_size):
    # Best-first rounds change only the order (and batching) of a round's pulls:
    # given the same reward for each arm's k-th pull at each fidelity, the counts,
    # eliminations, phase switches and final answer must be those of whole rounds.
    env, table = _reward_table()
    for cls, bound in ((IISE, env.xi), (IISEGamma, env.gamma)):
        kw = dict(futility_switch=True, cost_balance=1.0)
        plain = cls(env.n_arms, env.costs, bound, 0.05, env.variance_proxy, **kw)
        best = cls(env.n_arms, env.costs, bound, 0.05, env.variance_proxy, **kw,
                   best_first=True, batch_size=batch_size)
        _run_on_table(plain, table)
        orders = _run_on_table(best, table)
        assert plain.done and best.done
        np.testing.assert_array_equal(best.stats.counts, plain.stats.counts)
        np.testing.assert_array_equal(best.eliminated_round, plain.eliminated_round)
        assert best.recommend() == plain.recommend()
        assert max(len(a) for _, a in orders) <= batch_size


def test_best_first_asks_the_best_arms_first_and_recommends_from_the_round():
    # Noise-free arms with distinct means: a phase's first round goes in decreasing
    # order of the previous fidelity's means, and mid-round the recommendation is
    # the best of the arms already pulled at the new fidelity.
    mu0 = np.array([0.1, 0.5, 0.3, 0.7, 0.2])
    mu1 = np.array([0.15, 0.45, 0.6, 0.5, 0.25])  # fidelity 1 reverses arms 2 and 3
    env = _NoiseFree(np.vstack([mu0, mu1]), [1.0, 2.0], [0.5, 0.0], [0.5, 0.0], 0.01)
    pol = IISEGamma(5, env.costs, env.gamma, 0.05, env.variance_proxy, best_first=True,
                    batch_size=1, cost_balance=1.0)
    seen = []
    while pol.fidelity_ == 0:
        p = pol.ask()
        seen.append(int(p.arms[0]))
        pol.tell(p, mu0[p.arms])
    assert seen[:5] == list(range(5))  # no data yet: index order
    survivors = np.flatnonzero(pol.active)
    assert survivors.size >= 3
    expected = survivors[np.argsort(-mu0[survivors], kind="stable")]
    got = []
    for _ in range(expected.size):
        p = pol.ask()
        assert len(p) == 1 and p.fidelities[0] == 1
        got.append(int(p.arms[0]))
        pol.tell(p, mu1[p.arms])
        if len(got) < expected.size:
            # reads the round in progress: the best at fidelity 1 among those pulled
            assert pol.recommend() == got[int(np.argmax(mu1[got]))]
    assert got == expected.tolist()
    # the round closed: the answer is the best survivor at fidelity 1 (arm 2, not the
    # fidelity-0 leader arm 3), whether or not the policy has stopped
    assert pol.recommend() == int(survivors[np.argmax(mu1[survivors])]) == 2


def test_evidence_counts_in_the_anytime_recommendation_only():
    # Results from outside the rounds (the tuner's calibration) may make an arm the
    # recommendation -- it reached a higher fidelity -- but never enter a test:
    # the run takes the same decisions with and without them.
    env, table = _reward_table()
    kw = dict(futility_switch=True, cost_balance=1.0, best_first=True)
    plain = IISEGamma(env.n_arms, env.costs, env.gamma, 0.05, env.variance_proxy, **kw)
    told = IISEGamma(env.n_arms, env.costs, env.gamma, 0.05, env.variance_proxy, **kw)
    # arm 7 "calibrated" at fidelity 1 with a high score: before the rounds reach
    # fidelity 1 it is the recommendation, whatever fidelity 0 says
    told.add_evidence([7, 7, 2], [1, 1, 0], [5.0, 5.0, 9.0])
    assert told.recommend() == 7 and plain.recommend() == 0
    p = told.ask()
    told.tell(p, table[p.fidelities, p.arms, 0])
    assert told.recommend() == 7
    _run_on_table(plain, table)
    _run_on_table(told, table)
    np.testing.assert_array_equal(told.stats.counts, plain.stats.counts)
    np.testing.assert_array_equal(told.eliminated_round, plain.eliminated_round)
    with pytest.raises(ValueError, match="fidelities"):
        told.add_evidence([0], [3], [1.0])
    with pytest.raises(ValueError, match="same length"):
        told.add_evidence([0, 1], [0], [1.0])


def test_best_first_recommendation_compares_closed_rounds_mid_round():
    # Wide bounds: nothing is eliminated and the phase at fidelity 0 lasts. In round 2
    # arm 1 draws a large score before arm 2 has its second pull: mid-round the answer
    # stays on the closed round's means (same splits for all); once the round closes,
    # arm 1 leads.
    pol = IISEGamma(3, [1.0, 100.0], [5.0, 0.0], 0.05, 1.0, best_first=True)
    first = np.array([0.5, 0.4, 0.3])
    p = pol.ask()  # one pull per batch
    while len(p):
        pol.tell(p, first[p.arms])
        p = pol.ask() if pol.n_rounds == 0 else Pulls.empty()
    assert pol.n_rounds == 1 and pol.recommend() == 0
    second = {0: 0.5, 1: 2.0, 2: 0.3}
    asked = []
    for _ in range(3):
        p = pol.ask()
        asked.append(int(p.arms[0]))
        pol.tell(p, np.array([second[asked[-1]]]))
        if len(asked) < 3:
            assert pol.recommend() == 0, asked
    assert asked == [0, 1, 2] and pol.fidelity_ == 0
    assert pol.recommend() == 1


def test_a_tie_at_the_fidelity_reached_goes_to_the_better_one_below():
    # Accuracy-like scores tie often. Arms 1 and 3 tie at fidelity 1 (one of them by
    # float rounding only); arm 3 led at fidelity 0, so it is the recommendation,
    # though arm 1 comes first and is ahead by 1e-15; with no difference anywhere, the first.
    mu0 = np.array([0.1, 0.5, 0.3, 0.7, 0.2])
    mu1 = np.array([0.15, 0.6, 0.2, 0.6 - 1e-15, 0.25])
    env = _NoiseFree(np.vstack([mu0, mu1]), [1.0, 2.0], [0.5, 0.0], [0.5, 0.0], 0.01)
    pol = IISEGamma(5, env.costs, env.gamma, 0.05, env.variance_proxy, best_first=True,
                    batch_size=1, cost_balance=1.0)
    while pol.fidelity_ == 0:
        p = pol.ask()
        pol.tell(p, mu0[p.arms])
    while pol.round_open or pol.t_ == 0:
        p = pol.ask()
        pol.tell(p, mu1[p.arms])
    assert pol.active[[1, 3]].all() and pol.recommend() == 3
    # the next fidelity's first round asks them in that order too
    mu2 = np.array([0.1, 0.7, 0.2, 0.6, 0.3])
    env = _NoiseFree(np.vstack([mu0, mu1, mu2]), [1.0, 2.0, 4.0], [0.5, 0.3, 0.0],
                     [0.5, 0.3, 0.0], 0.01)
    pol = IISEGamma(5, env.costs, env.gamma, 0.05, env.variance_proxy, best_first=True,
                    batch_size=1, cost_balance=1.0)
    mu = np.vstack([mu0, mu1, mu2])
    while pol.fidelity_ < 2:
        p = pol.ask()
        pol.tell(p, mu[p.fidelities, p.arms])
    order = []
    while len(order) < pol.active.sum():
        p = pol.ask()
        order.append(int(p.arms[0]))
        pol.tell(p, mu2[p.arms])
    assert pol.active[[1, 3]].all() and order.index(3) < order.index(1)
    assert leader(np.array([0.6, 0.6 + 1e-15]), np.array([[0.7, 0.5]])) == 0
    assert leader(np.array([0.6, 0.6]), np.array([[0.5, 0.5], [0.2, 0.2]])) == 0
    assert leader(np.array([0.6, 0.6]), np.array([[-np.inf, 0.1]])) == 1


def test_tell_refuses_a_pull_given_twice_in_one_call_and_indices_outside_the_policy():
    # a pull asked once and told twice in the same call would count its reward twice
    # and leave a negative pending count; negative or fractional ids would be remapped
    # by numpy's indexing: each is refused, and the policy is left as it was
    pol = IISE(5, [1.0, 2.0, 4.0], [0.1, 0.05, 0.0], 0.1, variance_proxy=0.01)
    pol.ask()
    before = (pol.pending.copy(), pol.stats.counts.copy())
    with pytest.raises(ValueError, match="not asked"):
        pol.tell(Pulls([0, 0], [0, 0]), [0.5, 0.5])
    with pytest.raises(ValueError, match=r"arms in 0\.\.4 and fidelities in 0\.\.2"):
        pol.tell(Pulls([-1], [0]), [0.5])
    with pytest.raises(ValueError, match=r"arms in 0\.\.4"):
        pol.tell(Pulls([9], [0]), [0.5])
    with pytest.raises(ValueError, match="arms must be integer indices"):
        Pulls([1.7], [0])
    with pytest.raises(ValueError, match="not outstanding"):
        pol.cancel(Pulls([1, 1], [0, 0]))
    assert np.array_equal(pol.pending, before[0]) and np.array_equal(pol.stats.counts, before[1])
    pol.tell(Pulls([0, 1], [0, 0]), [0.5, 0.4])  # distinct outstanding pulls: accepted
    assert pol.stats.counts[0, :2].tolist() == [1, 1]
