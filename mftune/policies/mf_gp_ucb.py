"""MF-GP-UCB: multi-fidelity GP bandit optimisation (Kandasamy et al., NIPS 2016).

Algorithm 1 of the paper [paper] with the practical heuristics of its
section 5 and of the authors' MATLAB code [code, mfBO.m, acqMFGPUCB.m,
mfboPreProcessParams.m]; docs/algorithms.md is the specification.

Per fidelity ``m`` (0-based here, ``M - 1`` the target) an independent GP
built from fidelity-``m`` data gives ``µ^(m)``, ``σ^(m)``, and

    φ_t(x) = min_m ( µ^(m)(x) + β_t^{1/2} σ^(m)(x) + ζ^(m) )
    x_t    = argmax_x φ_t(x)
    m_t    = min{ m : β_t^{1/2} σ^(m)(x_t) ≥ γ^(m)  or  m = M - 1 }

Practical pieces (all on by default, each can be switched off):

* ``β_t = 0.2 d log(2 d t)`` [code] (``beta="theory"``: the Srinivas-type
  form, :func:`mftune.radii.gp_ucb_beta`);
* tied biases ``ζ^(m) = Σ_{l ≥ m} d_l``, initialised from the initial points
  evaluated at the two lowest fidelities, and grown on a violation: after a
  query at ``m_t > 0`` whose value is more than ``0.9 d`` away from the
  fidelity-``(m_t - 1)`` posterior mean, the same point is also queried at
  ``m_t - 1`` (its cost counts); if ``y_t - f^(m_t-1)(x_t) > 0.9 d`` then
  ``d_{m_t-1}`` becomes twice the violation and every ``d_l`` at least that
  [code; paper: "set ζ to twice the violation"];
* thresholds ``γ^(m)`` starting at 1% of the initial range [code], and
  ``γ^(m)`` multiplied by ``gamma_factor`` (2, the paper's "double"; the code
  uses 5) once the algorithm has not queried above fidelity ``m`` for more
  than ``λ^(m+1)/λ^(m)`` iterations [paper §5; ``gamma_rule="code"`` is the
  authors' shared-counter variant, which raised every threshold within the
  first 20 iterations on Hartmann-3D and pushed the search off the cheap
  fidelities — docs/gp.md];
* a GP nugget of ``1e-6 · var(y)`` (``noise_ratio``; the authors' ``1e-4``
  stalls near a sharp maximum) [RECON];
* initialisation [code "SimpleVersion"]: ``n1 = min(200, 10 M d,
  (10 λ^(M) - 5 λ^(2)) / λ^(1))`` k-means-spread points at fidelity 1, the
  first 5 of them also at fidelity 2; fidelities above 2 start empty. Its
  cost counts toward the capital;
* GP hyper-parameters by marginal likelihood every ``refit_every`` (25)
  iterations; between refits only the queried fidelity's posterior is
  refreshed with fixed hyper-parameters [code]. A fidelity with fewer than
  ``min(10, n_{m-1})`` points borrows fidelity ``m - 1``'s hyper-parameters.

Batch rule (``batch_size`` / ``ask(n)``, for ``n`` parallel workers) — ours,
not the paper's: queued queries (the initial design, whole; violation checks)
come first; the rest of the batch is filled with BO iterations chosen one at
a time, each pair ``(x_t, m_t)`` by the rule above on GPs that believe the
batch's earlier points observed at their posterior means, at their own
fidelities (:meth:`~mftune.policies.gp.FidelityGP.believing`, the kriging
believer). Believing leaves the means unchanged and shrinks ``σ^(m)`` near a
pending point, so ``φ_t`` drops there and the next point goes elsewhere.
Results are told in batch order, so ``γ``/``ζ`` adapt as in a sequential run
of the same queries. ``n = 1`` is Algorithm 1; replayable for a fixed ``n``.
Queries asked earlier and still outstanding are believed the same way, so a
pool of workers whose results come back one at a time gets a new query at
every ask (only the initial design is waited for whole).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_batch_size
from ..radii import gp_ucb_beta
from .base import Pulls
from .continuous import ContinuousPolicy
from .gp import FidelityGP, init_design, maximise_acquisition, single_threaded_blas

__all__ = ["MFGPUCB"]


def _ceil4(x: float) -> float:
    return float(np.ceil(1e4 * x) / 1e4)


class MFGPUCB(ContinuousPolicy):
    """Multi-fidelity GP-UCB on ``[0, 1]^d`` (Kandasamy et al., 2016).

    Parameters
    ----------
    n_dims : int
        Dimension ``d`` of the (unit-cube) domain.
    costs : array-like, shape (M,)
        Cost ``λ^(m)`` of one query at each fidelity, strictly increasing.
    capital : float, optional
        Stop once this much cost is spent (``None``: open-ended).
    zeta : array-like, shape (M,), optional
        Known bias bounds ``ζ^(m)`` (last entry 0). ``None`` (default):
        the adaptive rule above.
    gamma : array-like, shape (M - 1,), optional
        Initial thresholds ``γ^(m)``; default 1% of the initial range.
    adapt_gamma : bool, default=True
        Grow ``γ`` when stuck below the target fidelity.
    gamma_factor : float, default=2.0
        Growth factor of ``γ`` (paper: 2; authors' code: 5).
    gamma_rule : {"paper", "code", "level"}, default="paper"
        When ``γ^(m)`` grows. ``"paper"``: a counter per level ``m`` of the
        consecutive iterations that did not query above ``m``; past
        ``λ^(m+1)/λ^(m)`` only ``γ^(m)`` grows [paper §5]. ``"code"``: one
        shared counter of iterations below the target, reset only by a
        target query; the queried level grows and every threshold is raised
        to at least it [code, mfBO.m]. ``"level"``: like ``"paper"`` but only
        queries *at* ``m`` count (queries below ``m`` neither count nor
        reset) [RECON]. See docs/gp.md for the measured difference.
    beta : {"practical", "theory"}, default="practical"
    delta : float, default=0.05
        Failure probability of the theory ``β_t``.
    kernel : {"rbf", "matern"}, default="rbf"
    prior_mean : {"optimistic", "mean"}, default="optimistic"
    noise_variance : float, optional
        Known observation-noise variance (default ``noise_ratio · var(y)``).
    noise_ratio : float, default=1e-6
        Nugget relative to the data variance for noiseless objectives
        (:class:`~mftune.policies.gp.FidelityGP`; the authors' 1e-4 stalls
        on sharp maxima) [RECON].
    ard : bool, default=False
        One kernel length scale per dimension in every fidelity's GP
        [RECON option; the authors' kernel is isotropic]. See docs/gp.md for
        what it changes on the test functions.
    refit_every : int, default=25
        Iterations between marginal-likelihood refits.
    n_init : tuple (n1, n2), optional
        Initial points at fidelities 1 and 2 (default: the authors' rule).
    init_method : {"kmeans", "lhs", "uniform"}, default="kmeans"
    acq_method : {"lbfgsb", "direct"}, default="lbfgsb"
        Acquisition maximiser (:func:`mftune.policies.gp.maximise_acquisition`).
    n_candidates : int, optional
        Random candidates of the ``"lbfgsb"`` maximiser.
    n_starts : int, default=2
        L-BFGS-B starts.
    batch_size : int, default=1
        Queries per ask that the batch rule aims for (module docstring).
    random_state : int, Generator or None

    Attributes
    ----------
    zeta_ : ndarray, shape (M,)
        Current bias bounds ``ζ^(m)``.
    gamma_ : ndarray, shape (M - 1,)
        Current thresholds.
    t_ : int
        BO iterations after the initialisation.
    n_checks_ : int
        Extra lower-fidelity queries made by the violation check.
    gps_ : list of FidelityGP
    """

    def __init__(self, n_dims: int, costs, capital: float | None = None, *, zeta=None,
                 gamma=None, adapt_gamma: bool = True, gamma_factor: float = 2.0,
                 beta: str = "practical", delta: float = 0.05, kernel: str = "rbf",
                 prior_mean: str = "mean", noise_variance: float | None = None,
                 noise_ratio: float = 1e-6, ard: bool = False, refit_every: int = 25,
                 n_init: tuple[int, int] | None = None, init_method: str = "kmeans",
                 acq_method: str = "lbfgsb", n_candidates: int | None = None,
                 n_starts: int = 2, gamma_rule: str = "paper", batch_size: int = 1,
                 random_state=None):
        super().__init__(n_dims, costs, capital, random_state)
        self.batch_size = check_batch_size(batch_size)
        M = self.n_fidelities
        if M < 2:
            raise ValueError(f"costs must list at least 2 fidelities for MF-GP-UCB; got {M} "
                             "(use GPUCB for a single fidelity)")
        if beta not in ("practical", "theory"):
            raise ValueError(f"beta must be one of 'practical', 'theory'; got {beta!r}")
        if acq_method not in ("lbfgsb", "direct"):
            raise ValueError(f"acq_method must be one of 'lbfgsb', 'direct'; got {acq_method!r}")
        if gamma_rule not in ("code", "paper", "level"):
            raise ValueError("gamma_rule must be one of 'code', 'paper', 'level'; "
                             f"got {gamma_rule!r}")
        self.gamma_rule = gamma_rule
        if not gamma_factor > 1:
            raise ValueError(f"gamma_factor must be > 1; got {gamma_factor!r}")
        if int(refit_every) != refit_every or refit_every < 1:
            raise ValueError(f"refit_every must be a positive integer; got {refit_every!r}")
        self.known_zeta = zeta is not None
        if self.known_zeta:
            z = np.asarray(zeta, dtype=float).reshape(-1)
            if z.size != M or z[-1] != 0 or np.any(z < 0) or not np.all(np.isfinite(z)):
                raise ValueError(f"zeta must hold {M} finite non-negative bounds ending with 0; "
                                 f"got {zeta!r}")
            self._dz = np.maximum(z[:-1] - z[1:], 0.0)
        else:
            self._dz = np.zeros(M - 1)
        self.gamma_ = None
        if gamma is not None:
            g = np.asarray(gamma, dtype=float).reshape(-1)[: M - 1]
            if g.size != M - 1 or np.any(g <= 0) or not np.all(np.isfinite(g)):
                raise ValueError(f"gamma must hold {M - 1} positive thresholds; got {gamma!r}")
            self.gamma_ = g
        self.adapt_gamma = bool(adapt_gamma)
        self.gamma_factor = float(gamma_factor)
        self.beta, self.delta = beta, float(delta)
        self.refit_every = int(refit_every)
        self.acq_method, self.n_candidates, self.n_starts = acq_method, n_candidates, n_starts
        self.init_method = init_method
        self.gps_ = [FidelityGP(self.n_dims, kernel, prior_mean, noise_variance,
                                noise_ratio=noise_ratio, ard=ard)
                     for _ in range(M)]
        n1, n2 = self._init_sizes() if n_init is None else (int(n_init[0]), int(n_init[1]))
        if n1 < 1 or n2 < 0 or n2 > n1:
            raise ValueError(f"n_init must be (n1, n2) with 1 <= n1 and 0 <= n2 <= n1; "
                             f"got {n_init!r}")
        X1 = init_design(n1, self.n_dims, self.rng_, init_method)
        self._queue: list[tuple[np.ndarray, np.ndarray, tuple]] = [
            (np.vstack([X1, X1[:n2]]), np.r_[np.zeros(n1, int), np.ones(n2, int)], ("init",))
        ]
        self._tags: dict[int, tuple] = {}
        self._initialised = False
        self.t_ = 0
        self.n_checks_ = 0
        self.n_violations_ = 0
        self._stuck = 0
        self._stuck_at = np.zeros(M - 1, dtype=int)
        self._since_refit = 0

    # -- set-up -----------------------------------------------------------------
    def _init_sizes(self) -> tuple[int, int]:
        lam = self.costs
        n2 = int(np.floor(0.5 * 10 * lam[-1] / lam[-1]))  # = 5 [code]
        n1 = int(min(200, 10 * self.n_fidelities * self.n_dims,
                     np.floor((10 * lam[-1] - n2 * lam[1]) / lam[0])))
        return max(n1, n2, 1), n2

    @property
    def zeta_(self) -> np.ndarray:
        """Bias bounds ``ζ^(m) = Σ_{l ≥ m} d_l`` (0 at the target)."""
        return np.r_[np.cumsum(self._dz[::-1])[::-1], 0.0]

    def _finish_init(self) -> None:
        # from the initial design only, as the authors do; evidence (add_evidence) is data
        # for the GPs, not for these rules
        _, y0 = self.observations(0, evidence=False)
        _, y1 = self.observations(1, evidence=False)
        if not self.known_zeta and y1.size:
            # the fidelity-1 points are the first n2 fidelity-0 points
            diff = y1 - y0[: y1.size]
            self._dz[:] = _ceil4(2 * max(0.0, float(diff.max())))
        if self.gamma_ is None:
            yr = self.rewards_[self.status_ == 1]
            rng_y = float(yr.max() - yr.min()) if yr.size else 1.0
            self.gamma_ = np.full(self.n_fidelities - 1, max(_ceil4(0.01 * rng_y), 1e-4))
        self._refit(optimize=True)
        self._initialised = True

    # -- GP bookkeeping -----------------------------------------------------------
    def _fit_gp(self, m: int, optimize: bool) -> None:
        X, y = self.observations(m)
        gp = self.gps_[m]
        enough = m == 0 or y.size >= min(10, self.observations(m - 1)[1].size)
        if optimize and enough and y.size >= 2:
            gp.fit(X, y, True, self.rng_)
            return
        if m > 0 and not enough:
            gp.copy_hyperparameters(self.gps_[m - 1])
        gp.fit(X, y, False, self.rng_)

    def _refit(self, optimize: bool) -> None:
        for m in range(self.n_fidelities):
            self._fit_gp(m, optimize)
        self._since_refit = 0

    def _beta(self) -> float:
        return float(gp_ucb_beta(max(self.t_, 1), self.n_dims, self.beta, self.delta,
                                 self.n_fidelities))

    def _bounds(self, X, beta: float) -> tuple[np.ndarray, np.ndarray]:
        """Per-fidelity UCBs ``φ^(m)`` and widths ``β^{1/2} σ^(m)``, shape (M, n)."""
        zeta = self.zeta_
        ucb, width = [], []
        for m, gp in enumerate(self.gps_):
            mu, sd = gp.predict(X)
            w = np.sqrt(beta) * sd
            ucb.append(mu + w + zeta[m])
            width.append(w)
        return np.array(ucb), np.array(width)

    def acquisition(self, X) -> np.ndarray:
        """``φ_t(x) = min_m (µ^(m) + β_t^{1/2} σ^(m) + ζ^(m))`` at the rows of ``X``."""
        return self._bounds(np.atleast_2d(X), self._beta())[0].min(axis=0)

    # -- protocol hooks -------------------------------------------------------------
    @single_threaded_blas
    def _propose(self, n: int):
        if self.n_pending and not self._initialised:
            return None, None  # the initial design is outstanding: nothing to believe yet
        start = self.X_.shape[0]
        Xs, fs = [], []
        while self._queue and (not Xs or len(np.concatenate(fs)) < n):
            X, fids, tag = self._queue.pop(0)
            for i in range(len(fids)):
                self._tags[start + sum(map(len, fs)) + i] = tag
            Xs.append(X)
            fs.append(fids)
        n_bo = n - sum(map(len, fs)) if self._initialised else 0
        if n_bo > 0:
            X, fids = self._bo_batch(n_bo)
            for i in range(len(fids)):
                self._tags[start + sum(map(len, fs)) + i] = ("bo",)
            Xs.append(X)
            fs.append(fids)
        if not Xs:  # the initial design was cancelled before it was told
            return None, None
        return np.vstack(Xs), np.concatenate(fs)

    def _bo_batch(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``n`` BO iterations, each believing the outstanding queries and the batch's
        earlier ones at their fidelities."""
        gps = list(self.gps_)
        pts: list[list[np.ndarray]] = [list(self.pending_points(m)) for m in range(len(gps))]
        X, fids = [], []
        try:
            for m, waiting in enumerate(pts):
                if waiting:
                    self.gps_[m] = gps[m].believing(np.array(waiting))
            for _ in range(n):
                x, m_t = self._bo_point(pts)
                X.append(x)
                fids.append(m_t)
                pts[m_t].append(x)
                self.gps_[m_t] = gps[m_t].believing(np.array(pts[m_t]))
        finally:
            self.gps_ = gps
        return np.array(X), np.array(fids, dtype=np.int64)

    def _bo_point(self, pending) -> tuple[np.ndarray, int]:
        """One iteration of Algorithm 1: ``x_t = argmax φ_t`` and its fidelity ``m_t``."""
        self.t_ += 1
        beta = self._beta()
        extra = []
        for m in range(self.n_fidelities):
            Xm, ym = self.observations(m)
            if ym.size:
                extra.append(Xm[np.argsort(-ym)[:3]])
        x, _ = maximise_acquisition(self.acquisition, self.n_dims, self.rng_,
                                    method=self.acq_method, n_candidates=self.n_candidates,
                                    n_starts=self.n_starts,
                                    extra_candidates=np.vstack(extra) if extra else None,
                                    unit=self.gps_[-1].unit_)
        _, width = self._bounds(x[None, :], beta)
        above = np.flatnonzero(width[:-1, 0] >= self.gamma_)
        m_t = int(above[0]) if above.size else self.n_fidelities - 1
        return self._avoid_duplicate(x, m_t, pending[m_t]), m_t

    def _avoid_duplicate(self, x: np.ndarray, m: int, pending=()) -> np.ndarray:
        """Perturb ``x`` if it repeats a fidelity-``m`` point, told or pending (noiseless GPs)
        [code]."""
        Xm, _ = self.observations(m)
        Xm = np.vstack([Xm, np.reshape(pending, (-1, self.n_dims))])
        h = self.gps_[m].min_length_scale
        if Xm.size and np.min(np.abs(Xm - x).max(axis=1)) < 1e-4 * h:
            step = min(h, 0.1) / 2
            x = np.clip(x + self.rng_.uniform(-step, step, size=x.shape), 0.0, 1.0)
        return x

    @single_threaded_blas
    def _after_tell(self, pulls: Pulls, rewards, costs) -> None:
        if not self._initialised:
            if self.n_pending == 0 and not self._queue:
                self._finish_init()
            return
        refresh = set()
        for idx, m, y in zip(pulls.arms.tolist(), pulls.fidelities.tolist(),
                             rewards.tolist(), strict=True):
            tag = self._tags.pop(idx, ("bo",))
            x = self.X_[idx]
            if tag[0] == "check":
                self._check_violation(m, tag[1], y)
            else:
                self._after_bo_query(x, m, y)
                self._since_refit += 1
            refresh.add(m)
        if self._since_refit >= self.refit_every:
            self._refit(optimize=True)
        else:
            for m in sorted(refresh):
                self._fit_gp(m, optimize=False)
                # an empty fidelity above borrows this one's prior
                for up in range(m + 1, self.n_fidelities):
                    if self.gps_[up].n_obs_ == 0:
                        self.gps_[up].copy_hyperparameters(self.gps_[up - 1])

    def _after_bo_query(self, x, m: int, y: float) -> None:
        M = self.n_fidelities
        if self.adapt_gamma and self.gamma_rule in ("paper", "level"):
            levels = np.arange(M - 1)
            count = (m <= levels) if self.gamma_rule == "paper" else (m == levels)
            self._stuck_at = np.where(m > levels, 0, self._stuck_at + count)
            grow = self._stuck_at > self.costs[1:] / self.costs[:-1]
            self.gamma_[grow] *= self.gamma_factor
            self._stuck_at[grow] = 0
        elif self.adapt_gamma:
            if m < M - 1:
                self._stuck += 1
                if self._stuck >= self.costs[m + 1] / self.costs[m]:
                    self.gamma_[m] *= self.gamma_factor
                    self.gamma_ = np.maximum(self.gamma_, self.gamma_[m])
                    self._stuck = 0
            else:
                self._stuck = 0
        if not self.known_zeta and m > 0:
            mu_low, _ = self.gps_[m - 1].predict(x[None, :])
            if abs(y - float(mu_low[0])) > 0.9 * self._dz[m - 1]:
                self._queue.append((x[None, :].copy(), np.array([m - 1]), ("check", y)))
                self.n_checks_ += 1

    def _check_violation(self, m_low: int, y_ref: float, y_low: float) -> None:
        diff = y_ref - y_low
        if diff > 0.9 * self._dz[m_low]:
            self.n_violations_ += 1
            self._dz[m_low] = 2 * _ceil4(diff)
            self._dz = np.maximum(self._dz, self._dz[m_low])

    def _summary_extra(self) -> dict:
        return {"zeta": self.zeta_.tolist(),
                "gamma": None if self.gamma_ is None else self.gamma_.tolist(),
                "iterations": self.t_, "checks": self.n_checks_,
                "violations": self.n_violations_, "known_zeta": self.known_zeta}
