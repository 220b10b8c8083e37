"""SE, IISE, IISE-γ and MFE: the phased-elimination policies of Poiani et al. (2022).

IISE (Iterative Imprecise Successive Elimination) with bias bounds ξ, IISE-γ
with bounds γ on the bias variation, MFE with thresholds ``c ξ_m`` (``c`` is
[calib]: 0.1 on the synthetic domains, 0.005 on Yahtzee), and SE at the top
fidelity only, all on :class:`~mftune.policies.elimination.PhasedElimination`.
"""

from __future__ import annotations

import numpy as np

from .._validation import (
    check_bias,
    check_costs,
    check_delta,
    check_positive,
    useful_fidelities,
)
from .elimination import PhasedElimination

__all__ = ["IISE", "MFE", "IISEGamma", "SuccessiveElimination", "iise_thresholds"]


def iise_thresholds(costs, bias, factor: float = 4.0) -> np.ndarray:
    """Phase-switch thresholds ``α_m`` of IISE (Eq. 8).

    ``α_m = max_{m' > m} factor (b_m − b_{m'}) sqrt(λ_m) / (sqrt(λ_{m'}) − sqrt(λ_m))``
    and ``α_M = 0``. ``factor = 4`` with ``b = ξ`` gives IISE; ``factor = 2``
    with ``b = γ`` gives IISE-γ [paper Eq. 8, Sec. 5; code ``algorithms/bai.py``].

    Parameters
    ----------
    costs : array-like of shape (M,)
        Strictly increasing per-fidelity costs λ.
    bias : array-like of shape (M,)
        Strictly decreasing bias bounds ending in 0 (ξ, or γ).
    factor : float, default=4.0

    Returns
    -------
    ndarray of shape (M,)
    """
    lam = np.sqrt(np.asarray(costs, dtype=float))
    b = np.asarray(bias, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = factor * (b[:, None] - b[None, :]) * lam[:, None] / (lam[None, :] - lam[:, None])
    upper = np.triu(np.ones((b.size, b.size), dtype=bool), k=1)
    ratio = np.where(upper, ratio, -np.inf)
    alpha = ratio.max(axis=1)
    alpha[-1] = 0.0
    return alpha


class SuccessiveElimination(PhasedElimination):
    """SE: successive elimination at the top fidelity only, with ``δ/K``.

    The single-fidelity reference of Poiani et al. (2022) [paper, code class
    ``SuccessiveElimination``]: arm ``i`` is removed iff
    ``max_j (µ̂_j − B(t, δ/K)) >= µ̂_i + B(t, δ/K)``.

    Parameters
    ----------
    n_arms : int
    costs : array-like of shape (M,)
        Costs of all fidelities (only the last is used).
    delta : float, default=0.001
    variance_proxy : float, default=1.0
    epsilon : float, optional
        Stop once ``2 B <= ε`` and return the empirical best ([RECON]).
    random_state : None
    confidence : {"iise", "mixture"}, default="iise"
        The radius (see :class:`~mftune.policies.elimination.PhasedElimination`).
    top_glr : {"paired-mixture", "practical", "theory", "paired-t"}, optional
        Also stop with a test among the survivors (see
        :class:`~mftune.policies.elimination.PhasedElimination`).
    best_first : bool, default=False
    batch_size : int, default=1
    chunk_cost : float, optional
        Hand a round out a few pulls at a time (see
        :class:`~mftune.policies.elimination.PhasedElimination`).
    """

    def __init__(self, n_arms, costs, delta=0.001, variance_proxy=1.0, epsilon=None,
                 random_state=None, confidence="iise", top_glr=None, best_first=False,
                 batch_size=1, chunk_cost=None):
        costs = check_costs(costs)
        m = costs.size
        super().__init__(
            n_arms, costs, delta, variance_proxy,
            thresholds=np.zeros(m), widths=np.zeros(m), phases=[m - 1],
            delta_prime=check_delta(delta) / n_arms, epsilon=epsilon,
            random_state=random_state, confidence=confidence, top_glr=top_glr,
            best_first=best_first, batch_size=batch_size, chunk_cost=chunk_cost,
        )


class _BoundedElimination(PhasedElimination):
    """Shared constructor of the policies driven by bias bounds (IISE, IISE-γ, MFE).

    Subclasses name their bound (``_bias_name``) and say how switch thresholds
    (``_thresholds``) and elimination widths (``_widths``) follow from costs
    and bounds; the same rule serves construction and :meth:`update_bounds`.

    Bounds need not decrease with the fidelity [RECON]: the phases run on the
    fidelities :func:`~mftune._validation.useful_fidelities` keeps (a fidelity
    whose bound is not below a cheaper one's costs more and tells no more),
    the thresholds are those of that sub-problem, and ``δ' = δ/(K P)`` is split
    over the ``P`` phases that can run. With decreasing bounds every fidelity
    is kept and this is the paper's algorithm.
    """

    _bias_name = "xi"

    def __init__(self, n_arms, costs, bias, delta, variance_proxy, epsilon, random_state,
                 futility_switch=False, cost_balance=None, best_first=False, batch_size=1,
                 chunk_cost=None, confidence="iise", top_share=None, curve_check=None,
                 top_glr=None):
        costs = check_costs(costs)
        bias = check_bias(bias, self._bias_name, costs.size, monotone=False)
        self._set_bias(bias)
        thresholds, widths = self._derive_bounds(costs, bias)
        phases = useful_fidelities(bias)
        super().__init__(
            n_arms, costs, delta, variance_proxy, thresholds=thresholds, widths=widths,
            phases=phases, delta_prime=check_delta(delta) / (n_arms * phases.size),
            epsilon=epsilon, random_state=random_state, futility_switch=futility_switch,
            cost_balance=cost_balance, best_first=best_first, batch_size=batch_size,
            chunk_cost=chunk_cost, confidence=confidence, top_share=top_share,
            curve_check=curve_check, top_glr=top_glr,
        )

    def _derive_bounds(self, costs, bias):
        """Thresholds on the useful fidelities (0 elsewhere) and every fidelity's width."""
        keep = useful_fidelities(bias)
        thresholds = np.zeros(costs.size)
        thresholds[keep] = self._thresholds(costs[keep], bias[keep])
        return thresholds, self._widths(bias)

    def _current_bias(self):
        return getattr(self, self._bias_name)

    def _phases_for(self, bias) -> np.ndarray:
        """This run's phases under new bounds: later ones skip the fidelities they make useless.

        Phases are only ever dropped, never added, so the union over the
        phases behind ``δ'`` still covers every phase that runs; the last
        phase's bound must stay 0.
        """
        keep = useful_fidelities(bias)
        later = np.intersect1d(self.phases[self.phase_ + 1:], keep)
        phases = np.r_[self.phases[: self.phase_ + 1], later].astype(np.int64)
        if phases[-1] != keep[-1]:
            raise ValueError(f"{self._bias_name}: the bound of fidelity {phases[-1]}, the "
                             f"last of this run, must stay 0; got {bias.tolist()}")
        return phases

    def update_bounds(self, costs=None, xi=None, variance_proxy=None) -> None:
        """Replace costs, bounds and/or σ² during a run (see ``PhasedElimination``).

        Parameters
        ----------
        costs : array-like of shape (M,), optional
        xi : array-like of shape (M,), optional
            The policy's bound (ξ, or γ for IISE-γ); refused, changing nothing,
            if it would end the run at a fidelity with a positive bound.
        variance_proxy : float or array-like of shape (M,), optional
        """
        if xi is not None:
            self._phases_for(check_bias(xi, self._bias_name, self.n_fidelities, monotone=False))
        super().update_bounds(costs=costs, xi=xi, variance_proxy=variance_proxy)

    def _set_bias(self, bias):
        if hasattr(self, "phases"):  # during a run
            self.phases = self._phases_for(bias)
        setattr(self, self._bias_name, bias)


class IISE(_BoundedElimination):
    """IISE with known maximal biases ξ (Poiani et al. 2022, Alg. 1).

    Uses ``δ' = δ/(K M)`` (``M`` the fidelities in use), eliminates arm ``i`` iff
    ``max_j (µ̂_j − B − ξ_m) >= µ̂_i + B + ξ_m`` and switches to fidelity
    ``m + 1`` when ``α_m >= 4 B(t, δ')`` with ``α_m`` from Eq. 8.

    Parameters
    ----------
    n_arms : int
    costs : array-like of shape (M,)
        Strictly increasing costs λ.
    xi : array-like of shape (M,)
        Bias bounds ending in ``ξ_M = 0``; fidelities whose bound is not below
        a cheaper one's are skipped.
    delta : float, default=0.001
    variance_proxy : float, default=1.0
        Sub-Gaussian σ².
    epsilon : float, optional
        ε-optimal stopping ([RECON], see module docstring).
    random_state : None
    futility_switch : bool, default=False
        Leave a phase once no survivor can be eliminated there ([RECON], see
        the module docstring); off reproduces the paper.
    cost_balance : float, optional
        Leave a phase once it has cost ``cost_balance`` rounds of the next
        fidelity ([RECON], see the module docstring); ``None`` reproduces the
        paper.
    best_first : bool, default=False
        Hand a round out ``batch_size`` pulls at a time, best arms first, and
        recommend from the round in progress ([RECON], see the module
        docstring); ``False`` reproduces the paper.
    batch_size : int, default=1
        Pulls per :meth:`ask` with ``best_first`` (workers).
    chunk_cost : float, optional
        With ``best_first``, the cost each worker gets per :meth:`ask`
        (at least one pull); ``None``: one pull.
    confidence : {"iise", "mixture"}, default="iise"
        The radius; ``"iise"`` reproduces the paper (see
        :class:`~mftune.policies.elimination.PhasedElimination`).
    top_share : float, optional
        Share of δ of the top fidelity's phase; ``None`` reproduces the paper.
    curve_check : array-like of shape (M,), optional
        The late-bloomer guard of the certificate; ``None`` reproduces the
        paper (see :class:`~mftune.policies.elimination.PhasedElimination`).
    """

    def __init__(self, n_arms, costs, xi, delta=0.001, variance_proxy=1.0, epsilon=None,
                 random_state=None, futility_switch=False, cost_balance=None, best_first=False,
                 batch_size=1, chunk_cost=None, confidence="iise", top_share=None,
                 curve_check=None, top_glr=None):
        super().__init__(n_arms, costs, xi, delta, variance_proxy, epsilon, random_state,
                         futility_switch, cost_balance, best_first, batch_size, chunk_cost,
                         confidence, top_share, curve_check, top_glr)

    def _thresholds(self, costs, bias):
        return iise_thresholds(costs, bias, 4.0)

    def _widths(self, bias):
        return 2.0 * bias


class IISEGamma(_BoundedElimination):
    """IISE-γ: IISE driven by bounds on the bias *variation* (Poiani et al. 2022, Sec. 5).

    ``γ_m = max_{i,j} |ξ_{i,m} − ξ_{j,m}|`` (or any upper bound ``φ_m >= γ_m``).
    Arm ``i`` is eliminated iff ``max_j (µ̂_j − B) >= µ̂_i + B + γ_m``; the
    switch uses ``α^γ_m`` (Eq. 8 with ``2γ`` in place of ``4ξ``).

    Parameters
    ----------
    n_arms : int
    costs : array-like of shape (M,)
    gamma : array-like of shape (M,)
        Bias-variation bounds ending in 0; fidelities whose bound is not
        below a cheaper one's are skipped.
    delta : float, default=0.001
    variance_proxy : float, default=1.0
    epsilon : float, optional
    random_state : None
    futility_switch : bool, default=False
        See :class:`IISE`.
    cost_balance : float, optional
        See :class:`IISE`.
    best_first : bool, default=False
        See :class:`IISE`.
    batch_size : int, default=1
        See :class:`IISE`.
    chunk_cost : float, optional
        See :class:`IISE`.
    confidence : {"iise", "mixture"}, default="iise"
        See :class:`IISE`.
    top_share : float, optional
        See :class:`IISE`.
    curve_check : array-like of shape (M,), optional
        See :class:`IISE`.
    """

    _bias_name = "gamma"

    def __init__(self, n_arms, costs, gamma, delta=0.001, variance_proxy=1.0, epsilon=None,
                 random_state=None, futility_switch=False, cost_balance=None, best_first=False,
                 batch_size=1, chunk_cost=None, confidence="iise", top_share=None,
                 curve_check=None, top_glr=None):
        super().__init__(n_arms, costs, gamma, delta, variance_proxy, epsilon, random_state,
                         futility_switch, cost_balance, best_first, batch_size, chunk_cost,
                         confidence, top_share, curve_check, top_glr)

    def _thresholds(self, costs, bias):
        return iise_thresholds(costs, bias, 2.0)

    def _widths(self, bias):
        return bias.copy()


class MFE(_BoundedElimination):
    """MFE ("maximum fidelity exploit"), the naive multi-fidelity baseline of Poiani et al.

    IISE's elimination rule with ``α_m = c ξ_m`` for ``m < M``: it leaves a
    fidelity only once its radius is a fraction ``c`` of the bias, so it pays
    for long phases at biased fidelities. ``c`` is not stated in the paper;
    ``c = 0.1`` reproduces Synthetic A/B and ``c = 0.005`` Yahtzee [calib].

    Parameters
    ----------
    n_arms : int
    costs : array-like of shape (M,)
    xi : array-like of shape (M,)
    c : float, default=0.1
    delta : float, default=0.001
    variance_proxy : float, default=1.0
    epsilon : float, optional
    random_state : None
    """

    def __init__(self, n_arms, costs, xi, c=0.1, delta=0.001, variance_proxy=1.0,
                 epsilon=None, random_state=None):
        self.c = check_positive(c, "c")
        super().__init__(n_arms, costs, xi, delta, variance_proxy, epsilon, random_state)

    def _thresholds(self, costs, bias):
        return self.c * bias

    def _widths(self, bias):
        return 2.0 * bias

    def _skip_phase(self, fidelity_means: np.ndarray) -> int:
        """Jump to the end of the current phase without sampling (simulator only).

        Used by :func:`mftune.benchmarks.simulate.simulate_policy` when the
        active arms' *true* fidelity-``m`` means differ by at most ``2 ξ_m``,
        where elimination is (almost surely) impossible — the authors'
        pre-computed "options" for Yahtzee do the same. Counts and costs are
        charged for the skipped rounds; sums get their expected values.
        Returns the number of rounds skipped.
        """
        m = self.fidelity_
        n = int(self.phase_length() - self.t_)
        if n <= 0:
            return 0
        arms = self._round_arms()
        self.stats.counts[m, arms] += n
        self.stats.sums[m, arms] += n * fidelity_means[arms]
        self.stats.sumsq[m, arms] += n * (fidelity_means[arms] ** 2 + self.variance_proxy)
        self.stats.cost[m, arms] += n * self.costs[m]
        self.t_ += n
        self.n_rounds += n
        self.phase_ += 1
        self.t_ = 0
        return n
