"""The GLR stopping rule of MF-GRAD and GRAD: statistic and thresholds.

Poiani, Degenne, Kaufmann, Metelli, Restelli, *Optimal Multi-Fidelity
Best-Arm Identification*, NeurIPS 2024; authors' code riccardopoiani/adv-mf-bai
(``utils/lb_tool_fast_stopping.py``, ``algorithms/gradient.py``). Any policy
holding per-(arm, fidelity) counts and means may use :class:`GLRStopping`.

Statistic [code]: with the counts ``N`` as weights and the empirical means
``µ̂`` (arms × fidelities), ``Λ_t = max_i min_{b≠i} V_N(i, b)``, ``V`` the
exact pair value of :func:`mftune.policies.lower_bound.pair_values` (the
cheapest MF-feasible alternative in which ``b`` beats ``i``). The arm
attaining the max is the answer. When ``µ̂`` lies outside the multi-fidelity
set, ``V`` also counts the cost of projecting the two columns onto it; the
authors' statistic keeps that cost (``statistic="code"``, the default),
while ``statistic="glr"`` subtracts it, which is the generalised likelihood
ratio proper, ``inf_{Alt_i} − inf_{M_MF}`` of the log-likelihood [RECON].
Both coincide whenever ``µ̂`` is MF-feasible.

Thresholds (natural logarithms; ``t`` samples taken, initial ones included):

* ``"practical"`` [code, every run of the authors]:
  ``β(t, δ) = log(K/δ) + M log(1 + log t)``; no proof covers it.
* ``"theory"`` [code, commented out there; that it is the paper's calibrated
  threshold is RECON]:
  ``log(K/δ) + 2M log(1 + log(K/δ)) + 12M log(3 + log t) + 2M``.
* ``"theory-grad"`` [code, GRAD's commented form]:
  ``log(1/δ) + K log(4 log(1/δ) + 1) + 12 log(3 + log t) + K``.

:func:`paired_mixture_threshold` (one fidelity, pairs with equal counts; used
by the top phase of :class:`~mftune.policies.elimination.PhasedElimination`,
``top_glr="paired-mixture"``) is proven for any sampling rule that tests
pairs at equal counts; its derivation is in its docstring [RECON from
paper: Howard et al. 2021]. It is not in :data:`THRESHOLDS`: MF-GRAD's
counts are unequal.

With ``epsilon = ε > 0`` the pair values are those of ε-good answers
(:func:`~mftune.policies.lower_bound.pair_values`): the test then certifies
an arm within ε of the best.

With ``top_test=True`` and several fidelities, a second GLR test runs on the
top fidelity's samples alone (the statistic of one fidelity, the threshold
with ``M = 1`` and ``t`` the top fidelity's samples), and each test gets
``δ/2``: the rule stops when either passes, δ-correct by a union bound when
both thresholds are valid [RECON]. Every threshold above grows with ``M``
(``M log(1 + log t)`` in the practical one), so on instances whose hard
pairs are settled at the top fidelity the top test needs fewer samples.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .lower_bound import characteristic_value

__all__ = ["THRESHOLDS", "GLRStopping", "practical_threshold", "theory_threshold",
           "grad_theory_threshold", "paired_mixture_threshold"]


def practical_threshold(t, delta: float, n_arms: int, n_fidelities: int):
    """``log(K/δ) + M log(1 + log t)`` [code: the threshold of every run]."""
    t = np.maximum(np.asarray(t, dtype=float), 1.0)
    return np.log(n_arms / delta) + n_fidelities * np.log1p(np.log(t))


def theory_threshold(t, delta: float, n_arms: int, n_fidelities: int):
    """``log(K/δ) + 2M log(1 + log(K/δ)) + 12M log(3 + log t) + 2M`` [code, commented; RECON]."""
    t = np.maximum(np.asarray(t, dtype=float), 1.0)
    lk = np.log(n_arms / delta)
    m = n_fidelities
    return lk + 2 * m * np.log1p(lk) + 12 * m * np.log(3.0 + np.log(t)) + 2 * m


def grad_theory_threshold(t, delta: float, n_arms: int, n_fidelities: int = 1):
    """GRAD's ``log(1/δ) + K log(4 log(1/δ) + 1) + 12 log(3 + log t) + K`` [code, commented]."""
    t = np.maximum(np.asarray(t, dtype=float), 1.0)
    l1 = np.log(1.0 / delta)
    return l1 + n_arms * np.log(4 * l1 + 1) + 12 * np.log(3.0 + np.log(t)) + n_arms


def paired_mixture_threshold(t, delta: float, n_arms: int, n_fidelities: int = 1,
                             rho: float = 1.0):
    """``(1 + ρ/t) (log((K−1)/δ) + ½ log(1 + t/ρ))``, ``t`` the pulls of *each* arm of a pair.

    Validity [RECON; the bound is paper: Howard, Ramdas, McAuliffe & Sekhon
    2021, Eq. 14, as :func:`~mftune.radii.mixture_radius`]. One fidelity,
    σ-sub-Gaussian rewards, a test made only when the two arms of a pair
    have the same count ``t`` (the rounds of a phased elimination). Let
    ``a*`` be the best arm and ``i`` any other. Think of each arm's rewards
    as a sequence drawn in advance, its ``s``-th pull revealing its
    ``s``-th term (the usual stack of rewards; it has the law of any
    sampling rule). The differences ``X_{i,s} − X_{a*,s}`` are then i.i.d.
    and 2σ²-sub-Gaussian whatever the sampling rule, and Robbins' normal
    mixture with Ville's inequality bounds their centred sum ``D_t`` at
    every ``t`` at once: ``P(∃t: D_t² >= 2σ²(t+ρ) log((t+ρ)/(ρ δ_p²))) <=
    δ_p``. Returning ``i`` when ``µ_i < µ_{a*} − ε`` needs the ε-GLR pair
    statistic ``t (µ̂_i − µ̂_{a*} + ε)²₊ / (4σ²)`` to reach ``β``, and then
    ``D_t/t > µ̂_i − µ̂_{a*} + ε >= sqrt(4σ²β/t)``, i.e. ``D_t² > 4σ²βt``;
    with ``β`` above and ``δ_p = δ/(K−1)`` (a union over the ``K − 1``
    pairs ``(a*, i)``) that has probability at most δ. Unequal counts are
    not covered.

    Parameters
    ----------
    t : int or array-like
        Pulls of each arm of the pair (``>= 1``).
    delta : float
    n_arms : int
        ``K``, the arms the union runs over.
    n_fidelities : int, default=1
        Unused (the signature of :data:`THRESHOLDS`).
    rho : float, default=1.0
        Mixture precision in units of ``1/σ²`` (:func:`~mftune.radii.mixture_radius`'s).

    Returns
    -------
    float or ndarray
    """
    t = np.maximum(np.asarray(t, dtype=float), 1.0)
    pairs = max(int(n_arms) - 1, 1)
    return (1.0 + rho / t) * (np.log(pairs / delta) + 0.5 * np.log1p(t / rho))


THRESHOLDS: dict[str, Callable] = {
    "practical": practical_threshold,
    "theory": theory_threshold,
    "theory-grad": grad_theory_threshold,
}
STATISTICS = ("code", "glr")


class GLRStopping:
    """GLR test ``Λ_t >= β(t, δ)`` for Gaussian multi-fidelity bandits.

    Parameters
    ----------
    n_arms : int
    xi : array-like, shape (M,)
        Maximal biases (last 0).
    sigma : float
        Standard deviation of the rewards.
    delta : float
    threshold : {"practical", "theory", "theory-grad"} or callable
        A name of :data:`THRESHOLDS` or ``f(t, delta, K, M)``.
    statistic : {"code", "glr"}
        See the module docstring.
    epsilon : float, default=0.0
        ε >= 0: certify an arm within ε of the best (the ε pair values of
        :func:`~mftune.policies.lower_bound.pair_values`).
    top_test : bool, default=False
        Also test the top fidelity's samples alone, each test at δ/2 (see
        the module docstring) [RECON]. Ignored with one fidelity.
    """

    def __init__(self, n_arms: int, xi, sigma: float, delta: float,
                 threshold="practical", statistic: str = "code", epsilon: float = 0.0,
                 top_test: bool = False):
        self.n_arms = int(n_arms)
        self.xi = np.asarray(xi, dtype=float).reshape(-1)
        self.sigma = float(sigma)
        self.delta = float(delta)
        if callable(threshold):
            self._beta = threshold
        elif threshold in THRESHOLDS:
            self._beta = THRESHOLDS[threshold]
        else:
            raise ValueError(f"threshold must be one of {sorted(THRESHOLDS)} or a callable; "
                             f"got {threshold!r}")
        if statistic not in STATISTICS:
            raise ValueError(f"statistic must be one of {STATISTICS}; got {statistic!r}")
        if not (np.isfinite(float(epsilon)) and float(epsilon) >= 0.0):
            raise ValueError(f"epsilon must be a finite number >= 0; got {epsilon!r}")
        self.epsilon = float(epsilon)
        self.threshold_name = threshold if isinstance(threshold, str) else "custom"
        self.statistic_name = statistic
        self.top_test = bool(top_test)

    @property
    def split(self) -> bool:
        """Whether the top test runs (``top_test`` with several fidelities): δ/2 each."""
        return self.top_test and self.xi.size > 1

    def threshold(self, t):
        """``β(t, δ)`` of the test on every fidelity (``δ/2`` when the top test runs)."""
        return self._beta(t, self.delta / (2 if self.split else 1), self.n_arms, self.xi.size)

    def top_threshold(self, t_top):
        """``β(t_top, δ/2)`` of the top test, with ``M = 1``."""
        return self._beta(t_top, self.delta / 2, self.n_arms, 1)

    def statistic(self, counts, means) -> tuple[float, int]:
        """``(Λ, arm)`` from counts and means of shape (K, M); ``(0, -1)`` if a count is 0."""
        return self._solve(counts, means, self.xi)

    def top_statistic(self, counts, means) -> tuple[float, int]:
        """``(Λ, arm)`` of the top fidelity's samples alone (the last column)."""
        return self._solve(np.asarray(counts)[:, -1:], np.asarray(means)[:, -1:], np.zeros(1))

    def _solve(self, counts, means, xi) -> tuple[float, int]:
        counts = np.asarray(counts, dtype=float)
        if np.any(counts <= 0):
            return 0.0, -1
        value, arm, _, _, _ = characteristic_value(
            np.asarray(means, dtype=float), counts, xi, self.sigma,
            excess=self.statistic_name == "glr", epsilon=self.epsilon)
        return value, arm

    def test(self, counts, means, t=None, t_top=None) -> tuple[bool, float, float, int]:
        """``(stop, Λ, β, arm)``; ``t`` defaults to the number of samples ``Σ N``.

        With the top test, ``t_top`` (default: the last column's sum) is its
        sample count; when it passes and the other does not, its ``Λ``, ``β``
        and arm are returned.
        """
        counts = np.asarray(counts)
        t = float(counts.sum()) if t is None else float(t)
        value, arm = self.statistic(counts, means)
        beta = float(self.threshold(t))
        stop = bool(arm >= 0 and value >= beta)
        if self.split and not stop:
            t_top = float(counts[:, -1].sum()) if t_top is None else float(t_top)
            top_value, top_arm = self.top_statistic(counts, means)
            top_beta = float(self.top_threshold(t_top))
            if top_arm >= 0 and top_value >= top_beta:
                return True, top_value, top_beta, top_arm
        return stop, value, beta, arm
