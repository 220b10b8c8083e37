"""GLR stopping in the final phase of a phased elimination (``top_glr``) [RECON].

In the final phase of :class:`~mftune.policies.elimination.PhasedElimination`,
after every round, a generalised likelihood ratio test among the survivors
at the top fidelity (:class:`~mftune.policies.glr.GLRStopping` with one
fidelity and the ε pair values of
:func:`~mftune.policies.lower_bound.pair_values`) may also end the run; the
eliminations keep running, and the run stops at whichever comes first. The
final phase's δ share is split in two halves: its eliminations (and the ε
rule) use half their per-arm δ', the test the other half of the phase's
total. A wrong answer needs a lower phase's bound to fail (its share,
unchanged), a top-phase bound to fail (half the top share) or, with the
best arm still a survivor, the test to certify a worse arm against it (the
other half): a union bound gives δ in all. :meth:`TopGLR.glr_delta`
has the test's δ, :func:`~mftune.policies.glr.paired_mixture_threshold` the
threshold and the proof of its validity.

``top_glr="paired-t"`` replaces the GLR statistic, which needs the noise σ,
by paired t-tests that estimate it: the leader ``a`` is certified when, for
every other survivor ``b``, the differences ``d_s = X_{a,s} − X_{b,s}`` of
their ``s``-th top-fidelity rewards (the same split of the data when the
evaluator pairs them, as :class:`~mftune.search.evaluation.CVEvaluator`
does) give ``√t (d̄ + ε) / s_d >= q_t``, the ``1 − δ_g w_t / (K − 1)``
quantile of Student's t with ``t − 1`` degrees of freedom (``t >= 2``
rounds), ``w_t = t^(−3/2) / (ζ(3/2) − 1)``. Validity [RECON]: if the
differences of each pair are i.i.d. Gaussian, a leader more than ε below
the best arm ``a*`` passes its test against ``a*`` at round ``t`` with
probability at most that tail; a union over the ``K − 1`` arms and over
``t >= 2`` (``Σ w_t = 1``) gives ``δ_g``. The weights are at least
``1/(t(t+1))`` at every ``t`` (``(√t + 1/√t) / (ζ(3/2) − 1) > 1``), whose
sum over ``t >= 2`` is 1/2: the quantiles are below those of that union
at every round.
No σ enters, so an underestimated σ cannot make it wrong; where the
evaluator shares a split's noise between candidates, ``s_d`` is far below
``σ√2`` and the test stops far sooner.

The same tests also eliminate [RECON]: a survivor whose test against the
leader passes without ε (``√t d̄ / s_d >= q_t``) is dropped, so the top
phase stops paying for candidates already beaten. This spends no more δ:
the best arm ``a*`` is dropped only if some arm ``a`` with ``µ_a <= µ_a*``
passes its test against it at some round, and for a leader more than ε
below ``a*`` that event is contained in the certification error above; a
union over the ``K − 1`` arms and over ``t`` still gives ``δ_g``.

And they park [RECON]: a survivor whose test against the leader passes with
ε is not pulled again while that arm leads (``parked_``); the leader is
certified once every other survivor's test has passed, each at its own
round ``t_b`` (on the first ``t_b`` splits of both). This spends no more δ
either: a certified leader more than ε below ``a*`` has passed its test
against ``a*`` at some round, the event the union above bounds whichever
round it is. When another arm takes the lead, each parked survivor is
tested against it on the splits it has: it stays parked if its test passes
there, and is otherwise pulled again, its test re-run after each pull (parked
again or eliminated at the first pass) until it has the round's results. The
statistic at ``n`` splits depends on those splits alone, so looking at it more
often spends no more δ.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .glr import GLRStopping, paired_mixture_threshold

__all__ = ["GLR_SHARE", "TOP_GLR", "TopGLR", "paired_differences", "paired_t_quantile",
           "paired_t_rounds", "round_weights"]

#: The tests of the final phase (``top_glr``): the GLR test with the proven
#: ``"paired-mixture"`` threshold or two of :data:`~mftune.policies.glr.THRESHOLDS`
#: (``"practical"``: no proof; ``"theory"``: MF-GRAD's, its proof RECON), or
#: ``"paired-t"``, paired t-tests with σ estimated (module docstring).
TOP_GLR = ("paired-mixture", "practical", "theory", "paired-t")
#: Share of the final phase's δ given to the GLR test (the rest to its eliminations).
GLR_SHARE = 0.5


def round_weights(t):
    """The union's weights over the rounds ``t >= 2`` (scalar or array):
    ``t^(−3/2) / (ζ(3/2) − 1)``, summing to 1 (module docstring)."""
    return np.asarray(t, dtype=float) ** -1.5 / (special.zeta(1.5) - 1.0)


def paired_t_quantile(t, delta: float, n_arms: int):
    """``q_t`` of the paired t-tests after ``t >= 2`` rounds (scalar or array): the
    ``1 − delta w_t / (n_arms − 1)`` quantile of Student's t with ``t − 1`` degrees of
    freedom, ``w_t`` the :func:`round_weights` (module docstring)."""
    # Student's t upper quantile, -stdtrit(df, p) (what scipy.stats.t.isf computes)
    return -special.stdtrit(np.asarray(t) - 1, delta * round_weights(t) / (n_arms - 1))


def paired_t_rounds(lead, spread, quantile, max_rounds: int = 100_000) -> np.ndarray:
    """The first round ``t >= 2`` at which ``√t lead / spread >= quantile(t)``, per entry.

    What a paired t-test needs if the mean and spread of its differences stay as
    measured (``lead`` the mean, with ε added where the test adds it).

    Parameters
    ----------
    lead, spread : array-like of shape (n,)
        Mean and standard deviation of each comparison's differences.
    quantile : callable
        ``quantile(t)`` for an array of rounds, e.g. :func:`paired_t_quantile` at the
        test's δ and arm count.
    max_rounds : int, default=100_000
        Rounds searched.

    Returns
    -------
    ndarray of shape (n,)
        The rounds, ``inf`` where none within ``max_rounds`` (``lead <= 0``) and 2
        where the spread is 0 and the lead positive.
    """
    t = np.arange(2, int(max_rounds) + 1, dtype=float)
    # √t / q_t, made non-decreasing: the first t where it reaches spread/lead
    reach = np.maximum.accumulate(np.sqrt(t) / np.broadcast_to(quantile(t), t.shape))
    lead = np.asarray(lead, dtype=float).reshape(-1)
    spread = np.asarray(spread, dtype=float).reshape(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.where(lead > 0, spread / lead, np.inf)
    at = np.searchsorted(reach, need, side="left")
    return np.where(at < t.size, at + 2.0, np.inf)


def paired_differences(rewards, leader: int, n) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation (``ddof=1``) of each row's differences from row
    ``leader`` on their first ``n`` columns (the same splits).

    Parameters
    ----------
    rewards : ndarray of shape (k, t)
        Results, one row per arm, one column per round.
    leader : int
        The row the others are compared with.
    n : int or array-like of shape (k,)
        Columns compared, per row (``2 <= n <= t``).

    Returns
    -------
    lead, spread : ndarray of shape (k,)
        ``0`` for the leader's own row.
    """
    rewards = np.asarray(rewards, dtype=float)
    n = np.broadcast_to(np.asarray(n), rewards.shape[:1])
    used = np.arange(rewards.shape[1]) < n[:, None]  # each row's first n columns
    d = np.where(used, rewards[leader] - rewards, 0.0)
    lead = d.sum(axis=1) / n
    dev = np.where(used, d - lead[:, None], 0.0)
    return lead, np.sqrt((dev * dev).sum(axis=1) / (n - 1))


def _t_score(lead: np.ndarray, sd: np.ndarray, t) -> np.ndarray:
    """Paired t statistics ``√t lead / sd`` (``t`` one or per entry; ``inf``/0 for a zero
    spread)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, np.sqrt(t) * lead / sd, np.where(lead > 0, np.inf, 0.0))


class TopGLR:
    """The final phase's GLR test (a mixin of :class:`~.elimination.PhasedElimination`).

    It reads the elimination's ``top_glr``, phases, δ shares (``_share_delta``),
    σ² (``_variance_now``), ε, rounds (``t_``, ``_round_arms``) and statistics,
    and sets ``glr_arm_`` and ``stopped_early_`` when the test stops.
    """

    def glr_delta(self) -> float:
        """δ of the top phase's GLR test: :data:`GLR_SHARE` of the final phase's ``K δ'``."""
        return GLR_SHARE * self.n_arms * self._share_delta(self.phases.size - 1)

    def _glr_time(self, t):
        """The threshold's ``t`` after ``t`` rounds of the final phase: the rounds for
        ``"paired-mixture"``, else the top phase's pulls (``t`` may be ahead of the stats)."""
        if self.top_glr == "paired-mixture":
            return t
        m = self.fidelity_
        told = float(self.stats.counts[m].sum())
        return told + (np.asarray(t, dtype=float) - self.t_) * self._round_arms().size

    def _glr(self) -> GLRStopping:
        """The top phase's GLR test at the current σ² and ε (one fidelity, :meth:`glr_delta`)."""
        threshold = (paired_mixture_threshold if self.top_glr == "paired-mixture"
                     else self.top_glr)
        return GLRStopping(self.n_arms, [0.0], float(np.sqrt(self._variance_now())),
                           self.glr_delta(), threshold=threshold, epsilon=self.epsilon or 0.0)

    def _record_top_pulls(self, pulls, rewards: np.ndarray) -> None:
        """:meth:`_record_top` for the pulls just told (statistics already updated)."""
        if self.top_glr != "paired-t":  # every tell passes here: nothing to do
            return
        m = self.fidelity_
        at = pulls.fidelities == m
        self._record_top(m, pulls.arms[at], rewards[None, at],
                         self.stats.counts[m, pulls.arms[at]] - 1)

    def _record_top(self, m: int, arms, rewards: np.ndarray, first) -> None:
        """Keep top-fidelity rewards for ``"paired-t"``: ``rewards`` (rounds, arms) at
        fidelity ``m`` are the ``first``-th (per arm) and following pulls of ``arms``."""
        if self.top_glr != "paired-t" or m != self.phases[-1] or not len(arms):
            return
        store = self.__dict__.get("top_rewards_")
        last = int(np.max(first)) + rewards.shape[0]
        if store is None or store.shape[1] < last:
            grown = np.zeros((self.n_arms, max(2 * last, 16)))
            if store is not None:
                grown[:, :store.shape[1]] = store
            store = self.top_rewards_ = grown
        store[arms[None, :], np.asarray(first)[None, :] + np.arange(rewards.shape[0])[:, None]] \
            = rewards

    def _round_arms(self) -> np.ndarray:
        """The arms a round pulls: the survivors but the parked ones (module docstring)."""
        return np.flatnonzero(self.active & ~self.parked_)

    def _leads_the_parked(self, arms: np.ndarray, means: np.ndarray) -> bool:
        """Whether the leader of the round's ``arms`` is the arm the parked survivors were
        tested against (``True`` when none is parked)."""
        return (not np.any(self.parked_ & self.active)
                or int(arms[np.argmax(means)]) == self.park_leader_)

    def _paired_splits(self, leader: int, others: np.ndarray) -> np.ndarray:
        """The splits each of ``others``' paired test against ``leader`` reads: the closed
        top-fidelity rounds both have."""
        counts = self.stats.counts[self.phases[-1]]
        return np.minimum(np.minimum(counts[others], counts[leader]), self.t_)

    def _paired_tests(self, leader: int, others: np.ndarray):
        """Each of ``others``' paired t-test against ``leader`` (every one on two splits at
        least): its differences' mean and spread, its splits and its quantile."""
        n = self._paired_splits(leader, others)
        rows = np.append(others, leader)  # the leader last, on all the splits read
        lead, sd = paired_differences(self.top_rewards_[rows, :n.max()], -1,
                                      np.append(n, n.max()))
        return lead[:-1], sd[:-1], n, paired_t_quantile(n, self.glr_delta(), self.n_arms)

    def _paired_t_verdicts(self, leader: int, others: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each of ``others``' paired t-test against ``leader`` on the splits both have:
        whether it passes without ε (beaten) and, if not, with ε (module docstring)."""
        lead, sd, n, q = self._paired_tests(leader, others)
        beaten = _t_score(lead, sd, n) >= q
        return beaten, ~beaten & (_t_score(lead + (self.epsilon or 0.0), sd, n) >= q)

    def _paired_t_stops(self, arms: np.ndarray, means: np.ndarray) -> bool:
        """``"paired-t"``: whether every survivor's test against the leader has passed with
        ε, a parked survivor's on the splits it has; the survivors whose test passes
        without ε are eliminated, the others that pass parked (module docstring)."""
        if self.t_ < 2 or arms.size == 0:
            return False
        leader = int(arms[np.argmax(means)])
        others = np.flatnonzero(self.active)  # the round's arms and the parked ones
        others = others[others != leader]
        beaten, passed = self._paired_t_verdicts(leader, others)
        self._eliminate(others[beaten], self.fidelity_)
        self.parked_[:] = False  # a new leader keeps those its tests place within ε too
        self.parked_[others[passed]] = True
        self.park_leader_ = leader
        return bool(np.all(beaten | passed))

    def _test_catching_up(self, pulls) -> bool:
        """``"paired-t"``: test each survivor catching up to the round (pulled again after
        a change of lead, or re-opened) against the leader after each of its pulls, on
        the splits it has; park it again once its test passes with ε, drop it once it
        is beaten, and certify the leader when every other survivor is parked (module
        docstring). Returns whether it certified."""
        m, leader = self.fidelity_, self.park_leader_
        if (self.top_glr != "paired-t" or m != self.phases[-1] or self.t_ < 2 or leader < 0
                or not self.active[leader] or self.stopped_early_):
            return False
        told = np.unique(pulls.arms[pulls.fidelities == m])
        n = self.stats.counts[m, told]  # a test needs two splits
        behind = told[self.active[told] & ~self.parked_[told] & (told != leader)
                      & (n <= self.t_) & (n >= 2)]
        if behind.size == 0:
            return False
        beaten, passed = self._paired_t_verdicts(leader, behind)
        self._eliminate(behind[beaten], self.fidelity_)
        self.parked_[behind[passed]] = True
        others = self.active.copy()
        others[leader] = False
        if (beaten.any() or passed.any()) and np.all(self.parked_[others]):
            self.glr_arm_ = leader
            self.stopped_early_ = True
        return self.stopped_early_

    def _glr_may_stop(self, sums: np.ndarray, t) -> np.ndarray:
        """Per round (columns of ``sums``, survivors × rounds, after ``t`` rounds): may the
        GLR test stop? With equal counts its statistic is ``(S_1 − S_2 + εt)² / (4σ² t)``
        (``S_1 >= S_2`` the two largest sums: the empirical best against its closest
        challenger); a relative slack of 1e-9 makes this a superset of the test's stops.
        ``"paired-t"``: every round may (its test needs the rewards themselves)."""
        if sums.shape[0] < 2:
            return np.zeros(sums.shape[1], dtype=bool)
        if self.top_glr == "paired-t":
            return np.ones(sums.shape[1], dtype=bool)
        top2 = np.sort(sums, axis=0)[-2:]
        lead = top2[1] - top2[0] + (self.epsilon or 0.0) * t
        stat = lead * lead / (4.0 * self._variance_now() * t)
        return stat >= self._glr().threshold(self._glr_time(t)) * (1.0 - 1e-9)

    def _glr_test(self, arms: np.ndarray, means: np.ndarray) -> None:
        """The top phase's GLR test on the survivors ``arms`` (their means after ``t_`` rounds)."""
        if self.top_glr == "paired-t":
            if self._paired_t_stops(arms, means):
                self.glr_arm_ = int(arms[np.argmax(means)])
                self.stopped_early_ = True
            return
        if not self._glr_may_stop(means[:, None] * self.t_, np.array([self.t_]))[0]:
            return  # the closed form rules a stop out; skip the solver
        counts = np.full((arms.size, 1), float(self.t_))
        stop, _, _, arm = self._glr().test(counts, means[:, None], t=self._glr_time(self.t_))
        if stop:
            self.glr_arm_ = int(arms[arm])
            self.stopped_early_ = True

