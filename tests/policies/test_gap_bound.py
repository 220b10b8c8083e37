"""What a phased elimination has shown when it stops early: ``gap_bound``
(mftune.policies.elimination.PhasedElimination.gap_bound)."""

import numpy as np
import pytest
from scipy.stats import binom

from mftune.benchmarks.bandits import GaussianBandit
from mftune.benchmarks.simulate import simulate_policy
from mftune.policies import IISE, IISEGamma, SuccessiveElimination
from mftune.policies.top_glr import paired_t_quantile

# Top means 0, -0.5, -0.7, -1 (arm 0 best); below the top the bias bounds are met with
# the worst signs: arm 0 is pushed down by gamma_m / 2 and arm 1 up by as much, so at the
# cheaper fidelities arm 1 leads by 0.3 (fidelity 1) and 1.1 (fidelity 0) while it is
# 0.5 worse at the top. sigma = 0.01: the radii are small next to the biases.
GAMMA = np.array([1.6, 0.8, 0.0])
MU = np.array([0.0, -0.5, -0.7, -1.0])


def _deceptive_bandit():
    bias = np.zeros((3, 4))
    bias[:, 0], bias[:, 1] = -GAMMA / 2, GAMMA / 2
    return GaussianBandit(MU + bias, [1, 4, 16], 0.01, xi=GAMMA / 2, gamma=GAMMA)


def _policies(n_arms, costs, delta, s2):
    return {"SE": SuccessiveElimination(n_arms, costs, delta, s2),
            "IISE": IISE(n_arms, costs, GAMMA / 2, delta, s2),
            "IISE-gamma": IISEGamma(n_arms, costs, GAMMA, delta, s2, confidence="mixture",
                                    top_share=0.5)}


def test_the_bound_covers_the_true_gap_where_cheap_fidelities_mislead():
    # 300 runs cut at a random pull (4-59: every phase, mid-round included), delta = 0.01.
    # A run whose recommendation is further below the best than its bound is a miss; the
    # misses are at most Binomial(300, 0.01), under its 0.999 quantile (9). The runs that
    # recommend a worse arm (84) do so at fidelity 0 or 1, where arm 1 leads but is 0.5
    # below the best with radii of a few hundredths: only the bias widths cover them.
    env, delta, n_runs = _deceptive_bandit(), 0.01, 300
    rng = np.random.default_rng(0)
    misses, unwidened, wrong = {}, {}, 0
    for run in range(n_runs):
        cap = int(rng.integers(4, 60))
        for name, p in _policies(4, env.costs, delta, 1e-4).items():
            simulate_policy(p, env, run, name=name, max_pulls=cap)
            gap, true = p.gap_bound(), MU[0] - MU[p.recommend()]
            assert gap >= 0, name
            misses[name] = misses.get(name, 0) + int(true > gap)
            wrong += int(true > 0)
            p.widths = np.zeros_like(p.widths)  # the same bound without the bias widths
            unwidened[name] = unwidened.get(name, 0) + int(true > p.gap_bound())
    bound = binom.ppf(0.999, n_runs, delta)
    assert wrong > 60  # runs cut while a cheap fidelity misleads (84): the bound is tested
    for name, n in misses.items():
        assert n <= bound, (name, n, bound)
    # the widths are what cover them: without, IISE and IISE-gamma miss 41 and 43 times
    assert unwidened["IISE"] > bound and unwidened["IISE-gamma"] > bound, unwidened


def test_the_bound_covers_the_true_gap_under_noise():
    # One fidelity, five arms 0.05-0.5 apart, sigma = 1, delta = 0.1, runs cut at a random
    # pull in [5, 3000): misses at most Binomial(300, 0.1), under its 0.999 quantile (47).
    # The union-bound radii are conservative, so in practice there are none.
    mu = np.array([0.0, -0.1, -0.15, -0.3, -0.5])
    env = GaussianBandit(mu[None, :], [1.0], 1.0)
    rng = np.random.default_rng(1)
    misses, gaps = 0, []
    for run in range(300):
        p = SuccessiveElimination(5, [1.0], 0.1, 1.0)
        simulate_policy(p, env, run, max_pulls=int(rng.integers(5, 3000)))
        gaps.append(p.gap_bound())
        misses += int(mu[0] - mu[p.recommend()] > gaps[-1])
    assert misses <= binom.ppf(0.999, 300, 0.1)
    assert np.all(np.isfinite(gaps)) and np.median(gaps) < 1.0  # says something


def test_the_epsilon_rule_is_the_bound_reaching_epsilon():
    # SE stops by its epsilon rule once 2B(t) <= epsilon after whole rounds: the bound then
    # is exactly 2B(t) (every arm has t pulls and the recommendation leads)
    env = GaussianBandit(np.array([[0.0, -0.01, -0.02]]), [1.0], 1.0)
    p = SuccessiveElimination(3, [1.0], 0.1, 1.0, epsilon=0.5)
    simulate_policy(p, env, 0)
    assert p.done and p.active.sum() > 1  # stopped by epsilon, not by elimination
    two_b = 2 * p.radius(np.array([p.t_]))[0]
    assert p.gap_bound() == pytest.approx(two_b, rel=1e-12)
    assert p.gap_bound() <= 0.5


def test_nothing_before_every_survivor_has_a_pull_and_zero_for_a_last_survivor():
    env = _deceptive_bandit()
    p = IISE(4, env.costs, GAMMA / 2, 0.1, 1e-4)
    assert np.isnan(p.gap_bound())
    simulate_policy(p, env, 0, max_pulls=3)  # three of four candidates pulled
    assert np.isnan(p.gap_bound())
    simulate_policy(p, env, 0, max_pulls=1)  # the fourth: a bound at fidelity 0
    assert p.gap_bound() == pytest.approx(
        np.max(p.stats.means()[0] + p.radius(np.ones(4, dtype=int), 0))
        - (p.stats.means()[0, p.recommend()] - p.radius(np.array([1]), 0)[0]) + GAMMA[0])
    simulate_policy(p, env, 1)
    assert p.active.sum() == 1 and p.gap_bound() == 0.0


def test_each_survivor_is_bounded_at_its_best_fidelity_shared_with_the_recommendation():
    # cut at every pull of a run, rounds half told included: the vectorised bound equals
    # the definition written out survivor by survivor and fidelity by fidelity
    env = _deceptive_bandit()
    for cap in range(4, 40):
        p = IISEGamma(4, env.costs, GAMMA, 0.1, 0.01)
        simulate_policy(p, env, 3, max_pulls=cap)
        a, counts, sums = p.recommend(), p.stats.counts, p.stats.sums
        worst = 0.0 if p.active.sum() == 1 else -np.inf
        for j in np.flatnonzero(p.active) if p.active.sum() > 1 else []:
            best = np.inf
            for phase in range(p.phase_ + 1):
                m = p.phases[phase]
                if counts[m, j] and counts[m, a]:
                    b_j, b_a = p.radius(np.array([counts[m, j], counts[m, a]]), phase)
                    best = min(best, sums[m, j] / counts[m, j] + b_j
                               - sums[m, a] / counts[m, a] + b_a + GAMMA[m])
            worst = max(worst, best)
        expected = max(worst, 0.0) if np.isfinite(worst) else np.nan
        np.testing.assert_allclose(p.gap_bound(), expected, rtol=1e-12, err_msg=str(cap))



def test_a_new_wave_s_bound_reads_its_carried_results_and_skips_the_unevaluated():
    # A wave of a search (mftune.engine.waves) starts with its carried candidates' earlier
    # results as evidence; they begin the sequences its event covers, so with
    # evidence_covered its bound holds before its first pull. Here: IISE-gamma runs cut at
    # a random pull (4-59), then a new policy over the same 4 arms and a fifth without any
    # result, given those results as evidence, delta = 0.01. Before any pull its bound is
    # finite, is the definition written out over the evaluated survivors at every
    # fidelity, and covers the true gap: misses at most Binomial(300, 0.01), under its
    # 0.999 quantile (9). 36 runs recommend a worse arm (arm 1, which leads below the top);
    # there are no misses, and without the bias widths all 36 would be.
    env, delta, n_runs = _deceptive_bandit(), 0.01, 300
    rng = np.random.default_rng(2)
    misses, wrong, unwidened = 0, 0, 0
    for run in range(n_runs):
        first = IISEGamma(4, env.costs, GAMMA, delta, 1e-4, best_first=True)
        simulate_policy(first, env, run, max_pulls=int(rng.integers(4, 60)))
        p = IISEGamma(5, env.costs, GAMMA, delta, 1e-4, best_first=True)
        f, a = np.nonzero(first.stats.counts)
        n = first.stats.counts[f, a]
        p.add_evidence(np.repeat(a, n), np.repeat(f, n), np.repeat(first.stats.means()[f, a], n))
        assert np.isnan(p.gap_bound())  # evidence not covered: no survivor has a result
        p.evidence_covered = True
        gap, rec = p.gap_bound(), p.recommend()
        counts, sums = p.evidence_.counts, p.evidence_.sums
        worst = -np.inf
        for j in range(4):  # the evaluated survivors; arm 4 has no result
            best = np.inf
            for phase, m in enumerate(p.phases):
                if counts[m, j] and counts[m, rec]:
                    b_j, b_a = p.radius(np.array([counts[m, j], counts[m, rec]]), phase)
                    best = min(best, sums[m, j] / counts[m, j] + b_j
                               - sums[m, rec] / counts[m, rec] + b_a + GAMMA[m])
            worst = max(worst, best)
        np.testing.assert_allclose(gap, max(worst, 0.0), rtol=1e-12, err_msg=str(run))
        misses += int(MU[0] - MU[rec] > gap)
        wrong += int(rec != 0)
        p.widths = np.zeros_like(p.widths)
        unwidened += int(MU[0] - MU[rec] > p.gap_bound())
    bound = binom.ppf(0.999, n_runs, delta)
    assert wrong > 30 and unwidened > bound, (wrong, unwidened)  # the bound is tested
    assert misses <= bound, misses


class _SharedNoise(GaussianBandit):
    """Rewards whose noise is mostly shared by the arms of one batch (one round), as
    candidates scored on the same split of the data are: paired differences are precise."""

    def __init__(self, mu, shared, own):
        super().__init__(np.asarray(mu)[None, :], [1.0], float(np.hypot(shared, own)))
        self.shared, self.own = shared, own

    def _noisy(self, means, rng):
        common = rng.standard_normal(np.shape(means)[:-1] + (1,))
        return means + self.shared * common + self.own * rng.standard_normal(np.shape(means))


def test_the_paired_tests_bound_the_gap_at_the_top_when_splits_share_noise():
    # SE with the paired t-tests at the top, noise 0.3 shared by a round's arms and 0.02 of
    # their own, runs cut at a random pull: the radii (sigma = 0.3) say little, the inverted
    # tests q_t s_d / sqrt(t) - mean(d) say much more. Misses at most Binomial(300, 0.05),
    # under its 0.999 quantile (26).
    mu = np.array([0.0, -0.02, -0.05, -0.1])
    env = _SharedNoise(mu, 0.3, 0.02)
    rng = np.random.default_rng(2)
    misses, gaps, radius_only = 0, [], []
    for run in range(300):
        p = SuccessiveElimination(4, [1.0], 0.05, env.variance_proxy, top_glr="paired-t")
        simulate_policy(p, env, run, max_pulls=int(rng.integers(12, 200)))
        gaps.append(p.gap_bound())
        misses += int(mu[0] - mu[p.recommend()] > gaps[-1])
        p.top_glr = None  # the same run's bound from the radii alone
        radius_only.append(p.gap_bound())
    assert misses <= binom.ppf(0.999, 300, 0.05)
    gaps, radius_only = np.asarray(gaps), np.asarray(radius_only)
    assert np.all(gaps <= radius_only)
    cut = radius_only > 0  # the runs cut before one survivor was left
    assert cut.sum() >= 50 and np.median(gaps[cut]) < 0.5 * np.median(radius_only[cut])


def test_the_paired_bound_is_the_inverted_test_of_the_recommendation_against_each():
    # the smaller of the radius bound and max over the other survivors b of
    # q_t s_d / sqrt(t) - mean(d), d = the recommendation's rewards minus b's on the same
    # closed rounds, written out (the tests also eliminated an arm here)
    env = _SharedNoise([0.0, -0.02, -0.05, -0.1], 0.3, 0.02)
    p = SuccessiveElimination(4, [1.0], 0.05, env.variance_proxy, top_glr="paired-t")
    simulate_policy(p, env, 0, max_pulls=4 * 6)
    alive, a, t = np.flatnonzero(p.active), p.recommend(), p.t_
    assert t >= 2 and alive.size >= 2 and np.all(p.stats.counts[0, alive] >= t)
    d = p.top_rewards_[a, :t] - p.top_rewards_[alive, :t]
    q = paired_t_quantile(t, p.glr_delta(), 4)
    paired = (q * d.std(axis=1, ddof=1) / np.sqrt(t) - d.mean(axis=1))[alive != a].max()
    n, means = p.stats.counts[0], p.stats.means()[0]
    radii = np.max(means[alive] + p.radius(n[alive])) - means[a] + p.radius(n[[a]])[0]
    assert p.gap_bound() == pytest.approx(min(paired, radii), rel=1e-12)
    assert paired < radii  # the splits' shared noise: the tests bound it
