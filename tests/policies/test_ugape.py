"""UGapEc / UGapEb (Gabillon et al. 2012): guarantees on seeded instances, invariants, inputs."""

import numpy as np
import pytest
from scipy.stats import binom

from mftune.benchmarks.bandits import BernoulliBandit
from mftune.benchmarks.simulate import BanditEvaluator
from mftune.engine.driver import run
from mftune.policies import UGapEb, UGapEc
from mftune.policies.ugape import ugape_complexity

MU = np.array([0.8, 0.6, 0.5, 0.3])


def env():
    return BernoulliBandit(MU[None, :], [1.0], xi=[0.0])


def test_complexity_formula():
    h = ugape_complexity([0.8, 0.6, 0.5], 0.1)
    expect = 1 / 0.15**2 + 1 / 0.15**2 + 1 / 0.2**2  # gaps 0.2, 0.2, 0.3
    assert h == pytest.approx(expect)


def test_gap_index_definition():
    pol = UGapEc(4, epsilon=0.05, delta=0.1, n_best=2)
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = pol.ask()
        pol.tell(p, env().pull(p.arms, p.fidelities, rng))
    B, J, BJ, U, L, _ = pol.gap_indices()
    for k in range(4):
        others = np.sort(np.delete(U, k))[::-1]
        assert B[k] == pytest.approx(others[1] - L[k])  # m-th (2nd) largest U of the others
    assert set(J) == set(np.argsort(B, kind="stable")[:2]) and BJ == pytest.approx(B[J].max())


def test_ugapec_epsilon_optimal_with_error_below_delta():
    # 15 seeded runs, ε = 0.1, δ = 0.1: the returned arm must be within ε of the best
    # in all but at most the 0.999 binomial quantile of Binomial(15, δ) runs (= 6).
    e = env()
    wrong = 0
    for r in range(15):
        pol = UGapEc(4, epsilon=0.1, delta=0.1)
        res = run(pol, BanditEvaluator(e, np.random.default_rng([7, r])))
        assert res.stopping_reason == "stopping-rule"
        assert pol.gap_indices()[2] < 0.1  # stopping rule B_J < ε
        wrong += MU.max() - MU[pol.recommend()] > 0.1
    assert wrong <= binom.ppf(0.999, 15, 0.1)


def test_ugapec_m_best_set():
    pol = UGapEc(4, epsilon=0.1, delta=0.1, n_best=2)
    run(pol, BanditEvaluator(env(), np.random.default_rng(3)))
    J = pol.recommend_set()
    assert J.size == 2 and np.all(MU[J] >= np.sort(MU)[-2] - 0.1)


def test_ugapeb_error_falls_with_budget():
    # Harder instance (gap 0.1), 40 seeded runs per budget; the error rate must fall
    # with the budget (the bound 2Kn exp(-2a) falls exponentially in n for
    # a = (n - K)/(4 H)). Measured with these seeds: 0.68 at n = 20, 0.43 at n = 300.
    mu = np.array([0.6, 0.5, 0.45, 0.4])
    e = BernoulliBandit(mu[None, :], [1.0], xi=[0.0])
    h = ugape_complexity(mu, 0.0)
    errors = []
    for n in (20, 300):
        wrong = 0
        for r in range(40):
            pol = UGapEb(4, n, complexity=h)
            run(pol, BanditEvaluator(e, np.random.default_rng([n, r])))
            assert pol.stats.counts.sum() == n
            wrong += pol.recommend() != 0
        errors.append(wrong / 40)
    assert errors[1] < errors[0] - 0.1


def test_initialisation_and_replay():
    a, b = UGapEc(4, 0.1, 0.1), UGapEc(4, 0.1, 0.1)
    first = a.ask()
    assert sorted(first.arms.tolist()) == [0, 1, 2, 3]
    b.ask()
    rng = np.random.default_rng(1)
    r = env().pull(first.arms, first.fidelities, rng)
    a.tell(first, r)
    b.tell(first, r)
    for _ in range(30):
        pa, pb = a.ask(), b.ask()
        assert len(pa) == 1 and np.array_equal(pa.arms, pb.arms)
        x = env().pull(pa.arms, pa.fidelities, rng)
        a.tell(pa, x)
        b.tell(pb, x)


def test_top_fidelity_only_with_costs():
    pol = UGapEc(4, 0.1, 0.1, costs=[1.0, 5.0])
    assert np.all(pol.ask().fidelities == 1)


@pytest.mark.parametrize(
    "cls, kwargs, match",
    [
        (UGapEc, {"delta": 0.0}, "delta"),
        (UGapEc, {"epsilon": -0.1}, "epsilon"),
        (UGapEc, {"n_best": 4}, "n_best"),
        (UGapEc, {"c": 0.0}, "c"),
        (UGapEb, {"budget": 2, "a": 1.0}, "budget"),
        (UGapEb, {"budget": 100}, "complexity"),
        (UGapEb, {"budget": 100, "a": -1.0}, "a"),
    ],
)
def test_invalid_input(cls, kwargs, match):
    with pytest.raises(ValueError, match=match):
        cls(4, **kwargs)


@pytest.mark.parametrize("cls, kwargs", [(UGapEc, {"epsilon": 0.1, "delta": 0.1}),
                                         (UGapEb, {"budget": 40, "a": 1.0})])
@pytest.mark.parametrize("b, bad", [(1.0, 1.2), (1.0, -0.3), (2.0, 2.5)])
def test_ugape_tell_refuses_rewards_outside_0_b_and_records_nothing(cls, kwargs, b, bad):
    # the radii b sqrt(...) assume rewards in [0, b] (value_range)
    pol = cls(4, value_range=b, **kwargs)
    pulls = pol.ask()
    before = [a.copy() for a in (pol.stats.counts, pol.stats.sums, pol.stats.sumsq,
                                 pol.stats.cost, pol.pending)] + [pol.n_rounds]
    with pytest.raises(ValueError, match=rf"rewards must lie in \[0, {b:g}\]"):
        pol.tell(pulls, np.full(len(pulls), bad))
    after = [pol.stats.counts, pol.stats.sums, pol.stats.sumsq, pol.stats.cost,
             pol.pending, pol.n_rounds]
    for was, now in zip(before, after, strict=True):
        np.testing.assert_array_equal(was, now)
    pol.tell(pulls, np.full(len(pulls), b))  # b itself is a reward
    assert pol.n_pending == 0 and pol.stats.sums.sum() == pytest.approx(b * len(pulls))
