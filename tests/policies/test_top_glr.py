"""The GLR test of the phased eliminations' top phase (``top_glr``): the ε pair values,
the paired-mixture threshold, the stop, the δ split, the settings and the checks."""

import numpy as np
import pytest
from scipy.stats import binom

from mftune.policies import IISEGamma, SuccessiveElimination
from mftune.policies.glr import GLRStopping, paired_mixture_threshold
from mftune.policies.lower_bound import pair_values
from mftune.policies.registry import check_params, policy_from_settings
from mftune.policies.top_glr import (
    GLR_SHARE,
    TOP_GLR,
    _t_score,
    paired_differences,
    paired_t_quantile,
    paired_t_rounds,
    round_weights,
)

XI1 = np.array([0.0])


def _run(policy, stream, block: int = 0) -> int:
    """Feed ``stream`` (rounds × arms) round by round (or ``block`` rounds at once) until
    the policy is done or the stream ends; return the rounds used."""
    r = 0
    while not policy.done and r < stream.shape[0]:
        pulls = policy.ask()
        if block:
            r += policy.tell_rounds(pulls, stream[r:r + block][:, pulls.arms])
        else:
            policy.tell(pulls, stream[r, pulls.arms])
            r += 1
    return r


def _stream(means, sigma, rounds, seed):
    rng = np.random.default_rng(seed)
    return np.asarray(means)[None, :] + sigma * rng.standard_normal((rounds, len(means)))


# -- the ε pair values -------------------------------------------------------------------


def test_epsilon_pair_value_by_hand():
    # one fidelity: (µ_i − µ_b + ε)²₊ / (2σ² (1/N_i + 1/N_b))
    mu = np.array([[0.5], [0.3]])
    w = np.array([[4.0], [9.0]])
    value, _, _, theta_b = pair_values(mu, w, XI1, 0.1, np.array([0, 1]), np.array([1, 0]),
                                       epsilon=0.05)
    # (0.5 − 0.3 + 0.05)² / (2 · 0.01 · (1/4 + 1/9)) = 0.0625 / 0.0072222... = 8.653846...
    assert value[0] == pytest.approx(0.0625 / (0.02 * (0.25 + 1 / 9)), rel=1e-12)
    assert value[0] == pytest.approx(8.653846153846154, rel=1e-12)
    # the other way round, µ_b − µ_i + ε = 0.3 − 0.5 + 0.05 < 0: no move needed
    assert value[1] == 0.0
    # b's alternative is ε above i's: both meet at η_i = η_b − ε
    _, _, theta_i, theta_b = pair_values(mu, w, XI1, 0.1, np.array([0]), np.array([1]), 0.05)
    assert theta_b[0, 0] - theta_i[0, 0] == pytest.approx(0.05)
    # without ε, the plain value
    plain = pair_values(mu, w, XI1, 0.1, np.array([0]), np.array([1]))[0]
    assert plain[0] == pytest.approx(0.04 / (0.02 * (0.25 + 1 / 9)), rel=1e-12)


def test_epsilon_is_a_shift_of_the_challengers_column():
    rng = np.random.default_rng(3)
    xi = np.array([0.2, 0.05, 0.0])
    mu = rng.uniform(0, 1, (4, 3))
    w = rng.uniform(1, 5, (4, 3))
    i, b = np.array([0, 2, 3]), np.array([1, 0, 2])
    with_eps = pair_values(mu, w, xi, 0.3, i, b, epsilon=0.07)[0]
    for p in range(i.size):
        shifted = mu.copy()
        shifted[b[p]] -= 0.07
        ref = pair_values(shifted, w, xi, 0.3, i[p:p + 1], b[p:p + 1])[0]
        assert with_eps[p] == pytest.approx(ref[0], rel=1e-12, abs=1e-15)


def test_glr_statistic_with_epsilon_certifies_the_best():
    glr = GLRStopping(3, XI1, 0.1, 0.05, epsilon=0.02)
    counts = np.full((3, 1), 10.0)
    means = np.array([[0.50], [0.49], [0.40]])
    value, arm = glr.statistic(counts, means)
    assert arm == 0
    # equal counts: (0.50 − 0.49 + 0.02)² · 10 / (4 σ²)
    assert value == pytest.approx(0.03**2 * 10 / (4 * 0.01), rel=1e-10)


@pytest.mark.parametrize("bad", [-0.1, np.inf, np.nan])
def test_epsilon_must_be_finite_and_non_negative(bad):
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        pair_values(np.zeros((2, 1)), np.ones((2, 1)), XI1, 1.0, np.array([0]), np.array([1]),
                    epsilon=bad)
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        GLRStopping(2, XI1, 1.0, 0.1, epsilon=bad)


# -- the threshold -------------------------------------------------------------------------


def test_paired_mixture_threshold_formula():
    t = np.array([1, 10, 1000])
    expected = (1 + 1 / t) * (np.log(4 / 0.05) + 0.5 * np.log1p(t))
    np.testing.assert_allclose(paired_mixture_threshold(t, 0.05, 5), expected, rtol=1e-14)


def test_paired_mixture_threshold_holds_on_equal_means():
    # The worst case of a wrong stop (gap → 0, ε = 0): two arms of equal means, the stop
    # t (µ̂_i − µ̂_a)² / (4σ²) >= β(t) in favour of the wrong side at any of 2,000 rounds.
    # Its frequency over 4,000 streams must stay within Binomial(4000, δ)'s 0.999 quantile.
    rng = np.random.default_rng(11)
    delta, sigma, runs, rounds = 0.1, 0.7, 4000, 2000
    t = np.arange(1, rounds + 1)
    beta = paired_mixture_threshold(t, delta, 2)
    wrong = 0
    for _ in range(runs // 500):
        diff = np.cumsum(sigma * rng.standard_normal((500, rounds))
                         - sigma * rng.standard_normal((500, rounds)), axis=1)
        stat = np.maximum(diff, 0.0) ** 2 / (4 * sigma**2 * t)  # one side: i ahead of a
        wrong += int(np.any(stat >= beta, axis=1).sum())
    assert wrong <= binom.ppf(0.999, runs, delta)
    assert wrong > 0  # the test is not vacuous: the threshold is not absurdly high


# -- the stop in the policy ----------------------------------------------------------------


def test_glr_stops_an_easy_pair_with_fewer_pulls_than_elimination_alone():
    stream = _stream([0.5, 0.3], 0.5, 20_000, seed=5)
    plain = SuccessiveElimination(2, [1.0], 0.05, 0.25, confidence="mixture")
    glr = SuccessiveElimination(2, [1.0], 0.05, 0.25, confidence="mixture",
                                top_glr="paired-mixture")
    n_plain, n_glr = _run(plain, stream), _run(glr, stream)
    assert plain.done and glr.done
    assert glr.glr_arm_ == 0 and glr.recommend() == 0 and plain.recommend() == 0
    assert n_glr < 0.7 * n_plain
    summary = glr.summary().extra
    assert summary["stopped_by_glr"] and not summary["stopped_by_epsilon"]
    assert summary["top_glr"] == "paired-mixture"


def test_glr_never_stops_on_identical_arms():
    # noiseless and identical: the statistic is 0 for ever
    glr = SuccessiveElimination(3, [1.0], 0.05, 1.0, confidence="mixture",
                                top_glr="paired-mixture")
    assert _run(glr, np.full((5000, 3), 0.4), block=500) == 5000
    assert not glr.done and glr.glr_arm_ is None
    # noisy and identical, fixed seed: nothing within 5,000 rounds (δ = 0.01)
    glr = SuccessiveElimination(3, [1.0], 0.01, 1.0, confidence="mixture",
                                top_glr="paired-mixture")
    assert _run(glr, _stream([0.4] * 3, 1.0, 5000, seed=2), block=500) == 5000
    assert not glr.done and glr.glr_arm_ is None


@pytest.mark.parametrize("top_glr", ["paired-mixture", "practical", "paired-t"])
@pytest.mark.parametrize("epsilon", [None, 0.05])
def test_block_path_equals_round_by_round_with_the_glr(top_glr, epsilon):
    # paired-t ends a block at every top round: a shorter run keeps the test quick
    sigma = 0.3 if top_glr == "paired-t" else 1.0
    for seed in range(3):
        stream = _stream([0.5, 0.4, 0.35, 0.1], sigma, 20_000, seed)
        a = SuccessiveElimination(4, [1.0], 0.05, 1.0, epsilon, confidence="mixture",
                                  top_glr=top_glr)
        b = SuccessiveElimination(4, [1.0], 0.05, 1.0, epsilon, confidence="mixture",
                                  top_glr=top_glr)
        assert _run(a, stream) == _run(b, stream, block=300)
        assert a.recommend() == b.recommend() and a.glr_arm_ == b.glr_arm_
        np.testing.assert_array_equal(a.stats.counts, b.stats.counts)


def _shared_split_stream(means, split_sd, own_sd, rounds, seed):
    """Rewards whose round-s noise is mostly shared by every arm (the s-th split of the
    data), plus a small noise of each arm's own."""
    rng = np.random.default_rng(seed)
    shared = split_sd * rng.standard_normal((rounds, 1))
    return np.asarray(means)[None, :] + shared + own_sd * rng.standard_normal(
        (rounds, len(means)))


def test_paired_t_stops_far_sooner_when_the_split_noise_is_shared():
    # σ per arm ≈ 0.05 (what the per-arm radius and the GLR test must use), but the
    # differences between arms have σ_d = 0.005·√2: the paired test sees the small one.
    sigma2 = 0.05**2 + 0.005**2
    for seed in range(3):
        stream = _shared_split_stream([0.80, 0.79, 0.75], 0.05, 0.005, 20_000, seed)
        mixture = SuccessiveElimination(3, [1.0], 0.05, sigma2, confidence="mixture",
                                        top_glr="paired-mixture")
        paired = SuccessiveElimination(3, [1.0], 0.05, sigma2, confidence="mixture",
                                       top_glr="paired-t")
        n_mixture, n_paired = _run(mixture, stream), _run(paired, stream)
        assert paired.done and paired.glr_arm_ == 0 and paired.recommend() == 0
        assert mixture.done and mixture.recommend() == 0
        assert n_paired < 0.2 * n_mixture
        assert paired.summary().extra["stopped_by_glr"]


def test_paired_t_rounds_are_the_first_round_the_test_passes():
    # the test's own statistic and quantile, round by round, against the vectorised search
    delta, k = 0.004, 7
    lead = np.array([0.02, 0.005, 0.001, 0.3, 0.0, -0.01, 0.01])
    spread = np.array([0.01, 0.02, 0.05, 0.0, 0.01, 0.01, 0.0])
    t = np.arange(2, 20_001)
    q = paired_t_quantile(t, delta, k)
    want = [t[np.flatnonzero(_t_score(np.full(t.size, a), np.full(t.size, b), t) >= q)]
            for a, b in zip(lead, spread, strict=True)]
    want = [float(w[0]) if w.size else np.inf for w in want]
    got = paired_t_rounds(lead, spread, lambda r: paired_t_quantile(r, delta, k), 20_000)
    np.testing.assert_array_equal(got, want)
    assert got[3] == got[6] == 2 and np.isinf(got[4:6]).all()  # no spread; no lead
    assert 2 < got[0] < got[1] < got[2]  # a smaller lead over a wider spread needs more


def test_paired_t_never_uses_sigma():
    # a σ² a thousand times too small changes the eliminations, not the paired test's stop
    stream = _shared_split_stream([0.6, 0.5], 0.3, 0.05, 5000, seed=4)
    stops = []
    for s2 in (1e-4, 10.0):
        policy = SuccessiveElimination(2, [1.0], 0.05, s2, top_glr="paired-t")
        policy.phase_delta = lambda phase=None: 1e-300  # no elimination: the test alone
        stops.append(_run(policy, stream))
        assert policy.glr_arm_ == 0
    assert stops[0] == stops[1] > 2


def test_paired_t_drops_the_survivors_it_has_beaten():
    # σ² = 1 per arm keeps the radius from dropping anyone for thousands of rounds; the
    # paired differences (σ_d ≈ 0.007) drop the clearly worse arm within a few rounds
    stream = _shared_split_stream([0.80, 0.795, 0.60], 0.05, 0.005, 5000, seed=1)
    policy = SuccessiveElimination(3, [1.0], 0.05, 1.0, top_glr="paired-t")
    _run(policy, stream)
    counts = policy.stats.counts[0]
    assert policy.done and policy.recommend() == 0 and policy.glr_arm_ == 0
    assert policy.eliminated_fidelity[2] == 0 and counts[2] < counts[0]
    assert 2 * policy.radius(np.array([counts[0]]))[0] > 0.2  # not the radius's doing


def _run_splits(policy, stream) -> None:
    """Feed each arm's ``c``-th pull the ``c``-th row of ``stream`` (rounds × arms): the
    same split for every arm, as the tuner's evaluator pairs them."""
    while not policy.done and policy.stats.counts.max() < stream.shape[0] - 1:
        pulls = policy.ask()
        policy.tell(pulls, stream[policy.stats.counts[0, pulls.arms], pulls.arms])


def test_paired_t_parks_the_survivors_shown_within_epsilon():
    # Arm 1 is 0.001 below the leader with little noise of its own: its test passes with
    # ε = 0.01 within a few rounds, and it is not pulled again; arm 2, 0.005 below with
    # 0.02 of its own noise, keeps being pulled until its test passes. The certificate
    # holds arm 1 on the splits it has, at the round its test passed.
    rng = np.random.default_rng(0)
    shared = 0.05 * rng.standard_normal((400, 1))
    stream = (np.array([0.80, 0.799, 0.795]) + shared
              + np.array([0.002, 0.002, 0.02]) * rng.standard_normal((400, 3)))
    policy = SuccessiveElimination(3, [1.0], 0.05, 1.0, epsilon=0.01, top_glr="paired-t")
    policy.phase_delta = lambda phase=None: 1e-300  # no elimination: the tests alone
    _run_splits(policy, stream)
    n = policy.stats.counts[0]
    assert policy.done and policy.glr_arm_ == 0 and policy.recommend() == 0
    assert policy.parked_[1] and n[1] < n[0] == n[2] and n[0] > 3 * n[1]
    q = paired_t_quantile(np.arange(2, n[1] + 1), policy.glr_delta(), 3)
    d = stream[:n[1], 0] - stream[:n[1], 1]
    score = [_t_score(d[:t].mean() + 0.01, d[:t].std(ddof=1), t) for t in range(2, n[1] + 1)]
    assert score[-1] >= q[-1] and np.all(np.array(score[:-1]) < q[:-1])  # its first pass
    assert policy.summary().extra["parked"] == 2  # the last to pass is marked too
    # what the search states when it stops on a budget instead: the paired bound holds
    # arm 1 on its own splits, and is below ε here
    assert policy.gap_bound() <= 0.01


def test_a_new_leader_tests_every_parked_survivor_again():
    # Arm 0 leads and arm 1 (0.001 below, little noise) is parked; from split 6 on arm 2
    # (0.02 below, ±0.1) scores 0.1 higher and takes the lead: arm 1 is pulled again from
    # its own next split until it has the round's results, and the certificate is on arm 2
    # against both.
    base = np.array([0.50, 0.499, 0.48])
    wobble = 0.002 * np.where(np.arange(60) % 2, 1.0, -1.0)[:, None]
    stream = base + wobble * np.array([1.0, 0.5, 50.0])
    stream[6:, 2] += 0.1
    policy = SuccessiveElimination(3, [1.0], 0.2, 1.0, epsilon=0.05, top_glr="paired-t")
    policy.phase_delta = lambda phase=None: 1e-300
    parked_at = None
    while not policy.done:
        pulls = policy.ask()
        policy.tell(pulls, stream[policy.stats.counts[0, pulls.arms], pulls.arms])
        if parked_at is None and policy.parked_[1]:
            parked_at = int(policy.stats.counts[0, 1])
            assert policy.park_leader_ == 0 and policy.recommend() == 0
    n = policy.stats.counts[0]
    assert parked_at is not None and parked_at < 6
    assert policy.glr_arm_ == 2 and policy.park_leader_ == 2
    assert n[1] > parked_at  # pulled again once arm 2 led
    assert n[2] == policy.t_ and n[1] <= n[2]


def _lead_change_stream(later: float) -> np.ndarray:
    """Arm 0 leads (±0.002) until split 30, then falls by 0.1; arm 2 (±0.1) takes the lead.
    Arm 1 tracks arm 0 on its first two splits (it is parked there) and arm 2, shifted
    by ``later``, on every split after."""
    w = np.where(np.arange(200) % 2, 1.0, -1.0)
    stream = np.empty((200, 3))
    stream[:, 0] = np.where(np.arange(200) < 30, 0.50, 0.40) + 0.002 * w
    stream[:, 2] = 0.495 + 0.1 * w
    stream[:, 1] = stream[:, 2] + later
    stream[:2, 1] = 0.499 + 0.001 * w[:2]
    return stream


@pytest.mark.parametrize("later", [0.004, -1.0])
def test_a_survivor_catching_up_is_tested_after_each_of_its_pulls(later):
    # Arm 1 is parked against arm 0 at two splits; when arm 2 takes the lead (round 32)
    # its test against arm 2 on those two fails, and it is pulled again from split 3.
    # Its test is run after each pull, on the splits it has: it is parked again (later =
    # +0.004: within ε of arm 2 from split 3 on) or dropped (−1: beaten; with and without ε
    # the test first passes at the same split) at the first split where the test passes,
    # long before it has the round's 32 results.
    stream = _lead_change_stream(later)
    policy = SuccessiveElimination(3, [1.0], 0.2, 1.0, epsilon=0.05, top_glr="paired-t")
    policy.phase_delta = lambda phase=None: 1e-300  # no elimination: the tests alone
    change = None
    while not policy.done:
        if change is None and policy.park_leader_ == 2:
            change = policy.t_
            assert not policy.parked_[1] and policy.stats.counts[0, 1] == 2
        pulls = policy.ask()
        policy.tell(pulls, stream[policy.stats.counts[0, pulls.arms], pulls.arms])
        if change is not None and not (policy.active[1] and not policy.parked_[1]):
            break  # arm 1 parked again or dropped
    n = int(policy.stats.counts[0, 1])
    assert change == 32 and 2 < n < change
    d = stream[:n, 2] - stream[:n, 1]
    q = paired_t_quantile(np.arange(3, n + 1), policy.glr_delta(), 3)
    shift = 0.05 if later > 0 else 0.0  # the ε test parks, the plain one drops
    score = np.array([_t_score(d[:k].mean() + shift, d[:k].std(ddof=1), k)
                      for k in range(3, n + 1)])
    assert score[-1] >= q[-1] and np.all(score[:-1] < q[:-1])  # its first pass
    if later > 0:
        assert policy.parked_[1] and policy.park_leader_ == 2 and policy.recommend() == 2
        while not policy.done:
            pulls = policy.ask()
            policy.tell(pulls, stream[policy.stats.counts[0, pulls.arms], pulls.arms])
        assert policy.glr_arm_ == 2 and policy.stats.counts[0, 1] == n  # never pulled again
    else:
        assert not policy.active[1] and policy.eliminated_fidelity[1] == 0


def test_paired_t_error_rate_with_parking():
    # Arms 1 and 2 lie exactly ε below arm 0, the test's worst case: certifying either is
    # an error, which needs its test against arm 0 to pass at some round, parked or not.
    # Over 400 Gaussian streams (split noise shared, as in cross-validation) its frequency
    # stays within the 0.999 quantile of Binomial(400, δ_g); some runs must park an arm.
    wrong = parked = 0
    for seed in range(400):
        stream = _shared_split_stream([0.5, 0.45, 0.45], 0.3, 0.1, 300, seed)
        policy = SuccessiveElimination(3, [1.0], 0.2, 1.0, epsilon=0.05, top_glr="paired-t")
        policy.phase_delta = lambda phase=None: 1e-300
        _run_splits(policy, stream)
        wrong += int(policy.done and policy.recommend() != 0)
        parked += int(policy.parked_.any())
    assert policy.glr_delta() == pytest.approx(0.1)
    assert wrong <= binom.ppf(0.999, 400, policy.glr_delta()) and parked >= 40


def test_paired_differences_on_each_row_s_own_splits():
    rng = np.random.default_rng(5)
    rewards = rng.standard_normal((4, 9))
    n = np.array([9, 3, 9, 6])
    lead, spread = paired_differences(rewards, 2, n)
    for i in range(4):
        d = rewards[2, :n[i]] - rewards[i, :n[i]]
        assert lead[i] == pytest.approx(d.mean(), abs=1e-15)
        assert spread[i] == pytest.approx(d.std(ddof=1), abs=1e-15)
    assert lead[2] == spread[2] == 0.0
    # all rows whole: the very numbers numpy's mean and std give
    full = paired_differences(rewards, 0, 9)
    d = rewards[0] - rewards
    np.testing.assert_array_equal(full[0], d.mean(axis=1))
    np.testing.assert_array_equal(full[1], d.std(axis=1, ddof=1))


def test_a_parked_survivor_within_epsilon_of_the_new_leader_stays_parked():
    # Two splits: arm 0 leads arm 1 by 0.0002 with a spread its test cannot pass yet, and
    # arm 2, 0.02 below arm 0 and moving with arm 1, is parked against arm 0 (its test
    # passes with ε = 0.05, not without). From split 2 on arm 1 scores 0.1 more and takes
    # the lead: on the two splits arm 2 has, its test against arm 1 passes too, so it stays
    # parked and is never pulled again; arm 1 is certified.
    d01 = np.array([0.0023, -0.0019])
    stream = np.empty((40, 3))
    stream[:2] = 0.5 - np.stack([np.zeros(2), d01, 0.02 + 0.5 * d01], axis=1)
    wobble = 0.001 * np.where(np.arange(38) % 2, 1.0, -1.0)
    stream[2:] = np.stack([0.5 + wobble, 0.6 - wobble, np.full(38, 0.47)], axis=1)
    policy = SuccessiveElimination(3, [1.0], 0.2, 1.0, epsilon=0.05, top_glr="paired-t")
    policy.phase_delta = lambda phase=None: 1e-300
    _run_splits(policy, stream)
    assert policy.done and policy.glr_arm_ == 1 == policy.park_leader_
    assert policy.parked_[2] and policy.stats.counts[0, 2] == 2 < policy.stats.counts[0, 1]
    # at two splits, against either leader: within ε, not beaten
    q = paired_t_quantile(2, policy.glr_delta(), 3)
    for a in (0, 1):
        d = stream[:2, a] - stream[:2, 2]
        assert _t_score(d.mean(), d.std(ddof=1), 2) < q <= _t_score(d.mean() + 0.05,
                                                                     d.std(ddof=1), 2)


def test_the_epsilon_rule_stops_with_parked_survivors_behind_the_same_leader():
    # σ² = 3e-4 as told: the radius's ε rule holds after 5 rounds, before arm 2's paired
    # test (±0.1 of real noise) passes. Arm 1, parked at 2 splits against arm 0, is held
    # by its test, the arms of the round by the rule: the run stops on arm 0, the leader
    # both answer for.
    wobble = np.where(np.arange(60) % 2, 1.0, -1.0)[:, None]
    stream = np.array([0.50, 0.499, 0.49]) + wobble * np.array([0.002, 0.001, 0.1])
    policy = SuccessiveElimination(3, [1.0], 0.2, 3e-4, epsilon=0.05, confidence="mixture",
                                   top_glr="paired-t")
    _run_splits(policy, stream)
    n = policy.stats.counts[0]
    assert policy.stopped_early_ and policy.glr_arm_ is None and policy.summary().extra[
        "stopped_by_epsilon"]
    assert policy.parked_[1] and n[1] == 2 < n[0] == n[2] == policy.t_
    assert policy.recommend() == policy.park_leader_ == 0


def test_paired_t_eliminations_on_a_tie():
    # Three arms of equal means: arm 0 is "the best", and its elimination by the paired
    # tests (the σ radius is switched off) or a stop on another arm is an error (each
    # needs a test against arm 0 to pass on a zero mean). Over 400 Gaussian streams
    # of 300 rounds its frequency stays within the 0.999 quantile of Binomial(400, δ_g)
    # (the union over the arms and rounds gives P <= δ_g).
    wrong = 0
    for seed in range(400):
        stream = _stream([0.5, 0.5, 0.5], 0.3, 300, seed)
        policy = SuccessiveElimination(3, [1.0], 0.2, 1.0, top_glr="paired-t")
        policy.phase_delta = lambda phase=None: 1e-300
        _run(policy, stream)
        wrong += int(not policy.active[0] or (policy.done and policy.recommend() != 0))
    assert policy.glr_delta() == pytest.approx(0.1)
    assert wrong <= binom.ppf(0.999, 400, policy.glr_delta())


def test_paired_t_error_rate_on_a_tie():
    # The wrong stop of the test (ε = 0, two arms of equal means: arm 1 certified against
    # arm 0) at any of 500 rounds, with the policy's quantiles and δ_g = δ/2 (SE, K = 2).
    # Over 4,000 Gaussian streams its frequency must stay within the 0.999 quantile of
    # Binomial(4000, δ_g): the union over rounds gives P <= δ_g Σ_{t<=500} w_t < δ_g.
    policy = SuccessiveElimination(2, [1.0], 0.2, 1.0, top_glr="paired-t")
    delta_g, runs, rounds = policy.glr_delta(), 4000, 500
    t = np.arange(2, rounds + 1)
    q = paired_t_quantile(t, delta_g, 2)
    d = np.random.default_rng(8).standard_normal((runs, rounds)) * 0.3  # X_1 − X_0
    n = np.arange(1, rounds + 1)
    mean = np.cumsum(d, axis=1) / n
    var = (np.cumsum(d * d, axis=1) - n * mean**2) / np.maximum(n - 1, 1)
    score = np.sqrt(n[1:]) * mean[:, 1:] / np.sqrt(var[:, 1:])
    wrong = int(np.any(score >= q, axis=1).sum())
    assert delta_g == pytest.approx(0.1)
    assert 0 < wrong <= binom.ppf(0.999, runs, delta_g * round_weights(t).sum())
    # the weights sum to 1 and are above 1/(t(t+1)) at every round, whose sum over t >= 2 is 1/2
    assert round_weights(np.arange(2, 10**6)).sum() == pytest.approx(1.0, abs=2e-3)
    assert np.all(round_weights(t) > 1.0 / (t * (t + 1.0)))


def test_the_top_share_is_split_with_the_test():
    k, delta = 6, 0.05
    kw = dict(confidence="mixture", top_share=0.5)
    plain = IISEGamma(k, [1, 4, 16], [0.1, 0.05, 0.0], delta, 1.0, **kw)
    glr = IISEGamma(k, [1, 4, 16], [0.1, 0.05, 0.0], delta, 1.0, top_glr="paired-mixture", **kw)
    assert glr.phase_delta(0) == plain.phase_delta(0)
    assert glr.phase_delta(2) == pytest.approx((1 - GLR_SHARE) * plain.phase_delta(2))
    # the whole budget: lower phases, top eliminations and the test add up to δ
    total = k * (glr.phase_delta(0) + glr.phase_delta(1) + glr.phase_delta(2)) + glr.glr_delta()
    assert total == pytest.approx(delta)
    # one phase (SE): δ/K per arm, half of it kept
    se = SuccessiveElimination(k, [1.0], delta, 1.0, top_glr="paired-mixture")
    assert k * se.phase_delta() + se.glr_delta() == pytest.approx(delta)


# -- settings and checks -------------------------------------------------------------------


SETTINGS = {"costs": [1.0, 4.0, 16.0], "sigma": 0.5, "delta": 0.05, "epsilon": 0.01,
            "gamma": [0.1, 0.05, 0.0], "confidence": "mixture", "top_share": 0.5}


@pytest.mark.parametrize("name", ["iise-gamma", "se"])
def test_settings_round_trip(name):
    for value in (*TOP_GLR, None):
        policy = policy_from_settings(name, 5, {**SETTINGS, "top_glr": value})
        assert policy.top_glr == value
        assert policy.summary().extra["top_glr"] == value
    assert policy_from_settings(name, 5, SETTINGS).top_glr is None
    # algorithm_params (MFTuner's) override the stored switch, as for the other switches
    policy = policy_from_settings(name, 5, {**SETTINGS, "top_glr": None,
                                            "algorithm_params": {"top_glr": "practical"}})
    assert policy.top_glr == "practical"
    assert check_params(name, {"top_glr": "paired-mixture"}) == {"top_glr": "paired-mixture"}


@pytest.mark.parametrize("bad", ["kk", "Practical", 1, True])
def test_bad_top_glr_is_refused_with_the_allowed_values(bad):
    msg = (r"top_glr must be one of \('paired-mixture', 'practical', 'theory', 'paired-t'\) "
           "or None")
    with pytest.raises(ValueError, match=msg):
        SuccessiveElimination(3, [1.0], 0.05, 1.0, top_glr=bad)
    with pytest.raises(ValueError, match=msg):
        policy_from_settings("iise-gamma", 5, {**SETTINGS, "top_glr": bad})
