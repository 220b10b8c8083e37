"""Batch rules: ``ask(n)`` keeps ``n`` workers busy with useful, replayable pulls.

For LUCB, MF-UCB/UCB and the GP policies (whose natural batch is one or two
pulls): ``ask(n)`` returns ``n`` useful pulls — distinct arms for LUCB (the
next challengers), distinct points for the GP policies, distinct untried arms
and then believed repeats of promising arms for MF-UCB — a fixed ``n``
replays exactly from a seed, and the policy still finds the best arm (point)
of a small seeded instance. Round-based policies return their round whatever ``n``.
"""

from __future__ import annotations

import numpy as np
import pytest

from mftune.benchmarks.bandits import BernoulliBandit, GaussianBandit
from mftune.benchmarks.mf_functions import get_mf_function
from mftune.benchmarks.mf_synthetic import FunctionEvaluator
from mftune.benchmarks.simulate import BanditEvaluator
from mftune.engine.driver import run
from mftune.policies import (
    GPUCB,
    IISE,
    MFGPUCB,
    MFUCB,
    UCB,
    ExpectedImprovement,
    MFNaive,
    MultiFidelityLUCB,
)

# K = 8, M = 3 Bernoulli arms, arm 0 best at every fidelity, biases within ξ
# (gaps wide enough for a LUCB run of ~2,000 rounds).
THETA = np.array([[0.70, 0.25, 0.20, 0.20, 0.15, 0.10, 0.05, 0.05],
                  [0.80, 0.35, 0.30, 0.25, 0.20, 0.15, 0.10, 0.05],
                  [0.90, 0.45, 0.40, 0.35, 0.30, 0.25, 0.20, 0.10]])
XI = [0.2, 0.1, 0.0]
MU = {"mu1_tilde": 0.95, "mu2_tilde": 0.45}
CURRIN = get_mf_function("currin")


def bernoulli():
    return BernoulliBandit(THETA, [1.0, 2.0, 4.0], xi=XI, name="batch-8")


def lucb(proc, n, **kw):
    extra = dict(MU) if proc in ("A", "B") else {}
    return MultiFidelityLUCB(8, [1.0, 2.0, 4.0], XI, procedure=proc, batch_size=n,
                             **extra, **kw)


def asks(policy, env_pull, n_batches, seed=0):
    """Drive by hand; return every batch asked as a list of (arm, fidelity) tuples."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_batches):
        pulls = policy.ask()
        if len(pulls) == 0:
            break
        out.append(list(pulls))
        policy.tell(pulls, env_pull(pulls, rng))
    return out


# -- LUCB: u, ℓ and the next challengers ------------------------------------------


@pytest.mark.parametrize("proc", ["A", "C", "baseline"])
def test_lucb_batch_is_leader_challenger_and_next_challengers(proc):
    env = bernoulli()
    pol = lucb(proc, 4)
    rng = np.random.default_rng(0)
    for _ in range(30):
        ell, u = pol.ell_, pol.u_
        ucb, lcb = pol.bounds()
        pulls = pol.ask()
        arms = pulls.arms.tolist()
        assert arms[:2] == [u, ell]  # Algorithm 1's round comes first
        assert len(arms) == len(set(arms)) <= 4  # one pull per arm here (A, C, baseline)
        rest = pulls.arms[2:]
        # the next challengers: largest UCBs after u, none separated from the leader
        assert np.all(ucb[rest] > lcb[ell]) and np.all(ucb[rest] <= ucb[u])
        if len(arms) < 4:
            others = np.setdiff1d(np.arange(8), arms)
            assert np.all(ucb[others] <= lcb[ell])  # nothing useful was left out
        assert len(pol.ask()) == 0  # waits for the outstanding batch
        pol.tell(pulls, env.pull(pulls.arms, pulls.fidelities, rng))
    assert len(asks(lucb(proc, 4), lambda p, r: env.pull(p.arms, p.fidelities, r), 1)[0]) == 4


def test_lucb_small_n_is_algorithm_1():
    env = bernoulli()
    pull = lambda p, r: env.pull(p.arms, p.fidelities, r)  # noqa: E731
    ref = asks(lucb("A", 1), pull, 40)
    assert asks(lucb("A", 2), pull, 40) == ref
    assert all(len(b) == 2 for b in ref)


@pytest.mark.parametrize("proc", ["A", "B", "C", "baseline"])
def test_lucb_batches_replay(proc):
    env = bernoulli()
    pull = lambda p, r: env.pull(p.arms, p.fidelities, r)  # noqa: E731
    ref = asks(lucb(proc, 4), pull, 60, seed=3)
    assert asks(lucb(proc, 4), pull, 60, seed=3) == ref
    assert asks(lucb(proc, 4, ties="random", random_state=2), pull, 60, seed=3) != ref


@pytest.mark.parametrize("proc", ["A", "baseline"])
def test_lucb_batches_find_the_best_arm_in_fewer_rounds(proc):
    env = bernoulli()
    seq, bat = lucb(proc, 1), lucb(proc, 4)
    r1 = run(seq, BanditEvaluator(env, np.random.default_rng(0)), max_pulls=100_000)
    r4 = run(bat, BanditEvaluator(env, np.random.default_rng(0)), max_pulls=100_000)
    assert r4.stopping_reason == r1.stopping_reason == "stopping-rule"
    assert r4.recommendation == r1.recommendation == env.best_arm
    # measured on seeds 0 and 1: batches of 4 need 45-50% fewer rounds than Algorithm 1's
    # rounds of 2 (rounds = wall-clock time with parallel workers); 20% leaves margin
    assert bat.n_rounds < 0.8 * seq.n_rounds


def test_lucb_explore_b_batch_may_exceed_n_only_by_its_exploration():
    pol = lucb("B", 3)
    pulls = pol.ask()
    # EXPLORE-B explores an uncommitted arm at every fidelity: u and ℓ give 6 pulls > 3
    assert pulls.arms.tolist() == [1, 1, 1, 0, 0, 0] and pulls.fidelities.tolist() == [0, 1, 2] * 2


# -- MF-UCB / UCB: believed pulls ---------------------------------------------------


def gaussian():
    return GaussianBandit(THETA, [1, 10, 100], sigma=0.2, xi=XI)


def test_mf_ucb_first_batch_tries_distinct_arms_and_later_believes():
    pol = MFUCB(8, [1, 10, 100], XI, sigma=0.2, batch_size=5, random_state=0)
    first = pol.ask()
    assert len(first) == 5 and len(set(first.arms.tolist())) == 5  # no mean yet: distinct
    assert first.arms[0] == pol._decide()[0]  # the sequential step's choice comes first
    pol.tell(first, np.full(5, 0.5))
    assert len(pol.ask(20)) == 20  # believed pulls may repeat arms that have a mean
    big = MFUCB(3, [1, 10], [0.2, 0.0], batch_size=5, random_state=0)
    assert len(big.ask()) == 3  # n > K: each untried arm once, then wait


@pytest.mark.parametrize("cls", [MFUCB, UCB])
def test_mf_ucb_batches_replay_and_exploit_the_best_arm(cls):
    env = gaussian()

    def make(n):
        kw = dict(sigma=0.2, budget=20_000, random_state=0, batch_size=n)
        return cls(8, env.costs, env.xi, **kw) if cls is MFUCB else cls(8, env.costs, **kw)

    a, b, one = make(4), make(4), make(1)
    for pol in (a, b, one):
        run(pol, BanditEvaluator(env, np.random.default_rng(0)))
    assert a.history_arms_ == b.history_arms_ and a.history_fidelities_ == b.history_fidelities_
    assert a.recommend() == one.recommend() == env.best_arm
    top = a.stats.counts[-1]
    # measured: batch 4 plays the best arm at the top fidelity 147 (MF-UCB) and 150 (UCB)
    # times of 147 and 200 plays, as many as sequential; a majority is a safe bound
    assert top[env.best_arm] > 0.5 * top.sum()
    assert a.stats.cost.sum() <= 20_000


def test_play_simulated_needs_batch_size_one():
    env = gaussian()
    pol = MFUCB(8, env.costs, env.xi, budget=1000, batch_size=2)
    with pytest.raises(ValueError, match="batch_size must be 1"):
        pol.play_simulated(env, np.random.default_rng(0))


# -- GP policies: kriging believer --------------------------------------------------


def fn_pull(p, r):
    return FunctionEvaluator(CURRIN, r).evaluate(p).rewards


@pytest.mark.parametrize("cls", [MFGPUCB, GPUCB, ExpectedImprovement])
def test_gp_batch_points_are_distinct_and_replayable(cls):
    def make():
        return cls(2, CURRIN.costs, capital=300.0, batch_size=3, random_state=4)

    a, b = make(), make()
    ba, bb = asks(a, fn_pull, 6), asks(b, fn_pull, 6)
    np.testing.assert_array_equal(a.X_, b.X_)
    assert ba == bb
    start = len(ba[0])  # the initial design is asked whole
    assert all(len(batch) == 3 for batch in ba[1:])
    gps = a.gps_ if cls is MFGPUCB else [a.gp_]
    for i in range(start, a.X_.shape[0], 3):
        pts, fids = a.X_[i:i + 3], a.fidelities_[i:i + 3]
        gaps = np.abs(pts[:, None] - pts[None]).max(axis=2)
        same = (fids[:, None] == fids[None]) & ~np.eye(3, dtype=bool)
        # no two points of a batch repeat each other at one fidelity (the policies'
        # own duplicate rule: closer than 1e-4 length scales)
        assert np.all(gaps[same] > 1e-4 * min(gp.length_scale_ for gp in gps))
        if i == start:  # while the posterior is uncertain the believer spreads the batch
            assert gaps[same].min() > 0.01 if same.any() else True


@pytest.mark.parametrize("cls", [MFGPUCB, GPUCB, ExpectedImprovement])
def test_gp_batches_still_find_the_optimum(cls):
    pol = cls(2, CURRIN.costs, capital=400.0, batch_size=3, random_state=0)
    res = run(pol, FunctionEvaluator(CURRIN, np.random.default_rng(0)))
    X, _ = pol.observations(1)
    # measured simple regret with batches of 3, worst of seeds 0..4: MF-GP-UCB 7.9e-4,
    # GP-UCB 0.010, EI 5.4e-4 (sequential: 5.8e-4, 2.4e-3, 1.9e-3); 0.05 is the bound
    # of the sequential tests
    assert CURRIN.f_opt - CURRIN(X).max() < 0.05
    assert res.stopping_reason == "stopping-rule"


@pytest.mark.parametrize("cls", [MFGPUCB, GPUCB, ExpectedImprovement])
@pytest.mark.parametrize("order", ["fifo", "random"])
def test_gp_asks_while_results_are_outstanding(cls, order):
    # with queries outstanding, ask() returned nothing until every one was told, so a
    # pool of workers told one at a time idled; now they are believed as a batch's own
    n, rng = 3, np.random.default_rng(1)
    pol = cls(2, CURRIN.costs, capital=400.0, batch_size=n, random_state=2)
    first = pol.ask()
    design = len(first)
    assert design > n and len(pol.ask()) == 0  # the initial design is waited for whole
    running = [first[i:i + 1] for i in range(design)]
    sizes, design_left = [], design
    while running and not pol.done:
        q = running.pop(0 if order == "fifo" else int(rng.integers(len(running))))
        pol.tell(q, fn_pull(q, rng))
        design_left -= int(q.arms[0]) < design
        if design_left:  # the initial design is still running
            assert len(pol.ask(1)) == 0
            continue
        waiting = pol.X_[pol.status_ == 0]
        got = pol.ask(n - len(running))
        sizes.append(len(got))
        running += [got[i:i + 1] for i in range(len(got))]
        if not len(got):
            continue
        # a new point repeats no outstanding one at its fidelity (the duplicate rule)
        same = pol.fidelities_[got.arms][:, None] == pol.fidelities_[pol.status_ == 0][None]
        gaps = np.abs(got.points[:, None] - waiting[None]).max(axis=2)
        assert np.all(gaps[same[:, :len(waiting)]] > 0.0)
    assert pol.done and len(sizes) > 20
    assert min(sizes[:-n]) >= 1  # a point at every ask until the capital is committed
    X, _ = pol.observations(1)
    # the bound of the batch tests above (regret < 0.05 on Currin)
    assert CURRIN.f_opt - CURRIN(X).max() < 0.05


def test_mf_naive_batches_the_ranked_points():
    pol = MFNaive(2, CURRIN.costs, capital=400.0, max_low=12, batch_size=3, random_state=0)
    batches = asks(pol, fn_pull, 12)
    fids = [sorted({f for _, f in b}) for b in batches]
    assert [len(b) for b in batches[:3]] == [10, 2, 3]  # design, GP-UCB up to n_low, ranked
    assert fids[:3] == [[0], [0], [1]]  # a batch never mixes the phases
    X0, y0 = pol.observations(0)
    np.testing.assert_array_equal(pol.observations(1)[0][:12], X0[np.argsort(-y0)][:12])


def test_believing_keeps_the_mean_and_shrinks_the_variance():
    pol = GPUCB(2, CURRIN.costs, random_state=0)
    asks(pol, fn_pull, 2)
    gp = pol.gp_
    P = np.array([[0.3, 0.7], [0.8, 0.2]])
    T = np.random.default_rng(1).random((20, 2))
    b = gp.believing(P)
    np.testing.assert_allclose(b.predict(T)[0], gp.predict(T)[0], atol=1e-8)
    assert np.all(b.predict(P)[1] < gp.predict(P)[1])
    assert np.all(b.predict(T)[1] <= gp.predict(T)[1] + 1e-12)
    assert gp.gpr_.X_train_.shape[0] + 2 == b.gpr_.X_train_.shape[0]  # self unchanged


# -- protocol -----------------------------------------------------------------------


def test_round_policies_return_their_round_whatever_n():
    pol = IISE(6, [1.0, 4.0], [0.2, 0.0], delta=0.1)
    assert len(pol.ask(1)) == 6


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_batch_sizes_raise(bad):
    with pytest.raises(ValueError, match="batch_size must be an integer >= 1"):
        lucb("C", bad)
    with pytest.raises(ValueError, match="batch_size must be an integer >= 1"):
        GPUCB(2, CURRIN.costs, batch_size=bad)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        MFUCB(8, [1, 10, 100], XI).ask(bad)
