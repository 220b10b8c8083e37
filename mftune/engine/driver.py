"""The driver: one loop that runs a policy against an evaluator.

``run(policy, evaluator)`` asks the policy for a batch, has the evaluator
produce one outcome per pull (a reward, a cost, a status), tells the policy,
reports every batch to the callbacks (the study store, progress bars), and
stops on the policy's stopping rule, a cost budget, a pull cap, or Ctrl+C —
keeping everything learnt so far. The tuner, the command line and the
benchmarks all run through it.

Evaluators
----------
An evaluator implements ``evaluate(pulls) -> Outcomes``. Subclassing
:class:`Evaluator` and writing ``evaluate_one(arm, fidelity, point)`` is
enough: the batch then runs through joblib (``n_jobs``; any joblib backend,
e.g. dask, works). A failing evaluation must come back as a finite reward
with ``status="failed"``, never as an exception, so it is recorded and the
run goes on.

Every evaluator runs its batches with :func:`parallel_map`, which goes
through ``joblib.Parallel`` — so ``n_jobs`` means what it means in
scikit-learn (``None``: the ``joblib.parallel_config`` in force, else 1), and
inside ``joblib.parallel_config(backend="dask")`` with a
``distributed.Client`` the pulls run on the dask workers (docs/parallel.md).

An evaluator may also offer ``step(policy)``, a fast path that advances the
policy by one or more whole rounds exactly as ``ask``/``evaluate``/``tell``
would (the simulated bandits draw a block of rounds at once); the driver uses
it when ``fast=True``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from joblib.parallel import get_active_backend

from ..policies.base import Policy, PolicySummary, Pulls
from ..study.outcomes import STATUSES, Outcome, Outcomes

__all__ = ["STATUSES", "Evaluator", "Outcome", "Outcomes", "RunResult", "parallel_map", "run"]

# joblib's own backends, which run a single task (or n_jobs=1) in this very process anyway.
_LOCAL_BACKENDS = ("SequentialBackend", "LokyBackend", "ThreadingBackend",
                   "MultiprocessingBackend")


def runs_in_process(n_jobs: int | None, n_tasks: int) -> bool:
    """Whether ``n_tasks`` tasks with ``n_jobs`` would run here, one after the other.

    True for one task or one effective job on joblib's local backends (loky,
    threading, multiprocessing, sequential); never under another backend
    (dask, ray, ...), whose workers should run every pull.
    """
    backend, _ = get_active_backend()
    if type(backend).__name__ not in _LOCAL_BACKENDS:
        return False
    return n_tasks <= 1 or effective_n_jobs(n_jobs) == 1


def parallel_map(func: Callable, arglists: Iterable[tuple], n_jobs: int | None = None, *,
                 prefer: str | None = None, lazy: bool = False) -> list | Iterator:
    """``[func(*args) for args in arglists]``, through ``joblib.Parallel``.

    Results keep the order of ``arglists``. Runs in this process when joblib
    would (see :func:`runs_in_process`), skipping its dispatch overhead.
    With ``lazy``, an iterator yields each result as soon as it and those
    before it are done (joblib's ``return_as="generator"``, on the backends
    that have it; a list on the others).

    Parameters
    ----------
    func : callable
        Must be picklable for process-based backends (a module-level function
        or a method of a picklable object).
    arglists : iterable of tuple
    n_jobs : int or None
        joblib semantics: ``None`` defers to ``joblib.parallel_config``.
    prefer : {"processes", "threads"} or None
        joblib's soft hint (ignored by backends such as dask).
    lazy : bool, default=False
        Return an iterator instead of a list.

    Returns
    -------
    list or iterator
    """
    arglists = list(arglists)
    if runs_in_process(n_jobs, len(arglists)):
        results = (func(*args) for args in arglists)
        return results if lazy else list(results)
    lazy = lazy and get_active_backend()[0].supports_return_generator  # else a list
    return Parallel(n_jobs=n_jobs, prefer=prefer, return_as="generator" if lazy else "list")(
        delayed(func)(*args) for args in arglists)


class Evaluator:
    """Base evaluator: runs ``evaluate_one`` for every pull of a batch through joblib.

    Parameters
    ----------
    n_jobs : int or None
        Parallel workers for a batch (joblib semantics: ``None`` defers to
        ``joblib.parallel_config``, else 1).

    Attributes
    ----------
    on_result : callable or None
        Told ``(position, arm, fidelity, outcome)`` of each pull as it
        finishes, before its batch ends, by evaluators that :meth:`report`:
        its position in the batch given to ``evaluate`` and its
        :class:`Outcome` (the raw reward, before the failed-pull rule, and
        the ``info`` the batch's :class:`Outcomes` will hold). During the
        calibration the search sets it to answer at once, and the study
        recorder to store each pull as it finishes.
    """

    on_result: Callable[[int, int, int, Outcome], None] | None = None

    def __init__(self, n_jobs: int | None = None):
        self.n_jobs = n_jobs

    def report(self, pos: int, arm: int, fidelity: int, outcome: Outcome) -> None:
        """Tell :attr:`on_result` (when set) that the pull at ``pos`` has finished."""
        if self.on_result is not None:
            self.on_result(pos, arm, fidelity, outcome)

    def evaluate_one(self, arm: int, fidelity: int, point=None) -> Outcome:
        """Evaluate one pull; override in subclasses."""
        raise NotImplementedError

    def repeats_splits(self) -> bool:
        """Whether a pull repeated the data split of an earlier pull of its (arm,
        fidelity), so that it is not the independent evaluation a certificate assumes
        (an evaluator whose splits can run out says so; by default, never)."""
        return False

    def evaluate(self, pulls: Pulls) -> Outcomes:
        """Evaluate a batch through joblib (:func:`parallel_map`)."""
        points = [None] * len(pulls) if pulls.points is None else list(pulls.points)
        args = [(a, f, p) for (a, f), p in zip(pulls, points, strict=True)]
        return Outcomes.from_list(parallel_map(self.evaluate_one, args, self.n_jobs))


@dataclass
class RunResult:
    """What a run did.

    Attributes
    ----------
    recommendation : int
        The policy's recommended arm at the end.
    stopping_reason : str
        ``"stopping-rule"`` (the policy's guarantee holds), ``"budget"``,
        ``"max-pulls"``, ``"time-budget"``, ``"callback"`` (a callback
        returned True), ``"interrupted"`` (Ctrl+C) or ``"stalled"`` (the
        policy asked nothing while results were missing).
    n_pulls : int
    n_failed : int
    total_cost : float
        Sum of the pulls' costs.
    wall_time : float
        Seconds spent in the loop (decisions and evaluations).
    summary : PolicySummary
    cancelled : Pulls or None
        The batch that Ctrl+C interrupted (cancelled in the policy, so it
        will be asked again); ``None`` otherwise.
    """

    recommendation: int
    stopping_reason: str
    n_pulls: int
    n_failed: int
    total_cost: float
    wall_time: float
    summary: PolicySummary
    cancelled: Pulls | None = None

    @property
    def completed(self) -> bool:
        """Whether the policy's own stopping rule ended the run."""
        return self.stopping_reason == "stopping-rule"


Callback = Callable[[Pulls, Outcomes, Policy], None]


def run(
    policy: Policy,
    evaluator,
    *,
    budget: float | None = None,
    max_pulls: int | None = None,
    time_budget: float | None = None,
    callbacks: Iterable[Callback] = (),
    fast: bool = True,
    pull_costs=None,
) -> RunResult:
    """Run ``policy`` against ``evaluator`` until a stopping condition.

    Parameters
    ----------
    policy : Policy
        Any object with the ask/tell protocol.
    evaluator : Evaluator-like
        Has ``evaluate(pulls) -> Outcomes``; optionally ``step(policy)``.
    budget : float, optional
        Stop once the summed cost reaches it. A batch that would cross it is
        trimmed to the pulls that fit, in the policy's order (at least one).
    max_pulls : int, optional
        Stop after this many pulls (batches are trimmed to fit).
    time_budget : float, optional
        Stop once the loop has run this many wall seconds (checked between
        batches, so the batch in flight finishes).
    callbacks : iterable of callables
        Each is called as ``cb(pulls, outcomes, policy)`` after every told
        batch (not on the fast path, which has no per-pull records); the run
        stops after the batch if any of them returns ``True``.
    fast : bool, default=True
        Use ``evaluator.step`` when it exists.
    pull_costs : callable, optional
        ``pull_costs()`` gives the cost of one pull per fidelity in ``budget``'s
        units, to trim a batch (the tuner's measured seconds); default the
        policy's ``nominal_costs()``.

    Returns
    -------
    RunResult
    """
    if budget is not None and not budget > 0:
        raise ValueError(f"budget must be > 0 or None; got {budget!r}")
    if max_pulls is not None and (int(max_pulls) != max_pulls or max_pulls < 1):
        raise ValueError(f"max_pulls must be a positive integer or None; got {max_pulls!r}")
    if time_budget is not None and not time_budget > 0:
        raise ValueError(f"time_budget must be > 0 or None; got {time_budget!r}")
    callbacks = list(callbacks)
    use_step = fast and hasattr(evaluator, "step") and not callbacks
    n_pulls = n_failed = 0
    spent = 0.0
    reason = "stopping-rule"
    start = time.perf_counter()
    pulls = None  # the batch asked but not yet told
    cancelled = None
    try:
        while not policy.done:
            if budget is not None and spent >= budget:
                reason = "budget"
                break
            if max_pulls is not None and n_pulls >= max_pulls:
                reason = "max-pulls"
                break
            if time_budget is not None and time.perf_counter() - start >= time_budget:
                reason = "time-budget"
                break
            if use_step and budget is None and max_pulls is None and time_budget is None:
                pulled, cost = evaluator.step(policy)
                n_pulls += pulled
                spent += cost
                continue
            pulls = policy.ask()
            if len(pulls) == 0:  # done within ask (results it had answered its batch)?
                reason = "stopping-rule" if policy.done else "stalled"
                break
            pulls = _trim(pulls, policy, spent, budget, n_pulls, max_pulls, pull_costs)
            outcomes = evaluator.evaluate(pulls)
            policy.tell(pulls, outcomes.rewards, outcomes.costs)
            told, pulls = pulls, None
            n_pulls += len(told)
            n_failed += outcomes.n_failed
            spent += float(outcomes.costs.sum())
            stops = [cb(told, outcomes, policy) for cb in callbacks]
            if any(s is True for s in stops):
                reason = "callback"
                break
    except KeyboardInterrupt:
        # Keep everything told so far; the interrupted batch may be asked again.
        reason = "interrupted"
        if pulls is not None and len(pulls):
            policy.cancel(pulls)
            cancelled = pulls
    return RunResult(
        recommendation=int(policy.recommend()),
        stopping_reason=reason,
        n_pulls=n_pulls,
        n_failed=n_failed,
        total_cost=spent,
        wall_time=time.perf_counter() - start,
        summary=policy.summary(),
        cancelled=cancelled,
    )


def _trim(pulls: Pulls, policy: Policy, spent, budget, n_pulls, max_pulls,
          pull_costs=None) -> Pulls:
    """Cut a batch to the pulls that fit the remaining budget and pull cap."""
    keep = len(pulls)
    if max_pulls is not None:
        keep = min(keep, max_pulls - n_pulls)
    if budget is not None:
        costs = policy.nominal_costs() if pull_costs is None else pull_costs()
        planned = np.cumsum(np.asarray(costs, dtype=float)[pulls.fidelities])
        keep = min(keep, max(1, int(np.searchsorted(planned, budget - spent, side="right"))))
    if keep >= len(pulls):
        return pulls
    policy.cancel(pulls[keep:])
    return pulls[:keep]
