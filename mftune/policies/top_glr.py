"""GLR stopping in the final phase of a phased elimination (``top_glr``) [RECON].

In the final phase of :class:`~mftune.policies.elimination.PhasedElimination`,
after every round, a generalised likelihood ratio test among the survivors
at the top fidelity (:class:`~mftune.policies.glr.GLRStopping` with one
fidelity and the ε pair values of
:func:`~mftune.policies.lower_bound.pair_values`) may also end the run; the
eliminations keep running, and the run stops at whichever comes first. The
final phase's δ share is split in two halves: its eliminations (and the ε
rule) use half their per-arm δ', the test the other half of the phase's
total. A wrong answer needs a lower phase's bound to fail (its share,
unchanged), a top-phase bound to fail (half the top share) or, with the
best arm still a survivor, the test to certify a worse arm against it (the
other half): a union bound gives δ in all. :meth:`TopGLR.glr_delta`
has the test's δ, :func:`~mftune.policies.glr.paired_mixture_threshold` the
threshold and the proof of its validity.
"""

from __future__ import annotations

import numpy as np

from .glr import GLRStopping, paired_mixture_threshold

__all__ = ["GLR_SHARE", "TOP_GLR", "TopGLR"]

#: The thresholds of the top phase's GLR test (``top_glr``): the proven
#: ``"paired-mixture"`` and two of :data:`~mftune.policies.glr.THRESHOLDS`
#: (``"practical"``: no proof; ``"theory"``: MF-GRAD's, its proof RECON).
TOP_GLR = ("paired-mixture", "practical", "theory")
#: Share of the final phase's δ given to the GLR test (the rest to its eliminations).
GLR_SHARE = 0.5


class TopGLR:
    """The final phase's GLR test (a mixin of :class:`~.elimination.PhasedElimination`).

    It reads the elimination's ``top_glr``, phases, δ shares (``_share_delta``),
    σ² (``_variance_now``), ε, rounds (``t_``, ``_round_arms``) and statistics,
    and sets ``glr_arm_`` and ``stopped_early_`` when the test stops.
    """

    def glr_delta(self) -> float:
        """δ of the top phase's GLR test: :data:`GLR_SHARE` of the final phase's ``K δ'``."""
        return GLR_SHARE * self.n_arms * self._share_delta(self.phases.size - 1)

    def _glr_time(self, t):
        """The threshold's ``t`` after ``t`` rounds of the final phase: the rounds for
        ``"paired-mixture"``, else the top phase's pulls (``t`` may be ahead of the stats)."""
        if self.top_glr == "paired-mixture":
            return t
        m = self.fidelity_
        told = float(self.stats.counts[m].sum())
        return told + (np.asarray(t, dtype=float) - self.t_) * self._round_arms().size

    def _glr(self) -> GLRStopping:
        """The top phase's GLR test at the current σ² and ε (one fidelity, :meth:`glr_delta`)."""
        threshold = (paired_mixture_threshold if self.top_glr == "paired-mixture"
                     else self.top_glr)
        return GLRStopping(self.n_arms, [0.0], float(np.sqrt(self._variance_now())),
                           self.glr_delta(), threshold=threshold, epsilon=self.epsilon or 0.0)

    def _glr_may_stop(self, sums: np.ndarray, t) -> np.ndarray:
        """Per round (columns of ``sums``, survivors × rounds, after ``t`` rounds): may the
        GLR test stop? With equal counts its statistic is ``(S_1 − S_2 + εt)² / (4σ² t)``
        (``S_1 >= S_2`` the two largest sums: the empirical best against its closest
        challenger); a relative slack of 1e-9 makes this a superset of the test's stops."""
        if sums.shape[0] < 2:
            return np.zeros(sums.shape[1], dtype=bool)
        top2 = np.sort(sums, axis=0)[-2:]
        lead = top2[1] - top2[0] + (self.epsilon or 0.0) * t
        stat = lead * lead / (4.0 * self._variance_now() * t)
        return stat >= self._glr().threshold(self._glr_time(t)) * (1.0 - 1e-9)

    def _glr_test(self, arms: np.ndarray, means: np.ndarray) -> None:
        """The top phase's GLR test on the survivors ``arms`` (their means after ``t_`` rounds)."""
        if not self._glr_may_stop(means[:, None] * self.t_, np.array([self.t_]))[0]:
            return  # the closed form rules a stop out; skip the solver
        counts = np.full((arms.size, 1), float(self.t_))
        stop, _, _, arm = self._glr().test(counts, means[:, None], t=self._glr_time(self.t_))
        if stop:
            self.glr_arm_ = int(arms[arm])
            self.stopped_early_ = True

