"""Wang et al.'s elimination algorithm for multi-fidelity regret (Alg. 3)."""

import numpy as np
import pytest

from mftune.benchmarks.bandits import BernoulliBandit
from mftune.benchmarks.regret import RegretRecorder, regret_curves
from mftune.benchmarks.simulate import BanditEvaluator
from mftune.engine.driver import run
from mftune.policies import WangElimination


def env4():
    theta = [[0.55, 0.45, 0.35, 0.15], [0.9, 0.6, 0.4, 0.1]]
    return BernoulliBandit(theta, [1.0, 4.0], xi=[0.35, 0.0])


def play(budget, seed=0, **kw):
    env = env4()
    pol = WangElimination(env.n_arms, env.costs, budget, **kw)
    rec = RegretRecorder()
    res = run(pol, BanditEvaluator(env, np.random.default_rng(seed)), callbacks=[rec])
    return env, pol, rec, res


def test_phase_targets_and_default_epsilon():
    pol = WangElimination(4, [1.0, 4.0], 1e5)
    assert pol.epsilon == pytest.approx((4 * np.log(1e5) / 1e5) ** (1 / 3))
    for p in range(3):
        assert pol.phase_target(p) == int(np.ceil(4**p * np.log(1e5 / (4**p * 4.0))))


def test_explores_at_top_then_exploits_best_at_lowest_fidelity():
    env, pol, rec, res = play(2e5)
    assert res.stopping_reason == "stopping-rule"
    assert pol.exploiting_
    spent = pol.stats.cost.sum()
    assert spent <= 2e5 < spent + env.costs[0]  # N = max{n : Σλ <= Λ}
    arms, fids = rec.arms, rec.fidelities
    first_low = np.argmax(fids == 0)
    assert np.all(fids[:first_low] == 1) and np.all(fids[first_low:] == 0)
    # survivors are exploited in turn; the clear best arm survives
    assert pol.active[env.best_arm]
    assert set(arms[first_low:]) == set(np.flatnonzero(pol.active))
    # exploration counts match the phase targets of the phases each arm took part in
    top = pol.stats.counts[1]
    assert top[env.best_arm] == pol.phase_target(pol.phase_ - 1)


def test_small_budget_stops_inside_exploration():
    env, pol, rec, res = play(50.0)
    assert not pol.exploiting_ and pol.stats.cost.sum() <= 50.0
    assert len(rec.arms) == 12  # 12 pulls at cost 4 fit in 50


def test_regret_decreases_per_unit_budget():
    # Wang's regret per unit of capital falls as Λ grows (Theorem 4.8: O(Λ^{2/3})).
    per_unit = []
    for cap in (2e4, 2e5):
        env, pol, rec, _ = play(cap, seed=1)
        r = regret_curves(rec.arms, rec.fidelities, env.mu, env.costs, [cap]).wang[0]
        per_unit.append(r / cap)
    assert per_unit[1] < per_unit[0]


def test_replayable():
    a = play(3e4, seed=2)[2].arms
    b = play(3e4, seed=2)[2].arms
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "kwargs, match",
    [({"budget": 0.0}, "budget"), ({"budget": 10.0, "epsilon": 2.0}, "epsilon"),
     ({"budget": 10.0, "max_batch": 0}, "max_batch")],
)
def test_invalid_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        WangElimination(4, [1.0, 4.0], **kwargs)
