"""What a final wave would cost: its top-fidelity rounds until its certificate [RECON].

A search with waves ends, when its last wave ended before its certificate, by
taking that wave's survivors on to it (:mod:`mftune.engine.waves`). Its budget
rule prices those top-fidelity rounds before deciding whether another wave fits:
by the radii of successive elimination (:func:`final_wave_cost`) and, where the
wave's top phase runs paired t-tests, by those tests at the differences measured
so far (:func:`paired_final_cost`); the final wave stops at whichever comes first.
"""

from __future__ import annotations

import numpy as np

from ..policies.top_glr import paired_differences, paired_t_quantile, paired_t_rounds
from ..radii import iise_radius, mixture_radius

__all__ = ["ROUNDS_CAP", "final_wave_cost", "paired_final_cost"]

#: Rounds within which :func:`final_wave_cost` looks for the final wave's end.
ROUNDS_CAP = 100_000


def final_wave_cost(counts, sums, per_pull: float, variance: float, delta: float,
                    epsilon: float | None = None, confidence: str = "iise") -> float:
    """Estimated cost of successive elimination at the top fidelity over ``n`` survivors.

    The wave pulls every survivor once per round; survivor ``i`` goes once
    ``2 B(t) <= g_i``, its gap to the leader's mean, and the wave stops once
    one survivor is left or ``2 B(t) <= ε`` (its ε stopping rule), with
    ``B(t)`` the radius at ``δ/n``. The gaps are the survivors' means so far
    (a plug-in estimate: a survivor without a result counts as tied).

    Parameters
    ----------
    counts, sums : array-like of shape (n,)
        The survivors' results at the top fidelity so far.
    per_pull : float
        The cost of one pull.
    variance : float
        σ² of the top fidelity.
    delta : float
        The confidence of the rounds priced.
    epsilon : float, optional
        Its ε (``None`` or 0: no ε rule).
    confidence : {"iise", "mixture"}, default="iise"
        The radius (:mod:`mftune.radii`).

    Returns
    -------
    float
        ``per_pull`` times the pulls; ``0`` for one survivor, ``inf`` when the
        rule would not end within :data:`ROUNDS_CAP` rounds (ties without an ε).
    """
    counts = np.asarray(counts, dtype=float).reshape(-1)
    sums = np.asarray(sums, dtype=float).reshape(-1)
    n = counts.size
    if n <= 1:
        return 0.0
    radius = mixture_radius if confidence == "mixture" else iise_radius
    width = 2.0 * radius(np.arange(1, ROUNDS_CAP + 1, dtype=float), delta / n, variance)
    has = counts > 0
    means = np.where(has, sums / np.maximum(counts, 1), -np.inf)
    lead = int(np.argmax(means)) if has.any() else 0
    gaps = np.delete(np.where(has, means[lead] - means, 0.0), lead)
    if epsilon:
        gaps = np.maximum(gaps, float(epsilon))
    # the first round t with 2 B(t) <= gap (the width decreases in t)
    rounds = np.searchsorted(-width, -gaps, side="left") + 1.0
    rounds[rounds > ROUNDS_CAP] = np.inf
    total = rounds.sum() + rounds.max()  # the leader is pulled until the last one goes
    return float(total * per_pull) if np.isfinite(total) else np.inf


def paired_final_cost(rewards, per_pull: float, delta: float, n_arms: int,
                      epsilon: float | None = None, lower: float = 1.0) -> float:
    """Estimated cost of the top phase's paired t-tests certifying the survivors.

    The leader is the survivor of largest mean. Each other survivor is pulled
    until its test against the leader passes with ε
    (:func:`~mftune.policies.top_glr.paired_t_rounds`, the quantile
    :func:`~mftune.policies.top_glr.paired_t_quantile` at ``delta`` and
    ``n_arms``) if the spread of their differences stays as measured and their
    mean is ``lower`` standard errors below the measured one (a leader's lead is
    partly its luck) [calib: docs/benchmarks.md, "What the budget rule's price of
    the final wave is worth"]; the leader until the last one passes. The rounds
    done are deducted.

    Parameters
    ----------
    rewards : array-like of shape (n, t)
        The survivors' top-fidelity results, one column per round (split).
    per_pull : float
        The cost of one pull.
    delta : float
        The tests' δ (their :meth:`~mftune.policies.top_glr.TopGLR.glr_delta`).
    n_arms : int
        The arms the tests' union covers.
    epsilon : float, optional
        Their ε (``None``: 0).
    lower : float, default=1.0
        Standard errors taken off each measured mean difference (0: the plug-in).

    Returns
    -------
    float
        ``per_pull`` times the pulls; ``0`` for one survivor, ``inf`` before two
        rounds (no spread yet) or when a test would not pass within
        :data:`ROUNDS_CAP` rounds.
    """
    rewards = np.asarray(rewards, dtype=float)
    n, t = rewards.shape
    if n <= 1:
        return 0.0
    if t < 2:
        return np.inf
    leader = int(np.argmax(rewards.mean(axis=1)))
    lead, spread = (np.delete(x, leader) for x in paired_differences(rewards, leader, t))
    lead = lead - lower * spread / np.sqrt(t) + (epsilon or 0.0)
    need = paired_t_rounds(lead, spread, lambda r: paired_t_quantile(r, delta, n_arms),
                           ROUNDS_CAP)
    more = np.maximum(need - t, 0.0)
    total = more.sum() + more.max()
    return float(total * per_pull) if np.isfinite(total) else np.inf
