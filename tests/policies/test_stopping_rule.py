"""The tuner's stopping levers in the phased eliminations: the anytime mixture radius, the
split of δ towards the top and the late-bloomer guard (mftune.policies.elimination)."""

import numpy as np
import pytest

from mftune.policies import IISEGamma, SuccessiveElimination
from mftune.radii import iise_phase_length, iise_radius, mixture_radius, phase_length


def test_mixture_radius_formula_and_zero_count():
    # t = 3, δ = 0.1, σ² = 4, ρ = 1: sqrt(4 · 4 · log(4 / 0.01)) / 3
    expected = np.sqrt(16 * np.log(400.0)) / 3
    assert mixture_radius(3, 0.1, 4.0) == pytest.approx(expected, rel=1e-12)
    assert mixture_radius(0, 0.1) == np.inf
    r = mixture_radius(np.arange(1, 2000), 0.01)
    assert np.all(np.diff(r) < 0)  # decreasing: the phase switch is a first passage


def test_mixture_radius_needs_about_half_the_samples_of_the_union_bound():
    # squared-radius ratio = the sample-size ratio at equal width; from t = 100 on the
    # union bound log(4t²/δ) grows while the mixture's log((t+1)/δ²) / 2 grows half as fast
    t = np.array([100, 1000, 10000])
    ratio = (iise_radius(t, 0.05 / 16) / mixture_radius(t, 0.05 / 16)) ** 2
    assert np.all(ratio > 1.9)


def test_mixture_radius_covers_every_time_at_once():
    # Anytime coverage: the share of Gaussian streams whose running mean ever leaves
    # the radius within 2000 steps is <= δ = 0.1 (Ville). 2000 streams: the count is
    # Binomial(2000, p <= 0.1), so it stays under its 0.999 quantile (236).
    rng = np.random.default_rng(0)
    t = np.arange(1, 2001)
    means = np.cumsum(rng.standard_normal((2000, t.size)), axis=1) / t
    crossed = np.any(np.abs(means) > mixture_radius(t, 0.1), axis=1)
    assert crossed.sum() <= 236


def test_phase_length_matches_the_iise_special_case():
    for thr in (0.5, 0.1, 0.02):
        assert phase_length(thr, lambda t: iise_radius(t, 1e-3, 0.25)) == \
            iise_phase_length(thr, 1e-3, 0.25)
    assert phase_length(0.0, lambda t: 1.0) == np.inf


def test_top_share_splits_delta_between_the_top_and_the_rest():
    p = IISEGamma(10, [1, 2, 4, 8], [0.3, 0.2, 0.1, 0.0], delta=0.1, top_share=0.5)
    assert p.phase_delta(3) == pytest.approx(0.1 * 0.5 / 10)
    assert p.phase_delta(0) == pytest.approx(0.1 * 0.5 / (10 * 3))
    # the shares sum to δ / K per arm: a union bound over arms and phases gives δ
    total = p.phase_delta(3) + sum(p.phase_delta(k) for k in range(3))
    assert total == pytest.approx(0.1 / 10)
    paper = IISEGamma(10, [1, 2, 4, 8], [0.3, 0.2, 0.1, 0.0], delta=0.1)
    assert paper.phase_delta(0) == paper.phase_delta(3) == pytest.approx(0.1 / 40)


def test_se_with_mixture_radius_stops_sooner_on_a_close_pair():
    rng = np.random.default_rng(1)
    costs = []
    for conf in ("iise", "mixture"):
        p = SuccessiveElimination(2, [1.0], delta=0.05, variance_proxy=1.0, confidence=conf)
        mu = np.array([0.0, 0.3])
        g = np.random.default_rng(rng.integers(1 << 30))
        while not p.done:
            pulls = p.ask()
            p.tell(pulls, mu[pulls.arms] + g.standard_normal(len(pulls)))
        assert p.recommend() == 1
        costs.append(p.stats.counts.sum())
    assert costs[1] < costs[0]


@pytest.mark.parametrize("kwargs, name", [
    ({"confidence": "hoeffding"}, "confidence"),
    ({"top_share": 1.5}, "top_share"),
    ({"curve_check": [1.0, -1.0, 0.0]}, "curve_check"),
    ({"curve_check": [1.0, 0.0]}, "curve_check"),
])
def test_bad_switches_are_refused_by_name(kwargs, name):
    with pytest.raises(ValueError, match=name):
        IISEGamma(4, [1, 2, 4], [0.2, 0.1, 0.0], **kwargs)


def _play_rounds(policy, means, rounds):
    for row in rounds:
        pulls = policy.ask()
        policy.tell(pulls, row[pulls.fidelities, pulls.arms])


def test_curve_check_keeps_an_arm_that_is_still_rising():
    # Three fidelities, γ tiny. At fidelity 1 arm 0 trails arm 1 by 0.1 but rose by 0.3
    # from fidelity 0, where arm 1 rose by 0.0: the guard's margin 1 · (0.3 − 0) = 0.3
    # exceeds the trail, so arm 0 survives; without the guard it is eliminated.
    means = np.array([[0.3, 0.8], [0.6, 0.7], [0.9, 0.7]])
    kept = []
    for guard in (None, [2.0, 1.0, 0.0]):
        p = IISEGamma(2, [1, 4, 16], [0.02, 0.01, 0.0], delta=0.1, variance_proxy=1e-6,
                      curve_check=guard)
        # noiseless rewards: the radius is ~1e-3, so only the margins decide
        for _ in range(40):
            if p.done or p.fidelity_ == 2:
                break
            pulls = p.ask()
            p.tell(pulls, means[pulls.fidelities, pulls.arms])
        kept.append(bool(p.active[0]))
    assert kept == [False, True]


def test_curve_check_eliminates_nothing_at_the_first_fidelity():
    # one point of a curve says nothing of its rise: at fidelity 0 even a hopeless arm
    # stays (it is pulled at fidelity 1, where its gain is seen)
    means = np.array([[0.1, 0.9], [0.1, 0.9], [0.1, 0.9]])
    p = IISEGamma(2, [1, 4, 16], [0.02, 0.01, 0.0], delta=0.1, variance_proxy=1e-6,
                  curve_check=[2.0, 1.0, 0.0])
    while p.fidelity_ == 0 and not p.done:
        pulls = p.ask()
        p.tell(pulls, means[pulls.fidelities, pulls.arms])
    assert p.active[0] and p.fidelity_ == 1
    pulls = p.ask()
    p.tell(pulls, means[pulls.fidelities, pulls.arms])
    assert not p.active[0]  # flat and far behind at fidelity 1: eliminated there


def test_a_grown_bound_reopens_what_it_no_longer_backs():
    # γ = [0.05, 0.02, 0]: at fidelity 0 arm 0 trails by 0.1 and goes (2B ~ 1e-3), arm 2
    # trails by 0.5. Growing γ_0 to 0.2 leaves arm 0's elimination unbacked: it is active
    # again and pulled at the current fidelity; arm 2 stays out.
    means = np.array([[0.7, 0.8, 0.3, 0.8]] * 2 + [[0.9, 0.8, 0.3, 0.8]])
    p = IISEGamma(4, [1, 4, 16], [0.05, 0.02, 0.0], delta=0.1, variance_proxy=1e-6)
    for _ in range(50):
        if p.fidelity_ > 0 or p.done:
            break
        pulls = p.ask()
        p.tell(pulls, means[pulls.fidelities, pulls.arms])
    assert p.active.tolist() == [False, True, False, True] and p.fidelity_ == 1
    p.update_bounds(xi=[0.2, 0.1, 0.0])
    assert p.active.tolist() == [True, True, False, True] and p.reopened_ == 1
    assert p.eliminated_fidelity[0] == -1
    assert 0 in p.ask().arms.tolist()
