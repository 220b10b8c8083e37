"""MF-UCB, UCB (Kandasamy et al. 2016), regret definitions and the Figure 2 generator."""

import numpy as np
import pytest

from mftune.benchmarks.bandits import BernoulliBandit, GaussianBandit
from mftune.benchmarks.mfucb_problems import FIGURE2_PROBLEMS, make_problem, recon_zeta
from mftune.benchmarks.regret import RegretRecorder, regret_curves
from mftune.benchmarks.simulate import BanditEvaluator
from mftune.engine.driver import run
from mftune.policies import MFUCB, UCB
from mftune.policies.mf_ucb import mf_ucb_gamma
from mftune.radii import mf_ucb_radius, psi, psi_inverse


def small_env(seed=0, K=30):
    rng = np.random.default_rng(seed)
    mu = rng.uniform(0, 1, K)
    zeta = recon_zeta(3)
    theta = np.clip(mu + zeta[:, None] * rng.uniform(-1, 1, (3, K)), 0, 1)
    theta[-1] = mu
    return GaussianBandit(theta, [1, 10, 100], sigma=0.2, xi=zeta)


def test_psi_pairs_are_inverse_and_gamma_eq4():
    for kind in ("sub-gaussian", "hoeffding"):
        y = np.array([0.01, 0.3, 2.0])
        np.testing.assert_allclose(psi(psi_inverse(y, kind, 0.3), kind, 0.3), y)
    g = mf_ucb_gamma([1, 10, 100], [0.2, 0.1, 0.0], "sub-gaussian", 0.2)
    np.testing.assert_allclose(g, [0.2 * np.sqrt(0.1), 0.1 * np.sqrt(0.1), 0.0])
    np.testing.assert_allclose(mf_ucb_gamma([1, 4], [0.3, 0.0], "hoeffding"), [0.15, 0.0])
    assert np.isinf(mf_ucb_radius([0], 5, 2.0)[0])


def test_budget_respected_and_every_arm_tried():
    env = small_env()
    pol = MFUCB(env.n_arms, env.costs, env.xi, sigma=0.2, budget=5000, random_state=0)
    res = run(pol, BanditEvaluator(env, np.random.default_rng(0)))
    assert res.stopping_reason == "stopping-rule"
    spent = pol.stats.cost.sum()
    assert spent <= 5000 and spent + env.costs.min() > 5000 - env.costs.max()
    assert np.all(pol.stats.counts[0] >= 1)  # unplayed arms have an infinite index


def test_fidelity_rule_and_index():
    env = small_env()
    pol = MFUCB(env.n_arms, env.costs, env.xi, sigma=0.2, budget=3000, random_state=1)
    rng = np.random.default_rng(1)
    while not pol.done:
        arm, m = pol._decide()
        t = pol.t_
        rad = mf_ucb_radius(pol.stats.counts[:, arm], t, 2.0, "sub-gaussian", 0.2)
        # m_t = min{m : radius >= γ^(m) or m = M} (Alg. 1, step 2)
        expect = next(i for i in range(3) if i == 2 or rad[i] >= pol.gamma_[i])
        assert m == expect
        b = pol.indices()
        assert b[arm] == b.max()
        pulls = pol.ask()
        pol.tell(pulls, env.pull(pulls.arms, pulls.fidelities, rng))
    # index = min over fidelities of mean + bonus + ζ
    n = pol.stats.counts
    mean = pol.stats.sums / np.maximum(n, 1)
    bonus = mf_ucb_radius(n, pol.t_, 2.0, "sub-gaussian", 0.2)
    direct = np.where(n > 0, mean + bonus + env.xi[:, None], np.inf).min(axis=0)
    np.testing.assert_allclose(pol.indices(), direct)


def test_ucb_plays_top_fidelity_only():
    env = small_env()
    pol = UCB(env.n_arms, env.costs, sigma=0.2, budget=20_000, random_state=0)
    run(pol, BanditEvaluator(env, np.random.default_rng(0)))
    assert pol.stats.counts[:-1].sum() == 0 and pol.stats.counts[-1].sum() == 200


@pytest.mark.parametrize("cls", [MFUCB, UCB])
def test_fast_path_equals_driver(cls):
    env = small_env(2)
    kw = dict(sigma=0.2, budget=8000, random_state=[3, 1])
    a = cls(env.n_arms, env.costs, env.xi, **kw) if cls is MFUCB else \
        cls(env.n_arms, env.costs, **kw)
    b = cls(env.n_arms, env.costs, env.xi, **kw) if cls is MFUCB else \
        cls(env.n_arms, env.costs, **kw)
    a.play_simulated(env, np.random.default_rng(5))
    rec = RegretRecorder()
    run(b, BanditEvaluator(env, np.random.default_rng(5)), callbacks=[rec])
    assert a.history_arms_ == b.history_arms_ == rec.arms.tolist()
    assert a.history_fidelities_ == b.history_fidelities_
    np.testing.assert_array_equal(a.stats.sums, b.stats.sums)


def test_replayable():
    env = small_env()
    runs = []
    for _ in range(2):
        pol = MFUCB(env.n_arms, env.costs, env.xi, sigma=0.2, budget=4000, random_state=9)
        pol.play_simulated(env, np.random.default_rng(4))
        runs.append((pol.history_arms_, pol.history_fidelities_))
    assert runs[0] == runs[1]


def test_mf_ucb_beats_ucb_and_spares_bad_arms():
    # Seeded K = 30 problem, capital 3e4 (300 top-fidelity plays for UCB), 3 paired runs.
    env = small_env(0)
    caps = [1e4, 3e4]
    reg = {}
    for name, cls in (("mf", MFUCB), ("ucb", UCB)):
        vals = []
        for r in range(3):
            kw = dict(sigma=0.2, budget=caps[-1], random_state=[r, 1])
            pol = cls(env.n_arms, env.costs, env.xi, **kw) if cls is MFUCB else \
                cls(env.n_arms, env.costs, **kw)
            pol.play_simulated(env, np.random.default_rng([0, r]))
            vals.append(regret_curves(pol.history_arms_, pol.history_fidelities_, env.mu,
                                      env.costs, caps).kandasamy)
            if cls is MFUCB:
                worst = np.argsort(env.mu)[:10]  # the ten worst arms
                assert pol.stats.counts[-1, worst].sum() == 0
        reg[name] = np.mean(vals, axis=0)
    assert reg["mf"][-1] < reg["ucb"][-1]


def test_regret_definitions_by_hand():
    mu = np.array([0.9, 0.5])
    costs = np.array([1.0, 10.0])
    arms, fids = [1, 0, 0, 1], [0, 1, 1, 0]  # cumulative cost 1, 11, 21, 22
    c = regret_curves(arms, fids, mu, costs, [10.5, 21.0, 25.0])
    np.testing.assert_array_equal(c.n_plays, [1, 3, 4])
    np.testing.assert_allclose(c.kandasamy, [10.5 * 0.9 - 0.5, 21 * 0.9 - 0.5 - 18,
                                             25 * 0.9 - 0.5 - 18 - 0.5])
    np.testing.assert_allclose(c.kandasamy_played, [0.4, 0.4, 0.8])
    np.testing.assert_allclose(c.wang, [10.5 * 0.9 - 0.5, 21 * 0.9 - 2.3, 25 * 0.9 - 2.8])
    with pytest.raises(ValueError, match="capitals"):
        regret_curves(arms, fids, mu, costs, [0.0])


def test_figure2_generator_respects_bias_bounds():
    for prob in FIGURE2_PROBLEMS:
        env = make_problem(prob, 0)
        assert env.n_arms == prob.n_arms and np.array_equal(env.costs, prob.costs)
        assert np.all(np.abs(env.theta - env.mu) <= env.xi[:, None] + 1e-12)
        assert isinstance(env, BernoulliBandit) == (prob.rewards == "bernoulli")
    a, b = make_problem(FIGURE2_PROBLEMS[0], 3), make_problem(FIGURE2_PROBLEMS[0], 3)
    np.testing.assert_array_equal(a.theta, b.theta)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"rho": 0.0}, "rho"),
        ({"psi": "gaussian"}, "psi"),
        ({"sigma": -1.0}, "sigma"),
        ({"budget": -5.0}, "budget"),
    ],
)
def test_invalid_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MFUCB(5, [1, 10], [0.2, 0.0], **kwargs)
    if "rho" in kwargs or "psi" in kwargs:
        with pytest.raises(ValueError, match=match):
            UCB(5, [1, 10], **kwargs)


def test_invalid_zeta_and_fast_path_guard():
    with pytest.raises(ValueError, match="zeta"):
        MFUCB(5, [1, 10], [0.2, 0.1])
    pol = MFUCB(5, [1, 10], [0.2, 0.0])
    env = GaussianBandit(np.zeros((2, 5)), [1, 10])
    with pytest.raises(ValueError, match="budget"):
        pol.play_simulated(env, np.random.default_rng(0))


@pytest.mark.parametrize("cls", [MFUCB, UCB])
def test_hoeffding_mf_ucb_tell_refuses_rewards_outside_0_1(cls):
    # Hoeffding's psi is for rewards in [0, 1]; the sub-Gaussian one takes any real
    args = (5, [1, 10], [0.2, 0.0]) if cls is MFUCB else (5, [1, 10])
    pol = cls(*args, psi="hoeffding", budget=100.0)
    pulls = pol.ask()
    before = [a.copy() for a in (pol.stats.counts, pol.stats.sums, pol.pending)]
    with pytest.raises(ValueError, match=r"rewards must lie in \[0, 1\]"):
        pol.tell(pulls, [1.5])
    for was, now in zip(before, [pol.stats.counts, pol.stats.sums, pol.pending], strict=True):
        np.testing.assert_array_equal(was, now)
    assert pol.history_arms_ == []
    pol.tell(pulls, [1.0])
    assert pol.history_arms_ == pulls.arms.tolist()
    # the fast path refuses them too (it is the driver's equal, pull for pull)
    env = GaussianBandit(np.full((2, 5), 0.5), [1, 10], sigma=2.0)
    with pytest.raises(ValueError, match=r"rewards must lie in \[0, 1\]"):
        cls(*args, psi="hoeffding", budget=100.0).play_simulated(env, np.random.default_rng(0))
    gauss = cls(*args, budget=100.0)
    assert gauss.reward_range is None
    gauss.tell(gauss.ask(), [-3.0])


def _workers(cls, env, n, seed, order, budget=None, steps=300):
    """A pool of ``n`` workers: results come back one at a time (oldest first, or at
    random), and each is followed by an ask for the free workers."""
    kw = dict(sigma=0.2, batch_size=n, random_state=seed, budget=budget)
    pol = cls(env.n_arms, env.costs, env.xi, **kw) if cls is MFUCB else \
        cls(env.n_arms, env.costs, **kw)
    rng = np.random.default_rng(seed)
    first = pol.ask()
    sizes, running = [len(first)], [first[i:i + 1] for i in range(len(first))]
    for _ in range(steps):
        q = running.pop(0 if order == "fifo" else int(rng.integers(len(running))))
        pol.tell(q, env.pull(q.arms, q.fidelities, rng))
        if pol.done:
            break
        got = pol.ask(n - pol.n_pending)
        sizes.append(len(got))
        running += [got[i:i + 1] for i in range(len(got))]
    return pol, sizes


@pytest.mark.parametrize("cls", [MFUCB, UCB])
@pytest.mark.parametrize("order", ["fifo", "random"])
def test_mf_ucb_asks_while_results_are_outstanding(cls, order):
    # with pulls outstanding, ask() returned nothing (the workers idled until the whole
    # batch was told); it now believes them as the batch rule believes its own pulls
    theta = np.array([[0.3, 0.5, 0.4], [0.35, 0.6, 0.45], [0.4, 0.7, 0.5]])
    for M in (2, 3):
        env = GaussianBandit(theta[-M:], [1.0, 3.0, 9.0][:M], sigma=0.2,
                             xi=[0.2, 0.1, 0.0][-M:] if M == 3 else [0.2, 0.0])
        pol, sizes = _workers(cls, env, 4, 0, order)
        assert min(sizes) >= 1 and len(sizes) == 301
        assert pol.stats.counts.sum() == 300 and pol.n_pending == 4
        # the best arm gets the most pulls, as without the workers
        assert int(np.argmax(pol.stats.counts.sum(axis=0))) == 1
        # asked again with nothing told, before any reward: one pull (Algorithm 1's
        # play on the told pulls), not an empty batch
        fresh = cls(env.n_arms, env.costs, env.xi, batch_size=4) if cls is MFUCB else \
            cls(env.n_arms, env.costs, batch_size=4)
        assert len(fresh.ask()) == 3 and len(fresh.ask()) == 1  # 3 arms: 3 first pulls
    # with a budget, the workers stay busy until the outstanding pulls commit it
    env = small_env(1, K=6)
    pol, sizes = _workers(cls, env, 4, 1, order, budget=3000.0, steps=10_000)
    assert pol.done and min(sizes[:-4]) >= 1
    assert pol.stats.cost.sum() + pol.pending.sum(axis=1) @ env.costs <= 3000.0


@pytest.mark.parametrize("cls", [MFUCB, UCB])
def test_mf_ucb_batch_size_one_is_still_algorithm_1(cls):
    # told at once (as the driver tells), batch_size=1 and ask(1) make Algorithm 1's
    # plays: the fast path's sequence, pull for pull
    env = small_env(2)
    kw = dict(sigma=0.2, budget=3000, random_state=[3, 1])
    make = (lambda **k: cls(env.n_arms, env.costs, env.xi, **kw, **k)) if cls is MFUCB else \
        (lambda **k: cls(env.n_arms, env.costs, **kw, **k))
    ref = make()
    ref.play_simulated(env, np.random.default_rng(5))
    for pol, n in ((make(), None), (make(batch_size=4), 1)):
        rng = np.random.default_rng(5)
        while not pol.done:
            p = pol.ask(n)
            assert len(p) == 1
            pol.tell(p, env.pull(p.arms, p.fidelities, rng))
        assert pol.history_arms_ == ref.history_arms_
        assert pol.history_fidelities_ == ref.history_fidelities_
