"""Many independent runs of :class:`~mftune.policies.lucb.MultiFidelityLUCB` at once.

The 100-trial benchmarks of Wang et al. (2023) need tens of thousands of LUCB
rounds per trial on 5-arm instances, where a round's numpy work is a few
microseconds and the per-call overhead of ask/tell dominates. This module
advances all runs together: the state arrays get a leading "runs" axis and
one call of the shared decision functions of :mod:`mftune.policies.lucb`
decides the round of every run.

Exactness. Run ``r`` draws its Bernoulli rewards from
``numpy.random.default_rng([seed, r])`` exactly as
:func:`mftune.benchmarks.simulate.simulate_runs` would (one uniform per pull,
in the order of the policy's batch: ``u``'s pulls, then ``ℓ``'s, fidelities
ascending), and uses the same decision functions, so every run makes the
decisions, counts and costs of the ask/tell policy (tested in
``tests/test_lucb.py``). Only Bernoulli bandits are supported here; other
reward laws go through :func:`~mftune.benchmarks.simulate.simulate_runs`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..policies.lucb import (
    PROCEDURES,
    MultiFidelityLUCB,
    bounds_from,
    entry_stats,
    explore_b_commit,
    round_fidelities,
    stat_arrays,
    top_two,
)
from ..radii import lucb_radius_scale
from .bandits import BernoulliBandit
from .simulate import SimRecord

__all__ = ["LUCBBatchResult", "simulate_lucb_batch"]


@dataclass
class LUCBBatchResult:
    """Per-run outcomes of :func:`simulate_lucb_batch` (arrays of length ``n_runs``)."""

    cost: np.ndarray
    pulls: np.ndarray  # (R, M, K) counts
    recommendation: np.ndarray
    correct: np.ndarray
    n_rounds: np.ndarray
    stopped: np.ndarray

    def records(self, name: str, costs) -> list[SimRecord]:
        """The runs as :class:`~mftune.benchmarks.simulate.SimRecord` objects."""
        per_fid = self.pulls.sum(axis=2)
        return [
            SimRecord(policy=name, run=r, cost=float(self.cost[r]),
                      pulls_per_fidelity=per_fid[r].tolist(),
                      recommendation=int(self.recommendation[r]),
                      correct=bool(self.correct[r]), wall_time=float("nan"),
                      n_rounds=int(self.n_rounds[r]), skipped_rounds=0,
                      stopping_reason="stopping-rule" if self.stopped[r] else "max-pulls")
            for r in range(self.cost.size)
        ]


def simulate_lucb_batch(env: BernoulliBandit, n_runs: int, seed: int = 0, *, procedure="A",
                        delta=0.1, mu1_tilde=None, mu2_tilde=None, L=None,
                        t_convention="pulls", ties="index", clip=True, fucb_bonus=1.0,
                        random_states=None,
                        run_offset: int = 0, max_pulls: int = 10**8,
                        buffer: int = 8192, committed=None) -> LUCBBatchResult:
    """Run ``n_runs`` independent LUCB trials on a Bernoulli bandit, vectorised over runs.

    Parameters
    ----------
    env : BernoulliBandit
    n_runs : int
    seed : int, default=0
        Run ``r`` draws rewards from ``default_rng([seed, run_offset + r])``.
    procedure, delta, mu1_tilde, mu2_tilde, L, t_convention, ties, clip, fucb_bonus
        As in :class:`~mftune.policies.lucb.MultiFidelityLUCB` (``zeta`` is
        ``env.xi``).
    random_states : sequence, optional
        Per-run ``random_state`` of the policy (only used by ``ties="random"``);
        default ``[seed, run_offset + r, 1]``.
    run_offset : int, default=0
        Index of the first run (lets callers split runs over processes).
    max_pulls : int
        Safety cap per run.
    buffer : int
        Uniforms drawn per run and refill.
    committed : array-like of int, shape (K,), optional
        With ``procedure="B"``: start every arm committed to this (0-based)
        fidelity — an oracle allocation for diagnostics (e.g. the true
        optimal fidelities ``m*_k``), not an algorithm of the paper.

    Returns
    -------
    LUCBBatchResult
    """
    if not isinstance(env, BernoulliBandit):
        raise ValueError("env must be a BernoulliBandit for the vectorised LUCB simulator; "
                         "use simulate_runs for other reward laws")
    if int(n_runs) != n_runs or n_runs < 1:
        raise ValueError(f"n_runs must be a positive integer; got {n_runs!r}")
    if procedure not in PROCEDURES:
        raise ValueError(f"procedure must be one of {PROCEDURES}; got {procedure!r}")
    R, M, K = int(n_runs), env.n_fidelities, env.n_arms
    if random_states is None:
        random_states = [[int(seed), run_offset + r, 1] for r in range(R)]
    # One reference policy validates the arguments and provides the constants.
    ref = MultiFidelityLUCB(K, env.costs, env.xi, delta, procedure, mu1_tilde, mu2_tilde, L,
                            t_convention, ties, clip, fucb_bonus, random_state=random_states[0])
    zeta, costs, L, mu1, mu2 = ref.zeta, ref.costs, ref.L, *ref._mu()
    if ties == "random":
        priority = np.stack([np.random.default_rng(rs).permutation(K) for rs in random_states])
    else:
        priority = np.tile(np.arange(K), (R, 1))
    theta_flat = env.theta.reshape(-1)
    rngs = [np.random.default_rng([int(seed), run_offset + r]) for r in range(R)]
    U = np.stack([g.random(buffer) for g in rngs])
    ptr = np.zeros(R, dtype=np.int64)

    counts = np.zeros((R, M, K), dtype=np.int64)
    sums = np.zeros((R, M, K))
    hi, lo, w = stat_arrays(sums, counts, zeta)
    fixed = np.zeros((R, K), dtype=bool)
    commit = np.zeros((R, K), dtype=np.int64)
    if committed is not None:
        if procedure != "B":
            raise ValueError("committed is only meaningful with procedure='B'")
        committed = np.asarray(committed, dtype=np.int64)
        if committed.shape != (K,) or committed.min() < 0 or committed.max() >= M:
            raise ValueError(f"committed must hold one fidelity in [0, {M - 1}] per arm")
        fixed[:] = True
        commit[:] = committed
    pulls = np.zeros(R, dtype=np.int64)
    rounds = np.zeros(R, dtype=np.int64)
    ids = np.arange(R)  # original run index of each live row

    out_counts = np.zeros((R, M, K), dtype=np.int64)
    out_rec = np.zeros(R, dtype=np.int64)
    out_rounds = np.zeros(R, dtype=np.int64)
    out_stopped = np.zeros(R, dtype=bool)
    zeta_col = np.tile(zeta, 2)  # per column of a round: u's fidelities, then ℓ's
    col_m = np.tile(np.arange(M), 2)
    col_j = np.repeat([0, 1], M)
    use_stats = procedure in ("A", "C")

    def scale_of():
        return lucb_radius_scale(rounds if t_convention == "rounds" else pulls, delta, L)

    def select():
        ucb, lcb = bounds_from(hi, lo, w, scale_of(), clip)
        ell, u = top_two(ucb, priority)
        rows = np.arange(ell.size)
        return ell, u, lcb[rows, ell] > ucb[rows, u]

    ell, u, stop = select()
    while ids.size:
        finished = stop | (pulls >= max_pulls)
        if finished.any():
            done_ids = ids[finished]
            out_counts[done_ids] = counts[finished]
            out_rec[done_ids] = ell[finished]
            out_rounds[done_ids] = rounds[finished]
            out_stopped[done_ids] = stop[finished]
            keep = ~finished
            ids, counts, sums, hi, lo, w = (ids[keep], counts[keep], sums[keep], hi[keep],
                                            lo[keep], w[keep])
            fixed, commit, pulls, rounds = fixed[keep], commit[keep], pulls[keep], rounds[keep]
            priority, U, ptr, ell, u = priority[keep], U[keep], ptr[keep], ell[keep], u[keep]
            if not ids.size:
                break
        n_live = ids.size
        rows = np.arange(n_live)
        arms = np.stack([u, ell], axis=1)[:, col_j]  # (R, 2M) arm of each column
        lin = (rows[:, None] * M + col_m) * K + arms  # flat (run, fidelity, arm) index
        if use_stats:
            cf, sf = counts.reshape(-1), sums.reshape(-1)
            n2 = cf[lin].reshape(n_live, 2, M)
            mean2 = sf[lin].reshape(n_live, 2, M) / np.maximum(n2, 1)
            mask = round_fidelities(procedure, (n_live, M), n2, mean2,
                                    w.reshape(-1)[lin].reshape(n_live, 2, M), scale_of(),
                                    None, None, zeta, costs, mu1, mu2, ref.fucb_bonus)
        else:
            a2 = arms[:, ::M]
            mask = round_fidelities(procedure, (n_live, M), None, None, None, None,
                                    fixed[rows[:, None], a2], commit[rows[:, None], a2],
                                    zeta, costs, mu1, mu2)
        flat = mask.reshape(n_live, 2 * M)
        npull = flat.sum(axis=1)
        low = np.flatnonzero(ptr + npull > buffer)
        for r in low:  # refill: keep the unread tail, append fresh uniforms in order
            U[r] = np.concatenate([U[r, ptr[r]:], rngs[ids[r]].random(int(ptr[r]))])
            ptr[r] = 0
        draw_at = rows[:, None] * buffer + ptr[:, None] + np.cumsum(flat, axis=1) - 1
        sel = lin[flat]
        cf, sf = counts.reshape(-1), sums.reshape(-1)
        reward = U.reshape(-1)[draw_at[flat]] < theta_flat[(col_m[None, :] * K + arms)[flat]]
        cf[sel] += 1
        sf[sel] += reward
        h, lw, ww = entry_stats(sf[sel], cf[sel], np.broadcast_to(zeta_col, flat.shape)[flat])
        hi.reshape(-1)[sel], lo.reshape(-1)[sel], w.reshape(-1)[sel] = h, lw, ww
        ptr += npull
        pulls += npull
        rounds += 1
        if procedure == "B":
            pulled = np.zeros((n_live, K), dtype=bool)
            pulled[rows, ell] = True
            pulled[rows, u] = True
            explore_b_commit(sums, counts, pulled, ell, fixed, commit, zeta, costs, delta, L,
                             mu1, mu2)
        ell, u, stop = select()

    cost = np.einsum("rmk,m->r", out_counts, costs)
    return LUCBBatchResult(cost=cost, pulls=out_counts, recommendation=out_rec,
                           correct=out_rec == env.best_arm, n_rounds=out_rounds,
                           stopped=out_stopped)
