"""LUCB for multi-fidelity best-arm identification, with EXPLORE-A/B/C and the Baseline.

Wang, Wu, Chen & Lui, "Multi-Fidelity Multi-Armed Bandits Revisited",
NeurIPS 2023, Algorithm 1 (the LUCB framework) with the fidelity procedures
of Algorithm 2 (EXPLORE-A, EXPLORE-B), Appendix D (EXPLORE-C) and the
Appendix C Baseline (always the top fidelity).

Every round the framework picks the two arms with the largest upper bounds,
``ℓ = argmax_k UCB_k`` and ``u = argmax_{k≠ℓ} UCB_k``, lets the procedure
pull ``u`` then ``ℓ`` at fidelities of its choice, and stops once
``LCB_ℓ > UCB_u``, returning ``ℓ``. The bounds combine all fidelities [paper
Eq. 4-5]::

    UCB_k = min_m ( µ̂^(m)_k + ζ^(m) + β(N^(m)_k, t, δ) ),
    LCB_k = max_m ( µ̂^(m)_k − ζ^(m) − β(N^(m)_k, t, δ) ),
    β(n, t, δ) = sqrt( log(L t⁴ / δ) / n ),

with rewards in ``[0, 1]`` (so ``UCB <= 1`` and ``LCB >= 0``, the values
Algorithm 1 initialises them to).

Found and reconstructed (docs/algorithms.md):

* bounds, framework, EXPLORE-A's f-UCB, EXPLORE-C — [paper];
* ``L = 4 K M`` (the smallest value Theorem 3.4 allows) and ``t`` = number
  of pulls so far — [RECON]; ``t`` = pulls reproduces the Baseline column of
  Table 3 [calib]; ``t_convention="rounds"`` is offered;
* EXPLORE-B's commit test (Algorithm 2, line 10, garbled in the paper) —
  [RECON] from Lemma E.3 and Remark A.2: commit to
  ``m̂ = argmax_m Δ̂^(m)/sqrt(λ^(m))`` once
  ``max_m Δ̂^(m)/sqrt(λ^(m)) >= 3 sqrt(log(L/δ) / (λ^(1) N^(m)))``;
* ties between equal upper bounds (all arms start at ``UCB = 1``) are not
  specified: ``ties="index"`` (default, Algorithm 1 starts with ``ℓ = 1,
  u = 2``) or ``ties="random"`` (a random priority order drawn once per run
  from ``random_state``).

Batch rule (``batch_size`` / ``ask(n)``, for ``n`` parallel workers) — ours,
not the paper's: a round pulls ``u`` then ``ℓ`` as above and then the next
*challengers* — the arms with the next largest ``UCB_k`` (same tie order),
each at the fidelity the procedure picks for a non-leader arm — as long as
the batch stays within ``n`` pulls and the challenger is not yet separated
from the leader (``UCB_k > LCB_ℓ``; pulling a separated arm cannot help the
stopping rule). With ``n <= 2`` (the default) a round is exactly Algorithm 1.
The bounds hold uniformly over ``t`` and the counts, so the extra pulls leave
the δ guarantee intact; they only add cost, which buys wall-clock time when
the workers would otherwise idle. Replayable for a fixed ``n``.

The decision rules are module-level functions over arrays with a leading
"runs" axis, so :mod:`mftune.benchmarks.lucb_sim` can advance a hundred
independent runs at once with exactly the decisions of :class:`MultiFidelityLUCB`
(tested).
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_batch_size, check_costs, check_delta, check_positive
from ..radii import inverse_sqrt_counts, lucb_radius_scale
from .base import Policy, Pulls

__all__ = ["PROCEDURES", "MultiFidelityLUCB", "check_mu_tilde"]

#: Fidelity procedures: EXPLORE-A, EXPLORE-B, EXPLORE-C and the top-fidelity Baseline.
PROCEDURES = ("A", "B", "C", "baseline")
TIES = ("index", "random")
T_CONVENTIONS = ("pulls", "rounds")


def check_zeta(zeta, n_fidelities: int) -> np.ndarray:
    """Bias bounds ζ: non-negative, non-increasing, last entry 0 (Wang et al. allow equal ζ)."""
    try:
        arr = np.asarray(zeta, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"zeta must be a 1-D sequence of numbers; got {zeta!r}") from exc
    if arr.size != n_fidelities:
        raise ValueError(f"zeta must have one entry per fidelity ({n_fidelities}); got {arr.size}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or arr[-1] != 0:
        raise ValueError(
            f"zeta must be finite, non-negative and end with 0 (the top fidelity is unbiased); "
            f"got {arr.tolist()}"
        )
    if np.any(np.diff(arr) > 0):
        raise ValueError(f"zeta must be non-increasing in the fidelity; got {arr.tolist()}")
    return arr


def check_mu_tilde(mu1_tilde, mu2_tilde, procedure: str) -> tuple[float, float]:
    """Check the bounds ``µ̃1 >= µ1`` and ``µ̃2 <= µ2`` that EXPLORE-A and -B need.

    Both must be given, lie in ``[0, 1]`` and satisfy ``µ̃1 > µ̃2`` (an upper
    bound on the best mean above a lower bound on the second best).
    """
    for name, value in (("mu1_tilde", mu1_tilde), ("mu2_tilde", mu2_tilde)):
        if value is None:
            raise ValueError(
                f"{name} is required by EXPLORE-{procedure} (an upper bound µ̃1 >= µ1 on the best "
                "mean and a lower bound µ̃2 <= µ2 on the second best, both in [0, 1]); use "
                "procedure='C' if no such bounds are known"
            )
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value <= 1:
            raise ValueError(f"{name} must be a real number in [0, 1]; got {value!r}")
    if not mu1_tilde > mu2_tilde:
        raise ValueError(
            f"mu1_tilde must exceed mu2_tilde (µ̃1 bounds the best mean from above, µ̃2 the "
            f"second best from below); got mu1_tilde={mu1_tilde!r} <= mu2_tilde={mu2_tilde!r}"
        )
    return float(mu1_tilde), float(mu2_tilde)


# -- decision rules, vectorised over a leading axis of independent runs ---------------------
# Shapes: counts/sums (R, M, K); t (R,); priority (R, K); ell/u (R,).


def _means(sums, counts):
    return sums / np.maximum(counts, 1)


def stat_arrays(sums, counts, zeta):
    """Per-entry pieces of the bounds: ``µ̂ + ζ``, ``µ̂ − ζ`` and ``1/sqrt(N)`` (``inf`` if 0).

    Entries depend only on their own (fidelity, arm) statistics, so a
    simulator may refresh just the pulled entries and get the same bits.
    """
    return entry_stats(sums, counts, zeta[:, None])


def entry_stats(sums, counts, zeta):
    """Elementwise core of :func:`stat_arrays` (``zeta`` broadcast against the counts)."""
    mean = _means(sums, counts)
    return mean + zeta, mean - zeta, inverse_sqrt_counts(counts)


def bounds_from(hi, lo, w, scale, clip=True):
    """``(UCB, LCB)``, shape ``(R, K)``, from :func:`stat_arrays` and ``sqrt(log(L t⁴/δ))``."""
    s = scale[:, None, None]
    ucb = np.min(hi + s * w, axis=1)
    lcb = np.max(lo - s * w, axis=1)
    if clip:
        ucb = np.minimum(ucb, 1.0)
        lcb = np.maximum(lcb, 0.0)
    return ucb, lcb


def lucb_bounds(sums, counts, t, zeta, delta, L, clip=True):
    """``(UCB, LCB)`` of every arm, shape ``(R, K)`` each [paper Eq. 4-5]."""
    hi, lo, w = stat_arrays(sums, counts, zeta)
    return bounds_from(hi, lo, w, lucb_radius_scale(t, delta, L), clip)


def top_two(ucb, priority):
    """``ℓ = argmax UCB`` and ``u = argmax_{k≠ℓ} UCB``; ties go to the lowest priority value."""
    rows = np.arange(ucb.shape[0])
    big = priority.shape[1]
    best = ucb.max(axis=1, keepdims=True)
    ell = np.argmin(np.where(ucb == best, priority, big), axis=1)
    rest = ucb.copy()
    rest[rows, ell] = -np.inf
    second = rest.max(axis=1, keepdims=True)
    u = np.argmin(np.where(rest == second, priority, big), axis=1)
    return ell, u


def along(values, axis: int, ndim: int) -> np.ndarray:
    """A per-fidelity vector reshaped to broadcast along ``axis`` of an ``ndim``-array."""
    shape = [1] * ndim
    shape[axis] = -1
    return np.reshape(values, shape)


def ancillary_gaps(mean, zeta, is_leader, mu1, mu2):
    """Δ̂^(m)_k: ``µ̃1 − (µ̂ + ζ)`` for ``k ≠ ℓ``, ``(µ̂ − ζ) − µ̃2`` for ``k = ℓ``.

    ``zeta`` and ``is_leader`` broadcast against ``mean`` (the caller puts
    them on the fidelity axis and the arm axes respectively).
    """
    return np.where(is_leader, mean - zeta - mu2, mu1 - (mean + zeta))


_LEAD = np.array([False, True])  # batch order: u first, then ℓ


def fidelity_choice(procedure, n, mean, w, scale, is_leader, zeta, costs, mu1, mu2, bonus=1.0,
                    axis=-1):
    """Fidelity EXPLORE-A (f-UCB) or EXPLORE-C pulls an arm at, from its per-fidelity stats.

    ``n``, ``mean`` and ``w`` (counts, means, ``1/sqrt(N)``) hold the
    fidelities along ``axis``; ``scale`` (``sqrt(log(L t⁴/δ))``, for C) and
    ``is_leader`` (for A) broadcast against them with ``axis`` of size 1.
    Any layout gives the same bits element by element, so a simulator may put
    the fidelity axis first (fast reductions) while the policy puts it last.
    Returns the chosen fidelity, ``axis`` removed.
    """
    z = along(zeta, axis, n.ndim)
    if procedure == "C":
        # lowest fidelity whose radius still exceeds its bias bound (ζ^(M) = 0 always does)
        return np.argmax(scale * w >= z, axis=axis)
    c = along(costs, axis, n.ndim)
    gaps = ancillary_gaps(mean, z, is_leader, mu1, mu2)
    total = n.sum(axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        explore = np.sqrt(2.0 * np.log(np.maximum(total, 1)) / (c * n))
        f_ucb = np.where(n > 0, gaps / np.sqrt(c) + bonus * explore, np.inf)
    return np.argmax(f_ucb, axis=axis)


def round_fidelities(procedure, shape, n, mean, w, scale, fixed2, commit2, zeta, costs, mu1, mu2,
                     bonus=1.0):
    """Pulls of one round as a boolean mask of shape ``(R, 2, M)``: arm ``u`` then arm ``ℓ``.

    ``n``, ``mean`` and ``w`` are the two arms' per-fidelity counts, means and
    ``1/sqrt(N)``, shape ``(R, 2, M)``; ``fixed2``/``commit2`` their EXPLORE-B
    state, shape ``(R, 2)``; ``shape`` is ``(R, M)``. Arguments a procedure
    does not use may be ``None``. ``bonus`` scales EXPLORE-A's exploration term
    (1 = the paper).
    """
    R, M = shape
    mask = np.zeros((R, 2, M), dtype=bool)
    if procedure == "baseline":
        mask[:, :, M - 1] = True
        return mask
    if procedure == "B":
        mask[:] = ~fixed2[:, :, None]
        r2, j2 = np.nonzero(fixed2)
        mask[r2, j2, commit2[r2, j2]] = True
        return mask
    sc = None if scale is None else np.asarray(scale)[:, None, None]
    m = fidelity_choice(procedure, n, mean, w, sc, _LEAD[None, :, None], zeta, costs, mu1, mu2,
                        bonus)
    np.put_along_axis(mask, m[:, :, None], True, axis=2)
    return mask


def round_mask(procedure, sums, counts, t, ell, u, fixed, commit, zeta, costs, delta, L,
               mu1, mu2, bonus=1.0):
    """:func:`round_fidelities` from full statistics ``(R, M, K)`` (the policy's path)."""
    rows = np.arange(counts.shape[0])[:, None]
    arms = np.stack([u, ell], axis=1)  # (R, 2)
    n = counts[rows, :, arms]  # (R, 2, M)
    s = sums[rows, :, arms]
    return round_fidelities(procedure, (counts.shape[0], counts.shape[1]), n, _means(s, n),
                            inverse_sqrt_counts(n), lucb_radius_scale(t, delta, L),
                            fixed[rows, arms], commit[rows, arms], zeta, costs, mu1, mu2,
                            bonus)


def explore_b_test(n, mean, is_leader, zeta, costs, delta, L, mu1, mu2, axis=-1, factor=1.0):
    """EXPLORE-B's commit test [RECON of Algorithm 2, line 10] for arms explored at every fidelity.

    ``n`` and ``mean`` hold one arm's per-fidelity counts and means along
    ``axis``; ``is_leader`` broadcasts against them. Returns ``(hit,
    fidelity)`` (``axis`` removed): whether the arm commits now, and to which
    fidelity ``argmax_m Δ̂^(m)/sqrt(λ^(m))``. ``factor`` scales the right-hand
    side (1: the paper's test; see :class:`MultiFidelityLUCB`'s ``commit_factor``).
    """
    z, c = along(zeta, axis, n.ndim), along(costs, axis, n.ndim)
    eff = ancillary_gaps(mean, z, is_leader, mu1, mu2) / np.sqrt(c)
    # An arm with a fidelity not pulled yet (a failed or cancelled pull in the tuner) has an
    # infinite threshold: it does not commit.
    with np.errstate(divide="ignore"):
        threshold = factor * 3.0 * np.sqrt(np.log(L / delta) / (costs[0] * n.min(axis=axis)))
    return eff.max(axis=axis) >= threshold, np.argmax(eff, axis=axis)


def explore_b_commit(sums, counts, pulled, ell, fixed, commit, zeta, costs, delta, L, mu1, mu2,
                     factor=1.0):
    """Apply :func:`explore_b_test` in place on ``fixed``/``commit``.

    ``pulled`` is a ``(R, K)`` mask of the arms pulled this round; those not
    yet committed were explored at every fidelity and are tested.
    """
    r, k = np.nonzero(pulled & ~fixed)
    if r.size == 0:
        return
    n = counts[r, :, k]  # (P, M)
    hit, best = explore_b_test(n, _means(sums[r, :, k], n), (k == ell[r])[:, None], zeta, costs,
                               delta, L, mu1, mu2, factor=factor)
    fixed[r[hit], k[hit]] = True
    commit[r[hit], k[hit]] = best[hit]


class MultiFidelityLUCB(Policy):
    """Wang et al.'s LUCB framework for multi-fidelity best-arm identification.

    Each round pulls the two critical arms ``u`` and ``ℓ`` (the natural
    batch) at the fidelities chosen by ``procedure``; the run stops when
    ``LCB_ℓ > UCB_u`` and recommends ``ℓ``, which is the best arm with
    probability at least ``1 − δ`` when ``L >= 4 K M`` and the bias bounds
    hold (Theorem 3.4).

    Parameters
    ----------
    n_arms : int
        Number of arms ``K``.
    costs : array-like of shape (M,)
        Strictly increasing costs λ^(m).
    zeta : array-like of shape (M,)
        Bias bounds ζ^(m), non-increasing, ``ζ^(M) = 0``.
    delta : float, default=0.1
        Error probability δ in (0, 1).
    procedure : {"A", "B", "C", "baseline"}, default="A"
        EXPLORE-A (f-UCB over fidelities), EXPLORE-B (explore then commit,
        [RECON] commit test), EXPLORE-C (lowest fidelity whose radius still
        exceeds its bias bound; needs no µ̃) or the Baseline (top fidelity).
    mu1_tilde, mu2_tilde : float, optional
        ``µ̃1 >= µ1`` and ``µ̃2 <= µ2``, required by EXPLORE-A and -B.
    L : float, optional
        Factor of the radius; default ``4 K M`` [RECON].
    t_convention : {"pulls", "rounds"}, default="pulls"
        What the time index ``t`` of ``β(n, t, δ)`` counts [calib: pulls].
    ties : {"index", "random"}, default="index"
        How equal upper bounds are ordered (see module docstring).
    clip : bool, default=True
        Clip ``UCB <= 1`` and ``LCB >= 0``: rewards in [0, 1], and :meth:`tell`
        refuses others (:attr:`reward_range`). ``False``: any real reward,
        for rewards already rescaled to the radius' units (sub-Gaussian with
        σ in place of 1/2: :class:`~mftune.policies.adapters.ScoreLUCB`, the
        Gaussian instances of :mod:`mftune.benchmarks.lower_bound`).
    fucb_bonus : float, default=1.0
        Multiplier of EXPLORE-A's exploration term ``sqrt(2 log N_k / (λ N^(m)_k))``;
        1 is the paper's f-UCB (other values are for diagnostics, and for the
        MF-GRAD authors' Gaussian variant below).
    commit_factor : float, default=1.0
        Multiplier of EXPLORE-B's commit threshold; 1 is the paper's test.
        [code] The MF-GRAD authors' Gaussian LUCB (riccardopoiani/adv-mf-bai,
        ``algorithms/lucb.py``) uses the radius ``sqrt(2σ² log(L t⁴/δ)/N)``, the
        f-UCB ``Δ̂/sqrt(λ) + sqrt(2 log N_k/(λ N))`` and the commit threshold
        ``3 sqrt(σ² log(L/δ)/(λ^(1) N))``: shown rewards rescaled by
        ``s = sqrt(2) σ``, this policy makes their decisions with
        ``fucb_bonus = 1/s`` and ``commit_factor = 1/sqrt(2)``
        (docs/algorithms.md).
    random_state : int, Generator or None
        Seeds the random tie-break order.
    batch_size : int, default=1
        Pulls per round that :meth:`ask` aims for (parallel workers); above 2,
        the batch rule of the module docstring adds challengers.
    """

    def __init__(self, n_arms, costs, zeta, delta=0.1, procedure="A", mu1_tilde=None,
                 mu2_tilde=None, L=None, t_convention="pulls", ties="index", clip=True,
                 fucb_bonus=1.0, random_state=None, *, batch_size=1, commit_factor=1.0):
        costs = check_costs(costs)
        super().__init__(n_arms, costs.size, random_state)
        self.costs = costs
        self.zeta = check_zeta(zeta, costs.size)
        self.delta = check_delta(delta)
        if procedure not in PROCEDURES:
            raise ValueError(f"procedure must be one of {PROCEDURES}; got {procedure!r}")
        self.procedure = procedure
        if procedure in ("A", "B"):
            self.mu1_tilde, self.mu2_tilde = check_mu_tilde(mu1_tilde, mu2_tilde, procedure)
        else:
            self.mu1_tilde = None if mu1_tilde is None else float(mu1_tilde)
            self.mu2_tilde = None if mu2_tilde is None else float(mu2_tilde)
        self.L = 4.0 * self.n_arms * self.n_fidelities if L is None else check_positive(L, "L")
        if t_convention not in T_CONVENTIONS:
            raise ValueError(f"t_convention must be one of {T_CONVENTIONS}; got {t_convention!r}")
        self.t_convention = t_convention
        if ties not in TIES:
            raise ValueError(f"ties must be one of {TIES}; got {ties!r}")
        self.ties = ties
        self.clip = bool(clip)
        self.reward_range = (0.0, 1.0) if self.clip else None
        self.fucb_bonus = check_positive(fucb_bonus, "fucb_bonus", strict=False)
        self.commit_factor = check_positive(commit_factor, "commit_factor")
        self.batch_size = check_batch_size(batch_size)
        self.priority = (np.arange(self.n_arms) if ties == "index"
                         else self.rng_.permutation(self.n_arms))
        self.fixed = np.zeros(self.n_arms, dtype=bool)
        self.commit = np.zeros(self.n_arms, dtype=np.int64)
        self._round_arms = None
        self._stopped = False
        self._select()

    # -- state helpers --------------------------------------------------------
    def _t(self) -> np.ndarray:
        n = self.n_rounds if self.t_convention == "rounds" else int(self.stats.counts.sum())
        return np.array([max(n, 1)])

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Current ``(UCB_k, LCB_k)`` of every arm."""
        ucb, lcb = lucb_bounds(self.stats.sums[None], self.stats.counts[None], self._t(),
                               self.zeta, self.delta, self.L, self.clip)
        return ucb[0], lcb[0]

    def _select(self) -> None:
        ucb, lcb = self.bounds()
        ell, u = top_two(ucb[None], self.priority[None])
        self.ell_, self.u_ = int(ell[0]), int(u[0])
        self._stopped = bool(lcb[self.ell_] > ucb[self.u_])

    def _mu(self) -> tuple[float, float]:
        return (self.mu1_tilde or 0.0, self.mu2_tilde or 0.0)

    # -- protocol -------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self._stopped

    def nominal_costs(self) -> np.ndarray:
        return self.costs

    def recommend(self) -> int:
        """The leader ``ℓ`` (the answer once :attr:`done`)."""
        return self.ell_

    def _fidelity_masks(self, challengers: np.ndarray) -> np.ndarray:
        """Per-fidelity pull masks, shape ``(R + 1, M)``: each challenger, then ``ℓ``."""
        R = challengers.size
        mu1, mu2 = self._mu()
        shape = (R, *self.stats.counts.shape)
        mask = round_mask(self.procedure, np.broadcast_to(self.stats.sums, shape),
                          np.broadcast_to(self.stats.counts, shape), np.repeat(self._t(), R),
                          np.full(R, self.ell_), challengers,
                          np.broadcast_to(self.fixed, (R, self.n_arms)),
                          np.broadcast_to(self.commit, (R, self.n_arms)), self.zeta,
                          self.costs, self.delta, self.L, mu1, mu2, self.fucb_bonus)
        return np.vstack([mask[:, 0], mask[:1, 1]])

    def challengers(self) -> np.ndarray:
        """Arms other than ``ℓ`` by decreasing ``UCB_k`` (``u`` first), not yet separated.

        An arm is separated from the leader once ``UCB_k <= LCB_ℓ``; ``u`` is
        always included (the stopping rule compares it).
        """
        ucb, lcb = self.bounds()
        others = np.flatnonzero(np.arange(self.n_arms) != self.ell_)
        order = others[np.lexsort((self.priority[others], -ucb[others]))]
        keep = (ucb[order] > lcb[self.ell_]) | (order == self.u_)
        return order[keep]

    def _next_pulls(self, n: int) -> Pulls:
        if self.n_pending:
            return Pulls.empty()
        cands = np.array([self.u_]) if n <= 2 else self.challengers()
        masks = self._fidelity_masks(cands)
        sizes = masks[:-1].sum(axis=1)
        # u and ℓ always; then whole challengers while the batch stays within n pulls
        fits = np.cumsum(sizes) + masks[-1].sum() <= n
        fits[0] = True
        n_ch = int(np.argmin(fits)) if not fits.all() else fits.size
        arms_order = np.r_[cands[:1], self.ell_, cands[1:n_ch]]
        mask = np.vstack([masks[:1], masks[-1:], masks[1:n_ch]])
        j, m = np.nonzero(mask)
        self._round_arms = (self.ell_, arms_order)
        return Pulls(arms_order[j], m)

    def _after_tell(self, pulls, rewards, costs) -> None:
        if self.n_pending:
            return
        self.n_rounds += 1
        if self.procedure == "B":
            ell, batch_arms = self._round_arms
            pulled = np.zeros((1, self.n_arms), dtype=bool)
            pulled[0, batch_arms] = True
            mu1, mu2 = self._mu()
            explore_b_commit(self.stats.sums[None], self.stats.counts[None], pulled,
                             np.array([ell]), self.fixed[None], self.commit[None], self.zeta,
                             self.costs, self.delta, self.L, mu1, mu2, self.commit_factor)
        self._select()

    def _summary_extra(self) -> dict:
        ucb, lcb = self.bounds()
        return {
            "procedure": self.procedure,
            "leader": self.ell_,
            "challenger": self.u_,
            "ucb": ucb.tolist(),
            "lcb": lcb.tolist(),
            "committed_fidelity": np.where(self.fixed, self.commit, -1).tolist(),
            "L": self.L,
            "t_convention": self.t_convention,
            "batch_size": self.batch_size,
        }
