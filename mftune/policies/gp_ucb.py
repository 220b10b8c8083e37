"""GP-UCB on one fidelity (Srinivas et al., 2010) — the single-fidelity baseline.

The Gaussian process, refit schedule, initial design and acquisition
maximiser are those of :class:`~mftune.policies.mf_gp_ucb.MFGPUCB`, so the
comparison isolates the multi-fidelity rule. The authors' GP-UCB baseline
starts with 10 points at the target fidelity [code]; docs/algorithms.md.

Batch rule (``batch_size`` / ``ask(n)``): after the initial design, a batch
of ``n`` points is chosen one at a time, each maximising the acquisition of
the GP that believes the batch's earlier points observed at their posterior
means (:meth:`~mftune.policies.gp.FidelityGP.believing`; for EI the
incumbent includes the believed values). Each point counts as one iteration
``t`` of ``β_t``; ``n = 1`` is the sequential algorithm. Points asked earlier
and still outstanding are believed the same way, so a pool of workers whose
results come back one at a time gets a new point at every ask; the GP is
refit on every result told (only the initial design is waited for whole).
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_batch_size
from ..radii import gp_ucb_beta
from .base import Pulls
from .continuous import ContinuousPolicy
from .gp import FidelityGP, init_design, maximise_acquisition, single_threaded_blas

__all__ = ["GPUCB", "SingleFidelityGPPolicy"]


class SingleFidelityGPPolicy(ContinuousPolicy):
    """Base of GP policies that query one fidelity: initial design, then argmax of
    :meth:`acquisition` with a GP refit every ``refit_every`` iterations.

    Parameters
    ----------
    n_dims : int
    costs : array-like, shape (M,)
    capital : float, optional
    fidelity : int, optional
        The fidelity queried (default: the target ``M - 1``).
    n_init : int, default=10
        Initial design size (its cost counts).
    init_method : {"lhs", "kmeans", "uniform"}, default="lhs"
    kernel, prior_mean, noise_variance, noise_ratio, ard
        See :class:`~mftune.policies.gp.FidelityGP`.
    refit_every : int, default=25
    acq_method : {"lbfgsb", "direct"}, default="lbfgsb"
    n_candidates : int, optional
    n_starts : int, default=2
    batch_size : int, default=1
        Points per ask after the initial design (see the module's batch rule).
    random_state : int, Generator or None
    """

    def __init__(self, n_dims: int, costs, capital: float | None = None, *,
                 fidelity: int | None = None, n_init: int = 10, init_method: str = "lhs",
                 kernel: str = "rbf", prior_mean: str = "mean",
                 noise_variance: float | None = None, noise_ratio: float = 1e-6,
                 ard: bool = False, refit_every: int = 25,
                 acq_method: str = "lbfgsb", n_candidates: int | None = None,
                 n_starts: int = 2, batch_size: int = 1, random_state=None):
        super().__init__(n_dims, costs, capital, random_state)
        self.batch_size = check_batch_size(batch_size)
        self.fidelity = (self.n_fidelities - 1 if fidelity is None
                         else self._check_fidelity(fidelity))
        if (isinstance(n_init, bool) or not isinstance(n_init, numbers.Integral)
                or n_init < 1):
            raise ValueError(f"n_init must be an integer >= 1; got {n_init!r}")
        if int(refit_every) != refit_every or refit_every < 1:
            raise ValueError(f"refit_every must be a positive integer; got {refit_every!r}")
        if acq_method not in ("lbfgsb", "direct"):
            raise ValueError(f"acq_method must be one of 'lbfgsb', 'direct'; got {acq_method!r}")
        self.n_init, self.init_method = int(n_init), init_method
        self.refit_every = int(refit_every)
        self.acq_method, self.n_candidates, self.n_starts = acq_method, n_candidates, n_starts
        self.gp_ = FidelityGP(self.n_dims, kernel, prior_mean, noise_variance,
                              noise_ratio=noise_ratio, ard=ard)
        self._init_X = init_design(self.n_init, self.n_dims, self.rng_, init_method)
        self._init_asked = False
        self.t_ = 0
        self._since_refit = 0
        self._believed = np.empty(0)  # posterior means believed for a batch's earlier points

    def acquisition(self, X) -> np.ndarray:
        """Acquisition values at the rows of ``X`` (higher is better)."""
        raise NotImplementedError

    def _data(self):
        return self.observations(self.fidelity)

    def incumbent(self) -> float:
        """Best value observed (or believed, within a batch) at the queried fidelity."""
        _, y = self._data()
        values = np.r_[y, self._believed]
        return float(values.max()) if values.size else 0.0

    @single_threaded_blas
    def _propose(self, n: int):
        if self.n_pending and self.gp_.gpr_ is None:
            return None, None  # the initial design is outstanding: nothing to believe yet
        if not self._init_asked:
            self._init_asked = True
            return self._init_X, np.full(self.n_init, self.fidelity)
        return self._batch(n), np.full(n, self.fidelity)

    def _batch(self, n: int) -> np.ndarray:
        """``n`` points chosen one at a time, believing the outstanding ones and the
        batch's earlier ones (kriging believer)."""
        X, y = self._data()
        gp, chosen = self.gp_, []
        waiting = self.pending_points(self.fidelity)
        try:
            for _ in range(n):
                pending = np.vstack([waiting, np.reshape(chosen, (-1, self.n_dims))])
                if pending.size:
                    self.gp_ = gp.believing(pending)
                    self._believed = self.gp_.predict(pending)[0]
                chosen.append(self._next_point(X, y, pending))
        finally:
            self.gp_, self._believed = gp, np.empty(0)
        return np.array(chosen)

    def _next_point(self, X, y, pending) -> np.ndarray:
        """Argmax of the acquisition, nudged off points already observed or pending."""
        self.t_ += 1
        extra = X[np.argsort(-y)[:3]] if y.size else None
        x, _ = maximise_acquisition(self.acquisition, self.n_dims, self.rng_,
                                    method=self.acq_method, n_candidates=self.n_candidates,
                                    n_starts=self.n_starts, extra_candidates=extra,
                                    unit=self.gp_.unit_)
        seen = np.vstack([X, pending])
        h = self.gp_.min_length_scale
        if seen.size and np.min(np.abs(seen - x).max(axis=1)) < 1e-4 * h:
            step = min(h, 0.1) / 2
            x = np.clip(x + self.rng_.uniform(-step, step, size=x.shape), 0.0, 1.0)
        return x

    @single_threaded_blas
    def _after_tell(self, pulls: Pulls, rewards, costs) -> None:
        if self.n_pending and self.gp_.gpr_ is None:
            return  # the first fit waits for the whole initial design
        X, y = self._data()
        self._since_refit += len(pulls)
        optimize = self._since_refit >= self.refit_every or self.gp_.gpr_ is None
        if optimize:
            self._since_refit = 0
        self.gp_.fit(X, y, optimize, self.rng_)

    def _summary_extra(self) -> dict:
        return {"iterations": self.t_, "fidelity": self.fidelity,
                "length_scale": self.gp_.length_scale_}


class GPUCB(SingleFidelityGPPolicy):
    """GP-UCB at one fidelity: ``x_t = argmax µ(x) + β_t^{1/2} σ(x)``.

    Parameters
    ----------
    beta : {"practical", "theory"}, default="practical"
        ``β_t`` of :func:`mftune.radii.gp_ucb_beta` (``0.2 d log(2 d t)`` [code]).
    delta : float, default=0.05
    **kwargs
        See :class:`SingleFidelityGPPolicy`.
    """

    def __init__(self, n_dims: int, costs, capital: float | None = None, *,
                 beta: str = "practical", delta: float = 0.05, **kwargs):
        if beta not in ("practical", "theory"):
            raise ValueError(f"beta must be one of 'practical', 'theory'; got {beta!r}")
        super().__init__(n_dims, costs, capital, **kwargs)
        self.beta, self.delta = beta, float(delta)

    def acquisition(self, X) -> np.ndarray:
        mu, sd = self.gp_.predict(np.atleast_2d(X))
        beta = float(gp_ucb_beta(max(self.t_, 1), self.n_dims, self.beta, self.delta))
        return mu + np.sqrt(beta) * sd
