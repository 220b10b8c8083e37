"""What a phased elimination has shown when it stops before its rule: ``gap_bound`` [RECON].

On the event behind the eliminations of
:class:`~mftune.policies.elimination.PhasedElimination` (every mean at a
phase's fidelity within its radius at every count at once, the top phase's
test right), the best arm is a survivor, and the top-fidelity means of two
arms differ from their means at a fidelity ``m`` by at most ``widths[m]``
(``2ξ_m`` for IISE and MFE, ``γ_m`` for IISE-γ, 0 at the top). So for the
recommendation ``a`` and each survivor ``j``, at any fidelity ``m`` of a
phase run where both have results, ``µ_j,top − µ_a,top <= µ̂_jm + B(n_jm) −
(µ̂_am − B(n_am)) + widths[m]``, each radius at its own count; the bound is
the largest over the survivors of the smallest over such fidelities. The
policy's ε stopping rule is the case ``2B(t) + widths[m] <= ε`` of it at the
top after whole rounds; a search that stops on its budget states the bound
instead (:func:`mftune.study.record.statement`).

With the top phase's paired t-tests (``top_glr="paired-t"``) and ``t >= 2``
closed rounds at the top, each test inverted is a bound too: on its event,
``µ_b − µ_a <= q_t s_d / √t − d̄`` for the differences ``d = X_a − X_b`` of
the recommendation and survivor ``b`` on the same splits
(:mod:`mftune.policies.top_glr`), on the splits the two share (a parked
survivor's up to its parking); the bound is the smaller of the two, both
events being in the union behind δ.

With ``evidence_covered`` (set by :mod:`mftune.engine.waves` for its
waves, whose carried candidates' earlier results begin the
sequences the wave's event covers: they answer its pulls first), the bound
reads :meth:`add_evidence`'s results with the rounds', at every fidelity of
the schedule, and bounds only the candidates with a result (the search's
statement covers the candidates evaluated), so it holds from a wave's first
pull on.
"""

from __future__ import annotations

import numpy as np

__all__ = ["GapBound"]


class GapBound:
    """Mixin of :class:`~mftune.policies.elimination.PhasedElimination`: :meth:`gap_bound`."""

    def gap_bound(self) -> float:
        """How far the recommendation's top-fidelity mean can lie below the best arm's,
        on the event behind the eliminations (module docstring).

        Returns
        -------
        float
            The bound, with each phase's radius as the policy computes it now and,
            at the top, the paired tests' bound where it is smaller; ``0`` once one
            arm survives; ``nan`` while some survivor (with a result, under
            ``evidence_covered``) has none where the recommendation has one.
        """
        active = np.flatnonzero(self.active)
        if active.size == 1:
            return 0.0
        rec = int(self.recommend())
        counts, sums = self.stats.counts, self.stats.sums
        if self.evidence_covered and self.evidence_ is not None:
            counts, sums = counts + self.evidence_.counts, sums + self.evidence_.sums
            active = active[(counts[:, active].sum(axis=0) > 0) | (active == rec)]
        own = int(np.flatnonzero(active == rec)[0])
        fids = self.phases  # a phase not run has no result (without evidence)
        counts = counts[np.ix_(fids, active)]  # (phases, survivors)
        means = sums[np.ix_(fids, active)] / np.maximum(counts, 1)
        rad = np.stack([self.radius(n, p) for p, n in enumerate(counts)])
        lower = means[:, own] - rad[:, own]  # -inf where the recommendation has no result
        pair = means + rad - lower[:, None] + self.widths[fids][:, None]  # inf: no result
        gap = min(float(pair.min(axis=0).max()), self._paired_gap(active, own))
        return max(gap, 0.0) if np.isfinite(gap) else float("nan")

    def _paired_gap(self, active: np.ndarray, own: int) -> float:
        """The paired t-tests' bound at the top (module docstring); ``inf`` without it.
        Each survivor's test is on the splits it shares with the recommendation (a parked
        survivor's on those up to its parking), as :class:`~.top_glr.TopGLR` runs it."""
        others = np.delete(active, own)
        if (self.top_glr != "paired-t" or self.phase_ < self.phases.size - 1 or self.t_ < 2
                or not others.size or np.any(self._paired_splits(active[own], others) < 2)):
            return np.inf
        lead, sd, n, q = self._paired_tests(active[own], others)  # the tests' own numbers
        return float((q * sd / np.sqrt(n) - lead).max())
