"""Continuous-space policies: the ask/tell protocol over points of the unit cube.

The finite-arm :class:`~mftune.policies.base.Policy` keeps ``(M, K)`` arm
statistics; a Gaussian-process policy instead proposes new points of
``[0, 1]^d`` (a :class:`~mftune.space.Space` maps configurations to and from
it). :class:`ContinuousPolicy` speaks the same protocol, so
:func:`mftune.engine.driver.run` drives it unchanged::

    pulls = policy.ask()        # Pulls with points (n, d); arms = history indices
    policy.tell(pulls, rewards, costs)
    policy.done                 # capital spent (False when open-ended)
    policy.recommend()          # history index of the recommended point
    policy.recommend_point()    # that point, in unit-cube coordinates
    policy.add_evidence(points, fidelities, rewards)  # results from outside, before any ask

``recommend()`` returns an *index into the policy's history* (an int, as the
driver and :class:`~mftune.policies.base.PolicySummary` expect): the best
observation at the highest fidelity observed so far — for the target
fidelity, the best point actually evaluated there, which is what the simple
regret ``S(Λ)`` of Kandasamy et al. (2016) scores. ``recommend_point()``
returns its coordinates.

A continuous policy is replayable: with the same ``random_state``, the same
batch size and the same sequence of tells it asks the same points.

``ask(n)`` asks for ``n`` points to evaluate in parallel (default the
policy's :attr:`~ContinuousPolicy.batch_size`); the GP policies fill a batch
with hallucinated observations (:meth:`FidelityGP.believing
<mftune.policies.gp.FidelityGP.believing>`), random search draws ``n``
points, DiRect asks one point at a time.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod

import numpy as np

from .._validation import check_batch_size, check_costs, check_positive
from .base import PolicySummary, Pulls

__all__ = ["ContinuousPolicy", "check_unit_points"]


def check_unit_points(points, n_dims: int, name: str = "points") -> np.ndarray:
    """Return ``points`` as an ``(n, n_dims)`` float array inside ``[0, 1]^d``."""
    pts = np.asarray(points, dtype=float)
    if pts.ndim == 1:
        pts = pts[None, :]
    if pts.ndim != 2 or pts.shape[1] != n_dims:
        raise ValueError(f"{name} must have shape (n, {n_dims}); got {pts.shape}")
    if not np.all(np.isfinite(pts)) or np.any(pts < 0) or np.any(pts > 1):
        raise ValueError(f"{name} must lie in the unit cube [0, 1]^{n_dims}")
    return pts


class ContinuousPolicy(ABC):
    """Base class of policies whose arms are points of ``[0, 1]^d``.

    Subclasses implement :meth:`_propose` (the next points and fidelities)
    and may override :meth:`_after_tell`. The base class keeps the history
    (points, fidelities, rewards, costs), the outstanding pulls, the capital
    spent and the summary.

    Parameters
    ----------
    n_dims : int
        Dimension ``d`` of the unit cube.
    costs : array-like of float, shape (M,)
        Nominal cost of one evaluation at each fidelity, strictly increasing.
    capital : float, optional
        Total cost after which :attr:`done` is true (``None``: open-ended;
        the driver's ``budget=`` then stops the run).
    random_state : int, numpy Generator or None
        Seed of the policy's generator.
    """

    def __init__(self, n_dims: int, costs, capital: float | None = None, random_state=None):
        if (isinstance(n_dims, bool) or not isinstance(n_dims, numbers.Integral)
                or n_dims < 1):
            raise ValueError(f"n_dims must be an integer >= 1; got {n_dims!r}")
        self.n_dims = int(n_dims)
        self.costs = check_costs(costs, "costs")
        self.n_fidelities = int(self.costs.size)
        self.capital = None if capital is None else check_positive(capital, "capital")
        self.random_state = random_state
        self.rng_ = np.random.default_rng(random_state)
        d = self.n_dims
        self.X_ = np.empty((0, d))
        self.fidelities_ = np.empty(0, dtype=np.int64)
        self.rewards_ = np.empty(0)
        self.pull_costs_ = np.empty(0)
        # 0 pending, 1 told, 2 cancelled, 3 evidence (told from outside: add_evidence)
        self.status_ = np.empty(0, dtype=np.int8)
        self.spent_ = 0.0
        self.n_rounds = 0

    #: Points per batch that :meth:`ask` aims for when called without ``n``.
    batch_size: int = 1

    # -- protocol -------------------------------------------------------------
    def ask(self, n: int | None = None) -> Pulls:
        """Return the next points to evaluate (empty when done or waiting on results).

        Parameters
        ----------
        n : int, optional
            Points the caller can evaluate in parallel; default :attr:`batch_size`.
            An initial design is asked whole, whatever ``n``.
        """
        if self.done:
            return Pulls.empty()
        n = self.batch_size if n is None else check_batch_size(n, "n")
        points, fids = self._propose(n)
        if points is None or len(points) == 0:
            return Pulls.empty()
        points = check_unit_points(points, self.n_dims, "proposed points")
        fids = np.broadcast_to(np.asarray(fids, dtype=np.int64), (points.shape[0],))
        start = self.X_.shape[0]
        self.X_ = np.vstack([self.X_, points])
        self.fidelities_ = np.concatenate([self.fidelities_, fids])
        self.rewards_ = np.concatenate([self.rewards_, np.full(len(fids), np.nan)])
        self.pull_costs_ = np.concatenate([self.pull_costs_, np.zeros(len(fids))])
        self.status_ = np.concatenate([self.status_, np.zeros(len(fids), dtype=np.int8)])
        return Pulls(np.arange(start, start + len(fids)), fids, points)

    def tell(self, pulls: Pulls, rewards, costs=None) -> None:
        """Record results of outstanding pulls.

        Parameters
        ----------
        pulls : Pulls
            Pulls previously returned by :meth:`ask` (any subset, any order).
        rewards : array-like of float, shape (n,)
            Observed values (higher is better), finite.
        costs : array-like of float, shape (n,), optional
            Measured costs; default the nominal cost of each fidelity.
        """
        rewards, costs = self._results(pulls.fidelities, rewards, costs, "pull")
        idx = pulls.arms
        if (np.any(idx < 0) or np.any(idx >= self.status_.size)
                or np.any(self.status_[idx] != 0) or np.unique(idx).size != idx.size
                or np.any(self.fidelities_[idx] != pulls.fidelities)):
            raise ValueError("tell() received a pull that was not asked (or was told twice)")
        self.rewards_[idx] = rewards
        self.pull_costs_[idx] = costs
        self.status_[idx] = 1
        self.spent_ += float(costs.sum())
        self.n_rounds += 1
        self._after_tell(pulls, rewards, costs)

    def add_evidence(self, points, fidelities, rewards, costs=None) -> None:
        """Record results obtained outside the policy, before its first :meth:`ask`.

        Evidence (e.g. the tuner's calibration) joins the data the policy
        models (:meth:`observations`) and answers :meth:`recommend` until the
        first told pull, but is not one of its pulls: :meth:`history`,
        :meth:`summary` and the capital leave it out.

        Parameters
        ----------
        points : array-like, shape (n, n_dims)
            Unit-cube points.
        fidelities : array-like of int, shape (n,)
        rewards : array-like of float, shape (n,)
            Finite values (higher is better).
        costs : array-like of float, shape (n,), optional
            What they cost; default the nominal cost of each fidelity.
        """
        if self.status_.size:
            raise ValueError("add_evidence() must come before the first ask()")
        pts = check_unit_points(points, self.n_dims)
        fids = np.asarray(fidelities).reshape(-1)
        if fids.size != len(pts):
            raise ValueError(f"fidelities must have one entry per point ({len(pts)}); "
                             f"got {fids.size}")
        if fids.size and (not np.issubdtype(fids.dtype, np.integer) or fids.min() < 0
                          or fids.max() >= self.n_fidelities):
            raise ValueError(f"fidelities must be integers in 0..{self.n_fidelities - 1}; "
                             f"got {fids.tolist()}")
        rewards, costs = self._results(fids, rewards, costs, "point")
        self.X_ = pts.copy()
        self.fidelities_ = fids.astype(np.int64)
        self.rewards_ = rewards.copy()
        self.pull_costs_ = costs.copy()
        self.status_ = np.full(len(pts), 3, dtype=np.int8)

    def _results(self, fids, rewards, costs, what: str) -> tuple[np.ndarray, np.ndarray]:
        """``rewards`` and ``costs`` (default nominal) checked: one finite entry per ``what``."""
        n = len(fids)
        rewards = np.asarray(rewards, dtype=float).reshape(-1)
        if rewards.size != n:
            raise ValueError(f"rewards must have one entry per {what} ({n}); got {rewards.size}")
        if not np.all(np.isfinite(rewards)):
            raise ValueError("rewards must be finite; record failures with a finite error score")
        costs = self.costs[fids] if costs is None else np.asarray(costs, dtype=float).reshape(-1)
        if costs.size != n:
            raise ValueError(f"costs must have one entry per {what} ({n}); got {costs.size}")
        return rewards, costs

    @property
    def n_evidence(self) -> int:
        """Entries of the history recorded by :meth:`add_evidence` (they come first)."""
        return int(np.sum(self.status_ == 3))

    def _known(self) -> np.ndarray:
        """Mask of the history entries with a result: told pulls and evidence."""
        return (self.status_ == 1) | (self.status_ == 3)

    def cancel(self, pulls: Pulls) -> None:
        """Forget outstanding pulls that will not be run."""
        idx = pulls.arms
        if np.any(idx >= self.status_.size) or np.any(self.status_[idx] != 0):
            raise ValueError("cancel() received a pull that is not outstanding")
        self.status_[idx] = 2
        self._after_cancel(pulls)

    @property
    def done(self) -> bool:
        """Whether the capital is spent (always ``False`` when ``capital`` is None)."""
        return self.capital is not None and self.spent_ >= self.capital

    def nominal_costs(self) -> np.ndarray:
        """Per-fidelity costs the policy plans with."""
        return self.costs

    @property
    def n_pending(self) -> int:
        """Number of asked pulls whose results have not been told yet."""
        return int(np.sum(self.status_ == 0))

    def recommend(self) -> int:
        """History index of the best told pull at the highest fidelity the pulls reached;
        before the first told pull, of the best evidence (-1: neither)."""
        told = self.status_ == 1
        if not told.any():
            told = self.status_ == 3
        if not told.any():
            return -1
        top = self.fidelities_[told].max()
        cand = np.flatnonzero(told & (self.fidelities_ == top))
        return int(cand[np.argmax(self.rewards_[cand])])

    def recommend_point(self) -> np.ndarray | None:
        """Unit-cube coordinates of :meth:`recommend` (``None`` before any result)."""
        i = self.recommend()
        return None if i < 0 else self.X_[i].copy()

    # -- data access ------------------------------------------------------------
    def observations(self, fidelity: int, evidence: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Points and rewards known at ``fidelity``: the evidence (unless ``evidence`` is
        False), then the told pulls in order of asking."""
        known = self._known() if evidence else self.status_ == 1
        mask = known & (self.fidelities_ == fidelity)
        return self.X_[mask], self.rewards_[mask]

    def pending_points(self, fidelity: int) -> np.ndarray:
        """Points asked at ``fidelity`` whose results have not been told, in order of asking."""
        return self.X_[(self.status_ == 0) & (self.fidelities_ == fidelity)]

    def history(self) -> dict:
        """Every told pull in asking order: points, fidelities, rewards, costs, cum. cost."""
        told = self.status_ == 1
        costs = self.pull_costs_[told]
        return {"points": self.X_[told].copy(), "fidelities": self.fidelities_[told].copy(),
                "rewards": self.rewards_[told].copy(), "costs": costs.copy(),
                "cum_cost": np.cumsum(costs)}

    def summary(self) -> PolicySummary:
        """Pulls and cost per fidelity (no eliminations for continuous policies)."""
        told = self.status_ == 1
        M = self.n_fidelities
        return PolicySummary(
            pulls_per_fidelity=np.bincount(self.fidelities_[told], minlength=M),
            cost_per_fidelity=np.bincount(self.fidelities_[told], self.pull_costs_[told],
                                          minlength=M),
            eliminated_round=np.empty(0, dtype=np.int64),
            eliminated_fidelity=np.empty(0, dtype=np.int64),
            n_rounds=self.n_rounds,
            recommendation=self.recommend(),
            done=bool(self.done),
            extra=self._summary_extra(),
        )

    # -- hooks ----------------------------------------------------------------
    @abstractmethod
    def _propose(self, n: int) -> tuple[np.ndarray | None, np.ndarray]:
        """Return ``(points (k, d), fidelities (k,))`` to ask now (``None``: wait).

        ``k`` is ``n`` for a batch rule, else the policy's natural batch.
        """

    def _after_tell(self, pulls: Pulls, rewards: np.ndarray,  # noqa: B027
                    costs: np.ndarray) -> None:
        """Update the decision state once the history holds the new rewards."""

    def _after_cancel(self, pulls: Pulls) -> None:  # noqa: B027
        """React to cancelled pulls (default: nothing; they are not re-asked)."""

    def _summary_extra(self) -> dict:
        return {}

    def _check_fidelity(self, fidelity, name: str = "fidelity") -> int:
        if (isinstance(fidelity, bool) or not isinstance(fidelity, numbers.Integral)
                or not 0 <= fidelity < self.n_fidelities):
            raise ValueError(
                f"{name} must be an integer in 0..{self.n_fidelities - 1}; got {fidelity!r}"
            )
        return int(fidelity)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(n_dims={self.n_dims}, "
                f"n_fidelities={self.n_fidelities}, capital={self.capital})")
