"""The search every face runs: calibrate, build the policy, run the driver, state the result.

:class:`Search` is the one engine behind ``MFTuner.fit``, script studies
(``mftune tune``/``resume``/``worker``) and the real-task benchmarks. The faces differ only
in their evaluator (a CV fit in-process, a script in a subprocess); the calibration of σ,
bias bounds and costs, the algorithm and its ``auto`` rule, the between-round updates
(measured costs, pooled σ, violated bounds grown), the budget, the failed-pull rule, the
stopping rule (ties included) and the statement of the result are this module's.

An evaluator the search runs has ``evaluate(pulls) -> Outcomes`` and keeps a
list ``records`` of :class:`~mftune.study.outcomes.PullRecord` (one per
pull, with its score per metric, cost, status and phase), ``candidates``,
``metric``, ``n_splits`` (independent repeats of a pull: CV folds, or a
script's seeds) and a ``phase`` attribute, plus the hooks ``acknowledge``,
``after_batch``, ``release`` and ``repeats_splits`` (no-ops where they mean nothing).
"""

from __future__ import annotations

import time

import numpy as np

from .._validation import check_bias
from ..fidelity import level_is_number
from ..policies import registry as algorithms
from ..policies.adapters import PointArms, lucb_mu_tilde
from ..policies.base import Pulls, leader
from ..radii import iise_radius
from ..study.jsonio import json_safe
from ..study.record import shown_gap, statement
from ..study.replay import StudyMismatchError
from .calibration import (
    CostTally,
    SettingRefused,
    curve_steps,
    default_epsilon,
    estimate_bias,
    extend_to_top,
    grow_violated,
    pooled_variance,
    running_costs,
)
from .driver import Outcome, run
from .progress import Progress, say_failures
from .waves import make_waves

__all__ = ["SETTINGS", "Search", "raise_if_all_failed"]

#: The settings of a search, with the defaults of ``MFTuner`` (docs/tuner.md).
SETTINGS = {
    "algorithm": "auto", "algorithm_params": None, "bias": "adaptive", "n_calibration": 3,
    "sigma": None, "costs": "measured", "delta": 0.05, "epsilon": "auto", "budget": None,
    "max_pulls": None, "batch_size": 1, "verbose": 0, "default_budget": None,
    "adaptive": False, "wave_size": None,
}


def raise_if_all_failed(records) -> None:
    """When every pull failed, the problem is the data, the model or the script: say so."""
    if records and all(r.status != "done" for r in records):
        raise ValueError(f"All the {len(records)} pulls failed. First error:\n"
                         f"{records[0].error or ''}")


class Search:
    """One search: a policy against an evaluator, with the calibration it needs.

    Parameters
    ----------
    evaluator : evaluator
        See the module docstring.
    levels : list
        The fidelity values, cheapest first.
    seed : int
        Seeds the calibration's choice of candidates and the policy.
    space : Space, optional
        For the Gaussian-process policies (unit-cube encoding).
    recorder : RecordingEvaluator, optional
        Writes every batch to a study (and answers the stored ones on resume).
    stream : file, optional
        Where progress lines go (default standard output).
    **settings
        The keys of :data:`SETTINGS` (``MFTuner``'s parameters of the same
        names; ``batch_size`` is the pulls a batch-rule policy asks at once;
        ``default_budget`` a number of top-fidelity evaluations of every
        candidate whose cost caps a search given neither ``budget`` nor
        ``max_pulls``; ``adaptive``: run waves of candidates proposed by a
        surrogate, ``wave_size`` new ones per wave, :mod:`mftune.engine.waves`).
    """

    def __init__(self, evaluator, levels, *, seed: int, space=None, recorder=None,
                 stream=None, **settings):
        unknown = set(settings) - set(SETTINGS)
        if unknown:
            raise TypeError(f"unknown search settings {sorted(unknown)}; "
                            f"allowed: {sorted(SETTINGS)}")
        for k, v in {**SETTINGS, **settings}.items():
            setattr(self, k, v)
        self.evaluator, self.levels, self.seed, self.space = evaluator, list(levels), seed, space
        self.recorder, self.stream = recorder, stream
        self.stored_updates = recorder.store.updates() if recorder is not None else {}
        self.progress: Progress | None = None
        self.choose_algorithm()

    # -- messages ---------------------------------------------------------------------
    def say(self, level: int, msg: str) -> None:
        """Print ``msg`` when ``verbose >= level``."""
        if self.verbose >= level:
            print(f"[mftune] {msg}", file=self.stream, flush=True)

    # -- the algorithm ----------------------------------------------------------------
    def choose_algorithm(self) -> None:
        """Resolve ``algorithm`` (the ``auto`` rule) and check ``algorithm_params`` and ``bias``."""
        n_fid = len(self.levels)
        known = not isinstance(self.bias, str)
        self.bias_mode_ = "known" if known else self.bias
        if isinstance(self.algorithm, str):
            name, reason = ((self.algorithm, "requested") if self.algorithm != "auto"
                            else algorithms.choose_algorithm(n_fid, self.bias_mode_))
            self.algorithm_params_ = algorithms.check_params(name, self.algorithm_params)
        else:
            if self.algorithm_params:
                raise ValueError("algorithm_params applies to an algorithm given by name; "
                                 "configure a policy object directly")
            name, reason = type(self.algorithm).__name__, "policy object given"
            self.algorithm_params_ = {}
        self.algorithm_, self.algorithm_reason_ = name, reason
        self.say(1, f"algorithm: {name} ({reason})")
        for arg, value in (("bias", self.bias), ("costs", self.costs)):  # before any run
            if not isinstance(value, str) and len(value) != n_fid:
                raise ValueError(f"{arg} must have one entry per fidelity ({n_fid}: "
                                 f"{self.levels}); got {len(value)}")
        if known:  # the policy takes the bounds as they are (no monotonicity asked)
            check_bias(self.bias, "bias", monotone=False)

    def needs_calibration(self) -> bool:
        """A calibration runs unless σ is given and the bias bounds are known (or M = 1)."""
        return len(self.levels) > 1 and self.bias_mode_ != "known" or self.sigma is None

    def _calibrated_fidelities(self) -> int:
        # Adaptive bounds (>= 3 fidelities) are measured below the top and extended to it:
        # in waves (one screening round per cheaper fidelity) at the cheaper half (at least
        # two); over a fixed list (eliminating with them round after round) at all but the top.
        n_fid = len(self.levels)
        if self.bias_mode_ != "adaptive" or n_fid < 3:
            return n_fid
        return max(2, (n_fid + 1) // 2) if self.adaptive else n_fid - 1

    def calibration_pulls(self, n_arms: int, n_splits: int) -> int:
        """Pulls of the calibration (0 without one): candidates × fidelities × repeats."""
        if not self.needs_calibration():
            return 0
        return min(self.n_calibration, n_arms) * self._calibrated_fidelities() * min(n_splits, 2)

    # -- set-up -----------------------------------------------------------------------
    def setup(self, rng, t_start: float | None = None) -> None:
        """Calibrate (when needed) and build the policy.

        ``t_start`` (a ``time.perf_counter()`` value, default now) is when the
        run began: the anytime trace counts its seconds from there.
        """
        self.t_start = time.perf_counter() if t_start is None else t_start
        self.calibration_trace_: list[tuple[float, float, int, int]] = []
        ev, levels = self.evaluator, self.levels
        candidates = ev.candidates
        n_fid = len(levels)
        known = self.bias_mode_ == "known"
        name = self.algorithm_
        prior = (np.asarray(levels, float) / float(levels[-1])
                 if all(level_is_number(v) and v > 0 for v in levels)
                 else np.arange(1.0, n_fid + 1))
        self.calibration_cost_ = 0.0
        est = None
        if self.needs_calibration():
            est = self._calibrate(len(candidates), rng)
        if isinstance(self.costs, str) and self.costs == "levels":
            costs = running_costs(prior, np.ones(n_fid), prior)
        elif not isinstance(self.costs, str):  # its length checked by choose_algorithm
            costs = np.asarray(self.costs, dtype=float)
        else:
            costs = est.costs if est is not None else running_costs(prior, np.ones(n_fid), prior)
        if self.sigma is not None:
            sigmas = np.full(n_fid, float(self.sigma))
            self._sigma_prior = (sigmas**2, 10**9)  # given: never re-estimated
        else:
            sigmas = est.sigmas
            self._sigma_prior = (sigmas**2, est.dof)
        sigma = float(sigmas.max())
        self.sigma_ = sigmas
        self.deterministic_ = est is not None and self.sigma is None and est.dof > 0 \
            and bool(np.all(sigmas <= 1e-6))
        seen = self._cal_scores if est is not None else np.empty(0)
        if self.epsilon == "auto":
            self.epsilon_ = default_epsilon(seen, float(sigmas[-1]))
        else:
            self.epsilon_ = self.epsilon
            span = float(np.ptp(seen[np.isfinite(seen)])) if np.isfinite(seen).any() else 0.0
            if self.epsilon and span > 0 and self.epsilon > span:
                raise SettingRefused(
                    f"epsilon={self.epsilon:g} is larger than the range of the scores seen "
                    f"({span:.4g}): every candidate would be 'within epsilon of the best'; give "
                    "a smaller epsilon, 'auto' or None")
        if self.deterministic_ and self.epsilon == "auto":
            self.epsilon_ = 0.0
        entry = algorithms.REGISTRY.get(name)
        kind = entry.bias if entry is not None else "xi"
        if known:
            bounds = np.asarray(self.bias, dtype=float)
        elif n_fid == 1:
            bounds = np.zeros(1)
        else:
            bounds = est.gamma if kind == "gamma" else est.xi
        self._kind = kind
        self.bias_bounds_ = bounds
        self.bias_events_ = []
        eps, r = ("None" if self.epsilon_ is None else f"{self.epsilon_:.4g}"), np.round
        self.say(1, f"sigma={r(sigmas, 4).tolist()}, epsilon={eps}, bias ({self.bias_mode_}, "
                    f"{kind})={r(bounds, 4).tolist()}, costs={r(costs, 4).tolist()}")
        if isinstance(self.algorithm, str):
            points = None
            space = self.space
            if (space is not None and not space.is_conditional
                    and name in algorithms.POINT_ALGORITHMS):
                points = space.to_unit(candidates)
            ctx = algorithms.PolicyContext(
                len(candidates), costs, bounds if kind == "xi" else None,
                bounds if kind == "gamma" else None, sigma**2, float(self.delta),
                self.epsilon_ or None, self.seed, points, space,
                mu_tilde=self._mu_tilde(bounds) if name in ("lucb-a", "lucb-b") else None,
                evaluator=ev, sigmas=sigmas, batch_size=int(self.batch_size),
                params=self.algorithm_params_,
                **algorithms.tuner_switches(name, waves=bool(self.adaptive)))
            if name in algorithms.FUTILITY_ALGORITHMS and "curve_check" not in ctx.params:
                ctx.curve_check = curve_steps(levels)
            self.policy_ = (make_waves(name, ctx, self.wave_size) if self.adaptive
                            else algorithms.make_policy(name, ctx))
        else:
            self.policy_ = self.algorithm
        if est is not None and hasattr(self.policy_, "add_evidence"):
            # the calibrated candidates count in the anytime recommendation (best-first IISE)
            cal, rewards = self._cal_results
            self.policy_.add_evidence(cal.arms, cal.fidelities, rewards)
        if hasattr(self.policy_, "update_bounds") and n_fid > 1:
            self.policy_.update_bounds(variance_proxy=sigmas**2)
            self._record_update(-1 if est is None else 0, {"variance_proxy": sigmas**2})
        # Seconds per pull for fidelities not measured yet: the calibration's (extrapolated
        # to an uncalibrated top) whatever `costs` says; updated after every batch
        self._prior_costs = self._seconds = est.costs if est is not None else costs
        self._tally = CostTally(len(self.levels))
        self.candidates_ = ev.candidates  # the GP adapters append to it
        if self.budget is None and self.max_pulls is None and self.default_budget:
            top = float(est.costs[-1]) if est is not None else float(costs[-1])  # seconds
            self.budget = float(self.default_budget) * len(candidates) * top \
                + self.calibration_cost_
        self.say(1, self.stopping_plan())
        if self.recorder is not None:  # the settings in the shared format of mftune.study.record
            estimated = ["sigma"] if self.sigma is None else []
            if kind is not None and not known and n_fid > 1:
                estimated.append(kind)
            if self.costs == "measured" and est is not None:
                estimated.append("costs")
            self.recorder.store.update_settings(json_safe({
                "costs": costs, "sigma": sigma, "xi": bounds if kind == "xi" else None,
                "gamma": bounds if kind == "gamma" else None, "delta": float(self.delta),
                "epsilon": self.epsilon_ or None, "estimated": estimated,
                "bias_mode": self.bias_mode_, "given_in": "the search settings",
                "deterministic": self.deterministic_,
                "futility_switch": bool(getattr(self.policy_, "futility_switch", False)),
                "cost_balance": getattr(self.policy_, "cost_balance", None),
                "best_first": bool(getattr(self.policy_, "best_first", False)),
                "batch_size": int(getattr(self.policy_, "batch_size", 1)),
                "chunk_cost": getattr(self.policy_, "chunk_cost", None),
                "confidence": getattr(self.policy_, "confidence", None),
                "top_share": getattr(self.policy_, "top_share", None),
                "curve_check": getattr(self.policy_, "curve_check", None),
                "top_glr": getattr(self.policy_, "top_glr", None),
                "algorithm_params": self.algorithm_params_ or None}))

    def stopping_plan(self) -> str:
        """What ends this search, in one line (printed at the start)."""
        rule = (f"stops when, with probability >= {1 - self.delta:g}, the recommended "
                f"candidate is " + (f"within {self.epsilon_:.4g} of the best"
                                    if self.epsilon_ else "the best"))
        if self.deterministic_:
            rule += (" (the objective is deterministic: repeated pulls gave identical scores, "
                     "so candidates tied at the top fidelity end as a tie)")
        caps = []
        if self.budget is not None:
            caps.append(f"a cost of {self.budget:.4g} s"
                        + (f" (default: {self.default_budget:g} top-fidelity evaluations of "
                           "every candidate)" if self.default_budget and self.max_pulls is None
                           else ""))
        if self.max_pulls is not None:
            caps.append(f"{self.max_pulls} pulls")
        if not hasattr(self.policy_, "done") or self.algorithm_ in algorithms.POINT_ALGORITHMS:
            rule = "has no stopping rule"
        return rule + ("; or after " + " or ".join(caps) if caps else "; no budget")

    def _record_update(self, batch, data) -> None:
        """Store the ``policy.update_bounds`` arguments applied after ``batch``.

        A replayed batch recomputes the stored update exactly; it is not rewritten.
        """
        if self.recorder is None:
            return
        data = json_safe({k: v for k, v in data.items() if v is not None})
        if self.stored_updates.get(batch) != data:
            self.recorder.store.set_update(batch, data)

    def _journal(self, wave: int, decide) -> tuple:
        """How wave ``wave`` ended as the study recorded it first: this run's ``decide()``
        (a reason no candidates follow, or their unit-cube points) unless a run before it
        (a resume, another worker) recorded one [RECON]."""
        reason, points = decide()
        configs = self.space.from_unit(points) if reason is None else []
        data = self.recorder.store.end_wave(wave, reason, points, configs)
        points = np.asarray(data["points"], dtype=float)
        return data["reason"], (self.space.from_unit(points) if data["reason"] is None else [])

    def _proposed(self, query: int, points, fidelities) -> tuple:
        """A GP policy's points from ``query`` on, as the study recorded them first [RECON]."""
        data = self.recorder.store.propose(query, points, fidelities, self.space.from_unit(points))
        if data["n_new"] != len(points):
            raise StudyMismatchError(f"the study recorded {data['n_new']} points from query "
                                     f"{query} on; this search asks {len(points)}")
        return np.reshape(data["points"], np.shape(points)), np.asarray(data["fidelities"], int)

    def evaluate(self, pulls, kind="policy"):
        """Run a batch, through the study when there is one."""
        if self.recorder is None:
            return self.evaluator.evaluate(pulls)
        return self.recorder.evaluate(pulls, kind=kind)

    def _mu_tilde(self, bounds):
        """``(µ̃1, µ̃2)`` for EXPLORE-A/B from the calibration [RECON]."""
        scores = self._cal_scores  # (n_cal, n_fid_calibrated, n_folds)
        m = scores.shape[1] - 1
        means = np.nanmean(scores[:, m, :], axis=1)
        n = scores.shape[2]
        radius = float(self.sigma_[m] * np.sqrt(2 * np.log(2 * means.size / self.delta) / n))
        finite = scores[np.isfinite(scores)]
        upper = 1.0 if finite.size and finite.min() >= 0 and finite.max() <= 1 else None
        return lucb_mu_tilde(means, float(bounds[m]), radius, upper)

    def calibration_arms(self, n_arms: int, n_cal: int, rng) -> np.ndarray:
        """The calibration's candidates, spread over the space [RECON].

        The candidate nearest the centre of the space first (its pulls come
        first, so it is the first answer), then each next one the farthest (in
        the unit-cube encoding of the space) from those already chosen, so the
        calibration sees different corners of the space rather than three
        neighbours that may share one flat learning curve. Without an
        unconditional space: ``n_cal`` distinct candidates at random, in
        index order.
        """
        space = self.space
        if space is None or space.is_conditional:
            first = int(rng.integers(n_arms))
            rest = rng.choice(np.delete(np.arange(n_arms), first), n_cal - 1, replace=False)
            return np.sort(np.r_[first, rest]).astype(np.int64)
        unit = np.atleast_2d(space.to_unit(self.evaluator.candidates[:n_arms]))
        centre = space.to_unit([space.centre()])
        first = int(np.argmin(np.linalg.norm(unit - centre, axis=1)))
        chosen = [first]
        dist = np.linalg.norm(unit - unit[first], axis=1)
        for _ in range(n_cal - 1):
            dist[chosen] = -1.0
            nxt = int(np.argmax(dist))
            chosen.append(nxt)
            dist = np.minimum(dist, np.linalg.norm(unit - unit[nxt], axis=1))
        return np.asarray(chosen, dtype=np.int64)

    def _calibrate(self, n_arms, rng):
        ev = self.evaluator
        n_cal = min(self.n_calibration, n_arms)
        n_folds = min(ev.n_splits, 2)
        arms = self.calibration_arms(n_arms, n_cal, rng)
        n_fid = self._calibrated_fidelities()
        below_top = n_fid < len(self.levels)
        a, f, s = np.meshgrid(arms, np.arange(n_fid), np.arange(n_folds), indexing="ij")
        pulls = Pulls(a.ravel(), f.ravel())
        ev.phase = "calibration"
        ev.on_result = self._calibration_answer(n_arms, n_fid)
        start = len(ev.records)
        t0 = time.perf_counter()
        try:
            out = self.evaluate(pulls, "calibration")
        finally:
            ev.phase = "search"
            ev.on_result = None
        ev.acknowledge()  # the calibration's pulls are used as they are
        say_failures(pulls, out, self.verbose, self.stream)
        recs = ev.records[start:]
        raise_if_all_failed(recs)
        scores = np.array([r.scores[ev.metric] for r in recs]).reshape(n_cal, n_fid, n_folds)
        self._cal_scores = scores
        self._cal_results = (pulls, out.rewards)
        self.calibration_cost_ = float(out.costs.sum())
        try:
            est = estimate_bias(scores, out.costs.reshape(n_cal, n_fid, n_folds), self.delta)
        except ValueError as exc:
            first = next((r.error for r in recs if r.error), "")
            raise ValueError(f"{exc}. First error:\n{first}") from None
        if below_top:
            est = extend_to_top(est, self.levels)
        where = f"the {n_fid} cheapest fidelities" if below_top else "every fidelity"
        self.say(1, f"calibration: {len(pulls)} pulls of {n_cal} candidates at {where} "
                    f"on {n_folds} repeats, cost {self.calibration_cost_:.2f} s "
                    f"({time.perf_counter() - t0:.1f} s wall)")
        return est

    def _calibration_answer(self, n_arms: int, n_fid: int):
        """The evaluator's per-pull hook while the calibration runs: an answer at once [RECON].

        From the first finished calibration pull on, the recommendation is the
        calibrated candidate with the best mean score at the highest fidelity
        any of them has reached; it joins the anytime trace (the calibration's
        seconds spent, no search pull) before the calibration's batch ends.
        """
        sums, counts = np.zeros((n_fid, n_arms)), np.zeros((n_fid, n_arms))
        spent = [0.0]

        def on_result(pos: int, arm: int, fidelity: int, outcome: Outcome) -> None:
            spent[0] += outcome.cost
            if np.isfinite(outcome.reward):
                sums[fidelity, arm] += outcome.reward
                counts[fidelity, arm] += 1
            reached = np.flatnonzero(counts.any(axis=1))
            if reached.size:
                m = reached[-1]
                means = np.where(counts > 0, sums / np.maximum(counts, 1), -np.inf)
                self.calibration_trace_.append(
                    (time.perf_counter() - self.t_start, spent[0], 0, leader(means[m], means[:m])))

        return on_result

    # -- the run --------------------------------------------------------------------------
    def update(self, pulls, outcomes, policy) -> None:
        """After each batch: measured costs, pooled σ, and the adaptive bias bounds."""
        if hasattr(policy, "budget_left_") and self.budget is not None:
            policy.budget_left_ = float(self.budget) - self.progress.cost  # waves plan by it
        if not hasattr(policy, "update_bounds"):
            return
        stats = getattr(policy, "score_stats", policy.stats)  # score units (ScoreLUCB rescales)
        n_fid = len(self.levels)
        lam = running_costs(*self._tally(self.evaluator.records), self._prior_costs)
        self._seconds = lam
        sizes = {}
        if getattr(policy, "best_first", False):
            policy.pull_costs_ = lam  # seconds, whatever `costs` says: sizes the batches
            if getattr(policy, "chunk_cost", None) is not None:  # stored: a replay needs it
                sizes = {"pull_costs": lam}
        if getattr(policy, "round_open", False):
            # best-first rounds: σ, costs and bounds change only between rounds, so the
            # decisions are those of whole rounds however the round was batched
            if self.recorder is not None and sizes:
                self._record_update(self.recorder.last_batch, sizes)
            return
        new_bounds = None
        if self.bias_mode_ == "adaptive" and n_fid > 1 and self._kind is not None:
            dp = self.delta / (policy.n_arms * n_fid)
            s2 = self.sigma_[:, None] ** 2
            new_bounds, grown = grow_violated(
                stats, self.bias_bounds_, lambda n: iise_radius(n, dp, s2), self._kind)
            if grown:
                self.bias_events_.append({"pulls": self.progress.n_pulls, "fidelities": grown,
                                          "bounds": new_bounds.tolist()})
                self.say(1, f"bias bound of fidelities {grown} violated: grown to "
                            f"{np.round(new_bounds, 4).tolist()}")
                self.bias_bounds_ = new_bounds
            else:
                new_bounds = None
        var = None
        if n_fid > 1:
            var = pooled_variance(stats, *self._sigma_prior)
            self.sigma_ = np.sqrt(var)
        update = {"costs": lam if self.costs == "measured" else None, "xi": new_bounds,
                  "variance_proxy": var}
        policy.update_bounds(**update)
        if self.recorder is not None:
            self._record_update(self.recorder.last_batch, {**update, **sizes})

    def tied(self, pulls=None, outcomes=None, policy=None) -> bool:
        """Driver callback: a deterministic search whose survivors tie exactly at the top.

        With identical scores on every repeat, more pulls of the surviving
        candidates cannot separate them; once each survivor has been
        evaluated at the top fidelity and their means there are equal, the
        search ends as a tie (``stopping_reason_ == "tie"``).
        """
        policy = policy or self.policy_
        if not self.deterministic_ or not hasattr(policy, "active"):
            return False
        alive = np.flatnonzero(policy.active)
        counts = policy.stats.counts[-1, alive]
        if alive.size < 2 or np.any(counts == 0):
            return False
        means = policy.stats.sums[-1, alive] / counts
        if np.ptp(means) <= 1e-12 * max(1.0, float(np.abs(means).max())):
            self.tie_ = alive.tolist()
            return True
        return False

    def failing(self, pulls, outcomes, policy) -> bool:
        """Driver callback: stop a search whose pulls all fail (the first batch, or three
        batches in a row once one pull has succeeded); :attr:`failure_` says why."""
        if any(st == "done" for st in outcomes.status):
            self._any_ok, self._bad_batches = True, 0
            return False
        self._bad_batches += 1
        if self._bad_batches < (3 if self._any_ok else 1):
            return False
        last = next((e for e in reversed(outcomes.errors) if e), "no error message")
        self.failure_ = (f"every pull of the last {self._bad_batches} batch(es) failed; "
                         f"last error: {last}")
        self._stop = "all-failed"
        return True

    def search(self, budget=None, max_pulls=None, t_start=None) -> str:
        """Run the policy until its rule, a tie, a cap or Ctrl+C; return the reason."""
        policy = self.policy_
        budget = self.budget if budget is None else budget
        max_pulls = self.max_pulls if max_pulls is None else max_pulls
        prev = self.progress
        spent = prev.cost if prev is not None else self.calibration_cost_
        progress = Progress(self.verbose, self.candidates_, self.evaluator.metric, spent,
                            prev.n_pulls if prev else 0, budget, stream=self.stream)
        progress.t0 = self.t_start if t_start is None else t_start
        if prev is not None:
            progress.history = prev.history
            progress.eliminated_time = prev.eliminated_time
        else:  # the calibration's answers come first
            progress.history = list(self.calibration_trace_)
        self.progress = progress
        self.tie_ = self.failure_ = None
        self._stop = "tie"
        self._bad_batches = 0
        self._any_ok = any(r.status == "done" for r in self.evaluator.records)
        remaining = None if budget is None else budget - spent
        if remaining is not None and remaining <= 0:
            reason = "budget"
        elif self.tied():
            reason = "tie"
        else:
            caps = max_pulls - progress.n_pulls if max_pulls is not None else None
            if caps is not None and caps <= 0:
                reason = "max-pulls"
            else:
                if hasattr(policy, "journal"):  # the study records the candidates added
                    policy.journal = (None if self.recorder is None else self._proposed
                                      if isinstance(policy, PointArms) else self._journal)
                try:
                    result = run(policy, self.recorder or self.evaluator, budget=remaining,
                                 max_pulls=caps, pull_costs=lambda: self._seconds,
                                 callbacks=[progress, self.update, self.evaluator.after_batch,
                                            self.failing, self.tied])
                finally:
                    if hasattr(policy, "journal"):
                        policy.journal = None  # the search's policy outlives the study file
                reason = (self._stop if result.stopping_reason == "callback"
                          else result.stopping_reason)
                if result.cancelled is not None:  # the driver cancelled it in the policy
                    self.evaluator.release(result.cancelled)
        if reason == "interrupted":
            self._cancel_outstanding()
        repeats = self.evaluator.repeats_splits()
        if reason in ("stopping-rule", "tie") and repeats:
            reason = "repeated-splits"  # the rule counted repeats as independent evidence
        self.stopping_reason_ = reason
        self.epsilon_achieved_ = shown_gap(reason, policy, self.epsilon_, repeats)
        self.guarantee_ = self.statement(reason, self.epsilon_achieved_)
        if self.recorder is not None:
            self.recorder.store.update_state(tie=self.tie_, error=self.failure_,
                                             gap=json_safe(self.epsilon_achieved_))
        return reason

    def _cancel_outstanding(self) -> None:
        policy = self.policy_
        if not hasattr(policy, "pending") or policy.pending.sum() == 0:
            return
        f, a = np.nonzero(policy.pending)
        reps = policy.pending[f, a]
        pulls = Pulls(np.repeat(a, reps), np.repeat(f, reps))
        policy.cancel(pulls)
        self.evaluator.release(pulls)

    def statement(self, reason: str, gap: float | None = None) -> str:
        """The guarantee statement of this search ended for ``reason`` (one text for all),
        with the ``gap`` it has shown (default: :func:`shown_gap`'s)."""
        if gap is None:
            gap = shown_gap(reason, self.policy_, self.epsilon_, self.evaluator.repeats_splits())
        waves = getattr(self.policy_, "coverage", None)
        inner = getattr(self.policy_, "inner", self.policy_)  # a wave's policy
        return statement(reason, delta=self.delta, epsilon=self.epsilon_, sigma=self.sigma_,
                         gap=gap, bias_mode=self.bias_mode_, tie=self.tie_, failed=sum(
                             r.status != "done" for r in self.evaluator.records),
                         waves=waves() if waves is not None else None, top_test=getattr(
                             inner, "top_glr", None), proposed=isinstance(self.policy_, PointArms))
