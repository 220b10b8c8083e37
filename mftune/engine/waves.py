"""Candidates that adapt: waves of candidates, proposed from a surrogate, each certified [RECON].

A search with waves (``MFTuner(adaptive="auto")``, the default over a
sampled, unconditional space) runs as docs/tuner.md ("Candidates that adapt")
states, with the certificate's argument:

1. **Wave 1** is the initial candidates, a scrambled Sobol design
   (:func:`~mftune.engine.candidates.initial_design`).
2. Exploring wave ``w`` runs the elimination policy over its ``K_w``
   candidates with ``δ_w = (δ/2) · 6 / (π² w²)`` (:func:`wave_delta`) shared
   by the ``N_w`` candidates known at its start, until its stopping rule
   holds or it has screened them (``early_end``). Another ``δ_w`` is kept
   for the wave in case it becomes the final wave: ``Σ_w 2 δ_w <= δ``.
3. A surrogate fitted on every evaluation (:mod:`mftune.engine.surrogate`)
   proposes ``wave_size`` new candidates; the next wave runs over them and
   *all* the survivors, whose earlier results answer their pulls first
   (:meth:`Waves._replay`). A study records how each wave ended (``journal``).
4. When no new candidates follow (:meth:`Waves._next`), the search stops
   with the wave's certificate or, when the wave ended early, the wave goes
   on to its stopping rule as the **final wave**, its δ raised to ``2 δ_w``
   by the share kept for it (:meth:`Waves._conclude`).

On the event that every wave's elimination is correct (probability ``>= 1
− δ``), the best of all the candidates evaluated survives every wave, so the
recommendation is within ε of it (replayed results: wave ``w``'s policy gets
``δ_w K_w / N_w``, ``policy_delta`` in :attr:`Waves.waves_`; the final wave
``2 δ_w K_w / N_w``). A search cut short states :meth:`Waves.gap_bound`:
the wave policy's (:mod:`mftune.policies.gap_bound`; it reads the carried
candidates' earlier results, ``evidence_covered``) or, in the final wave and
for the same incumbent, the wave's own at its early end if smaller.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..policies import registry as algorithms
from ..policies.base import ArmStats, Policy, Pulls, outstanding
from .final_wave import final_wave_cost, paired_final_cost
from .results_log import ResultsLog
from .surrogate import SURROGATES, propose

__all__ = ["MAX_WAVES", "WAVE_ALGORITHMS", "Waves", "make_waves", "wave_delta"]

#: Waves after which a search stops proposing (its certificate then covers the
#: candidates evaluated, and the statement says no surrogate judgement was made).
MAX_WAVES = 6
#: Waves whose proposals must raise the incumbent's score by more than ε, else no wave
#: follows (the surrogate's own test rarely fires on bimodal landscapes: docs/tuner.md).
STALL_WAVES = 2
#: Algorithms a search with waves runs in each wave (policies with an ``active`` set
#: and an elimination guarantee: the survivors carry the best candidate over).
WAVE_ALGORITHMS = ("se", "iise", "iise-gamma")
#: The surrogate of the waves (``python -m mftune.benchmarks.surrogate_choice``).
DEFAULT_SURROGATE = "forest"


def _apply_updates(policy, updates: dict) -> None:
    """``policy.update_bounds(**updates)``, less the bias bound for a policy with none."""
    has_bias = getattr(policy, "_current_bias", lambda: None)() is not None
    policy.update_bounds(**{k: v for k, v in updates.items() if k != "xi" or has_bias})


def wave_delta(delta: float, wave) -> np.ndarray | float:
    """Confidence of wave ``w`` (1-based): ``δ · 6 / (π² w²)``, summing to at most ``δ``.

    Parameters
    ----------
    delta : float
        The δ to split (a search gives its exploring waves half of its own).
    wave : int or array-like of int
        Wave numbers, from 1.

    Returns
    -------
    float or ndarray
    """
    w = np.asarray(wave, dtype=float)
    if np.any(w < 1):
        raise ValueError(f"wave must be >= 1; got {wave!r}")
    out = float(delta) * 6.0 / (np.pi**2 * w**2)
    return float(out) if out.ndim == 0 else out


def make_waves(name: str, ctx, wave_size: int, max_waves: int | None = None) -> Waves:
    """The search's policy with waves: ``name`` (a registry name) built for every wave.

    Parameters
    ----------
    name : str
        One of :data:`WAVE_ALGORITHMS`.
    ctx : PolicyContext
        The context the search built for a fixed search (its ``evaluator``
        holds the candidate list, its ``space`` encodes it); each wave's
        policy gets it with its own ``n_arms`` and ``delta``.
    wave_size : int
    max_waves : int, optional
        Default :data:`MAX_WAVES`.

    Returns
    -------
    Waves
    """
    max_waves = MAX_WAVES if max_waves is None else max_waves
    ev = ctx.evaluator
    builder = _Builder(name, ctx)
    return Waves(builder, ctx.space, ev.candidates, ev.add_candidates, len(ctx.costs),
                 delta=ctx.delta, epsilon=ctx.epsilon, wave_size=wave_size,
                 max_waves=max_waves, random_state=ctx.random_state)


class _Builder:
    """``build(n_arms, delta)``: the registry's policy ``name`` for one wave (picklable)."""

    def __init__(self, name: str, ctx):
        self.name, self.ctx = name, ctx

    def __call__(self, n_arms: int, delta: float):
        ctx = replace(self.ctx, n_arms=int(n_arms), delta=float(delta))
        return algorithms.make_policy(self.name, ctx)


class Waves:
    """A policy that runs an elimination policy wave after wave over growing candidates.

    See the module docstring. Arms are the indices of ``candidates`` (which
    grows); statistics, pending pulls and the elimination record are kept
    for all of them, so the engine's updates (σ, costs, bias checks) read
    every evaluation.

    Parameters
    ----------
    build : callable
        ``build(n_arms, delta)`` returns the policy of one wave.
    space : Space or None
        Encodes candidates and decodes proposals; ``None`` replays a study (its
        ``journal`` gives every wave's end).
    candidates : list of dict
        The evaluator's candidates; new ones are appended.
    grow : callable
        ``grow(n)`` tells the evaluator that ``n`` candidates were appended.
    n_fidelities : int
    delta : float
        The search's δ, split over the waves (:func:`wave_delta`).
    epsilon : float or None
        The search's ε (the surrogate's test reads it too).
    wave_size : int
        New candidates per wave.
    max_waves : int, default=MAX_WAVES
    surrogate : {"forest", "density"}, optional
        Default :data:`DEFAULT_SURROGATE`.
    random_state : int or None
        Seeds the surrogate and its pool (wave ``w`` uses ``random_state + w``).
    early_end : bool, default=True
        With several fidelities, also end a wave once it has screened its candidates
        (:meth:`_screened`), carrying every survivor over, so new candidates arrive
        before a certificate. The last wave always runs to its stopping rule.

    Attributes
    ----------
    wave_of : ndarray of int
        The wave each candidate entered (1-based).
    waves_ : list of dict
        One entry per wave: its δ, candidates, new and carried ones, and at its
        end the survivors, the incumbent, its ``gap_bound`` and the surrogate's worth.
    finished_ : str or None
        Why no wave follows: ``"surrogate"`` (nothing new worth more than ε),
        ``"stalled"``, ``"budget"`` (another wave and the certificate after it,
        :meth:`final_cost`, would not fit in what is left of :attr:`budget_left_`),
        ``"max-waves"`` or ``"exhausted"`` (no new configuration left).
    journal : callable or None
        ``journal(wave, decide) -> (reason, configs)``: a wave's end as a study
        recorded it, ``decide()`` giving this run's (:meth:`_next`).

    The wave policy's settings answer for it (``__getattr__``).
    """

    def __init__(self, build, space, candidates: list, grow, n_fidelities: int, *,
                 delta: float, epsilon: float | None, wave_size: int,
                 max_waves: int = MAX_WAVES, surrogate: str | None = None,
                 random_state=None, early_end: bool = True):
        surrogate = DEFAULT_SURROGATE if surrogate is None else surrogate
        if surrogate not in SURROGATES:
            raise ValueError(f"surrogate must be one of {list(SURROGATES)}; got {surrogate!r}")
        if int(max_waves) != max_waves or max_waves < 1:
            raise ValueError(f"max_waves must be an integer >= 1; got {max_waves!r}")
        self.build, self.space, self.candidates, self._grow = build, space, candidates, grow
        self.n_fidelities = int(n_fidelities)
        self.delta, self.epsilon = float(delta), epsilon
        self.wave_size, self.max_waves, self.surrogate = int(wave_size), int(max_waves), surrogate
        self.seed = 0 if random_state is None else int(random_state)
        n = len(candidates)
        self.stats = ArmStats(n, self.n_fidelities)
        self.pending = np.zeros((self.n_fidelities, n), dtype=np.int64)
        self.active = np.ones(n, dtype=bool)
        self.eliminated_round = np.full(n, -1, dtype=np.int64)
        self.eliminated_fidelity = np.full(n, -1, dtype=np.int64)
        self.wave_of = np.ones(n, dtype=np.int64)
        self.evidence_ = ArmStats(n, self.n_fidelities)
        self.log_ = ResultsLog()  # every result, in order: replayed to carried candidates
        self._prior = np.zeros((self.n_fidelities, n), dtype=np.int64)  # replayable now
        self._units = None if space is None else space.to_unit(candidates)  # None: replay
        self._updates: dict = {}
        self._pull_costs = None
        self._rounds_before = 0
        self.budget_left_: float | None = None  # set by the search after every batch
        self.wave_ = 0
        self.finished_: str | None = None
        self._last: str | None = None  # why no wave will follow the current one
        self.early_end = bool(early_end)
        #: survivors a wave may carry over when it ends before its rule
        self.carry_limit = max(2, self.wave_size // 2)
        self.incumbent_ = 0
        self.waves_: list[dict] = []
        self.journal = None
        self._start_wave(np.arange(n), np.empty(0, dtype=np.int64))

    # -- the engine's view ------------------------------------------------------------
    def __getattr__(self, name: str):
        """The current wave policy's settings (``futility_switch``, ``epsilon``, ...)."""
        if name.startswith("_") or name == "inner" or "inner" not in self.__dict__:
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def n_arms(self) -> int:
        return self.stats.counts.shape[1]

    @property
    def done(self) -> bool:
        return self.finished_ is not None

    @property
    def n_rounds(self) -> int:
        return self._rounds_before + (0 if self.done else int(self.inner.n_rounds))

    @property
    def n_pending(self) -> int:
        return int(self.pending.sum())

    @property
    def best_first(self) -> bool:
        return bool(getattr(self.inner, "best_first", False))

    @property
    def chunk_cost(self):
        return getattr(self.inner, "chunk_cost", None)

    @property
    def round_open(self) -> bool:
        return not self.done and bool(getattr(self.inner, "round_open", False))

    @property
    def pull_costs_(self):
        return self._pull_costs

    @pull_costs_.setter
    def pull_costs_(self, value) -> None:
        self._pull_costs = value
        if hasattr(self.inner, "pull_costs_"):
            self.inner.pull_costs_ = value

    def nominal_costs(self) -> np.ndarray:
        return self.inner.nominal_costs()

    def update_bounds(self, **kwargs) -> None:
        """Forward ``update_bounds`` to the wave's policy; later waves start with it."""
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        self._updates.update(kwargs)
        if kwargs:
            _apply_updates(self.inner, kwargs)
            self._mirror()  # a grown bound may re-open candidates

    def recommend(self) -> int:
        """The incumbent once finished; else the wave policy's (anytime) recommendation."""
        if self.done:
            return int(self.incumbent_)
        return int(self.members[int(self.inner.recommend())])

    def coverage(self) -> dict:
        """What the certificate covers (read by :func:`mftune.study.record.statement`)."""
        evaluated = (self.stats.counts + self.evidence_.counts).sum(axis=0) > 0
        last = self.waves_[-1] if self.waves_ else {}
        return {"n_candidates": int(evaluated.sum()), "n_waves": int(self.wave_),
                "finished": self.finished_, "worth": last.get("worth"),
                "incumbent_score": last.get("incumbent_score")}

    def gap_bound(self) -> float:
        """The wave policy's bound over every candidate evaluated (module docstring).

        Returns
        -------
        float
        """
        gap = float(self.inner.gap_bound())
        before = self.waves_[-1].get("gap") if self._last is not None else None
        same = before is not None and self.recommend() == self.incumbent_
        return float(before) if same and not gap <= before else gap

    summary = Policy.summary  # pulls, costs and the elimination record of every candidate

    def _summary_extra(self) -> dict:
        return {"waves": list(self.waves_), "finished": self.finished_}

    # -- protocol -----------------------------------------------------------------------
    def ask(self, n: int | None = None) -> Pulls:
        """The wave policy's batch, in candidate indices, less the pulls that earlier
        results answer (:meth:`_replay`)."""
        while not self.done:
            p = self.inner.ask(n)
            nth = self._nth(p)
            old = nth < self._prior[p.fidelities, self.members[p.arms]]
            arms, fids = self.members[p.arms[~old]], p.fidelities[~old]
            np.add.at(self.pending, (fids, arms), 1)
            if old.any():
                self._replay(Pulls(p.arms[old], p.fidelities[old]), nth[old])
            if arms.size or not old.any():
                return Pulls(arms, fids)
        return Pulls.empty()

    def tell(self, pulls: Pulls, rewards, costs=None) -> None:
        """Record results; end the wave once its policy's rule holds and nothing is out."""
        rewards = np.asarray(rewards, dtype=float).reshape(-1)
        if costs is None:
            costs = self.nominal_costs()[pulls.fidelities]
        costs = np.asarray(costs, dtype=float).reshape(-1)
        idx = outstanding(self.pending, pulls, "tell() received a pull that was not asked "
                                               "(or was told twice)")
        np.subtract.at(self.pending, idx, 1)
        self.stats.add(pulls.arms, pulls.fidelities, rewards, costs)
        self.log_.add(pulls.arms, pulls.fidelities, rewards)
        self.inner.tell(Pulls(self._local[pulls.arms], pulls.fidelities), rewards, costs)
        self._told()

    def _told(self) -> None:
        """After the wave policy was told results: mirror it, and end the wave once its
        rule holds (or it has screened its candidates) and nothing is out."""
        self._mirror()
        if self.n_pending == 0 and (self.inner.done or self._screened()):
            self._end_wave(certified=bool(self.inner.done))

    def cancel(self, pulls: Pulls) -> None:
        """Forget outstanding pulls that will not run."""
        np.subtract.at(self.pending, outstanding(
            self.pending, pulls, "cancel() received a pull that is not outstanding"), 1)
        self.inner.cancel(Pulls(self._local[pulls.arms], pulls.fidelities))

    def add_evidence(self, arms, fidelities, rewards) -> None:
        """Results from outside the rounds (the calibration): kept for every later wave."""
        arms = np.asarray(arms, dtype=np.int64).reshape(-1)
        fidelities = np.asarray(fidelities, dtype=np.int64).reshape(-1)
        rewards = np.asarray(rewards, dtype=float).reshape(-1)
        self.evidence_.add(arms, fidelities, rewards, np.zeros(arms.size))
        self.log_.add(arms, fidelities, rewards)
        inside = self._local[arms] >= 0
        np.add.at(self._prior, (fidelities[inside], arms[inside]), 1)
        if hasattr(self.inner, "add_evidence") and inside.any():
            self.inner.add_evidence(self._local[arms[inside]], fidelities[inside],
                                    rewards[inside])

    # -- waves ----------------------------------------------------------------------------
    def _nth(self, p: Pulls) -> np.ndarray:
        """Each pull of the wave policy's batch ``p`` counted among the wave's pulls of its
        candidate at its fidelity, from 0 (a round asks a candidate at most once); an earlier
        result answers it when below the candidate's count there at the wave's start."""
        idx = (p.fidelities, p.arms)
        return self.inner.stats.counts[idx] + self.inner.pending[idx] - 1

    def _replay(self, p: Pulls, nth: np.ndarray) -> None:
        """Tell the wave policy the earlier results that answer its pulls ``p`` [RECON].

        Pull ``i`` gets its candidate's ``nth[i]``-th result at that fidelity in
        the order they came (:class:`~mftune.engine.results_log.ResultsLog`),
        at no cost; it leaves the evidence the wave started with, so the
        anytime recommendation counts it once.
        """
        rewards = self.log_.nth(self.members[p.arms], p.fidelities, nth)
        self.inner.tell(p, rewards, np.zeros(len(p)))
        if getattr(self.inner, "evidence_", None) is not None:
            self.inner.evidence_.remove(p.arms, p.fidelities, rewards)
        self.waves_[-1]["replayed"] += len(p)
        self._told()

    def _mirror(self) -> None:
        """Copy the wave policy's eliminations and re-openings to the candidates' record."""
        inner = self.inner
        if not hasattr(inner, "active"):
            return
        newly = self.active[self.members] & ~inner.active
        arms = self.members[newly]
        self.active[arms] = False
        self.eliminated_round[arms] = self._rounds_before + inner.eliminated_round[newly]
        self.eliminated_fidelity[arms] = inner.eliminated_fidelity[newly]
        back = self.members[~self.active[self.members] & inner.active]  # re-opened
        self.active[back] = True
        self.eliminated_round[back] = self.eliminated_fidelity[back] = -1

    def _start_wave(self, members: np.ndarray, carried: np.ndarray) -> None:
        self.wave_ += 1
        self.members = members.astype(np.int64)
        self._local = np.full(self.n_arms, -1, dtype=np.int64)
        self._local[self.members] = np.arange(self.members.size)
        # an exploring wave's δ_w is shared by all the candidates known at its start
        delta = wave_delta(self.delta / 2, self.wave_)
        share = self.members.size / self.n_arms
        inner = self.build(self.members.size, delta * share)
        if self._updates:
            _apply_updates(inner, self._updates)
        if self._pull_costs is not None and hasattr(inner, "pull_costs_"):
            inner.pull_costs_ = self._pull_costs
        self.inner = inner
        counts = self.stats.counts + self.evidence_.counts
        self._prior = np.zeros_like(counts)
        self._prior[:, self.members] = counts[:, self.members]  # they begin its sequences
        inner.evidence_covered = True
        if hasattr(inner, "add_evidence"):  # what is known of the carried candidates
            sums = self.stats.sums + self.evidence_.sums
            f, j = np.nonzero(counts[:, self.members])
            reps = counts[f, self.members[j]]
            if reps.size:
                means = sums[f, self.members[j]] / reps
                inner.add_evidence(np.repeat(j, reps), np.repeat(f, reps),
                                   np.repeat(means, reps))
        self.waves_.append({"wave": self.wave_, "delta": delta,
                            "start_pulls": int(self.stats.counts.sum()),
                            "start_cost": float(self.stats.cost.sum()),
                            "candidates": int(self.members.size),
                            "carried": carried.tolist(),
                            "new": int(self.members.size - carried.size),
                            "replayed": 0,
                            "known": int(self.n_arms), "policy_delta": delta * share})

    def _screened(self) -> bool:
        """Whether the wave may end before its rule: its policy has closed a round at the
        top fidelity (the cheaper fidelities have screened its candidates) and at most
        :attr:`carry_limit` survive, so the survivors carried over stay few [RECON]."""
        inner = self.inner
        if not self.early_end or self._last is not None or self.n_fidelities < 2:
            return False
        return (getattr(inner, "fidelity_", -1) == self.n_fidelities - 1
                and getattr(inner, "t_", 0) >= 1 and not getattr(inner, "round_open", False)
                and int(inner.active.sum()) <= self.carry_limit)

    def _finish(self, reason: str) -> None:
        self._rounds_before += int(self.inner.n_rounds)
        self.finished_ = reason

    def _end_wave(self, certified: bool) -> None:
        """End the wave: stop (only with the wave's certificate), or start the next one.

        A wave that ends early (``certified=False``) carries *all* its
        survivors over, so the certificate argument of the module docstring
        holds unchanged; when the surrogate (or ``max_waves``) says no wave
        follows, the wave goes on to its own stopping rule instead.
        """
        inner = self.inner
        inc = int(self.members[int(inner.recommend())])
        survivors = self.members[inner.active] if hasattr(inner, "active") else np.array([inc])
        self.incumbent_ = inc
        log = self.waves_[-1]
        gap = float(inner.gap_bound())
        log.update(survivors=survivors.tolist(), incumbent=inc, certified=certified,
                   gap=gap if np.isfinite(gap) else None)
        if certified and self._last is not None:
            self._finish(self._last)
            return
        if self.journal is None:
            reason, points = self._next(log, survivors, inc)
            configs = self.space.from_unit(points) if reason is None else []
        else:  # a study: the end it recorded first (a resume, another worker)
            reason, configs = self.journal(self.wave_, lambda: self._next(log, survivors, inc))
        if reason is not None:
            self._conclude(reason, certified)
            return
        self._rounds_before += int(inner.n_rounds)
        self._add(configs)
        new = np.arange(self.n_arms - len(configs), self.n_arms)
        rest = survivors[survivors != inc]
        carried = np.concatenate([[inc], rest]).astype(np.int64)
        self._start_wave(np.concatenate([carried, new]), carried)

    def _next(self, log: dict, survivors: np.ndarray, inc: int) -> tuple[str | None, list]:
        """Why no new candidates follow the wave that ended, else ``None`` and the unit-cube
        points of the new ones (the surrogate's proposals)."""
        if self.wave_ >= self.max_waves:
            return "max-waves", []
        spent = float(self.stats.cost.sum()) - log["start_cost"]
        final = self.final_cost(survivors)
        log["final_cost"] = None if not np.isfinite(final) else final
        if self.budget_left_ is not None and self.budget_left_ < 2.0 * spent + final:
            # another wave (twice this one's cost: waves grow as they go) and the final one
            # it may need (priced by final_cost) would not fit in the budget: certify what
            # was evaluated rather than end on the budget [RECON]
            return "budget", []
        counts = self.stats.counts + self.evidence_.counts
        sums = self.stats.sums + self.evidence_.sums
        prop = propose(self._units, counts, sums, inc, self.wave_size, self.space,
                       surrogate=self.surrogate, seed=self.seed + self.wave_)
        worth = None if not np.isfinite(prop.worth) else prop.worth
        log.update(worth=worth, incumbent_score=(None if not np.isfinite(prop.incumbent)
                                                 else prop.incumbent))
        eps = self.epsilon or 0.0
        if worth is not None and worth <= prop.incumbent + eps:
            return "surrogate", []
        if self._stalled(prop.incumbent, eps):
            return "stalled", []
        if len(prop.points) == 0:
            return "exhausted", []
        return None, prop.points

    def final_cost(self, survivors, lower: float = 1.0) -> float:
        """Estimated cost of taking ``survivors`` to a certificate at the top fidelity at
        the final wave's ``2 δ_w``, at the mean measured cost of a top-fidelity pull
        (nominal before any) [RECON]: the radii's price (:mod:`~mftune.engine.final_wave`,
        rounds so far not deducted) or, if cheaper, for the wave's survivors in a top
        phase with paired t-tests and two rounds, those tests' price. :meth:`_next` reads it.

        Parameters
        ----------
        survivors : array-like of int
        lower : float, default=1.0
            :func:`~mftune.engine.final_wave.paired_final_cost`'s (standard errors).

        Returns
        -------
        float
            ``inf`` when it would not end (ties without an ε).
        """
        arms, top = np.asarray(survivors, dtype=np.int64).reshape(-1), self.n_fidelities - 1
        counts = self.stats.counts[top] + self.evidence_.counts[top]
        sums = self.stats.sums[top] + self.evidence_.sums[top]
        pulls, cost = int(self.stats.counts[top].sum()), float(self.stats.cost[top].sum())
        per_pull = cost / pulls if pulls else float(self.nominal_costs()[top])
        var = self._updates.get("variance_proxy", getattr(self.inner, "variance_proxy", 1.0))
        s2 = float(np.asarray(var, dtype=float).reshape(-1)[-1])
        inner = self.inner
        price = final_wave_cost(counts[arms], sums[arms], per_pull, s2, self._final_delta(),
                                self.epsilon, getattr(inner, "confidence", "iise"))
        at = np.flatnonzero(np.isin(self.members, arms))
        if (getattr(inner, "top_glr", None) == "paired-t" and inner.fidelity_ == top
                and inner.t_ >= 2 and at.size == arms.size and inner.active[at].all()):
            raised = self._final_delta() / self.waves_[-1]["delta"]  # as _conclude raises it
            rows = inner.top_rewards_[at[~inner.parked_[at]], :inner.t_]  # parked: passed
            price = min(price, paired_final_cost(rows, per_pull, inner.glr_delta() * raised,
                                                 inner.n_arms, inner.epsilon, lower))
        return price

    def _final_delta(self) -> float:
        """δ of the current wave if it becomes the final wave: its ``δ_w`` and the
        ``δ_w`` kept for it (:meth:`_conclude`)."""
        return 2.0 * wave_delta(self.delta / 2, self.wave_)

    def _stalled(self, score: float, eps: float) -> bool:
        """The surrogate's proposals of the last :data:`STALL_WAVES` waves did not raise
        the incumbent's top-fidelity score by more than ε [RECON]."""
        if len(self.waves_) <= STALL_WAVES or not np.isfinite(score):
            return False
        before = self.waves_[-1 - STALL_WAVES].get("incumbent_score")
        return before is not None and score <= before + eps

    def _conclude(self, reason: str, certified: bool) -> None:
        """No new candidates follow: stop now if the wave is certified, else it is the
        final wave and goes on to its stopping rule with ``2 δ_w`` [RECON].

        Its statistics, elimination record and top-fidelity rounds stand. Its bounds at
        δ_w hold wherever the narrower ones at ``2 δ_w`` do, so what it decided stands
        on that event. The share added is the one kept for this wave whichever wave is
        the last, so the union over the waves stays at most δ however the search
        decided that no new candidates follow (a reserve shared by all the waves would
        not be: that decision reads the results the raised bounds judge).
        """
        if certified:
            self._finish(reason)
            return
        self._last = reason
        log = self.waves_[-1]
        raised = self._final_delta() / log["delta"]
        self.inner.raise_delta(raised)
        log.update(final=True, delta=log["delta"] * raised,
                   policy_delta=log["policy_delta"] * raised)

    def _add(self, configs: list) -> None:
        """Append new candidates and grow every per-candidate array."""
        k = len(configs)
        self.candidates.extend(configs)
        self._grow(k)
        pad, ipad = np.zeros((self.n_fidelities, k)), np.zeros((self.n_fidelities, k), np.int64)
        for st in (self.stats, self.evidence_):
            st.counts, st.cost = np.hstack([st.counts, ipad]), np.hstack([st.cost, pad])
            st.sums, st.sumsq = np.hstack([st.sums, pad]), np.hstack([st.sumsq, pad])
        self.pending, self._prior = np.hstack([self.pending, ipad]), np.hstack([self._prior, ipad])
        self.active = np.r_[self.active, np.ones(k, dtype=bool)]
        minus = np.full(k, -1, dtype=np.int64)
        self.eliminated_round = np.r_[self.eliminated_round, minus]
        self.eliminated_fidelity = np.r_[self.eliminated_fidelity, minus]
        self.wave_of = np.r_[self.wave_of, np.full(k, self.wave_ + 1, dtype=np.int64)]
        if self._units is not None:
            self._units = np.vstack([self._units, self.space.to_unit(configs)])
