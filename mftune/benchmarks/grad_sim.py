"""Many independent runs of MF-GRAD or GRAD at once, with the policy's exact decisions.

MF-GRAD decides every pull from two max-min problems (the sub-gradient and
the GLR statistic), each a few dozen small numpy operations: run one at a
time, per-call overhead dominates (about 0.5 ms per pull on 4x5), and the
``forever`` instance needs 10⁵ pulls and more per run. This module advances
all runs of a cell together: the state gets a leading "runs" axis and one
call of the policy's own step functions
(:func:`~mftune.policies.mf_grad.gradient_gains`,
:func:`~mftune.policies.mf_grad.exp_weights`,
:func:`~mftune.policies.mf_grad.track` and the pair solver of
:mod:`mftune.policies.lower_bound`) decides the next pull of every run.

The GLR test is decided after every pull, as in the policy, but not always
solved. When the means are MF-feasible with a unique best arm ``a`` at the
top fidelity, the statistic is ``Λ = max(min_b V_N(a, b), 0)`` (the
shortcut of :func:`~mftune.policies.lower_bound.characteristic_values`), so
``Λ <= U(a, b̂)``, the objective of the pair ``(a, b̂)`` of the last exact
solution at its top means ``(η_a, η_b̂)`` then (any feasible pair of top
means bounds the minimum from above;
:func:`~mftune.policies.lower_bound.pair_upper_bound`). When ``a`` is still
the arm of the last exact solution and that bound is below the threshold
(with a relative margin of 1e-9 against rounding), the run cannot stop at
this pull and the exact solve is skipped; otherwise the exact statistic
decides, as in the policy (and, with the policy's ``top_test``, the test
of the top fidelity alone, solved for every run not stopped). Far from
stopping, η moves little from pull to pull, so most pulls skip the solve.
With four runs or fewer left the statistic is solved at every pull: it
then rides in the call that solves the next gradient (when both max-min
the pair values: ``statistic`` and ``gradient`` both ``"code"``), which
costs less than the bound's test.

Exactness. Run ``r`` reads its rewards from ``numpy.random.default_rng([seed,
r])`` as :func:`mftune.benchmarks.simulate.simulate_runs` does (one variate
per pull, in pull order, turned into a reward by the bandit's own
``rewards``), sums are accumulated pull by pull, and the step functions are
the policy's, which compute each run with the same element-wise
expressions. So every run makes the decisions, counts and costs of the
ask/tell policy (tested in ``tests/benchmarks/test_grad_sim.py``), up to one
caveat: numpy's SIMD reductions may round differently (in the last bit)
depending on how an array is laid out in memory, and a decision at an exact
near-tie can then go the other way. On ``lucb_only_M`` (one fidelity, where
GRAD and MF-GRAD are the same algorithm) 1 run in 30 differed that way.
"""

from __future__ import annotations

import numpy as np

from ..policies.lower_bound import characteristic_values, feasible_best, pair_upper_bound
from ..policies.mf_grad import GRAD, MFGRAD, exp_weights, gradient_gains, track
from .bandits import SimulatedBandit
from .simulate import SimRecord

__all__ = ["simulate_grad_batch"]

#: With this many runs left or fewer, the GLR statistic is solved at every pull: it then
#: rides in the gradient's call at almost no cost, less than the upper-bound test's.
_FEW_RUNS = 4


def _top_test(glr, mu, w, stop, arm) -> None:
    """The GLR test of the top fidelity alone for the runs not stopped; updates in place."""
    rest = np.flatnonzero(~stop)
    if not rest.size:
        return
    value, top_arm, _, _, _ = characteristic_values(mu[rest, :, -1:], w[rest, :, -1:],
                                                    np.zeros(1), glr.sigma,
                                                    excess=glr.statistic_name == "glr",
                                                    epsilon=glr.epsilon)
    hit = value >= glr.top_threshold(w[rest, :, -1].sum(axis=1))
    stop[rest[hit]] = True
    arm[rest[hit]] = top_arm[hit]


def simulate_grad_batch(env: SimulatedBandit, policy: MFGRAD, n_runs: int, seed: int = 0, *,
                        run_offset: int = 0, max_pulls: int = 10**6, snapshots=(),
                        buffer: int = 4096, exact_glr: bool = False
                        ) -> tuple[list[SimRecord], dict]:
    """Run ``n_runs`` independent copies of ``policy`` (fresh, unused) on ``env``, vectorised.

    Parameters
    ----------
    env : SimulatedBandit
        Any bandit with a one-variate reward form (``env.variate``).
    policy : MFGRAD or GRAD
        A fresh policy: it provides the constants (costs, ξ, σ, δ, learning
        rate, threshold, stopping on or off) and is not advanced.
    n_runs : int
    seed : int, default=0
        Run ``r`` draws from ``default_rng([seed, run_offset + r])``.
    run_offset : int, default=0
    max_pulls : int
        Cap per run (stopping reason ``"max-pulls"``).
    snapshots : sequence of int
        Pull counts at which to record every run's counts (fidelity-major, (M, K)).
    buffer : int
        Variates drawn per run and refill.
    exact_glr : bool, default=False
        Solve the GLR statistic after every pull (no upper-bound shortcut;
        the decisions are the same, tested).

    Returns
    -------
    records : list of SimRecord
        One per run, in run order (``wall_time`` is the batch's share per run).
    snaps : dict
        ``{n: ndarray (R, M, K)}`` for each snapshot reached (runs that ended
        earlier keep their final counts).
    """
    if not isinstance(policy, MFGRAD) or policy.stats.counts.sum():
        raise ValueError("policy must be a fresh MFGRAD or GRAD instance")
    import time

    start = time.perf_counter()
    R, K = int(n_runs), env.n_arms
    fids, lam, xi, sigma = policy.fids_, policy.lam_, policy.xi_, policy.sigma
    Mu = fids.size
    if env.variate is None:
        raise ValueError(f"{type(env).__name__} has no one-variate reward form "
                         "(SimulatedBandit.variate); the batch simulator needs one")
    rngs = [np.random.default_rng([int(seed), run_offset + r]) for r in range(R)]
    U = np.stack([getattr(g, env.variate)(buffer) for g in rngs])
    ptr = 0
    ids = np.arange(R)
    counts = np.zeros((R, Mu, K))
    sums = np.zeros((R, Mu, K))
    gains = np.zeros((R, K, Mu))
    omega = np.full((R, K, Mu), 1.0 / (K * Mu))
    tracking = np.zeros((R, Mu, K))
    theta = env.theta[fids]  # (Mu, K)
    out_counts = np.zeros((R, Mu, K))
    out_rec = np.full(R, -1)
    out_stop = np.zeros(R, dtype=bool)
    todo = sorted(int(n) for n in snapshots)
    snaps: dict[int, np.ndarray] = {}
    init = [(j, k) for k in range(K) for j in range(Mu)]  # arm-major initial round
    excess = policy.glr.statistic_name == "glr"
    exact_only = exact_glr or excess  # the bound is for the "code" statistic
    grad_excess = policy.gradient == "glr"
    ride = not (excess or grad_excess)  # the next gradient's problem is the statistic's kind
    last = np.full((R, 2), -1)  # (i*, b̂) of the last exact GLR solution
    eta = np.zeros((R, 2))  # their top means there
    n_pulls = 0
    n_grad = 0
    solved = None  # the next gradient's characteristic values, solved with the GLR statistic
    while ids.size:
        rows = np.arange(ids.size)
        if n_pulls < len(init):
            j0, k0 = init[n_pulls]
            k, j = np.full(ids.size, k0), np.full(ids.size, j0)
        else:
            mu = np.swapaxes(sums / counts, 1, 2)
            gains += gradient_gains(mu, omega, lam, xi, sigma, solution=solved,
                                    excess=grad_excess)
            solved = None
            n_grad += 1
            lr = policy.learning_rate if policy.learning_rate is not None \
                else 1.0 / np.sqrt(n_grad + 1.0)
            omega = exp_weights(gains, lr)
            t = np.full(ids.size, n_pulls + 1.0)
            k, j = track(omega, lam, t, tracking, counts)
        if ptr == buffer:
            U = np.stack([getattr(rngs[r], env.variate)(buffer) for r in ids])
            ptr = 0
        reward = env.rewards(theta[j, k], U[:, ptr])
        ptr += 1
        counts[rows, j, k] += 1.0
        sums[rows, j, k] += reward
        n_pulls += 1
        while todo and n_pulls >= todo[0]:
            snaps[todo.pop(0)] = (ids.copy(), counts.copy())
        stop = np.zeros(ids.size, dtype=bool)
        arm = np.full(ids.size, -1)
        if policy.stopping and n_pulls >= len(init):
            mu = np.swapaxes(sums / counts, 1, 2)
            w = np.swapaxes(counts, 1, 2)
            beta = float(policy.glr.threshold(float(n_pulls)))
            solve = np.ones(ids.size, dtype=bool)
            if not exact_only and ids.size > _FEW_RUNS:
                fast, a = feasible_best(mu, xi)
                cand = np.flatnonzero(fast & (a == last[:, 0]))
                if cand.size:
                    ia, ib = last[cand, 0], last[cand, 1]
                    bound = pair_upper_bound(mu[cand, ia], w[cand, ia], mu[cand, ib],
                                             w[cand, ib], xi, sigma, eta[cand, 0], eta[cand, 1])
                    solve[cand[bound < beta * (1.0 - 1e-9)]] = False
            if not ride:
                both = characteristic_values(mu[solve], w[solve], xi, sigma, excess=excess)
            else:  # the next gradient's problem (same means, weights ω̃/λ) in the same call
                both = characteristic_values(np.concatenate([mu[solve], mu]),
                                             np.concatenate([w[solve], omega / lam]), xi, sigma)
                n_solve = int(solve.sum())
                solved = tuple(x[n_solve:] for x in both)
                both = tuple(x[:n_solve] for x in both)
            if solve.any():
                value, arm[solve], bb, th_i, th_b = both
                stop[solve] = value >= beta
                last[solve] = np.stack([arm[solve], bb], axis=1)
                eta[solve] = np.stack([th_i[:, -1], th_b[:, -1]], axis=1)
            if policy.glr.split:
                _top_test(policy.glr, mu, w, stop, arm)
        done = stop | (n_pulls >= max_pulls)
        if done.any():
            d = ids[done]
            out_counts[d] = counts[done]
            out_stop[d] = stop[done]
            with np.errstate(invalid="ignore", divide="ignore"):
                top = np.where(counts[done, -1] > 0, sums[done, -1] / counts[done, -1], -np.inf)
            out_rec[d] = np.where(stop[done], arm[done], np.argmax(top, axis=1))
            keep = ~done
            ids, counts, sums, gains, omega, tracking, U, last, eta = (
                x[keep] for x in (ids, counts, sums, gains, omega, tracking, U, last, eta))
            if solved is not None:
                solved = tuple(x[keep] for x in solved)
    for n, (rid, c) in list(snaps.items()):
        full = out_counts.copy()
        full[rid] = c
        snaps[n] = full
    for n in todo:
        snaps[n] = out_counts.copy()
    wall = (time.perf_counter() - start) / R
    M = env.n_fidelities
    full_counts = np.zeros((R, M, K))
    full_counts[:, fids] = out_counts
    cost = np.einsum("rmk,m->r", full_counts, env.costs)
    name = "GRAD" if isinstance(policy, GRAD) else "MF-GRAD"
    records = [SimRecord(policy=name, run=run_offset + r, cost=float(cost[r]),
                         pulls_per_fidelity=full_counts[r].sum(axis=1).tolist(),
                         recommendation=int(out_rec[r]),
                         correct=bool(out_rec[r] == env.best_arm), wall_time=wall,
                         n_rounds=int(full_counts[r].sum()), skipped_rounds=0,
                         stopping_reason="stopping-rule" if out_stop[r] else "max-pulls")
               for r in range(R)]
    return records, snaps
