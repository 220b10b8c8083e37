"""Many independent runs of :class:`~mftune.policies.lucb.MultiFidelityLUCB` at once.

The 100-trial benchmarks of Wang et al. (2023) need up to about 10⁶ LUCB
rounds per trial on 5-arm instances (Table 2), where a round's numpy work is a
few microseconds and per-call overhead dominates. This module advances all
runs together: the state arrays get a leading "runs" axis and one call of the
shared decision functions of :mod:`mftune.policies.lucb` decides the round of
every run. On top of that it steps in blocks: a round's pulls are repeated
speculatively up to ``lookahead`` times in one vectorised pass, and each run
keeps them up to the first round after which its decision (leader,
challenger, stop, fidelities, EXPLORE-B commits) would change. Late in a
Table 2 run the same decision holds for tens to hundreds of rounds.

Exactness. Run ``r`` draws its Bernoulli rewards from
``numpy.random.default_rng([seed, r])`` exactly as
:func:`mftune.benchmarks.simulate.simulate_runs` would (one uniform per pull,
in the order of the policy's batch: ``u``'s pulls, then ``ℓ``'s, fidelities
ascending), and uses the same decision functions, so every run makes the
decisions, counts and costs of the ask/tell policy, for any ``lookahead``
(tested in ``tests/policies/test_lucb.py`` against the policy and against
``lookahead=1``). Gaussian bandits work the same way with one standard
normal per pull (reward ``θ + σ z``, as :class:`~mftune.benchmarks.bandits.GaussianBandit`
draws it) and sums accumulated pull by pull, so float sums are bit-identical
too. Any other law with a one-variate form (``env.variate``, e.g. Yahtzee's
truncated Gaussian, one uniform per reward by inverse CDF) works alike: the
run's variates are drawn ahead and turned into rewards by the bandit's own
``rewards``.
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
    explore_b_test,
    fidelity_choice,
    round_fidelities,
    stat_arrays,
    top_two,
)
from ..radii import lucb_radius_scale
from .bandits import BernoulliBandit, SimulatedBandit
from .simulate import SimRecord

__all__ = ["LUCBBatchResult", "simulate_lucb_batch"]

_LEADER = np.array([False, True])  # the two arms of a round: u, then ℓ


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


class _LiveRuns:
    """State of the unfinished runs of :func:`simulate_lucb_batch`, one row per run.

    Per run: the statistics ``counts``/``sums`` ``(M, K)`` and their entry
    stats ``hi``/``lo``/``w`` (:func:`~mftune.policies.lucb.stat_arrays`),
    EXPLORE-B's ``fixed``/``commit``, pulls and rounds so far, the tie
    priority, a buffer ``U`` of the run's uniforms read from ``ptr`` on,
    and the decision for the next round (``ell``, ``u``, ``stop``).
    """

    ROW_FIELDS = ("ids", "counts", "sums", "hi", "lo", "w", "fixed", "commit", "pulls",
                  "rounds", "priority", "U", "ptr", "ell", "u", "stop")

    def __init__(self, ref: MultiFidelityLUCB, env: SimulatedBandit, rngs, priority, fixed,
                 commit, buffer: int, max_pulls: int):
        self.ref, self.env, self.theta, self.rngs = ref, env, env.theta, rngs
        self.M, self.K = self.theta.shape
        self.buffer, self.max_pulls = int(buffer), int(max_pulls)
        self.mu1, self.mu2 = ref._mu()
        R = len(rngs)
        self.ids = np.arange(R)
        self.U = np.stack([self._draw(g, self.buffer) for g in rngs])
        self.ptr = np.zeros(R, dtype=np.int64)
        self.counts = np.zeros((R, self.M, self.K), dtype=np.int64)
        self.sums = np.zeros((R, self.M, self.K))
        self.hi, self.lo, self.w = stat_arrays(self.sums, self.counts, ref.zeta)
        self.fixed, self.commit, self.priority = fixed, commit, priority
        self.pulls = np.zeros(R, dtype=np.int64)
        self.rounds = np.zeros(R, dtype=np.int64)
        # columns of a round: u's M fidelities, then ℓ's
        self.col_m = np.tile(np.arange(self.M), 2)
        self.col_j = np.repeat([0, 1], self.M)
        self.zeta_col = np.tile(ref.zeta, 2)
        self.select()

    def _draw(self, rng, n: int) -> np.ndarray:
        """The next ``n`` variates of a run's stream (what ``env.pull`` would consume)."""
        return getattr(rng, self.env.variate)(n)

    def keep(self, rows) -> None:
        """Drop the runs not selected by the boolean mask ``rows``."""
        for name in self.ROW_FIELDS:
            setattr(self, name, getattr(self, name)[rows])

    def _scale(self, rounds, pulls):
        t = rounds if self.ref.t_convention == "rounds" else pulls
        return lucb_radius_scale(t, self.ref.delta, self.ref.L)

    def select(self) -> None:
        """The decision for the next round from the current statistics (as the policy does)."""
        ucb, lcb = bounds_from(self.hi, self.lo, self.w, self._scale(self.rounds, self.pulls),
                               self.ref.clip)
        self.ell, self.u = top_two(ucb, self.priority)
        rows = np.arange(self.ids.size)
        self.stop = lcb[rows, self.ell] > ucb[rows, self.u]

    def round_pulls(self):
        """``(arms, mask)`` of the next round, shape ``(R, 2M)``: u's fidelities, then ℓ's."""
        ref, M = self.ref, self.M
        n_live = self.ids.size
        rows = np.arange(n_live)[:, None]
        arms = np.stack([self.u, self.ell], axis=1)[:, self.col_j]
        if ref.procedure in ("A", "C"):
            n2 = self.counts[rows, self.col_m, arms].reshape(n_live, 2, M)
            mean2 = self.sums[rows, self.col_m, arms].reshape(n_live, 2, M) / np.maximum(n2, 1)
            mask = round_fidelities(ref.procedure, (n_live, M), n2, mean2,
                                    self.w[rows, self.col_m, arms].reshape(n_live, 2, M),
                                    self._scale(self.rounds, self.pulls), None, None, ref.zeta,
                                    ref.costs, self.mu1, self.mu2, ref.fucb_bonus)
        else:
            a2 = arms[:, ::M]
            mask = round_fidelities(ref.procedure, (n_live, M), None, None, None, None,
                                    self.fixed[rows, a2], self.commit[rows, a2], ref.zeta,
                                    ref.costs, self.mu1, self.mu2)
        return arms, mask.reshape(n_live, 2 * M)

    def _refill(self, need) -> None:
        """Make ``need[r]`` unread uniforms available from ``ptr[r]`` (stream order unchanged)."""
        for r in np.flatnonzero(self.ptr + need > self.buffer):
            self.U[r] = np.concatenate([self.U[r, self.ptr[r]:],
                                        self._draw(self.rngs[self.ids[r]], int(self.ptr[r]))])
            self.ptr[r] = 0

    def step(self, k: int) -> np.ndarray:
        """Play the next round, then up to ``k − 1`` repetitions of it while nothing changes.

        The ``k`` rounds are simulated speculatively, all at once: the
        statistics after each round ``j``, the bounds, and the decision the
        policy would then take (leader and challenger, stopping test,
        fidelities, EXPLORE-B's commit test). Each run keeps its rounds up to
        and including the first after which that decision would differ (or
        it stops, or reaches ``max_pulls``). Every kept round is one the
        round-by-round loop plays, reading the same uniforms, and every value
        comes from the same element-wise expressions, so the state afterwards
        is bit-identical. Arrays put the column axis (``u``'s then ``ℓ``'s
        fidelities) first so that reductions over fidelities are fast.
        Returns the number of rounds played per run.
        """
        arms, mask = self.round_pulls()
        ref, M, K = self.ref, self.M, self.K
        n_live = self.ids.size
        rows = np.arange(n_live)
        rc = rows[:, None]
        pulled = mask.T[:, :, None]  # (2M, R, 1): the same pulls every round
        steps = np.arange(1, k + 1)
        npull = mask.sum(axis=1)
        used = npull[:, None] * steps  # (R, k): uniforms read up to the end of each round
        self._refill(used[:, -1])
        # the c-th pull of round j reads uniform ptr + (j − 1) npull + (rank of c in the round)
        rank = np.maximum(np.cumsum(mask, axis=1) - 1, 0).T[:, :, None]
        at = (self.ptr[:, None] + used - npull[:, None]) + rank  # (2M, R, k)
        means = self.theta[self.col_m, arms].T[:, :, None]
        n_col = self.counts[rc, self.col_m, arms].T[:, :, None] + steps * pulled
        s_now = self.sums[rc, self.col_m, arms].T[:, :, None]
        if isinstance(self.env, BernoulliBandit):  # integer counts of successes
            reward = (self.U[rows[None, :, None], at] < means) & pulled
            s_col = s_now + np.cumsum(reward, axis=2)
        else:  # add one reward at a time, as the policy does: float sums stay bit-identical
            reward = np.where(pulled, self.env.rewards(means, self.U[rows[None, :, None], at]),
                              0.0)
            s_col = np.cumsum(np.concatenate([s_now, reward], axis=2), axis=2)[:, :, 1:]
        h, lw, ww = entry_stats(s_col, n_col, self.zeta_col[:, None, None])  # (2M, R, k)
        if ref.t_convention == "rounds":
            t = self.rounds[:, None] + steps
        else:
            t = self.pulls[:, None] + used
        scale = lucb_radius_scale(t, ref.delta, ref.L)  # (R, k)
        sw = scale * ww
        ucb2 = (h + sw).reshape(2, M, n_live, k).min(axis=1)  # u, ℓ: (2, R, k)
        lcb2 = (lw - sw).reshape(2, M, n_live, k).max(axis=1)
        if ref.clip:
            ucb2 = np.minimum(ucb2, 1.0)
            lcb2 = np.maximum(lcb2, 0.0)
        # The other arms' UCBs only grow with the scale (rounding is monotone), so
        # their values at the block's largest scale bound them after every round.
        ucb_top = bounds_from(self.hi, self.lo, self.w, scale.max(axis=1), ref.clip)[0].T
        # Same decision (sufficient conditions; ending a block early is always
        # safe): u ranks above every other arm (UCB, then priority), ℓ above u, no stop.
        p_u, p_l = self.priority[rows, self.u], self.priority[rows, self.ell]
        arm_ids = np.arange(K)[:, None]
        in_pair = ((arm_ids == self.u) | (arm_ids == self.ell))[:, :, None]
        first_in_order = (p_u < self.priority.T)[:, :, None]
        top = ucb_top[:, :, None]
        same = ((ucb2[0] > top) | ((ucb2[0] == top) & first_in_order) | in_pair).all(axis=0)
        same &= (ucb2[1] > ucb2[0]) | ((ucb2[1] == ucb2[0]) & (p_l < p_u)[:, None])
        same &= ~(lcb2[1] > ucb2[0])
        same &= self.pulls[:, None] + used < self.max_pulls
        if ref.procedure in ("A", "C"):
            n4 = n_col.reshape(2, M, n_live, k)
            mean4 = s_col.reshape(2, M, n_live, k) / np.maximum(n4, 1) if ref.procedure == "A" \
                else None
            chosen = fidelity_choice(ref.procedure, n4, mean4, ww.reshape(2, M, n_live, k),
                                     scale[None, None], _LEADER[:, None, None, None], ref.zeta,
                                     ref.costs, self.mu1, self.mu2, ref.fucb_bonus,
                                     axis=1)  # (2, R, k)
            now = np.argmax(mask.reshape(n_live, 2, M), axis=2).T[:, :, None]
            same &= (chosen == now).all(axis=0)
        elif ref.procedure == "B":
            free = ~self.fixed[rc, arms[:, ::M]].T  # (2, R): u, ℓ not yet committed
            if free.any():
                n4 = n_col.reshape(2, M, n_live, k)
                mean4 = s_col.reshape(2, M, n_live, k) / np.maximum(n4, 1)
                with np.errstate(divide="ignore"):
                    hit, _ = explore_b_test(n4, mean4, _LEADER[:, None, None, None], ref.zeta,
                                            ref.costs, ref.delta, ref.L, self.mu1, self.mu2,
                                            axis=1, factor=ref.commit_factor)
                same &= ~(hit & free[:, :, None]).any(axis=0)
        same[:, -1] = False
        last = np.argmin(same, axis=1)  # the last round kept
        for name, values in (("counts", n_col), ("sums", s_col), ("hi", h), ("lo", lw),
                             ("w", ww)):
            getattr(self, name)[rc, self.col_m, arms] = values[:, rows, last].T
        read = used[rows, last]
        self.ptr += read
        self.pulls += read
        self.rounds += last + 1
        if ref.procedure == "B":
            pair = np.zeros((n_live, K), dtype=bool)
            pair[rows, self.ell] = True
            pair[rows, self.u] = True
            explore_b_commit(self.sums, self.counts, pair, self.ell, self.fixed, self.commit,
                             ref.zeta, ref.costs, ref.delta, ref.L, self.mu1, self.mu2,
                             ref.commit_factor)
        self.select()
        return last + 1


def simulate_lucb_batch(env: SimulatedBandit, n_runs: int, seed: int = 0, *,
                        procedure="A", delta=0.1, mu1_tilde=None, mu2_tilde=None, L=None,
                        t_convention="pulls", ties="index", clip=True, fucb_bonus=1.0,
                        random_states=None, run_offset: int = 0, max_pulls: int = 10**8,
                        lookahead: int = 64, buffer: int = 8192,
                        committed=None, commit_factor: float = 1.0) -> LUCBBatchResult:
    """Run ``n_runs`` independent LUCB trials on a simulated bandit, vectorised.

    Parameters
    ----------
    env : SimulatedBandit
        Any law with a one-variate form (``env.variate``). The policy's radius
        assumes rewards in [0, 1] (σ = 1/2); for other Gaussian instances
        rescale the bandit (and pass ``clip=False``).
    n_runs : int
    seed : int, default=0
        Run ``r`` draws rewards from ``default_rng([seed, run_offset + r])``.
    procedure, delta, mu1_tilde, mu2_tilde, L, t_convention, ties, clip, fucb_bonus, commit_factor
        As in :class:`~mftune.policies.lucb.MultiFidelityLUCB` (``zeta`` is
        ``env.xi``).
    random_states : sequence, optional
        Per-run ``random_state`` of the policy (only used by ``ties="random"``);
        default ``[seed, run_offset + r, 1]``.
    run_offset : int, default=0
        Index of the first run (lets callers split runs over processes).
    max_pulls : int
        Safety cap per run.
    lookahead : int, default=64
        Most rounds simulated speculatively in one vectorised step (the
        round's pulls repeated; each run keeps them up to its first change of
        decision). Changes the speed only, never the result; 1 plays round by
        round.
    buffer : int
        Uniforms drawn per run and refill (raised to ``4 · lookahead · M`` if
        smaller).
    committed : array-like of int, shape (K,), optional
        With ``procedure="B"``: start every arm committed to this (0-based)
        fidelity — an oracle allocation for diagnostics (e.g. the true
        optimal fidelities ``m*_k``), not an algorithm of the paper.

    Returns
    -------
    LUCBBatchResult
    """
    if getattr(env, "variate", None) is None:
        raise ValueError(f"env must be a SimulatedBandit with a one-variate reward form "
                         f"(variate 'random' or 'standard_normal'); {type(env).__name__} has "
                         "none: use simulate_runs")
    if int(n_runs) != n_runs or n_runs < 1:
        raise ValueError(f"n_runs must be a positive integer; got {n_runs!r}")
    if procedure not in PROCEDURES:
        raise ValueError(f"procedure must be one of {PROCEDURES}; got {procedure!r}")
    if isinstance(lookahead, bool) or int(lookahead) != lookahead or lookahead < 1:
        raise ValueError(f"lookahead must be a positive integer; got {lookahead!r}")
    R, M, K = int(n_runs), env.n_fidelities, env.n_arms
    if random_states is None:
        random_states = [[int(seed), run_offset + r, 1] for r in range(R)]
    # One reference policy validates the arguments and provides the constants.
    ref = MultiFidelityLUCB(K, env.costs, env.xi, delta, procedure, mu1_tilde, mu2_tilde, L,
                            t_convention, ties, clip, fucb_bonus, random_state=random_states[0],
                            commit_factor=commit_factor)
    if ties == "random":
        priority = np.stack([np.random.default_rng(rs).permutation(K) for rs in random_states])
    else:
        priority = np.tile(np.arange(K), (R, 1))
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
    rngs = [np.random.default_rng([int(seed), run_offset + r]) for r in range(R)]
    runs = _LiveRuns(ref, env, rngs, priority, fixed, commit,
                     max(int(buffer), 4 * int(lookahead) * M), max_pulls)

    out_counts = np.zeros((R, M, K), dtype=np.int64)
    out_rec = np.zeros(R, dtype=np.int64)
    out_rounds = np.zeros(R, dtype=np.int64)
    out_stopped = np.zeros(R, dtype=bool)
    k = min(8, int(lookahead))
    while True:
        finished = runs.stop | (runs.pulls >= max_pulls)
        if finished.any():
            done = runs.ids[finished]
            out_counts[done] = runs.counts[finished]
            out_rec[done] = runs.ell[finished]
            out_rounds[done] = runs.rounds[finished]
            out_stopped[done] = runs.stop[finished]
            runs.keep(~finished)
            if not runs.ids.size:
                break
        played = runs.step(k)
        # Block length: double while most runs use whole blocks, halve when few do.
        full = np.mean(played == k)
        if full > 0.5:
            k = min(2 * k, int(lookahead))
        elif full < 0.2:
            k = max(k // 2, min(8, int(lookahead)))

    cost = np.einsum("rmk,m->r", out_counts, ref.costs)
    return LUCBBatchResult(cost=cost, pulls=out_counts, recommendation=out_rec,
                           correct=out_rec == env.best_arm, n_rounds=out_rounds,
                           stopped=out_stopped)
