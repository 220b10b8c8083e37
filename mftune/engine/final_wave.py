"""What a final wave would cost: successive elimination at the top fidelity [RECON].

A search with waves ends, when its last wave ended before its certificate, by
taking that wave's survivors on to it (:mod:`mftune.engine.waves`). Its budget
rule prices those top-fidelity rounds before deciding whether another wave fits.
"""

from __future__ import annotations

import numpy as np

from ..radii import iise_radius, mixture_radius

__all__ = ["ROUNDS_CAP", "final_wave_cost"]

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
