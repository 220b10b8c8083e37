"""The phased-elimination engine shared by SE, IISE, IISE-γ and MFE.

Poiani, Metelli & Restelli, "Multi-Fidelity Best-Arm Identification",
NeurIPS 2022. Phases visit fidelities in increasing order; in every round each
surviving arm is pulled once at the phase's fidelity; after the round, arms
whose upper bound falls below the best lower bound are eliminated, then the
phase switches when ``α_m >= 4 B(t, δ')``. Samples of earlier phases are never
reused. The elimination and switch rules, ``B(t, δ)`` and ``δ' = δ/(K M)`` are
[paper, code]; the ε-optimal stopping rule is a [RECON]struction of Section
4.3; the futility switch, the cost balance and best-first rounds are ours
[RECON]: each decides only *when* a run moves up or in which order a round's
pulls go out, never what is eliminated, so δ-correctness is untouched
(docs/algorithms.md states each rule and why).

The final phase may also stop by a GLR test (``top_glr``: :mod:`mftune.policies.top_glr`).
"""

from __future__ import annotations

import numpy as np

from .._validation import (
    check_batch_size,
    check_costs,
    check_delta,
    check_positive,
)
from ..radii import iise_radius, mixture_radius, phase_length
from .base import ArmStats, Policy, Pulls, check_evidence, leader, ranking
from .gap_bound import GapBound
from .measured_bounds import MeasuredBounds
from .top_glr import GLR_SHARE, TOP_GLR, TopGLR

__all__ = ["CONFIDENCES", "TOP_GLR", "PhasedElimination"]

#: The confidence radii a phased elimination can use.
CONFIDENCES = ("iise", "mixture")


class PhasedElimination(TopGLR, GapBound, MeasuredBounds, Policy):
    """Engine of the IISE family (use :class:`IISE`, :class:`IISEGamma`, :class:`MFE`, SE).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K``.
    costs : array-like of shape (M,)
        Per-fidelity costs λ (strictly increasing).
    delta : float
        Target error probability δ in (0, 1).
    variance_proxy : float
        Sub-Gaussian variance proxy σ² of the rewards.
    thresholds : array-like of shape (M,)
        Switch thresholds α_m (``0`` for the final phase).
    widths : array-like of shape (M,)
        Extra elimination margin per fidelity: an arm is eliminated iff
        ``max_j µ̂_j − µ̂_i >= 2 B(t, δ') + widths[m]``.
    phases : sequence of int
        Fidelities visited, in order (``[M-1]`` for SE).
    delta_prime : float
        δ used in the radius (δ/(K M) for IISE, δ/K for SE).
    epsilon : float, optional
        Accept any arm within ε of the best ([RECON] stopping rule).
    random_state : int, Generator or None
        Unused by the deterministic rules; kept for the protocol.
    futility_switch : bool, default=False
        Also leave a non-final phase once ``spread + 2 B(t, δ') < widths[m]``
        (no survivor can be eliminated there any more; module docstring).
    cost_balance : float, optional
        Also leave a non-final phase at fidelity ``m`` once its rounds have
        cost ``cost_balance`` rounds of the next phase's fidelity ``m'``:
        ``t λ_m >= cost_balance λ_{m'}`` (module docstring).
    best_first : bool, default=False
        Hand a round out ``batch_size`` pulls at a time, best arms first, and
        recommend from the round in progress (module docstring).
    batch_size : int, default=1
        Pulls :meth:`ask` returns at once when ``best_first`` (a whole round
        otherwise).
    chunk_cost : float, optional
        With ``best_first``: hand each of the ``batch_size`` workers as many
        pulls as make ``chunk_cost`` (at least one), costed by
        :attr:`pull_costs_` when set (the tuner's measured seconds), else λ --
        so cheap fidelities still go in large batches. ``None``: one pull per
        worker.
    confidence : {"iise", "mixture"}, default="iise"
        The radius ``B(t, δ')``: the paper's union bound over rounds
        (:func:`~mftune.radii.iise_radius`) or the anytime-valid normal
        mixture (:func:`~mftune.radii.mixture_radius`, [paper: Howard et
        al. 2021]), which needs about half the samples from ten rounds on.
    curve_check : array-like of shape (M,), optional
        Guard of the certificate against late bloomers [RECON]: below the
        top an arm is eliminated only once it has been seen at an earlier
        fidelity too, and only with the extra margin ``curve_check[m] ·
        max(0, Δ_i − Δ_lead)``, where ``Δ`` is an arm's gain between the
        previous phase's fidelity and ``m`` and ``lead`` the arm with the best
        mean at ``m``. With ``curve_check[m]`` the number of such steps left
        to the top (the tuner: the ratio of log-level distances), it covers
        any arm whose score keeps rising at most as fast per step as it just
        did (scores concave in the log of the fidelity, as learning curves
        are). ``None``: the paper's rule.
    top_share : float, optional
        Share of δ spent by the final phase: its arms use ``δ top_share / K``
        and the earlier phases split the rest, ``δ (1 − top_share) / (K (P −
        1))`` for ``P`` phases [RECON]. ``None``: ``delta_prime`` for every
        phase (the paper's ``δ/(K M)``).
    top_glr : {"paired-mixture", "practical", "theory", "paired-t"}, optional
        Also stop the final phase by a test among the survivors at the top
        fidelity (:mod:`mftune.policies.top_glr`) [RECON], with half of its
        δ (:meth:`glr_delta`): a GLR test with the threshold
        ``"paired-mixture"`` (proven for tests at equal counts,
        :func:`~mftune.policies.glr.paired_mixture_threshold`), ``"practical"``
        (MF-GRAD's, no proof) or ``"theory"``; or ``"paired-t"``, paired
        t-tests that estimate σ from the survivors' differences. ``None``: no test.
    """

    def __init__(
        self,
        n_arms: int,
        costs,
        delta: float,
        variance_proxy: float,
        thresholds,
        widths,
        phases,
        delta_prime: float,
        epsilon: float | None = None,
        random_state=None,
        futility_switch: bool = False,
        cost_balance: float | None = None,
        best_first: bool = False,
        batch_size: int = 1,
        chunk_cost: float | None = None,
        confidence: str = "iise",
        top_share: float | None = None,
        curve_check=None,
        top_glr: str | None = None,
    ):
        costs = check_costs(costs, "costs")
        super().__init__(n_arms, costs.size, random_state)
        self.costs = costs
        self.delta = check_delta(delta)
        self.variance_proxy = check_positive(variance_proxy, "variance_proxy")
        self.epsilon = None if epsilon is None else check_positive(epsilon, "epsilon")
        self.thresholds = np.asarray(thresholds, dtype=float)
        self.widths = np.asarray(widths, dtype=float)
        self.phases = np.asarray(phases, dtype=np.int64)
        self.delta_prime = float(delta_prime)
        if confidence not in CONFIDENCES:
            raise ValueError(f"confidence must be one of {CONFIDENCES}; got {confidence!r}")
        self.confidence = confidence
        if top_share is not None and not 0.0 < float(top_share) < 1.0:
            raise ValueError(f"top_share must be in (0, 1) or None; got {top_share!r}")
        self.top_share = None if top_share is None else float(top_share)
        if top_glr is not None and top_glr not in TOP_GLR:
            raise ValueError(f"top_glr must be one of {TOP_GLR} or None; got {top_glr!r}")
        self.top_glr = top_glr
        self.glr_arm_ = None  # the arm the top phase's GLR test certified
        self.parked_ = np.zeros(n_arms, dtype=bool)  # survivors its paired tests no longer pull
        self.park_leader_ = -1  # the arm they were tested against
        self.curve_check = None if curve_check is None else np.asarray(curve_check, float)
        if self.curve_check is not None and (self.curve_check.shape != costs.shape
                                             or np.any(~(self.curve_check >= 0))):
            raise ValueError(f"curve_check must hold {costs.size} non-negative numbers; "
                             f"got {curve_check!r}")
        self.futility_switch = bool(futility_switch)
        self.futile_switches_ = 0  # phases left by the futility switch
        self.cost_balance = None if cost_balance is None else check_positive(
            cost_balance, "cost_balance")
        self.balanced_switches_ = 0  # phases left by the cost balance
        self.best_first = bool(best_first)
        self.batch_size = check_batch_size(batch_size)
        self.chunk_cost = None if chunk_cost is None else check_positive(chunk_cost, "chunk_cost")
        self.pull_costs_ = None  # cost of one pull per fidelity for the chunks (None: λ)
        self.evidence_ = None  # results from outside the rounds (add_evidence)
        self.evidence_covered = False  # they begin the sequences the event covers (waves)
        self._closed = None  # (fidelity, rounds, sums) at the last closed round (best_first)
        self.elim_slack_ = np.full(n_arms, np.nan)  # lead − mean − 2B − guard at elimination
        self.reopened_ = 0  # arms re-opened by a grown bias bound
        self.phase_ = 0  # index into self.phases
        self.t_ = 0  # completed rounds in the current phase
        self.stopped_early_ = False

    # -- protocol -------------------------------------------------------------
    @property
    def fidelity_(self) -> int:
        """Fidelity of the current phase."""
        return int(self.phases[self.phase_])

    @property
    def done(self) -> bool:
        return bool(self.active.sum() <= 1 or self.stopped_early_)

    def nominal_costs(self) -> np.ndarray:
        return self.costs

    def recommend(self) -> int:
        """The last surviving arm, else the best active arm at the highest fidelity with data.

        "With data": every survivor has a pull there; with ``best_first`` (unless the ε
        rule stopped the run) any has, counting :meth:`add_evidence`, and those that have
        are compared on the phase's closed rounds once one has closed (never ``t + 1``
        pulls against ``t``). Ties: :func:`~mftune.policies.base.leader`.
        """
        active = np.flatnonzero(self.active)
        if active.size == 1:
            return int(active[0])
        if self.glr_arm_ is not None:
            return int(self.glr_arm_)
        if np.any(self.parked_[active]):  # the others' tests hold them against the leader
            return int(self.park_leader_)
        anytime = self.best_first and not self.stopped_early_
        counts, sums = self.stats.counts, self.stats.sums
        if anytime and self.evidence_ is not None:
            counts, sums = counts + self.evidence_.counts, sums + self.evidence_.sums
        counts, sums = counts[:, active], sums[:, active]
        reached = counts.max(axis=1) if anytime else counts.min(axis=1)
        with_data = np.flatnonzero(reached > 0)
        if with_data.size == 0:
            return int(active[0])
        m = with_data[-1]
        below = np.where(counts[:m] > 0, sums[:m] / np.maximum(counts[:m], 1), -np.inf)
        counts, sums = counts[m], sums[m]
        closed = self._closed
        if anytime and self.t_ > 0 and closed is not None and closed[:2] == (m, self.t_):
            # a later round in progress: compare the closed rounds (the same splits for
            # every survivor), not one candidate's t+1 pulls against another's t
            counts = counts - self.stats.counts[m, active] + self.t_
            sums = sums - self.stats.sums[m, active] + closed[2][active]
        means = np.where(counts > 0, sums / np.maximum(counts, 1), -np.inf)
        return int(active[leader(means, below)])

    def add_evidence(self, arms, fidelities, rewards) -> None:
        """Record results obtained outside the policy's rounds (the tuner's calibration).

        Only the anytime recommendation of a ``best_first`` policy reads them
        (an arm evaluated at a higher fidelity than the rounds have reached
        is a candidate for it), and ``gap_bound`` with ``evidence_covered``;
        no elimination, switch or stopping test does, so the guarantee is
        unchanged.

        Parameters
        ----------
        arms, fidelities : array-like of int
        rewards : array-like of float
        """
        arms, fidelities, rewards = check_evidence(arms, fidelities, rewards, self.n_arms,
                                                   self.n_fidelities)
        if self.evidence_ is None:
            self.evidence_ = ArmStats(self.n_arms, self.n_fidelities)
        self.evidence_.add(arms, fidelities, rewards, np.zeros(arms.size))

    def _next_pulls(self, n: int) -> Pulls:
        arms = self._round_arms()
        arms = arms[self._asked(arms) < self.t_ + 1]
        m = self.fidelity_
        if self.best_first and arms.size:
            per_worker = 1
            if self.chunk_cost is not None:
                cost = self.costs if self.pull_costs_ is None else self.pull_costs_
                per_worker = max(1, int(np.ceil(self.chunk_cost / cost[m] - 1e-9)))
            arms = self._best_first(arms)[:n * per_worker]
        return Pulls(arms, np.full(arms.size, m))

    @property
    def round_open(self) -> bool:
        """Whether a round has pulls asked or told but is not closed yet (the tuner updates
        σ, costs and bias bounds only between rounds: best-first batches decide as rounds)."""
        return bool(np.any(self._asked(self._round_arms()) != self.t_))

    def _asked(self, arms: np.ndarray) -> np.ndarray:
        """Pulls of ``arms`` at the current fidelity, told or outstanding."""
        m = self.fidelity_
        return self.stats.counts[m, arms] + self.pending[m, arms]

    def _best_first(self, arms: np.ndarray) -> np.ndarray:
        """``arms`` by decreasing mean at the current fidelity (the previous phase's in a
        phase's first round; index order in the first phase's first round), ties as
        :func:`~mftune.policies.base.ranking` breaks them (as :meth:`recommend` does)."""
        m = self.fidelity_
        if self.t_ == 0:
            if self.phase_ == 0:
                return arms
            m = int(self.phases[self.phase_ - 1])
        means = self.stats.means()[:m + 1, arms]  # nan: no data
        return arms[ranking(means[m], means[:m])]

    def _after_tell(self, pulls, rewards, costs) -> None:
        m = self.fidelity_
        self._record_top_pulls(pulls, rewards)
        if self._test_catching_up(pulls):
            return  # certified by the test of a survivor catching up
        arms = self._round_arms()
        if np.all(self.stats.counts[m, arms] >= self.t_ + 1):
            cums = self.stats.sums[m, arms][None, :]
            self._finish_rounds(arms, cums, 1)

    # -- round logic shared by the per-round and block paths -------------------
    _CHUNK = 4096

    def radius(self, t, phase: int | None = None):
        """Radius ``B(t, δ')`` of a phase (the current one) at its δ' and σ², for ``t >= 1``.

        Values are computed in fixed, aligned chunks of ``t`` (a few kept in a
        cache), so a given ``t`` always gets the bit-identical radius whichever
        path (per round, or a block of rounds) asks for it.
        """
        t = np.asarray(t, dtype=np.int64)
        phase = self.phase_ if phase is None else phase
        s2, dp = self._variance_now(phase), self.phase_delta(phase)
        func = iise_radius if self.confidence == "iise" else mixture_radius
        cache = self.__dict__.setdefault("_radius_cache", {})
        first, last = int(t.min()) // self._CHUNK, int(t.max()) // self._CHUNK
        if len(cache) + last - first >= 64:
            cache.clear()
        for c in range(first, last + 1):
            if (s2, dp, c) not in cache:
                ts = np.arange(c * self._CHUNK, (c + 1) * self._CHUNK, dtype=float)
                cache[(s2, dp, c)] = func(ts, dp, s2)
        if first == last:
            return cache[(s2, dp, first)][t - first * self._CHUNK]
        table = np.concatenate([cache[(s2, dp, c)] for c in range(first, last + 1)])
        return table[t - first * self._CHUNK]

    def raise_delta(self, factor: float) -> None:
        """δ (and δ') times ``factor >= 1`` from now on: what was decided at the old δ, whose
        bounds are wider, stands on the event of the new one (the final wave, waves.py)."""
        self.delta, self.delta_prime = self.delta * factor, self.delta_prime * factor

    def phase_delta(self, phase: int | None = None) -> float:
        """δ' of a phase's per-arm radius (``top_share`` splits δ; else ``delta_prime``).

        With ``top_glr`` the final phase's δ' is :data:`GLR_SHARE` smaller: the
        rest goes to the GLR test (:meth:`glr_delta`).
        """
        phase = self.phase_ if phase is None else phase
        final = phase >= self.phases.size - 1
        keep = 1.0 - GLR_SHARE if final and self.top_glr is not None else 1.0
        return keep * self._share_delta(phase)

    def _share_delta(self, phase: int) -> float:
        """δ' of a phase before the final phase's split with the GLR test."""
        if self.top_share is None or self.phases.size == 1:
            return self.delta_prime
        if phase >= self.phases.size - 1:
            return self.delta * self.top_share / self.n_arms
        return self.delta * (1.0 - self.top_share) / (self.n_arms * (self.phases.size - 1))

    def _variance_now(self, phase: int | None = None) -> float:
        """σ² of a phase's fidelity: per-fidelity when set by :meth:`update_bounds`."""
        per = self.__dict__.get("fidelity_variance_")
        phase = self.phase_ if phase is None else phase
        return self.variance_proxy if per is None else float(per[self.phases[phase]])

    def _events(self, cums: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Boolean per round (columns of ``cums``, arms × rounds): may anything happen?

        The elimination test is done on sums (``max − min >= t (2B + w)``) with a relative
        slack of 1e-12, so it flags a superset of the rounds that :meth:`_finish_rounds`'s
        exact test on means would act on; a flagged round where nothing happens just ends
        the block early."""
        m = self.fidelity_
        b = self.radius(t)
        spread = cums.max(axis=0) - cums.min(axis=0)
        event = spread >= t * (2.0 * b + self.widths[m]) * (1.0 - 1e-12)
        if self.phase_ < self.phases.size - 1:
            event |= 4.0 * b <= self.thresholds[m]
            event |= t >= self._round_cap()
            if self.futility_switch:  # a superset: the survivors' spread is at most this one
                event |= spread + 2.0 * b * t < self.widths[m] * t * (1.0 + 1e-12)
        else:
            if self.epsilon is not None:
                event |= 2.0 * b + self.widths[m] <= self.epsilon
            if self.top_glr is not None:
                event |= self._glr_may_stop(cums, t)
        return event

    def _finish_rounds(self, arms: np.ndarray, cums: np.ndarray, n: int) -> None:
        """Close ``n`` rounds; ``cums[-1]`` holds the sums after the last one."""
        self.t_ += n
        self.n_rounds += n
        m = self.fidelity_
        if self.best_first:  # the sums of the closed rounds, for the anytime recommendation
            self._closed = (m, self.t_, self.stats.sums[m].copy())
        b = self.radius(np.array([self.t_]))
        means = cums[-1] / float(self.t_)
        slack = means.max() - means - 2.0 * b[0] - self._curve_margin(arms, means)
        out = slack >= self.widths[m]
        if out.any():
            self.elim_slack_[arms[out]] = slack[out]
            self._eliminate(arms[out], m)
        if self.active.sum() <= 1:
            return
        if self.phase_ < self.phases.size - 1:
            by_alpha = 4.0 * b[0] <= self.thresholds[m]
            kept = means[~out]
            futile = (not by_alpha and self.futility_switch
                      and kept.max() - kept.min() + 2.0 * b[0] < self.widths[m])
            capped = not (by_alpha or futile) and self.t_ >= self._round_cap()
            if by_alpha or futile or capped:
                self.futile_switches_ += int(futile)
                self.balanced_switches_ += int(capped)
                self.phase_ += 1
                self.t_ = 0
        else:
            # the ε rule covers the arms of the round; the paired tests, any parked ones
            if (self.epsilon is not None and 2.0 * b[0] + self.widths[m] <= self.epsilon
                    and self._leads_the_parked(arms, means)):
                self.stopped_early_ = True
            if self.top_glr is not None and not self.stopped_early_:
                self._glr_test(arms[~out], means[~out])

    def _curve_margin(self, arms: np.ndarray, means: np.ndarray) -> np.ndarray | float:
        """Extra elimination margin of ``arms`` from their last gain (``curve_check``)."""
        if self.curve_check is None or self.phase_ >= self.phases.size - 1:
            return 0.0
        if self.phase_ == 0:
            return np.inf  # a curve of one point says nothing of its rise
        prev = int(self.phases[self.phase_ - 1])
        before = self.stats.sums[prev, arms] / np.maximum(self.stats.counts[prev, arms], 1)
        gain = means - before
        lead = int(np.argmax(means))
        return self.curve_check[self.fidelity_] * np.maximum(gain - gain[lead], 0.0)

    def _round_cap(self, phase: int | None = None) -> float:
        """Rounds after which the cost balance leaves a phase (the current one; ``inf``: never)."""
        phase = self.phase_ if phase is None else phase
        if self.cost_balance is None or phase >= self.phases.size - 1:
            return np.inf
        m, nxt = int(self.phases[phase]), int(self.phases[phase + 1])
        return max(1.0, np.ceil(self.cost_balance * self.costs[nxt] / self.costs[m] - 1e-9))

    def tell_rounds(self, pulls: Pulls, rewards: np.ndarray, costs=None) -> int:
        """Tell up to ``R`` consecutive rounds at once; return how many were used.

        ``rewards`` has shape ``(R, n)``: row ``r`` holds the rewards the pulls
        of :meth:`ask`'s batch would have returned in the ``r``-th round from
        now. Rounds are consumed up to and including the first one after which
        an arm is eliminated or the phase switches; the remaining rows are
        discarded (they were never observed). The decisions are exactly those
        of calling :meth:`ask` / :meth:`tell` round by round with the same
        rewards: both paths use the same sums and the same tests. While arms
        parked by the top phase's tests catch up, one row is told (:meth:`tell`).

        Parameters
        ----------
        pulls : Pulls
            The batch just returned by :meth:`ask` (a whole round).
        rewards : ndarray of shape (R, len(pulls))
        costs : array-like of shape (len(pulls),), optional
            Cost of one pull of each; defaults to the nominal cost.

        Returns
        -------
        int
            Number of rounds consumed (``1 <= n <= R``).
        """
        m = self.fidelity_
        arms = self._round_arms()
        if np.any(self.stats.counts[m, arms] < self.t_):  # parked arms catch up: one pull each
            self.tell(pulls, np.asarray(rewards, dtype=float)[0], costs)
            return 1
        if (
            len(pulls) != arms.size
            or not np.array_equal(pulls.arms, arms)
            or np.any(pulls.fidelities != m)
            or np.any(self.stats.counts[m, arms] != self.t_)
        ):
            raise ValueError("tell_rounds() needs the full round just returned by ask()")
        rewards = np.asarray(rewards, dtype=float)
        if rewards.ndim != 2 or rewards.shape[1] != arms.size:
            raise ValueError(f"rewards must have shape (R, {arms.size}); got {rewards.shape}")
        # Arms-major copy: the running sums along rounds are contiguous, and the
        # first round is added to the stored sums first, so every partial sum is
        # computed in the same order as round-by-round telling.
        cums = np.array(rewards.T, order="C")
        cums[:, 0] += self.stats.sums[m, arms]
        np.cumsum(cums, axis=1, out=cums)
        t = self.t_ + np.arange(1, rewards.shape[0] + 1)
        event = self._events(cums, t)
        n = int(np.argmax(event)) + 1 if event.any() else rewards.shape[0]
        used = rewards[:n]
        if costs is None:
            costs = np.full(arms.size, self.costs[m])
        costs = np.asarray(costs, dtype=float)
        final = cums[:, n - 1].copy()
        self._record_top(m, arms, used, self.stats.counts[m, arms])
        self.pending[m, arms] -= 1
        self.stats.counts[m, arms] += n
        self.stats.sums[m, arms] = final
        self.stats.sumsq[m, arms] += np.einsum("ij,ij->j", used, used)
        self.stats.cost[m, arms] += n * costs
        self._finish_rounds(arms, final[None, :], n)
        return n

    # -- simulator support ----------------------------------------------------
    def phase_length(self, phase: int | None = None) -> float:
        """Rounds the given phase lasts if no elimination ends the run (``inf`` for the last)."""
        phase = self.phase_ if phase is None else phase
        if phase >= self.phases.size - 1:
            return np.inf
        key = (phase, self._variance_now(phase), self.phase_delta(phase),
               float(self.thresholds[self.phases[phase]]), self._round_cap(phase))
        cache = self.__dict__.setdefault("_phase_lengths", {})  # the search: ~40 radii
        if key not in cache:
            cache[key] = min(key[-1], phase_length(
                key[3], lambda t: float(self.radius(np.array([t]), phase)[0])))
        return cache[key]

    def _summary_extra(self) -> dict:
        return {
            "phase": int(self.phase_),
            "fidelity": self.fidelity_,
            "rounds_in_phase": int(self.t_),
            "thresholds": self.thresholds.tolist(),
            "widths": self.widths.tolist(),
            "delta_prime": self.delta_prime,
            "confidence": self.confidence,
            "top_share": self.top_share,
            "top_glr": self.top_glr,
            "stopped_by_epsilon": bool(self.stopped_early_ and self.glr_arm_ is None),
            "stopped_by_glr": self.glr_arm_ is not None,
            "futility_switches": int(self.futile_switches_),
            "balanced_switches": int(self.balanced_switches_),
            "reopened": int(self.reopened_),
            "parked": int(np.sum(self.parked_ & self.active)),
        }
