"""Simulated multi-fidelity bandits with known means.

An environment holds a matrix ``theta`` of shape ``(M, K)`` (row ``m`` = the
means at fidelity ``m``, last row = the true means), per-fidelity costs, the
bias bounds the algorithms are given, and a noise law. ``pull`` is vectorised
and ``pull_rounds(arms, m, R, rng)`` returns exactly what ``R`` successive
calls of ``pull(arms, m, rng)`` would (numpy fills arrays in C order), which
lets the simulator draw many rounds at once without changing a single
decision.
"""

from __future__ import annotations

import json
import os

import numpy as np
from scipy.special import ndtr, ndtri

from .._validation import check_costs, check_positive, check_theta

__all__ = [
    "BernoulliBandit",
    "GaussianBandit",
    "SimulatedBandit",
    "TruncatedGaussianBandit",
    "load_instance",
]


class SimulatedBandit:
    """Base class: a multi-fidelity bandit with known means.

    Parameters
    ----------
    theta : array-like of shape (M, K)
        Means per fidelity (rows) and arm (columns); the last row is the truth.
    costs : array-like of shape (M,)
        Strictly increasing cost of one pull at each fidelity.
    xi : array-like of shape (M,), optional
        Bias bounds given to the algorithms (default: the true maximal bias).
    gamma : array-like of shape (M,), optional
        Bias-variation bounds given to IISE-γ (default: the true variation).
    variance_proxy : float
        Sub-Gaussian variance proxy σ² passed to the algorithms.
    name : str
        Label used in reports.
    """

    def __init__(self, theta, costs, xi=None, gamma=None, variance_proxy=1.0, name="bandit"):
        self.theta = check_theta(theta)
        self.costs = check_costs(costs, "costs", self.theta.shape[0])
        self.variance_proxy = check_positive(variance_proxy, "variance_proxy")
        self.xi = self.true_xi if xi is None else np.asarray(xi, dtype=float)
        self.gamma = self.true_gamma if gamma is None else np.asarray(gamma, dtype=float)
        for label, arr in (("xi", self.xi), ("gamma", self.gamma)):
            if arr.shape != (self.n_fidelities,):
                raise ValueError(
                    f"{label} must have one entry per fidelity ({self.n_fidelities}); "
                    f"got shape {arr.shape}"
                )
        self.name = name

    # -- known quantities -----------------------------------------------------
    @property
    def n_arms(self) -> int:
        return self.theta.shape[1]

    @property
    def n_fidelities(self) -> int:
        return self.theta.shape[0]

    @property
    def mu(self) -> np.ndarray:
        """True means (the top fidelity)."""
        return self.theta[-1]

    @property
    def best_arm(self) -> int:
        return int(np.argmax(self.mu))

    @property
    def gaps(self) -> np.ndarray:
        """``Δ_i = µ* − µ_i`` (0 for the best arm)."""
        return self.mu.max() - self.mu

    @property
    def true_xi(self) -> np.ndarray:
        """``max_i |µ_{i,m} − µ_{i,M}|`` per fidelity."""
        return np.abs(self.theta - self.mu).max(axis=1)

    @property
    def true_gamma(self) -> np.ndarray:
        """``max_{i,j} |ξ_{i,m} − ξ_{j,m}|`` per fidelity (bias spread)."""
        bias = self.theta - self.mu
        return bias.max(axis=1) - bias.min(axis=1)

    # -- sampling -------------------------------------------------------------
    #: The generator method that draws the one variate behind each reward
    #: (``"random"`` or ``"standard_normal"``); None: the law has no such form.
    variate: str | None = None

    def rewards(self, means: np.ndarray, variates: np.ndarray) -> np.ndarray:
        """Rewards from pre-drawn variates (one per reward, drawn by :attr:`variate`).

        ``_noisy(means, rng)`` equals ``rewards(means, getattr(rng, variate)(shape))``,
        so batch simulators that draw each run's stream ahead get the rewards
        the pull-by-pull simulator would.
        """
        raise NotImplementedError(f"{type(self).__name__} has no one-variate form")

    def _noisy(self, means: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if self.variate is None:
            raise NotImplementedError
        return self.rewards(means, getattr(rng, self.variate)(np.shape(means)))

    def pull(self, arms, fidelities, rng: np.random.Generator) -> np.ndarray:
        """One reward per ``(arm, fidelity)`` pair.

        Parameters
        ----------
        arms, fidelities : array-like of int, shape (n,)
        rng : numpy Generator

        Returns
        -------
        ndarray of shape (n,)
        """
        return self._noisy(self.theta[np.asarray(fidelities), np.asarray(arms)], rng)

    def pull_rounds(self, arms, fidelity: int, n_rounds: int, rng) -> np.ndarray:
        """``n_rounds`` successive rounds of pulling ``arms`` at ``fidelity``.

        Returns an array of shape ``(n_rounds, len(arms))`` equal, row by row,
        to ``n_rounds`` calls of :meth:`pull` with the same generator.
        """
        means = self.theta[fidelity, np.asarray(arms)]
        return self._noisy(np.broadcast_to(means, (int(n_rounds), means.size)), rng)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, K={self.n_arms}, M={self.n_fidelities})"


class GaussianBandit(SimulatedBandit):
    """Gaussian rewards ``N(θ_{m,i}, σ²)``; σ² is also the variance proxy.

    Parameters
    ----------
    theta, costs, xi, gamma, name
        See :class:`SimulatedBandit`.
    sigma : float, default=1.0
        Noise standard deviation (> 0).
    """

    def __init__(self, theta, costs, sigma=1.0, xi=None, gamma=None, name="gaussian"):
        self.sigma = check_positive(sigma, "sigma")
        super().__init__(theta, costs, xi, gamma, self.sigma**2, name)

    variate = "standard_normal"

    def rewards(self, means, variates):
        return means + self.sigma * variates


class BernoulliBandit(SimulatedBandit):
    """Bernoulli rewards with success probabilities ``θ`` (in ``[0, 1]``)."""

    def __init__(self, theta, costs, xi=None, gamma=None, name="bernoulli"):
        theta = check_theta(theta)
        if np.any((theta < 0) | (theta > 1)):
            raise ValueError("theta must lie in [0, 1] for Bernoulli rewards")
        super().__init__(theta, costs, xi, gamma, 0.25, name)

    variate = "random"

    def rewards(self, means, variates):
        return (variates < means).astype(float)


class TruncatedGaussianBandit(SimulatedBandit):
    """Rewards ``θ + ε`` with ``ε ~ N(0, scale²)`` truncated to ``[−bound, bound]``.

    The Yahtzee domain of Poiani et al. uses ``scale = 0.05``, ``bound = 0.08``
    and passes ``σ² = 0.25`` to the algorithms [code ``environments/dist.py``].
    Sampling is by inverse CDF (one uniform per reward), so blocks of rounds
    stay identical to round-by-round draws.
    """

    def __init__(self, theta, costs, scale=0.05, bound=0.08, xi=None, gamma=None,
                 variance_proxy=0.25, name="truncated-gaussian"):
        self.scale = check_positive(scale, "scale")
        self.bound = check_positive(bound, "bound")
        self._lo = ndtr(-self.bound / self.scale)
        self._hi = ndtr(self.bound / self.scale)
        super().__init__(theta, costs, xi, gamma, variance_proxy, name)

    variate = "random"

    def rewards(self, means, variates):
        z = ndtri(self._lo + variates * (self._hi - self._lo))
        return means + self.scale * np.clip(z, -self.bound / self.scale, self.bound / self.scale)


def load_instance(path: str | os.PathLike) -> SimulatedBandit:
    """Load a reference instance (JSON with ``theta``, ``costs``, ``xi``, ``gamma``).

    Such files hold the exact instances the papers' authors ran, converted
    from their public code (docs/benchmarks.md); they are read by path,
    never packaged.

    Parameters
    ----------
    path : str or path-like
        JSON file with keys ``theta`` (M rows of K means), ``costs``, ``xi``,
        ``gamma``, ``variance_proxy`` and ``distribution`` (``"Gaussian"`` or
        ``"Yahtzee"``); or, as the MF-GRAD instances (``mfgrad_*.json``),
        ``mu`` (K rows of M means, arm-major), ``costs``, ``xi`` and ``sigma``
        (the Gaussian noise's standard deviation), with ``gamma`` derived
        from the means.

    Returns
    -------
    SimulatedBandit
    """
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if "mu" in data and "theta" not in data:
        missing = {"costs", "xi", "sigma"} - set(data)
        if missing:
            raise ValueError(f"instance file {os.fspath(path)!r} lacks keys {sorted(missing)}")
        if str(data.get("distribution", "gaussian")).lower() != "gaussian":
            raise ValueError(f"instance file {os.fspath(path)!r}: 'mu' files must be Gaussian")
        name = str(data.get("name") or os.path.splitext(os.path.basename(path))[0])
        return GaussianBandit(np.asarray(data["mu"], dtype=float).T, data["costs"],
                              sigma=float(data["sigma"]), xi=data["xi"], name=name)
    missing = {"theta", "costs", "xi", "variance_proxy", "distribution"} - set(data)
    if missing:
        raise ValueError(f"instance file {os.fspath(path)!r} lacks keys {sorted(missing)}")
    name = os.path.splitext(os.path.basename(path))[0]
    kind = str(data["distribution"]).lower()
    common = {"xi": data["xi"], "gamma": data.get("gamma"), "name": name}
    if kind == "gaussian":
        return GaussianBandit(data["theta"], data["costs"],
                              sigma=float(np.sqrt(data["variance_proxy"])), **common)
    if kind == "yahtzee":
        return TruncatedGaussianBandit(data["theta"], data["costs"],
                                       variance_proxy=data["variance_proxy"], **common)
    if kind == "bernoulli":
        return BernoulliBandit(data["theta"], data["costs"], **common)
    raise ValueError(
        f"distribution in {os.fspath(path)!r} must be 'Gaussian', 'Yahtzee' or 'Bernoulli'; "
        f"got {data['distribution']!r}"
    )
