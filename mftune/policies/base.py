"""The ask/tell policy protocol shared by every algorithm.

A policy decides which ``(arm, fidelity)`` to evaluate next. It is pure: no
scikit-learn, no I/O, no wall clock. The driver (:mod:`mftune.engine.driver`) asks
for a batch, has an evaluator run it, and tells the results back::

    pulls = policy.ask()                 # a batch that may run in parallel
    policy.tell(pulls, rewards, costs)   # any subset of outstanding pulls
    policy.done                          # stopping rule met, or nothing left
    policy.recommend()                   # current best arm

Statistics live in ``(n_fidelities, n_arms)`` numpy arrays. A policy is
replayable: with the same ``random_state``, the same batch size and the same
sequence of tells it asks the same pulls, which is what makes resuming a
study exact.

Batch size
----------
``ask(n)`` asks for a batch of about ``n`` pulls (``n`` workers to keep
busy); ``ask()`` uses the policy's :attr:`~Policy.batch_size` (a constructor
parameter of the policies that have a batch rule, 1 otherwise). How a policy
honours ``n`` depends on its natural batch (docs/parallel.md):

* a round (IISE, IISE-γ, MFE, SE, Wang's elimination): the whole round,
  whatever ``n`` — it is already as parallel as the algorithm allows;
* one or two pulls (LUCB, MF-UCB, UCB, the GP policies): a *batch rule* fills
  the batch up to ``n`` distinct pulls; with ``n = 1`` (LUCB: ``n <= 2``)
  the policy is exactly the sequential algorithm of its paper.

Store ``batch_size`` with a study (it is part of the policy's settings):
replay asks with ``ask()``, so a fixed batch size replays exactly.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_batch_size

__all__ = ["ArmStats", "Policy", "PolicySummary", "Pulls", "leader", "outstanding", "ranking"]


@dataclass(frozen=True)
class Pulls:
    """A batch of pulls: parallel arrays of arm ids and 0-based fidelities.

    Parameters
    ----------
    arms : ndarray of int, shape (n,)
        Arm (candidate) indices.
    fidelities : ndarray of int, shape (n,)
        Fidelity indices, ``0`` the cheapest, ``n_fidelities - 1`` the target.
    points : ndarray of float, shape (n, d), optional
        Unit-cube coordinates for continuous-space policies (the arm id then
        indexes the policy's list of queried points).
    """

    arms: np.ndarray
    fidelities: np.ndarray
    points: np.ndarray | None = None

    def __post_init__(self):
        for name in ("arms", "fidelities"):
            given = np.asarray(getattr(self, name))
            if given.dtype.kind not in "biu" and given.size and not np.all(
                    np.mod(given.astype(float), 1) == 0):
                raise ValueError(f"{name} must be integer indices; got {given.tolist()}")
        arms = np.asarray(self.arms, dtype=np.int64).reshape(-1)
        fids = np.asarray(self.fidelities, dtype=np.int64).reshape(-1)
        if fids.size == 1 and arms.size != 1:
            fids = np.full(arms.size, fids[0], dtype=np.int64)
        if arms.shape != fids.shape:
            raise ValueError(
                f"arms and fidelities must have the same length; got {arms.size} and {fids.size}"
            )
        object.__setattr__(self, "arms", arms)
        object.__setattr__(self, "fidelities", fids)
        if self.points is not None:
            pts = np.atleast_2d(np.asarray(self.points, dtype=float))
            if pts.shape[0] != arms.size:
                raise ValueError("points must have one row per pull")
            object.__setattr__(self, "points", pts)

    def __len__(self) -> int:
        return int(self.arms.size)

    def __iter__(self):
        return iter(zip(self.arms.tolist(), self.fidelities.tolist(), strict=True))

    def __getitem__(self, index) -> Pulls:
        pts = None if self.points is None else self.points[index]
        return Pulls(self.arms[index], self.fidelities[index], pts)

    @classmethod
    def empty(cls) -> Pulls:
        """A batch with no pulls (the policy waits for outstanding results)."""
        return cls(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))

    @classmethod
    def concat(cls, batches) -> Pulls:
        """Concatenate several batches."""
        batches = list(batches)
        if not batches:
            return cls.empty()
        pts = None
        if all(b.points is not None for b in batches):
            pts = np.concatenate([b.points for b in batches])
        return cls(
            np.concatenate([b.arms for b in batches]),
            np.concatenate([b.fidelities for b in batches]),
            pts,
        )


class ArmStats:
    """Sufficient statistics per (fidelity, arm): count, sum, sum of squares, cost.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K``.
    n_fidelities : int
        Number of fidelities ``M``.
    """

    def __init__(self, n_arms: int, n_fidelities: int):
        shape = (n_fidelities, n_arms)
        self.counts = np.zeros(shape, dtype=np.int64)
        self.sums = np.zeros(shape)
        self.sumsq = np.zeros(shape)
        self.cost = np.zeros(shape)

    @property
    def shape(self) -> tuple[int, int]:
        return self.counts.shape

    def add(self, arms, fidelities, rewards, costs) -> None:
        """Accumulate one reward (and its cost) per pull; duplicates allowed."""
        idx = (np.asarray(fidelities), np.asarray(arms))
        rewards = np.asarray(rewards, dtype=float)
        np.add.at(self.counts, idx, 1)
        np.add.at(self.sums, idx, rewards)
        np.add.at(self.sumsq, idx, rewards * rewards)
        np.add.at(self.cost, idx, np.asarray(costs, dtype=float))

    def remove(self, arms, fidelities, rewards) -> None:
        """Take back rewards added before (:meth:`add`); their costs stay."""
        idx = (np.asarray(fidelities), np.asarray(arms))
        rewards = np.asarray(rewards, dtype=float)
        np.subtract.at(self.counts, idx, 1)
        np.subtract.at(self.sums, idx, rewards)
        np.subtract.at(self.sumsq, idx, rewards * rewards)

    def means(self) -> np.ndarray:
        """Empirical means (``nan`` where never pulled)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.sums / self.counts

    def variances(self) -> np.ndarray:
        """Unbiased sample variances (``nan`` with fewer than two samples)."""
        n = self.counts
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = self.sums / n
            var = (self.sumsq - n * mean * mean) / (n - 1)
        var[n < 2] = np.nan
        return np.maximum(var, 0.0, where=~np.isnan(var), out=var)


@dataclass
class PolicySummary:
    """What a policy did: pulls and cost per fidelity, and when arms were eliminated.

    Attributes
    ----------
    pulls_per_fidelity : ndarray of int, shape (M,)
    cost_per_fidelity : ndarray of float, shape (M,)
    eliminated_round : ndarray of int, shape (K,)
        Round (1-based, counted over the whole run) in which each arm was
        eliminated; ``-1`` for arms still alive.
    eliminated_fidelity : ndarray of int, shape (K,)
        Fidelity at which each arm was eliminated; ``-1`` for arms still alive.
    n_rounds : int
        Completed rounds (batches).
    recommendation : int
        The recommended arm.
    done : bool
        Whether the stopping rule was met.
    extra : dict
        Policy-specific entries (phase lengths, thresholds, ...).
    """

    pulls_per_fidelity: np.ndarray
    cost_per_fidelity: np.ndarray
    eliminated_round: np.ndarray
    eliminated_fidelity: np.ndarray
    n_rounds: int
    recommendation: int
    done: bool
    extra: dict = field(default_factory=dict)

    @property
    def total_cost(self) -> float:
        return float(self.cost_per_fidelity.sum())

    @property
    def total_pulls(self) -> int:
        return int(self.pulls_per_fidelity.sum())

    def to_dict(self) -> dict:
        """JSON-friendly representation."""
        return {
            "pulls_per_fidelity": self.pulls_per_fidelity.tolist(),
            "cost_per_fidelity": self.cost_per_fidelity.tolist(),
            "eliminated_round": self.eliminated_round.tolist(),
            "eliminated_fidelity": self.eliminated_fidelity.tolist(),
            "n_rounds": int(self.n_rounds),
            "recommendation": int(self.recommendation),
            "done": bool(self.done),
            "total_cost": self.total_cost,
            "extra": self.extra,
        }


def check_evidence(arms, fidelities, rewards, n_arms: int,
                   n_fidelities: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``add_evidence``'s arguments as flat arrays, refused by name when they do not fit.

    Parameters
    ----------
    arms, fidelities : array-like of int
    rewards : array-like of float
    n_arms, n_fidelities : int
        The policy's arms and fidelities.

    Returns
    -------
    arms, fidelities, rewards : ndarray
    """
    arms = np.asarray(arms, dtype=np.int64).reshape(-1)
    fidelities = np.asarray(fidelities, dtype=np.int64).reshape(-1)
    rewards = np.asarray(rewards, dtype=float).reshape(-1)
    if not (arms.size == fidelities.size == rewards.size):
        raise ValueError("arms, fidelities and rewards must have the same length; got "
                         f"{arms.size}, {fidelities.size} and {rewards.size}")
    if arms.size and (arms.min() < 0 or arms.max() >= n_arms
                      or fidelities.min() < 0 or fidelities.max() >= n_fidelities):
        raise ValueError(f"arms must be in [0, {n_arms}) and fidelities in "
                         f"[0, {n_fidelities})")
    return arms, fidelities, rewards


def outstanding(pending: np.ndarray, pulls: Pulls, message: str) -> tuple[np.ndarray, np.ndarray]:
    """``(fidelities, arms)`` of ``pulls``, once each is known to be outstanding in
    ``pending`` (M, K) as many times as it is given; else ValueError with ``message``.
    Indices out of range are refused by name."""
    M, K = pending.shape
    f, a = pulls.fidelities, pulls.arms
    if np.any((a < 0) | (a >= K)) or np.any((f < 0) | (f >= M)):
        raise ValueError(f"pulls must have arms in 0..{K - 1} and fidelities in "
                         f"0..{M - 1}; got arms {a.tolist()}, fidelities {f.tolist()}")
    if len(pulls) > 1:  # a pull given twice in one call must be outstanding twice
        given = np.zeros_like(pending)
        np.add.at(given, (f, a), 1)
        short = np.any(given > pending)
    else:
        short = np.any(pending[f, a] <= 0)
    if short:
        raise ValueError(message)
    return f, a


class Policy(ABC):
    """Base class of finite-arm multi-fidelity policies.

    Subclasses implement :meth:`_next_pulls`, :meth:`_after_tell`,
    :attr:`done` and :meth:`recommend`; the base class keeps the statistics,
    the outstanding (asked but not told) pulls, the elimination record and
    the summary.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K``.
    n_fidelities : int
        Number of fidelities ``M``.
    random_state : int, numpy Generator or None
        Seed of the policy's own generator (tie breaking, randomised rules).
    """

    def __init__(self, n_arms: int, n_fidelities: int, random_state=None):
        if int(n_arms) != n_arms or n_arms < 2:
            raise ValueError(f"n_arms must be an integer >= 2; got {n_arms!r}")
        if int(n_fidelities) != n_fidelities or n_fidelities < 1:
            raise ValueError(f"n_fidelities must be an integer >= 1; got {n_fidelities!r}")
        self.n_arms = int(n_arms)
        self.n_fidelities = int(n_fidelities)
        self.random_state = random_state
        self.rng_ = np.random.default_rng(random_state)
        self.stats = ArmStats(self.n_arms, self.n_fidelities)
        self.active = np.ones(self.n_arms, dtype=bool)
        self.eliminated_round = np.full(self.n_arms, -1, dtype=np.int64)
        self.eliminated_fidelity = np.full(self.n_arms, -1, dtype=np.int64)
        self.pending = np.zeros((self.n_fidelities, self.n_arms), dtype=np.int64)
        self.n_rounds = 0

    #: Pulls per batch that :meth:`ask` aims for when called without ``n``.
    batch_size: int = 1

    #: Closed interval ``(low, high)`` every reward must lie in, for policies whose
    #: confidence radii assume bounded rewards (LUCB, UGapE, MF-UCB with Hoeffding's
    #: ψ); ``None``: any finite reward. :meth:`tell` refuses a reward outside it.
    reward_range: tuple[float, float] | None = None

    # -- protocol -------------------------------------------------------------
    def ask(self, n: int | None = None) -> Pulls:
        """Return the next batch of pulls (empty when done or waiting on results).

        Parameters
        ----------
        n : int, optional
            Pulls the caller can run in parallel; default :attr:`batch_size`.
            Round-based policies return their round whatever ``n``; policies
            with a batch rule return up to ``n`` distinct pulls (see the
            module docstring).
        """
        if self.done:
            return Pulls.empty()
        n = self.batch_size if n is None else check_batch_size(n, "n")
        pulls = self._next_pulls(n)
        if len(pulls):
            np.add.at(self.pending, (pulls.fidelities, pulls.arms), 1)
        return pulls

    def tell(self, pulls: Pulls, rewards, costs=None) -> None:
        """Record the results of (some of) the outstanding pulls.

        Parameters
        ----------
        pulls : Pulls
            Pulls previously returned by :meth:`ask` (any subset, any order).
        rewards : array-like of float, shape (n,)
            One reward per pull (higher is better); within
            :attr:`reward_range` when the policy has one.
        costs : array-like of float, shape (n,), optional
            Measured cost of each pull; defaults to the policy's nominal cost.

        Raises
        ------
        ValueError
            On a reward that is not finite or outside :attr:`reward_range`,
            or a pull that is not outstanding; nothing is recorded then.
        """
        rewards = np.asarray(rewards, dtype=float).reshape(-1)
        if rewards.size != len(pulls):
            raise ValueError(
                f"rewards must have one entry per pull ({len(pulls)}); got {rewards.size}"
            )
        if not np.all(np.isfinite(rewards)):
            raise ValueError("rewards must be finite; record failures with a finite error score")
        self._check_reward_range(rewards)
        if costs is None:
            costs = self.nominal_costs()[pulls.fidelities]
        costs = np.asarray(costs, dtype=float).reshape(-1)
        if costs.size != len(pulls):
            raise ValueError(f"costs must have one entry per pull ({len(pulls)}); got {costs.size}")
        idx = outstanding(self.pending, pulls, "tell() received a pull that was not asked "
                                               "(or was told twice)")
        np.subtract.at(self.pending, idx, 1)
        self.stats.add(pulls.arms, pulls.fidelities, rewards, costs)
        self._after_tell(pulls, rewards, costs)

    def _check_reward_range(self, rewards: np.ndarray) -> None:
        """ValueError naming ``rewards`` if one lies outside :attr:`reward_range`."""
        if self.reward_range is None:
            return
        low, high = self.reward_range
        out = (rewards < low) | (rewards > high)
        if np.any(out):
            raise ValueError(
                f"rewards must lie in [{low:g}, {high:g}] for {type(self).__name__} (its "
                f"confidence radii assume it); got {np.asarray(rewards)[out].tolist()}")

    def cancel(self, pulls: Pulls) -> None:
        """Forget outstanding pulls that will not be run (they may be asked again)."""
        np.subtract.at(self.pending, outstanding(
            self.pending, pulls, "cancel() received a pull that is not outstanding"), 1)

    @property
    @abstractmethod
    def done(self) -> bool:
        """Whether the stopping rule is met (no more pulls will be asked)."""

    @abstractmethod
    def recommend(self) -> int:
        """Return the current best arm."""

    @abstractmethod
    def _next_pulls(self, n: int) -> Pulls:
        """Return the pulls to run now (not counting outstanding ones); ``n`` as in :meth:`ask`."""

    @abstractmethod
    def _after_tell(self, pulls: Pulls, rewards: np.ndarray, costs: np.ndarray) -> None:
        """Update the decision state once statistics include the new rewards."""

    def nominal_costs(self) -> np.ndarray:
        """Per-fidelity costs the policy plans with (ones if it has none)."""
        return np.ones(self.n_fidelities)

    def gap_bound(self) -> float:
        """How far the recommendation's top-fidelity mean can lie below the best arm's, on
        the policy's confidence event; ``nan`` for a policy that gives no such bound."""
        return float("nan")

    # -- bookkeeping ----------------------------------------------------------
    @property
    def n_pending(self) -> int:
        """Number of asked pulls whose results have not been told yet."""
        return int(self.pending.sum())

    def _eliminate(self, arms: np.ndarray, fidelity: int) -> None:
        """Mark ``arms`` (indices, or a boolean mask of shape (K,)) as eliminated now."""
        newly = np.zeros(self.n_arms, dtype=bool)
        newly[arms] = True
        newly &= self.active
        self.active &= ~newly
        self.eliminated_round[newly] = self.n_rounds
        self.eliminated_fidelity[newly] = fidelity

    def summary(self) -> PolicySummary:
        """Pulls and cost per fidelity, and the elimination record."""
        return PolicySummary(
            pulls_per_fidelity=self.stats.counts.sum(axis=1),
            cost_per_fidelity=self.stats.cost.sum(axis=1),
            eliminated_round=self.eliminated_round.copy(),
            eliminated_fidelity=self.eliminated_fidelity.copy(),
            n_rounds=self.n_rounds,
            recommendation=int(self.recommend()),
            done=bool(self.done),
            extra=self._summary_extra(),
        )

    def _summary_extra(self) -> dict:
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_arms={self.n_arms}, n_fidelities={self.n_fidelities})"


def ranking(means: np.ndarray, below: np.ndarray | None = None) -> np.ndarray:
    """Indices of ``means``, the largest first; ties go to the larger mean one fidelity down.

    Scores such as accuracy take few distinct values, so candidates often tie
    at the highest fidelity they share. A tie (to 12 decimals) goes to the
    larger mean at the next fidelity down, then the one below it, then to
    the lower index.

    Parameters
    ----------
    means : ndarray of shape (n,)
        The candidates' means at the fidelity compared (``-inf`` or ``nan``: none).
    below : ndarray of shape (m, n), optional
        Their means at the fidelities below it, the cheapest first (as ``means``).

    Returns
    -------
    ndarray of int, shape (n,)
    """
    means = np.asarray(means, dtype=float)
    below = np.empty((0, means.size)) if below is None else np.asarray(below, dtype=float)
    keys = np.nan_to_num(np.vstack([below, means]).round(12), nan=-np.inf)
    keys = np.vstack([-np.arange(means.size), keys])
    return np.lexsort(keys)[::-1]


def leader(means: np.ndarray, below: np.ndarray | None = None) -> int:
    """Index of the first of :func:`ranking` (same parameters)."""
    top = np.asarray(means, dtype=float).round(12)
    best = np.flatnonzero(top == np.max(top))  # no ties and no nan: the largest mean
    if best.size == 1 and top[best[0]] > -np.inf:
        return int(best[0])
    return int(ranking(means, below)[0])
