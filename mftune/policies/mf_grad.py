"""MF-GRAD and GRAD: gradient-ascent sampling towards the cost lower bound, GLR stopping.

Poiani, Degenne, Kaufmann, Metelli, Restelli, *Optimal Multi-Fidelity
Best-Arm Identification*, NeurIPS 2024 (arXiv 2406.03033); authors' code
riccardopoiani/adv-mf-bai (``algorithms/gradient.py``,
``utils/regret_minimizer.py``). GRAD is the single-fidelity algorithm of
Ménard, *Gradient Ascent for Active Exploration in Bandit Problems*, 2019,
run at the top fidelity as the authors do.

The structure [paper/summ and code]: one initial pull of every (arm,
fidelity); then an online learner (exponential weights, i.e. lazy mirror
ascent on the simplex) over cost proportions ω, fed with sub-gradients of
``F(ω, µ̂)`` (:mod:`mftune.policies.lower_bound`) at the empirical means;
the learner's ω turned into pull proportions, mixed with forced exploration
and tracked cumulatively; the GLR test of :mod:`mftune.policies.glr` stops.
Details of each step (zeroing rule, cost factor, learning rates, tie
order) are the authors' code [code] and docs/algorithms.md, section "MF-GRAD
and the cost lower bound". The rule is deterministic given the
observations (no random numbers), hence replayable.
"""

from __future__ import annotations

import numpy as np

from .._validation import (
    check_batch_size,
    check_bias,
    check_costs,
    check_delta,
    check_positive,
    check_variance_proxy,
)
from .base import Policy, Pulls
from .glr import STATISTICS, GLRStopping
from .lower_bound import characteristic_values, gaussian_kl

__all__ = ["GRAD", "MFGRAD", "exp_weights", "gradient_gains", "track"]


# -- the steps of the sampling rule, vectorised over a leading axis of independent runs -------
# Shapes: means/omega/gains (R, K, M); counts and tracking sums fidelity-major (R, M, K).
# The policy calls them with R = 1 and mftune.benchmarks.grad_sim with many runs: both
# make the same decisions (tested).


def _row_sum(x):
    """Sum over every axis but the first, as one contiguous row per run (same bits for any R)."""
    return np.ascontiguousarray(x).reshape(x.shape[0], -1).sum(axis=1)


def gradient_gains(mu, omega, lam, xi, sigma, scale=None, solution=None, excess=False):
    """Sub-gradient of ``F`` at ω̃ times ``c̄`` for every run, shape (R, K, M) [code].

    With ``w = ω̃/λ``: ``max_i min_{b≠i} V_w(i, b)`` at the means gives ``i*``,
    ``b̂`` and the alternative columns θ̂; the gain is ``d(µ̂, θ̂)/λ`` on those
    two arms (0 elsewhere), minus the terms that only come from projecting an
    MF-infeasible µ̂ (the code's zeroing rule for ``m < M``), times
    ``c̄ = 1/Σ w`` (the expected cost of one pull). With one fidelity (GRAD)
    the two gains are computed from the gap, ``(w_b Δ/(w_i + w_b))²/(2σ²)``
    and ``(w_i Δ/(w_i + w_b))²/(2σ²)`` (the same values), so two arms of equal
    weight get bit-identical gains and keep equal weights; the tracking rule's
    ties are then exact and go to the first arm on any machine, instead of to
    whichever of ``µ_i − η``, ``η − µ_b`` rounds larger. ``scale`` (M,), optional:
    ``σ²/σ_m²`` when fidelity m has its own noise level σ_m (its KL terms scale
    so) [RECON]; None is a common σ. ``solution``, optional: the result of
    ``characteristic_values(mu, w·scale, xi, sigma)`` when already computed
    (the batch simulator solves it in one call with the GLR statistic).
    ``excess``: take ``i*`` and ``b̂`` from the max-min of the pairs' GLR
    excess (:class:`MFGRAD`'s ``gradient="glr"``) instead of their values.
    """
    w = omega / lam
    if solution is None:
        solution = characteristic_values(mu, w if scale is None else w * scale, xi, sigma,
                                         excess=excess)
    _, i, b, th_i, th_b = solution
    rows = np.arange(mu.shape[0])
    mu_i, mu_b = mu[rows, i], mu[rows, b]
    if mu.shape[2] == 1:
        ws = w if scale is None else w * scale
        w_i, w_b = ws[rows, i], ws[rows, b]
        gap = np.maximum(mu_i - mu_b, 0.0) / (w_i + w_b)
        g_i = gaussian_kl(w_b * gap, 0.0, sigma) / lam
        g_b = gaussian_kl(w_i * gap, 0.0, sigma) / lam
    else:
        g_i = gaussian_kl(mu_i, th_i, sigma) / lam
        g_b = gaussian_kl(mu_b, th_b, sigma) / lam
    if scale is not None:
        g_i *= scale
        g_b *= scale
    g_b[:, :-1][th_b[:, -1:] <= mu_b[:, :-1] + xi[:-1]] = 0.0
    g_i[:, :-1][th_i[:, -1:] >= mu_i[:, :-1] - xi[:-1]] = 0.0
    g = np.zeros_like(mu)
    g[rows, i] = g_i
    g[rows, b] = g_b
    return g / _row_sum(w)[:, None, None]


def exp_weights(gains, lr):
    """Exponential weights ``softmax(η G)`` over each run's K·M entries (``lr`` (R,) or scalar)."""
    top = gains.reshape(gains.shape[0], -1).max(axis=1)
    e = np.exp(np.reshape(lr, (-1, 1, 1)) * (gains - top[:, None, None]))
    return e / _row_sum(e)[:, None, None]


def track(omega, lam, t, tracking, asked):
    """Forced exploration and cumulative tracking; updates ``tracking`` in place [code].

    ``π = (ω̃/λ)/Σ(ω̃/λ)``, ``π' = (1 − γ_t) π + γ_t/(KM)`` with
    ``γ_t = 1/(4 sqrt(t))``; ``C += π'`` and the pull is ``argmax (C − N)``
    (first in fidelity-major order). Returns ``(arm, fidelity index)``, shapes (R,).
    """
    w = omega / lam
    pi = w / _row_sum(w)[:, None, None]
    gamma = (1.0 / (4.0 * np.sqrt(t)))[:, None, None]
    tracking += np.swapaxes((1.0 - gamma) * pi + gamma / pi[0].size, 1, 2)
    flat = np.argmax((tracking - asked).reshape(asked.shape[0], -1), axis=1)
    j, k = np.divmod(flat, asked.shape[2])
    return k, j


class MFGRAD(Policy):
    """MF-GRAD (Poiani et al., NeurIPS 2024) as an ask/tell policy.

    Per pull, after the initial round [code]:

    1. sub-gradient of ``F`` at the learner's action ω̃: with ``w = ω̃/λ``,
       solve ``max_i min_{b≠i} V_w(i, b)`` at the means µ̂ (best arm ``i*``,
       challenger ``b̂``, alternative columns θ̂); the gain is
       ``d(µ̂_{k,m}, θ̂_{k,m})/λ_m`` for ``k ∈ {i*, b̂}``, 0 elsewhere, with the
       code's zeroing rule for ``m < M`` (terms that come only from
       projecting an MF-infeasible µ̂) [code; reading RECON];
    2. times ``c̄ = 1/Σ ω̃/λ``, the expected cost of one pull [code];
    3. exponential weights: ``G += g``, ``ω̃ = softmax(η_n G)``, ``η_n =
       1/sqrt(n+1)`` (``learning_rate=None``, the code's "theory" rate) or a
       constant (0.25: MF-GRAD-CONST) [code; summ];
    4. pull proportions ``π = (ω̃/λ)/Σ(ω̃/λ)``, forced exploration
       ``π' = (1 − γ_t) π + γ_t/(KM)``, ``γ_t = 1/(4 sqrt(t))`` [code];
    5. cumulative tracking: ``C += π'``, pull ``argmax (C − N)`` (ties: first
       in fidelity-major order) [code].

    Stops when the GLR statistic reaches the threshold (checked after every
    tell); once stopped, :meth:`recommend` returns the arm certified by the
    test (the empirical best at the top fidelity whenever µ̂ is MF-feasible),
    before that the empirical best at the top fidelity.

    Parameters
    ----------
    n_arms : int
        Number of arms ``K``.
    costs : array-like, shape (M,)
        Cost λ_m of one pull per fidelity (strictly increasing).
    xi : array-like, shape (M,)
        Maximal biases ξ_m (strictly decreasing to 0).
    delta : float
        Error probability δ.
    variance_proxy : float
        σ² of the Gaussian rewards (the statistics use ``d(x, y) = (x − y)²/(2σ²)``).
    learning_rate : float or None, default=None
        None: ``1/sqrt(n+1)`` after ``n`` gradients; 0.25 is MF-GRAD-CONST.
    threshold : {"practical", "theory"} or callable, default="practical"
        GLR threshold (:mod:`mftune.policies.glr`). "practical" is the one of
        every run of the authors (no proof covers it); "theory" the
        calibrated one under which δ-correctness is proved [summ; RECON].
    statistic : {"code", "glr"}, default="code"
        GLR statistic (:class:`~mftune.policies.glr.GLRStopping`).
    gradient : {"code", "glr"}, default="code"
        Which values step 1's max-min compares: ``"code"`` the pair values
        ``V_w(i, b)`` of the authors' ``solve_stopping`` [code]; ``"glr"``
        their GLR excess, ``V_w(i, b)`` less the cost of projecting the
        columns of ``i`` and ``b`` onto the multi-fidelity set [RECON]. Both
        coincide whenever µ̂ is MF-feasible. With ``"code"``, an arm whose
        empirical column is far from feasible (noise of the order of ξ) is
        chosen as ``i*`` for that projection cost alone, although its top
        mean is far from the best, and its top-fidelity entry gets the gain
        (docs/algorithms.md, "MF-GRAD and the cost lower bound").
    stopping : bool, default=True
        False disables the test (cost-proportion experiments; the caller caps the pulls).
    random_state : int, Generator or None
        Unused (the rule is deterministic); kept for the protocol.
    batch_size : int, default=1
        Pulls per :meth:`ask`: that many tracking steps, each counting the
        pulls already asked as done [RECON; 1 is the paper's algorithm].
    top_test : bool, default=False
        Also stop when the top fidelity's samples alone pass the GLR test,
        each test at δ/2 (:class:`~mftune.policies.glr.GLRStopping`) [RECON;
        False is the paper's algorithm]. GRAD has one fidelity: no top test.
    """

    _theory_threshold = "theory"

    def __init__(self, n_arms: int, costs, xi, delta: float, variance_proxy: float,
                 learning_rate: float | None = None, threshold="practical",
                 statistic: str = "code", stopping: bool = True, random_state=None,
                 batch_size: int = 1, gradient: str = "code", top_test: bool = False):
        costs = check_costs(costs, "costs")
        super().__init__(n_arms, costs.size, random_state)
        self.costs = costs
        self.xi = check_bias(xi, "xi", costs.size)
        self.delta = check_delta(delta)
        self.variance_proxy = check_positive(variance_proxy, "variance_proxy")
        self.sigma = float(np.sqrt(self.variance_proxy))
        self.learning_rate = (None if learning_rate is None
                              else check_positive(learning_rate, "learning_rate"))
        self.stopping = bool(stopping)
        if gradient not in STATISTICS:
            raise ValueError(f"gradient must be one of {STATISTICS}; got {gradient!r}")
        self.gradient = gradient
        self.top_test = bool(top_test)
        self.batch_size = check_batch_size(batch_size)
        fids = self._fidelities()
        self.fids_ = fids
        self.lam_ = costs[fids]
        self.xi_ = self.xi[fids] - self.xi[fids[-1]]
        K, Mu = self.n_arms, fids.size
        if threshold == "theory":
            threshold = self._theory_threshold
        self.glr = GLRStopping(K, self.xi_, self.sigma, self.delta, threshold, statistic,
                               top_test=top_test)
        self.gains_ = np.zeros((K, Mu))       # G, cumulative gains
        self.n_gradients_ = 0                 # n, gains fed so far
        self.omega_ = np.full((K, Mu), 1.0 / (K * Mu))  # learner's action ω̃ (cost proportions)
        self.tracking_ = np.zeros((Mu, K))    # C, fidelity-major like the counts
        self.stopped_ = False
        self.glr_value_ = 0.0
        self.glr_threshold_ = np.inf
        self.glr_arm_ = -1
        self.scale_ = None  # σ²/σ_m² per pulled fidelity once update_bounds sets σ_m

    def update_bounds(self, costs=None, xi=None, variance_proxy=None) -> None:
        """Replace the costs λ, the bias bounds ξ and/or σ² during a run (the tuner's hook).

        The tuner's costs are running estimates of measured seconds and its ξ
        and σ are estimated, grown when violated, or pooled online; the
        learner state (gains, ω̃, tracking sums) is kept and every later
        gradient, tracking step and GLR test uses the new values [RECON].

        Effect on the guarantee: costs enter only the sampling rule (how cost
        proportions become pull proportions, and the gains' scale), never the
        stopping test, so they change the cost of a run, not its correctness.
        The GLR test at time t is a valid δ-test when the ξ and σ in force at t
        are valid: a larger ξ or σ makes the statistic smaller (the same test,
        more conservative); a test passed under a bound that was too small
        cannot be undone.

        Parameters
        ----------
        costs : array-like of shape (M,), optional
            Strictly increasing per-fidelity costs.
        xi : array-like of shape (M,), optional
            Strictly decreasing bias bounds ending in 0.
        variance_proxy : float or array-like of shape (M,), optional
            New σ², or one per fidelity: the KL terms of fidelity m then use
            σ_m² (weights ``σ²/σ_m²`` with ``σ² = max_m σ_m²``).
        """
        if costs is not None:
            self.costs = check_costs(costs, "costs", self.n_fidelities)
            self.lam_ = self.costs[self.fids_]
        if xi is not None:
            self.xi = check_bias(xi, "xi", self.n_fidelities)
            self.xi_ = self.xi[self.fids_] - self.xi[self.fids_[-1]]
            self.glr.xi = self.xi_
        if variance_proxy is not None:
            self.variance_proxy, per = check_variance_proxy(variance_proxy, self.n_fidelities)
            self.scale_ = None if per is None else self.variance_proxy / per[self.fids_]
            self.sigma = float(np.sqrt(self.variance_proxy))
            self.glr.sigma = self.sigma

    def _fidelities(self) -> np.ndarray:
        """Fidelities the policy pulls (all of them for MF-GRAD)."""
        return np.arange(self.n_fidelities)

    # -- protocol -------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.stopped_

    def nominal_costs(self) -> np.ndarray:
        return self.costs

    def _means_km(self) -> np.ndarray:
        c = self.stats.counts[self.fids_]
        return (self.stats.sums[self.fids_] / np.maximum(c, 1)).T

    def recommend(self) -> int:
        """The arm certified by the GLR test once stopped, else the empirical best at the top."""
        if self.stopped_ and self.glr_arm_ >= 0:
            return int(self.glr_arm_)
        c = self.stats.counts[-1]
        means = np.where(c > 0, self.stats.sums[-1] / np.maximum(c, 1), -np.inf)
        return int(np.argmax(means))

    def _next_pulls(self, n: int) -> Pulls:
        arms, fids = [], []
        asked = self.stats.counts[self.fids_] + self.pending[self.fids_]  # (Mu, K)
        for _ in range(n):
            k, j = self._step(asked)
            asked[j, k] += 1
            arms.append(k)
            fids.append(int(self.fids_[j]))
        return Pulls(np.array(arms), np.array(fids))

    def _step(self, asked: np.ndarray) -> tuple[int, int]:
        """One decision: ``(arm, index into fids_)``, given the pulls asked so far (Mu, K)."""
        zero = asked.T == 0  # arm-major order for the initial round
        if zero.any():
            k, j = np.unravel_index(int(np.argmax(zero)), zero.shape)
            return int(k), int(j)
        t = np.array([float(asked.sum()) + 1.0])
        self._learner_update()
        k, j = track(self.omega_[None], self.lam_, t, self.tracking_[None], asked[None])
        return int(k[0]), int(j[0])

    def _learner_update(self) -> None:
        """Feed the sub-gradient at ω̃ to the exponential weights; ω̃ becomes the new action."""
        g = gradient_gains(self._means_km()[None], self.omega_[None], self.lam_, self.xi_,
                           self.sigma, self.scale_, excess=self.gradient == "glr")
        self.gains_ += g[0]
        self.n_gradients_ += 1
        self.omega_ = exp_weights(self.gains_[None], self.current_learning_rate())[0]

    def current_learning_rate(self) -> float:
        """``η_n``: the constant, or ``1/sqrt(n+1)`` after ``n`` gradients [code]."""
        if self.learning_rate is not None:
            return self.learning_rate
        return 1.0 / np.sqrt(self.n_gradients_ + 1.0)

    def _after_tell(self, pulls, rewards, costs) -> None:
        self.n_rounds += 1
        if not self.stopping:
            return
        counts = self.stats.counts[self.fids_].T
        info = counts if self.scale_ is None else counts * self.scale_
        stop, value, beta, arm = self.glr.test(info, self._means_km(), t=float(counts.sum()),
                                               t_top=float(counts[:, -1].sum()))
        self.glr_value_, self.glr_threshold_, self.glr_arm_ = value, beta, arm
        self.stopped_ = stop

    # -- reporting --------------------------------------------------------------
    def cost_proportions(self) -> np.ndarray:
        """Empirical cost proportions ``λ_m N_{k,m} / c_t``, shape (K, M)."""
        spent = self.stats.counts.T * self.costs
        total = spent.sum()
        return spent / total if total > 0 else spent.astype(float)

    def _summary_extra(self) -> dict:
        return {
            "glr": float(self.glr_value_),
            "threshold": float(self.glr_threshold_),
            "threshold_rule": self.glr.threshold_name,
            "statistic": self.glr.statistic_name,
            "gradient": self.gradient,
            "top_test": self.glr.split,
            "glr_arm": int(self.glr_arm_),
            "gradient_steps": int(self.n_gradients_),
            "learning_rate": None if self.learning_rate is None else self.learning_rate,
            "omega": self.omega_.tolist(),
        }


class GRAD(MFGRAD):
    """GRAD (Ménard 2019) at the top fidelity, as the authors run it: MF-GRAD with M = 1.

    Only the top fidelity is pulled; with one fidelity every step of
    :class:`MFGRAD` reduces to the authors' ``BAIGradientLearner`` (the
    cost factor ``c̄ = λ_M`` cancels the ``1/λ_M`` of the gains) [code;
    RECON]. ``threshold="theory"`` is GRAD's own commented form
    (``"theory-grad"`` of :mod:`mftune.policies.glr`); ``"practical"`` is
    ``log(K/δ) + log(1 + log t)`` [code]. ``xi`` may be None (unused).
    Parameters as :class:`MFGRAD`.
    """

    _theory_threshold = "theory-grad"

    def __init__(self, n_arms: int, costs, xi=None, delta: float = 0.01,
                 variance_proxy: float = 1.0, **kwargs):
        costs = check_costs(costs, "costs")
        if xi is None:
            xi = np.linspace(1.0, 0.0, costs.size)  # placeholder: only fidelity M is used
        super().__init__(n_arms, costs, xi, delta, variance_proxy, **kwargs)

    def _fidelities(self) -> np.ndarray:
        return np.array([self.n_fidelities - 1])
