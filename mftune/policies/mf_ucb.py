"""MF-UCB and UCB for cumulative regret in multi-fidelity bandits.

Kandasamy, Dasarathy, Oliva, Schneider & Póczos, "The Multi-fidelity
Multi-armed Bandit", NIPS 2016, Algorithm 1 [paper]::

    B^(m)_{k,t} = X̄^(m)_k + ψ^{-1}(ρ log t / T^(m)_k) + ζ^(m)     (+inf if T^(m)_k = 0)
    B_{k,t}     = min_m B^(m)_{k,t}
    I_t = argmax_k B_{k,t}                                       (ties: random)
    m_t = min{ m : ψ^{-1}(ρ log t / T^(m)_{I_t}) >= γ^(m)  or  m = M }
    γ^(m) = ψ^{-1}( (λ^(m) / λ^(m+1)) ψ(ζ^(m)) )                 (Eq. 4)

``ψ`` is the concentration function of the rewards: ``ε²/(2σ²)`` for
σ-sub-Gaussian rewards, ``2ε²`` (Hoeffding) for rewards in ``[0, 1]``
(:func:`mftune.radii.psi`). The experimental ``ρ`` is in the paper's
unavailable Appendix C; ``ρ = 2`` is the default [RECON] (the theory asks for
``ρ > 4``; pass ``rho=4.1`` for it). :class:`UCB` is the same index restricted
to the top fidelity, the paper's baseline.

Both policies pull one (arm, fidelity) per step, are anytime (decisions do
not depend on the capital), and stop before a pull would exceed ``budget``.

Batch rule (``batch_size`` / ``ask(n)``, for ``n`` parallel workers) — ours,
not the paper's: ``n`` steps of Algorithm 1 are taken in a row, each
*believing* the batch's earlier pulls — their rewards taken equal to the
current means, so the means stay and the counts ``T^(m)_k`` and ``t`` grow,
shrinking those bonuses (the constant liar the GP policies use). An arm and
fidelity without any reward yet is not pulled twice in one batch (there is no
mean to believe). So the best arm can fill a batch, as it would fill
consecutive sequential steps, instead of ``n`` distinct arms being forced.
The batch stops early where the next pull would exceed ``budget``. ``n = 1``
(the default) is Algorithm 1; replayable for a fixed ``n``.

Pulls still outstanding when :meth:`~MFUCB.ask` is called (results told one
at a time, each followed by an ask for the free workers) are believed the
same way, before the new batch's own, and their costs count against
``budget``; so the workers do not idle until the whole batch is told. When
every arm waits on an outstanding first reward (nothing to believe), the
ask gets Algorithm 1's play on the told pulls.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_batch_size, check_costs, check_positive
from ..radii import PSI_KINDS, psi, psi_inverse
from .base import Policy, Pulls
from .lucb import check_zeta

__all__ = ["MFUCB", "UCB", "mf_ucb_gamma"]


def mf_ucb_gamma(costs, zeta, kind: str = "sub-gaussian", sigma: float = 1.0) -> np.ndarray:
    """Switching thresholds ``γ^(m) = ψ^{-1}((λ^(m)/λ^(m+1)) ψ(ζ^(m)))`` (Eq. 4); ``γ^(M) = 0``.

    For the quadratic ``ψ`` of sub-Gaussian and Hoeffding rewards this is
    ``sqrt(λ^(m)/λ^(m+1)) ζ^(m)``.
    """
    costs = np.asarray(costs, dtype=float)
    zeta = np.asarray(zeta, dtype=float)
    gamma = np.zeros(costs.size)
    ratio = costs[:-1] / costs[1:]
    gamma[:-1] = psi_inverse(ratio * psi(zeta[:-1], kind, sigma), kind, sigma)
    return gamma


class MFUCB(Policy):
    """MF-UCB (Kandasamy et al. 2016, Algorithm 1): one pull per step.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K``.
    costs : array-like of shape (M,)
        Strictly increasing costs λ^(m).
    zeta : array-like of shape (M,)
        Bias bounds ζ^(m): ``|µ^(m)_k − µ^(M)_k| <= ζ^(m)``, non-increasing, ``ζ^(M) = 0``.
    rho : float, default=2.0
        Exploration parameter ρ (> 0) [RECON default, see module docstring].
    psi : {"sub-gaussian", "hoeffding"}, default="sub-gaussian"
        Concentration law of the rewards: σ-sub-Gaussian (any real reward)
        or Hoeffding's for rewards in ``[0, 1]`` (:meth:`tell` then refuses
        others).
    sigma : float, default=1.0
        Sub-Gaussian scale σ (ignored for Hoeffding).
    budget : float, optional
        Capital Λ: the policy stops before a pull would make the spent cost exceed it.
    random_state : int, Generator or None
        Seeds the random tie-breaking among equal indices.
    batch_size : int, default=1
        Pulls per step that :meth:`ask` aims for (see the module's batch rule).

    Attributes
    ----------
    gamma_ : ndarray of shape (M,)
        The thresholds γ^(m).
    history_arms_, history_fidelities_ : list of int
        The arm and fidelity of every told pull, in order.
    """

    def __init__(self, n_arms, costs, zeta, rho=2.0, psi="sub-gaussian", sigma=1.0,
                 budget=None, random_state=None, *, batch_size=1):
        costs = check_costs(costs)
        super().__init__(n_arms, costs.size, random_state)
        self.batch_size = check_batch_size(batch_size)
        self.costs = costs
        self.zeta = check_zeta(zeta, costs.size)
        self.rho = check_positive(rho, "rho")
        if psi not in PSI_KINDS:
            raise ValueError(f"psi must be one of {PSI_KINDS}; got {psi!r}")
        self.psi = psi
        self.reward_range = (0.0, 1.0) if psi == "hoeffding" else None
        self.sigma = check_positive(sigma, "sigma")
        self.budget = None if budget is None else check_positive(budget, "budget")
        self.gamma_ = mf_ucb_gamma(costs, self.zeta, psi, self.sigma)
        self._fids = np.arange(self.n_fidelities)
        # Cached per-entry pieces: X̄ + ζ and 1/sqrt(T) (+inf when T = 0).
        self._hi = np.zeros((self.n_fidelities, self.n_arms)) + self.zeta[:, None]
        self._w = np.full((self.n_fidelities, self.n_arms), np.inf)
        self.history_arms_: list[int] = []
        self.history_fidelities_: list[int] = []
        self._decision = None
        self._spent = 0.0
        self._scale_t = -1
        self._scale = 0.0
        self._believed = 0  # plays believed so far while a batch is being chosen

    # -- the index ---------------------------------------------------------------
    @property
    def t_(self) -> int:
        """Index ``t`` of the next play (1-based; within a batch, counting believed plays)."""
        return len(self.history_arms_) + 1 + self._believed

    def _bonus_scale(self) -> float:
        """``ψ^{-1}(ρ log t)``, so that ``ψ^{-1}(ρ log t / T) = scale / sqrt(T)``."""
        t = self.t_
        if self._scale_t != t:
            self._scale = float(psi_inverse(self.rho * np.log(t), self.psi, self.sigma))
            self._scale_t = t
        return self._scale

    def _radius(self, w: np.ndarray) -> np.ndarray:
        """``ψ^{-1}(ρ log t / T)`` from ``w = 1/sqrt(T)``; ``inf`` where ``T = 0`` (even t = 1)."""
        s = self._bonus_scale()
        if s > 0:
            return s * w
        return np.where(np.isinf(w), np.inf, 0.0)

    def indices(self) -> np.ndarray:
        """``B_{k,t}`` of every arm for the next play."""
        rows = self._rows()
        return (self._hi[rows] + self._radius(self._w[rows])).min(axis=0)

    def _rows(self):
        return self._fids

    def _choose_fidelity(self, arm: int) -> int:
        ok = self._radius(self._w[:, arm]) >= self.gamma_
        ok[-1] = True
        return int(np.argmax(ok))

    def _decide(self) -> tuple[int, int]:
        if self._decision is None:
            b = self.indices()
            top = np.flatnonzero(b == b.max())
            arm = int(top[0] if top.size == 1 else top[self.rng_.integers(top.size)])
            self._decision = (arm, self._choose_fidelity(arm))
        return self._decision

    # -- protocol -------------------------------------------------------------
    @property
    def done(self) -> bool:
        if self.budget is None:
            return False
        _, m = self._decide()
        return self._spent + self.costs[m] > self.budget * (1 + 1e-12)

    def nominal_costs(self) -> np.ndarray:
        return self.costs

    def recommend(self) -> int:
        """The most played arm at the top fidelity (else overall)."""
        top = self.stats.counts[-1]
        if top.max() > 0:
            return int(np.argmax(top))
        return int(np.argmax(self.stats.counts.sum(axis=0)))

    def _next_pulls(self, n: int) -> Pulls:
        pending = self.n_pending
        if n == 1 and not pending:
            first = self._decide()
            return Pulls([first[0]], [first[1]])
        arms, fids = self._believed_batch(n)
        if not arms and pending:
            # every arm waits on an outstanding first reward, so nothing can be believed:
            # Algorithm 1's play on the told pulls, if the budget left holds it
            arm, m = self._decide()
            if self._fits(self._committed() + self.costs[m]):
                arms, fids = [arm], [m]
        return Pulls(arms, fids)

    def _committed(self) -> float:
        """Cost of the told pulls and of the outstanding ones."""
        return self._spent + float(self.pending.sum(axis=1) @ self.costs)

    def _fits(self, cost: float) -> bool:
        return self.budget is None or cost <= self.budget * (1 + 1e-12)

    def _believed_batch(self, n: int) -> tuple[list[int], list[int]]:
        """Up to ``n`` plays, each believing the outstanding pulls and the earlier plays."""
        pending = self.n_pending
        # the decision on the told pulls only, kept for later (without pending pulls it is
        # the batch's first play)
        first = self._decision if pending else self._decide()
        saved = self._hi.copy(), self._w.copy()
        counts = self.stats.counts + self.pending
        arms, fids = [], []
        cost = self._committed()
        try:
            if pending:  # outstanding pulls are believed as the batch's own pulls are
                held = self.pending > 0
                self._w[held] = 1.0 / np.sqrt(counts[held])
                self._hi[held & (self.stats.counts == 0)] = -np.inf
                self._believed = pending
                self._decision = None
            for _ in range(n):
                believing = bool(arms) or pending > 0
                if believing and self.indices().max() == -np.inf:
                    break  # every arm waits for a first reward (n > number of arms)
                arm, m = self._decide()
                cost += self.costs[m]
                if believing and not self._fits(cost):
                    break
                arms.append(arm)
                fids.append(m)
                counts[m, arm] += 1  # believe the pull: same mean, one more count
                self._w[m, arm] = 1.0 / np.sqrt(counts[m, arm])
                if self.stats.counts[m, arm] == 0:
                    self._hi[m, arm] = -np.inf  # no mean to believe: wait for its reward
                self._believed += 1
                self._decision = None
        finally:
            self._hi, self._w = saved
            self._believed = 0
            self._decision = first
        return arms, fids

    def _after_tell(self, pulls, rewards, costs) -> None:
        for a, m in pulls:
            self._record(a, m)
        self._spent += float(np.sum(costs))

    def _record(self, a: int, m: int) -> None:
        n = self.stats.counts[m, a]
        self._hi[m, a] = self.stats.sums[m, a] / n + self.zeta[m]
        self._w[m, a] = 1.0 / np.sqrt(n)
        self.history_arms_.append(a)
        self.history_fidelities_.append(m)
        self._decision = None

    def play_simulated(self, env, rng, max_plays: int | None = None) -> int:
        """Fast path for simulated bandits: play until :attr:`done` (or ``max_plays``).

        Equivalent, pull for pull, to driving the policy with
        :func:`mftune.engine.driver.run` and a
        :class:`~mftune.benchmarks.simulate.BanditEvaluator` on the same
        generator (one ``env.pull`` per play, the environment's costs), without
        the per-pull protocol overhead (tested). Returns the number of plays.

        Parameters
        ----------
        env : SimulatedBandit
            Must have the policy's costs.
        rng : numpy Generator
        max_plays : int, optional
        """
        if not np.array_equal(env.costs, self.costs):
            raise ValueError("env.costs must equal the policy's costs")
        if self.n_pending:
            raise ValueError("play_simulated() needs no outstanding pulls")
        if self.batch_size != 1:
            raise ValueError(f"play_simulated() plays one pull per step: batch_size must be 1; "
                             f"got {self.batch_size}")
        if self.budget is None and max_plays is None:
            raise ValueError("give the policy a budget or pass max_plays")
        st = self.stats
        plays = 0
        low, high = self.reward_range or (-np.inf, np.inf)
        while not self.done and (max_plays is None or plays < max_plays):
            a, m = self._decide()
            r = float(env.pull(np.array([a]), np.array([m]), rng)[0])
            if not low <= r <= high:  # refused as tell() refuses it
                self._check_reward_range(np.array([r]))
            st.counts[m, a] += 1
            st.sums[m, a] += r
            st.sumsq[m, a] += r * r
            st.cost[m, a] += self.costs[m]
            self._spent += float(self.costs[m])
            self._record(a, m)
            plays += 1
        return plays

    def _summary_extra(self) -> dict:
        return {"gamma": self.gamma_.tolist(), "rho": self.rho, "psi": self.psi,
                "plays": len(self.history_arms_)}


class UCB(MFUCB):
    """UCB at the top fidelity only: the baseline of Kandasamy et al. (2016).

    The MF-UCB index with only ``m = M`` (``ζ^(M) = 0``), i.e.
    ``X̄^(M)_k + ψ^{-1}(ρ log t / T^(M)_k)``, always played at fidelity ``M``.

    Parameters
    ----------
    n_arms : int
    costs : array-like of shape (M,)
        Costs of all fidelities (only the last is used).
    rho, psi, sigma, budget, random_state, batch_size
        As in :class:`MFUCB`.
    """

    def __init__(self, n_arms, costs, rho=2.0, psi="sub-gaussian", sigma=1.0, budget=None,
                 random_state=None, *, batch_size=1):
        costs = check_costs(costs)
        zeta = np.zeros(costs.size)  # unused: only the top row (ζ^(M) = 0) counts
        super().__init__(n_arms, costs, zeta, rho, psi, sigma, budget, random_state,
                         batch_size=batch_size)

    def _rows(self):
        return self._fids[-1:]

    def _choose_fidelity(self, arm: int) -> int:
        return self.n_fidelities - 1
