"""Gaussian-process building blocks shared by the GP policies.

scikit-learn is imported lazily, so ``import mftune`` stays light.

* :class:`FidelityGP` — one scikit-learn ``GaussianProcessRegressor`` on one
  fidelity's data: isotropic SE (RBF) or Matérn kernel, hyper-parameters by
  marginal likelihood when :meth:`FidelityGP.fit` is called with
  ``optimize=True``, and with the learnt kernel held fixed
  (``optimizer=None``) otherwise — the authors refit every 25 iterations and
  only refresh the posterior in between [code, mfBO.m].
* :func:`maximise_acquisition` — argmax of a vectorised acquisition over
  ``[0, 1]^d`` with ``scipy.optimize`` (random candidates then multi-start
  L-BFGS-B, or ``scipy.optimize.direct``); no hand-written optimiser.
* :func:`init_design` — initial points: k-means centres of uniform points, as
  the authors' "SimpleVersion" initialisation [code], or a Latin hypercube.
* :meth:`FidelityGP.believing` — the posterior with pending points observed
  at their posterior means (the "kriging believer" constant liar of Ginsbourger
  et al., 2010), which the GP policies use to fill a batch of parallel queries.

Values of any finite magnitude can be modelled: the regressor works on
``y / unit_``, ``unit_`` a power of two (:func:`value_unit`) that is 1 for
values below ``2**128`` in magnitude, so ordinary objectives are modelled on
their own values; larger ones (``var(y)`` overflows near 1e154) are scaled
exactly.
"""

from __future__ import annotations

import copy
import functools
import math
import warnings

import numpy as np
from scipy.linalg import solve_triangular
from scipy.optimize import direct, minimize
from scipy.stats import qmc

__all__ = ["FidelityGP", "init_design", "maximise_acquisition", "single_threaded_blas"]

KERNELS = ("rbf", "matern")
PRIOR_MEANS = ("optimistic", "mean")


def single_threaded_blas(method):
    """Run a policy method with BLAS limited to one thread.

    The GP systems here are small (at most a few hundred points); on a busy
    machine a multi-threaded BLAS spends far longer synchronising threads
    than computing (we measured a 4x slower MF-GP-UCB step with two threads
    on a loaded 2-core machine). ``threadpoolctl`` ships with scikit-learn.
    """
    from threadpoolctl import threadpool_limits

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return method(*args, **kwargs)

    return wrapper


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(2**31 - 1))


def value_unit(y) -> float:
    """The unit ``2**(128 j)`` in which a GP models values ``y``: the smallest that brings
    them below ``2**128`` in magnitude (1.0 for any ordinary objective).

    Dividing by a power of two is exact, so a run on ``y · 2**(128 k)`` is the run on
    ``y`` scaled, and nothing in the fit (``var(y)``, the nugget, the prior mean)
    overflows for values up to the largest finite ones.
    """
    top = float(np.max(np.abs(y))) if np.size(y) else 0.0
    if not np.isfinite(top) or top < 2.0**128:
        return 1.0
    exponent = int(np.frexp(top)[1])  # top < 2**exponent
    return float(np.ldexp(1.0, 128 * math.ceil((exponent - 128) / 128)))


class FidelityGP:
    """A GP posterior for one fidelity, in unit-cube coordinates.

    Parameters
    ----------
    n_dims : int
        Dimension ``d``.
    kernel : {"rbf", "matern"}, default="rbf"
        Isotropic squared-exponential (the authors' choice) or Matérn-5/2,
        times a constant amplitude.
    prior_mean : {"optimistic", "mean"}, default="optimistic"
        Constant prior mean: ``max(y) + 2 (max(y) - min(y))`` as in the
        authors' code for UCB methods [code], or the data mean (for EI).
    noise_variance : float, optional
        Known observation-noise variance added to the kernel diagonal;
        default ``noise_ratio · var(y)`` at each hyper-parameter fit.
    n_restarts : int, default=2
        Extra random restarts of scikit-learn's marginal-likelihood optimiser.
    ard : bool, default=False
        One length scale per dimension (automatic relevance determination)
        instead of the authors' single isotropic one [RECON option]. A
        sharp, elongated maximum (Hartmann-3D's peak is 100x flatter along
        ``x1`` than along ``x3``) is learnt from a few points only with it.
    noise_ratio : float, default=1e-6
        Nugget relative to the data variance when ``noise_variance`` is not
        given. The authors use ``1e-4 · var(Y_init)`` [code] with a kernel
        scale of at least ``range(Y_init)``; with our marginal-likelihood
        amplitude (about ``var(y)``) that nugget is a noise s.d. of 1% of the
        data s.d., which hides the last 1e-3 of a sharp maximum (Hartmann-3D
        runs stalled at regret 3e-3; docs/gp.md). ``1e-6`` is our choice for
        noiseless objectives [RECON]; pass ``noise_variance`` for noisy ones.

    Attributes
    ----------
    unit_ : float
        The power of two the regressor divides ``y`` by (:func:`value_unit` of
        the values of the last fit; 1.0 for ordinary objectives).
    amplitude_ : float
        Learnt signal variance, in the units of ``unit_``² (``y``² for
        ordinary objectives); ``alpha_``, the nugget, likewise.
    length_scale_ : float or ndarray of shape (n_dims,)
        Learnt length scale (unit-cube units); one per dimension with ``ard``.
    """

    def __init__(self, n_dims: int, kernel: str = "rbf", prior_mean: str = "mean",
                 noise_variance: float | None = None, n_restarts: int = 2,
                 noise_ratio: float = 1e-6, ard: bool = False):
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {', '.join(KERNELS)}; got {kernel!r}")
        if prior_mean not in PRIOR_MEANS:
            raise ValueError(
                f"prior_mean must be one of {', '.join(PRIOR_MEANS)}; got {prior_mean!r}"
            )
        self.n_dims = int(n_dims)
        self.kernel = kernel
        self.prior_mean = prior_mean
        self.noise_variance = noise_variance
        self.n_restarts = int(n_restarts)
        if not (np.isfinite(noise_ratio) and noise_ratio > 0):
            raise ValueError(f"noise_ratio must be a positive finite number; got {noise_ratio!r}")
        self.noise_ratio = float(noise_ratio)
        root_d = np.sqrt(self.n_dims)
        self._ls_bounds = (1e-2 * root_d, 10.0 * root_d)
        self.amplitude_ = 1.0
        self.ard = bool(ard)
        self.length_scale_ = np.full(self.n_dims, 0.3 * root_d) if self.ard else 0.3 * root_d
        self.alpha_ = 1e-6
        self.unit_ = 1.0
        self._learnt = False  # amplitude and nugget still the unit-free defaults
        self.prior_ = 0.0
        self.n_obs_ = 0
        self.gpr_ = None  # sklearn GaussianProcessRegressor once fitted

    def _make_kernel(self, amplitude, length_scale, amp_bounds="fixed", ls_bounds="fixed"):
        from sklearn.gaussian_process.kernels import RBF, Matern
        from sklearn.gaussian_process.kernels import ConstantKernel as C

        if self.kernel == "rbf":
            base = RBF(length_scale, length_scale_bounds=ls_bounds)
        else:
            base = Matern(length_scale, length_scale_bounds=ls_bounds, nu=2.5)
        return C(amplitude, constant_value_bounds=amp_bounds) * base

    def set_prior(self, y) -> None:
        """Set the constant prior mean from values ``y`` (used when this fidelity is empty)."""
        y = np.asarray(y, dtype=float)
        if y.size == 0:
            return
        unit = value_unit(y)
        y = y / unit
        if self.prior_mean == "optimistic":
            self.prior_ = float(y.max() + 2.0 * (y.max() - y.min())) * unit
        else:
            self.prior_ = float(y.mean()) * unit

    @property
    def min_length_scale(self) -> float:
        """The shortest length scale (the isotropic one without ``ard``)."""
        return float(np.min(self.length_scale_))

    def copy_hyperparameters(self, other: FidelityGP) -> None:
        """Take amplitude, length scale, noise, prior and unit from another fidelity's GP."""
        self.amplitude_, self.length_scale_ = other.amplitude_, other.length_scale_
        self.alpha_, self.prior_, self.unit_ = other.alpha_, other.prior_, other.unit_
        self._learnt = other._learnt

    def _set_unit(self, unit: float) -> None:
        """Model values in ``unit`` from now on; learnt amplitude and nugget are converted."""
        if unit != self.unit_ and self._learnt:
            ratio = (self.unit_ / unit) ** 2
            self.amplitude_, self.alpha_ = self.amplitude_ * ratio, self.alpha_ * ratio
        self.unit_ = unit

    def fit(self, X, y, optimize: bool, rng: np.random.Generator) -> FidelityGP:
        """Condition on ``(X, y)``; learn the hyper-parameters when ``optimize``.

        The marginal likelihood is maximised on the centred data (bounds:
        amplitude in ``[1e-2, 1e2]·var(y)``, length scale in
        ``[1e-2, 10]·sqrt(d)``); the posterior then uses the learnt kernel
        with the prior mean chosen by ``prior_mean``. Both work on
        ``y / unit_`` (the module docstring).
        """
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.gaussian_process import GaussianProcessRegressor

        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float)
        self.n_obs_ = y.size
        if y.size == 0:
            self.gpr_ = None
            return self
        self.set_prior(y)
        self._set_unit(value_unit(y))
        y, prior = y / self.unit_, self.prior_ / self.unit_
        noise = None if self.noise_variance is None else self.noise_variance / self.unit_**2
        var = float(y.var()) if y.size > 1 else 0.0
        if optimize and y.size >= 2 and var > 0:
            self.alpha_ = noise if noise is not None else max(self.noise_ratio * var, 1e-10)
            kern = self._make_kernel(var, np.clip(self.length_scale_, *self._ls_bounds),
                                     (1e-2 * var, 1e2 * var), self._ls_bounds)
            seed = _seed(rng)
            for _ in range(4):
                gpr = GaussianProcessRegressor(kern, alpha=self.alpha_, normalize_y=False,
                                               n_restarts_optimizer=self.n_restarts,
                                               random_state=seed)
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", ConvergenceWarning)
                        gpr.fit(X, y - y.mean())
                    self.amplitude_ = float(gpr.kernel_.k1.constant_value)
                    self._learnt = True
                    ls = np.asarray(gpr.kernel_.k2.length_scale, dtype=float)
                    self.length_scale_ = ls.copy() if self.ard else float(ls)
                    break
                except np.linalg.LinAlgError:
                    self.alpha_ *= 100.0
        elif optimize and self.noise_variance is None and var > 0:
            self.alpha_ = max(self.noise_ratio * var, 1e-10)
        kern = self._make_kernel(self.amplitude_, self.length_scale_)
        for _ in range(4):  # a tiny nugget can meet near-duplicate points: grow it
            try:
                self.gpr_ = GaussianProcessRegressor(kern, alpha=self.alpha_, optimizer=None,
                                                     normalize_y=False).fit(X, y - prior)
                break
            except np.linalg.LinAlgError:
                self.alpha_ = max(100.0 * self.alpha_, 1e-10 * self.amplitude_)
        else:
            raise np.linalg.LinAlgError("GP kernel matrix not positive definite")
        return self

    def believing(self, X_pending) -> FidelityGP:
        """A copy whose posterior also holds ``X_pending``, observed at their posterior means.

        The kriging believer [Ginsbourger, Le Riche & Carraro, 2010]: the
        hyper-parameters, the prior mean and the posterior mean are unchanged,
        while the posterior variance shrinks at and near the pending points,
        so an acquisition maximised next looks elsewhere. The believed values
        are taken as exact (a ``1e-8`` relative jitter, grown if the kernel
        matrix is singular, instead of the noise variance): with the noise, a
        point where ``σ²`` is already below the noise keeps almost all of its
        variance and the next point of a batch lands next to it (measured on
        Currin with a ``1e-4 var(y)`` noise: 8e-4 apart). ``self`` is not
        modified.

        Parameters
        ----------
        X_pending : array-like of shape (n, d)
            Points asked but not yet observed.

        Returns
        -------
        FidelityGP
        """
        from sklearn.gaussian_process import GaussianProcessRegressor

        Xp = np.atleast_2d(np.asarray(X_pending, dtype=float))
        out = copy.copy(self)
        if Xp.shape[0] == 0:
            return out
        mu, _ = self.predict(Xp)
        mu = (mu - self.prior_) / self.unit_  # in the regressor's units
        if self.gpr_ is None:
            X, y, noise = Xp, mu, np.empty(0)
        else:
            X = np.vstack([self.gpr_.X_train_, Xp])
            y = np.r_[self.gpr_.y_train_, mu]
            noise = np.broadcast_to(self.gpr_.alpha, self.gpr_.y_train_.shape)
        kern = self._make_kernel(self.amplitude_, self.length_scale_)
        jitter = 1e-8 * self.amplitude_
        for _ in range(4):  # pending points close to data: grow the jitter
            try:
                out.gpr_ = GaussianProcessRegressor(
                    kern, alpha=np.r_[noise, np.full(Xp.shape[0], jitter)], optimizer=None,
                    normalize_y=False).fit(X, y)
                break
            except np.linalg.LinAlgError:
                jitter *= 100.0
        else:
            raise np.linalg.LinAlgError("GP kernel matrix not positive definite")
        out.n_obs_ = X.shape[0]
        return out

    def predict(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and standard deviation at the rows of ``X``.

        Computed from the fitted regressor's public attributes (``L_``,
        ``alpha_``, ``X_train_``, ``kernel_``) exactly as
        ``GaussianProcessRegressor.predict(return_std=True)`` does, without
        its per-call input validation, which dominates for the few-point
        calls of an acquisition optimiser.
        """
        X = np.asarray(X, dtype=float)
        if self.gpr_ is None:
            n = X.shape[0]
            return np.full(n, self.prior_), np.full(n, np.sqrt(self.amplitude_) * self.unit_)
        gpr = self.gpr_
        k_trans = gpr.kernel_(X, gpr.X_train_)
        mu = (k_trans @ gpr.alpha_) * self.unit_ + self.prior_
        v = solve_triangular(gpr.L_, k_trans.T, lower=True, check_finite=False)
        var = self.amplitude_ - np.einsum("ij,ij->j", v, v)
        return mu, np.sqrt(np.maximum(var, 0.0)) * self.unit_


def init_design(n: int, n_dims: int, rng: np.random.Generator, method: str = "kmeans"):
    """``n`` initial points in ``[0, 1]^d``.

    ``method="kmeans"``: centres of k-means on ``10 n`` uniform points (the
    authors' initialisation [code]); ``"lhs"``: a scrambled Latin hypercube
    (``scipy.stats.qmc``); ``"uniform"``: i.i.d. uniform.
    """
    if n <= 0:
        return np.empty((0, n_dims))
    if method == "kmeans":
        from sklearn.cluster import KMeans
        from threadpoolctl import threadpool_limits

        pts = rng.random((10 * n, n_dims))
        # one OpenMP thread: k-means sums in a thread-count-dependent order, and the
        # last-bit differences grow into a different run, so the design (and the
        # replay of a run) would depend on the machine's thread settings
        with threadpool_limits(limits=1):
            km = KMeans(n_clusters=n, n_init=1, max_iter=50, random_state=_seed(rng)).fit(pts)
        return np.clip(km.cluster_centers_, 0.0, 1.0)
    if method == "lhs":
        return qmc.LatinHypercube(d=n_dims, seed=_seed(rng)).random(n)
    if method == "uniform":
        return rng.random((n, n_dims))
    raise ValueError(f"method must be one of 'kmeans', 'lhs', 'uniform'; got {method!r}")


def maximise_acquisition(fun, n_dims: int, rng: np.random.Generator, *,
                         method: str = "lbfgsb", n_candidates: int | None = None,
                         n_starts: int = 2, maxfun: int | None = None,
                         extra_candidates=None, unit: float = 1.0) -> tuple[np.ndarray, float]:
    """Maximise a vectorised acquisition ``fun((n, d)) -> (n,)`` over ``[0, 1]^d``.

    Parameters
    ----------
    fun : callable
        Acquisition, vectorised over rows.
    n_dims : int
    rng : numpy Generator
    method : {"lbfgsb", "direct"}, default="lbfgsb"
        ``"lbfgsb"``: evaluate ``n_candidates`` uniform points (plus
        ``extra_candidates``) in one vectorised call, then polish the
        ``n_starts`` best with ``scipy.optimize.minimize(method="L-BFGS-B")``
        using central differences computed in one vectorised call per step.
        ``"direct"``: ``scipy.optimize.direct`` with ``maxfun`` evaluations
        (the authors' optimiser [code]; one point per call, slower in Python).
    n_candidates : int, optional
        Default ``min(1000, 200 + 100 d)``.
    n_starts : int, default=2
    maxfun : int, optional
        Evaluation cap for DiRect (default ``500 d``) and iteration cap per
        L-BFGS-B start (default 15).
    extra_candidates : ndarray, optional
        Points always included among the candidates (e.g. the observed ones).
    unit : float, default=1.0
        L-BFGS-B sees ``fun / unit`` (its stopping tolerances are absolute):
        the GP policies pass their GP's ``unit_``, so values scaled by a power
        of two are polished alike and their differences cannot overflow.

    Returns
    -------
    x : ndarray, shape (d,)
    value : float
    """
    d = int(n_dims)
    if method == "direct":
        res = direct(lambda x: -float(fun(x[None, :])[0]), [(0.0, 1.0)] * d,
                     maxfun=int(maxfun or 500 * d), locally_biased=False)
        return np.clip(res.x, 0.0, 1.0), -float(res.fun)
    if method != "lbfgsb":
        raise ValueError(f"method must be one of 'lbfgsb', 'direct'; got {method!r}")
    n_cand = int(n_candidates or min(1000, 200 + 100 * d))
    cands = rng.random((n_cand, d))
    if extra_candidates is not None and len(extra_candidates):
        cands = np.vstack([cands, np.asarray(extra_candidates, dtype=float)])
    vals = fun(cands)
    order = np.argsort(-vals)[: max(1, n_starts)]
    best_x, best_v = cands[order[0]].copy(), float(vals[order[0]])
    eps = 1e-5
    steps = np.vstack([np.eye(d) * eps, -np.eye(d) * eps])

    def neg_and_grad(x):
        v = fun(np.vstack([x[None, :], x[None, :] + steps])) / unit
        grad = (v[1 : d + 1] - v[d + 1 :]) / (2 * eps)
        return -float(v[0]), -grad

    for i in order:
        res = minimize(neg_and_grad, cands[i], jac=True, method="L-BFGS-B",
                       bounds=[(0.0, 1.0)] * d, options={"maxiter": int(maxfun or 15), "maxls": 10})
        x = np.clip(res.x, 0.0, 1.0)
        v = float(fun(x[None, :])[0])
        if v > best_v:
            best_x, best_v = x, v
    return best_x, best_v
