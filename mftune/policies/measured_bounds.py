"""Bounds measured during a run: the costs, bias bounds and σ² that a phased elimination
takes from the tuner as it goes (``update_bounds``), and the arms a grown bias bound
re-opens [RECON] (docs/algorithms.md, "Calibration: σ, bias bounds and costs")."""

from __future__ import annotations

import numpy as np

from .._validation import check_bias, check_costs, check_variance_proxy

__all__ = ["MeasuredBounds"]


class MeasuredBounds:
    """Mixin of :class:`~mftune.policies.elimination.PhasedElimination`: :meth:`update_bounds`.

    It reads and sets the elimination's costs, σ², thresholds, widths and
    elimination record; subclasses with bias bounds (IISE, IISE-γ, MFE) override
    :meth:`_derive_bounds`, :meth:`_current_bias` and :meth:`_set_bias`.
    """

    def _derive_bounds(self, costs: np.ndarray, bias: np.ndarray):
        """Thresholds and widths for new costs/bias (overridden by IISE, IISE-γ, MFE)."""
        raise NotImplementedError(f"{type(self).__name__} has no bias bounds to update")

    def _current_bias(self) -> np.ndarray | None:
        return None

    def update_bounds(self, costs=None, xi=None, variance_proxy=None) -> None:
        """Replace the costs λ, the bias bounds and/or σ² during a run.

        Used by the tuner, whose costs are running estimates of measured
        seconds and whose bias bounds are estimated or grown online. ``xi`` is
        the bound the subclass works with (ξ for IISE/MFE, γ for IISE-γ; SE has
        none). Thresholds ``α_m`` and elimination widths are recomputed; the
        current phase uses them from its next round on, finished phases are
        not revisited (their switches and eliminations stand).

        Effect on the guarantee: costs enter only the switch thresholds, so
        changing them affects the cost of the run, never its correctness. The
        δ-correctness of IISE holds when the bias bounds in force at every
        elimination were valid; growing a bound (adaptive mode) makes later
        eliminations conservative again and re-opens every arm eliminated
        below the top whose elimination the grown bound no longer backs
        (:meth:`_reopen`). A new σ² changes the radius
        ``B(t, δ')`` of later tests, which are valid if the new σ² is.

        Parameters
        ----------
        costs : array-like of shape (M,), optional
            Strictly increasing per-fidelity costs.
        xi : array-like of shape (M,), optional
            Bias bounds ending in 0 (later phases skip the fidelities they make useless).
        variance_proxy : float or array-like of shape (M,), optional
            New sub-Gaussian variance proxy σ², or one per fidelity (each
            phase's radius then uses its fidelity's σ²_m; the elimination
            tests stay valid when every σ²_m is, the switch thresholds keep
            their form with σ_m in B).
        """
        if costs is not None:
            self.costs = check_costs(costs, "costs", self.n_fidelities)
        if variance_proxy is not None:
            self.variance_proxy, self.fidelity_variance_ = check_variance_proxy(
                variance_proxy, self.n_fidelities)
            self.__dict__.pop("_radius_cache", None)
        bias = self._current_bias()
        if xi is not None:
            if bias is None:
                raise ValueError(f"xi: {type(self).__name__} uses no bias bounds")
            bias = check_bias(xi, "xi", self.n_fidelities, monotone=False)
        if bias is not None and (costs is not None or xi is not None):
            self.thresholds, self.widths = self._derive_bounds(self.costs, bias)
            self._set_bias(bias)
            self._reopen()

    def _reopen(self) -> None:
        """Re-open the arms whose elimination below the top the current widths no longer back
        [RECON]: an arm eliminated at ``m`` under a bias bound later grown is active again if
        its slack then (lead − mean − 2B − guard) is below the new width of ``m``; it rejoins
        the current phase and is pulled there until it has the round's samples."""
        fid = self.eliminated_fidelity
        below = (~self.active) & (fid >= 0) & (fid < self.n_fidelities - 1)
        back = below & (self.elim_slack_ < self.widths[np.clip(fid, 0, None)])
        if back.any():
            self.active |= back
            self.eliminated_round[back] = -1
            self.eliminated_fidelity[back] = -1
            self.elim_slack_[back] = np.nan
            self.reopened_ += int(back.sum())

    def _set_bias(self, bias: np.ndarray) -> None:
        pass
