"""Cumulative regret of a multi-fidelity play sequence, under both published definitions.

For plays ``(I_t, m_t)``, ``t = 1, 2, ...`` with costs ``λ^(m_t)`` and a
capital ``Λ``, let ``N = max{n : Σ_{t≤n} λ^(m_t) <= Λ}``.

* **Kandasamy et al. (2016)**, Eq. 1: every play earns ``λ^(m_t) µ^(M)_{I_t}``
  and unspent capital earns nothing:
  ``R(Λ) = Λ µ* − Σ_{t≤N} λ^(m_t) µ^(M)_{I_t}``. It splits into
  ``Σ_{t≤N} λ^(m_t)(µ* − µ^(M)_{I_t})`` (the part the paper's analysis
  bounds) plus the residual ``(Λ − Σ_{t≤N} λ^(m_t)) µ*`` (< ``λ^(M) µ*``).
* **Wang et al. (2023)**, Eq. 9: every play earns ``µ^(M)_{I_t}`` whatever
  its fidelity, against the oracle that plays the best arm at the cheapest
  fidelity: ``R(Λ) = (Λ / λ^(1)) µ* − Σ_{t≤N} µ^(M)_{I_t}``.

:class:`RegretRecorder` is a :func:`mftune.engine.driver.run` callback that keeps
the play sequence; :func:`regret_curves` evaluates both definitions at a grid
of capitals from one sequence (exact for anytime policies such as UCB and
MF-UCB, whose plays do not depend on the capital).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RegretCurves", "RegretRecorder", "regret_curves"]


class RegretRecorder:
    """Driver callback recording the arm and fidelity of every pull, in order."""

    def __init__(self):
        self._arms: list[np.ndarray] = []
        self._fids: list[np.ndarray] = []

    def __call__(self, pulls, outcomes, policy) -> None:
        self._arms.append(np.asarray(pulls.arms))
        self._fids.append(np.asarray(pulls.fidelities))

    @property
    def arms(self) -> np.ndarray:
        return np.concatenate(self._arms) if self._arms else np.empty(0, dtype=np.int64)

    @property
    def fidelities(self) -> np.ndarray:
        return np.concatenate(self._fids) if self._fids else np.empty(0, dtype=np.int64)


@dataclass
class RegretCurves:
    """Regret at each capital of a grid.

    Attributes
    ----------
    capitals : ndarray of shape (G,)
    kandasamy : ndarray of shape (G,)
        ``Λ µ* − Σ_{t≤N} λ^(m_t) µ_{I_t}`` (with the residual).
    kandasamy_played : ndarray of shape (G,)
        ``Σ_{t≤N} λ^(m_t) (µ* − µ_{I_t})`` (without the residual).
    wang : ndarray of shape (G,)
        ``(Λ/λ^(1)) µ* − Σ_{t≤N} µ_{I_t}``.
    n_plays : ndarray of shape (G,)
        ``N`` at each capital.
    """

    capitals: np.ndarray
    kandasamy: np.ndarray
    kandasamy_played: np.ndarray
    wang: np.ndarray
    n_plays: np.ndarray


def regret_curves(arms, fidelities, mu, costs, capitals) -> RegretCurves:
    """Both regret definitions at every capital of ``capitals`` for one play sequence.

    Parameters
    ----------
    arms, fidelities : array-like of int, shape (n,)
        The plays in order (fidelities 0-based).
    mu : array-like of shape (K,)
        True (top-fidelity) means.
    costs : array-like of shape (M,)
        Cost per fidelity.
    capitals : array-like of shape (G,)
        Capitals Λ; the sequence must have been played until the next play
        would exceed ``max(capitals)`` for the values to be exact.

    Returns
    -------
    RegretCurves
    """
    arms = np.asarray(arms, dtype=np.int64)
    fids = np.asarray(fidelities, dtype=np.int64)
    mu = np.asarray(mu, dtype=float)
    costs = np.asarray(costs, dtype=float)
    caps = np.asarray(capitals, dtype=float).reshape(-1)
    if arms.shape != fids.shape:
        raise ValueError("arms and fidelities must have the same length")
    if np.any(caps <= 0):
        raise ValueError(f"capitals must be positive; got {caps.tolist()}")
    best = mu.max()
    lam = costs[fids]
    cum_cost = np.concatenate([[0.0], np.cumsum(lam)])
    cum_weighted = np.concatenate([[0.0], np.cumsum(lam * mu[arms])])
    cum_gap = np.concatenate([[0.0], np.cumsum(lam * (best - mu[arms]))])
    cum_mu = np.concatenate([[0.0], np.cumsum(mu[arms])])
    n = np.searchsorted(cum_cost, caps * (1 + 1e-12), side="right") - 1
    return RegretCurves(
        capitals=caps,
        kandasamy=caps * best - cum_weighted[n],
        kandasamy_played=cum_gap[n],
        wang=caps / costs[0] * best - cum_mu[n],
        n_plays=n,
    )
