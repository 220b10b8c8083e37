"""Optimise any Python function with multi-fidelity evaluations.

:func:`maximize` and :func:`minimize` run MF-GP-UCB (Kandasamy et al., 2016)
or one of its baselines on a function ``func(config, fidelity) -> float``
over a :class:`~mftune.space.Space`, the way ``scipy.optimize.minimize`` or
``skopt.gp_minimize`` run on a plain function::

    from mftune import Real, maximize

    def cv_accuracy(config, n_rows):          # any fidelity values: rows, epochs
        ...
        return score

    res = maximize(cv_accuracy, {"C": Real(1e-1, 1e5, log=True),
                                 "gamma": Real(1e-4, 1e1, log=True)},
                   fidelities=[500, 2000], budget=40 * 4, random_state=0)
    res.x, res.fun                            # best configuration at 2000 rows

The policies are the ones of :mod:`mftune.policies` (their docstrings say
which details follow the paper, the authors' code or our reconstruction);
this module only maps configurations to and from the unit cube, charges
each evaluation its fidelity's cost, and keeps a record of every
evaluation. An evaluation that raises or returns a non-finite value is
recorded as failed and the policy is told the lowest value seen so far
(so the region is not preferred) — the stand-in
:class:`~mftune.search.tuner.MFTuner` uses for a nan ``error_score``. Ctrl+C stops
the run and returns what is finished.
"""

from __future__ import annotations

import numbers
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from numbers import Real as RealNumber

import numpy as np
from joblib import effective_n_jobs
from scipy.optimize import OptimizeResult

from .._validation import check_batch_size, check_costs, check_n_jobs, check_positive
from ..engine.driver import Evaluator, Outcomes, parallel_map, run
from ..policies import POINT_POLICIES
from ..policies.base import Pulls
from ..space import Space
from ..study.outcomes import stand_in_rewards

__all__ = ["maximize", "minimize"]

#: Methods that need at least two fidelities.
_MULTI = ("mf-gp-ucb", "mf-naive")
#: Methods that propose several points per batch for parallel workers.
_BATCHED = ("mf-gp-ucb", "gp-ucb", "ei", "mf-naive", "random")


def _call(func, config: dict, fidelity) -> tuple[float, str | None, float]:
    """One evaluation: ``(value, error traceback or None, seconds)``; never raises
    (except KeyboardInterrupt), so a failing configuration cannot end the run."""
    start = time.perf_counter()
    try:
        out = func(dict(config), fidelity)
        # a number: Python's or numpy's (a 0-d array too), not a bool, string or array
        if np.ndim(out) or isinstance(out, bool | np.bool_) or not (
                isinstance(out, numbers.Real) or np.asarray(out).dtype.kind in "iuf"):
            raise TypeError(f"the function must return a real number; it returned {out!r}")
        value = float(out)
        if not np.isfinite(value):
            raise ValueError(f"the function returned {value!r}")
        return value, None, time.perf_counter() - start
    except Exception:  # noqa: BLE001 - recorded as a failed evaluation
        return np.nan, traceback.format_exc(), time.perf_counter() - start


class _FunctionEvaluator(Evaluator):
    """Evaluates a batch of unit-cube pulls with the user's function (joblib for n_jobs)."""

    def __init__(self, func, space: Space, fidelities: list, costs: np.ndarray, sign: float,
                 callback, lenient: bool, n_jobs: int | None):
        super().__init__(n_jobs=n_jobs)
        self.func, self.space, self.fidelities = func, space, fidelities
        self.costs, self.sign, self.callback = costs, sign, callback
        self.lenient = lenient  # the policy ignores the values (random search)
        self.records: list[dict] = []
        self.stop = False
        self._worst = np.inf  # lowest finite (sign-adjusted) value seen, as in CVEvaluator

    def evaluate(self, pulls: Pulls) -> Outcomes:
        configs = self.space.from_unit(pulls.points)
        fids = pulls.fidelities.tolist()
        ran = parallel_map(_call, [(self.func, c, self.fidelities[m])
                                   for c, m in zip(configs, fids, strict=True)], self.n_jobs,
                           lazy=True)
        status, done = [], []
        # each evaluation is kept as it ends: Ctrl+C in a batch keeps those that finished
        for config, m, (value, error, seconds) in zip(configs, fids, ran, strict=True):
            rec = {"config": config, "fidelity": self.fidelities[m], "fidelity_index": m,
                   "value": value, "cost": float(self.costs[m]), "seconds": seconds,
                   "status": "done" if error is None else "failed", "error": error}
            self.records.append(rec)
            status.append(rec["status"])
            done.append((value, error, seconds))
            if self.callback is not None and self.callback(dict(rec)) is True:
                self.stop = True
        rewards = self.sign * np.array([v for v, _, _ in done], dtype=float)
        failed = ~np.isfinite(rewards)
        rewards, self._worst = stand_in_rewards(rewards, self._worst)
        if failed.any() and not np.isfinite(self._worst) and not self.lenient:
            first = next(r["error"] for r in self.records if r["error"])
            raise ValueError("every evaluation so far failed, so there is no value to model; "
                             f"the first error was:\n{first}")
        return Outcomes(rewards, self.costs[pulls.fidelities], status, [e for _, e, _ in done])


def _check_fidelities(fidelities, costs) -> tuple[list, np.ndarray]:
    if isinstance(fidelities, np.ndarray) and fidelities.ndim == 1:
        fidelities = fidelities.tolist()  # an array-like of levels, as scipy takes them
    if isinstance(fidelities, (str, bytes)) or not isinstance(fidelities, Sequence):
        raise ValueError(f"fidelities must be a non-empty sequence (cheapest first); "
                         f"got {fidelities!r}")
    fids = list(fidelities)
    if not fids:
        raise ValueError("fidelities must be a non-empty sequence (cheapest first); got []")
    if costs is None:
        numeric = all(isinstance(f, RealNumber) and not isinstance(f, bool) for f in fids)
        if not numeric or any(not f > 0 for f in fids):
            raise ValueError(
                "costs must be given when fidelities are not positive numbers (the default "
                f"charges each fidelity its value); got fidelities={fids!r}")
        costs = np.asarray(fids, dtype=float)
        if np.any(np.diff(costs) <= 0):
            raise ValueError("fidelities must be strictly increasing (cheapest first) when "
                             f"costs are not given (each is charged its value); got {fids!r}")
        costs = costs / costs[0]
    return fids, check_costs(costs, "costs", len(fids))


def maximize(func: Callable[[dict, object], float], space, fidelities, *, costs=None,
             budget: float | None = None, max_evals: int | None = None,
             time_budget: float | None = None, method: str = "mf-gp-ucb",
             method_params: Mapping | None = None, n_jobs: int | None = None,
             random_state=None, callback: Callable[[dict], bool | None] | None = None,
             _sign: float = 1.0) -> OptimizeResult:
    """Maximise ``func(config, fidelity)`` over ``space`` with multi-fidelity evaluations.

    Parameters
    ----------
    func : callable
        ``func(config, fidelity) -> float``: the value (higher is better) of
        the configuration ``config`` (a dict, one entry per dimension of
        ``space``) at ``fidelity`` (one of ``fidelities``). A value that is
        not a finite real number (a string, a bool, an array, nan) or an
        exception is a failed evaluation, recorded with its reason.
    space : Space or dict
        The search space (:class:`~mftune.space.Space`, or the dict that
        builds one); a single dict space (no conditional lists).
    fidelities : sequence
        The fidelity values passed to ``func``, cheapest first; the last is
        the one whose value is optimised (the *target*).
    costs : array-like of float, optional
        Cost of one evaluation at each fidelity, strictly increasing; the
        policies plan with them and ``budget`` counts them. Default: the
        fidelity values themselves, scaled so the first costs 1 (cost
        proportional to training rows or epochs, Hyperband's assumption).
    budget : float, optional
        Stop once the summed cost of the evaluations reaches it (the paper's
        capital Λ; initial designs count). In units of ``costs``.
    max_evals : int, optional
        Stop after this many evaluations.
    time_budget : float, optional
        Stop once this many wall seconds have passed (checked between
        evaluations). At least one of ``budget``, ``max_evals`` and
        ``time_budget`` is required.
    method : {"mf-gp-ucb", "gp-ucb", "ei", "direct", "mf-naive", "random"}
        The policy (:data:`mftune.policies.POINT_POLICIES`). The
        single-fidelity ones evaluate the target fidelity only.
    method_params : dict, optional
        Keyword arguments of the policy's class, e.g. ``{"kernel": "matern",
        "ard": True}`` for MF-GP-UCB (:class:`~mftune.policies.MFGPUCB`).
    n_jobs : int or None
        Evaluations run at once, through joblib (``None``: joblib's
        ``parallel_config``, else 1; ``-1``: every core). With more than one,
        the GP policies and random search propose that many points per
        batch (their ``batch_size``: the kriging believer of
        :mod:`mftune.policies.gp_ucb`), unless ``method_params`` sets it;
        DiRect stays sequential. ``func`` must then be picklable by
        cloudpickle (closures and lambdas are) under process backends.
    random_state : int, numpy Generator or None
        Seed of the policy: a deterministic ``func`` with the same seed gives
        the same evaluations.
    callback : callable, optional
        Called with a copy of each evaluation's record (the keys of
        ``history`` below); returning ``True`` stops the run once the policy
        has been told the current batch.

    Returns
    -------
    scipy.optimize.OptimizeResult
        ``x`` (the best configuration evaluated at the target fidelity, or
        ``None``), ``fun`` (its value, nan if none), ``x_unit`` (its
        unit-cube point), ``success`` (a target-fidelity value exists),
        ``message`` and ``stopping_reason`` (the driver's: ``"budget"``,
        ``"max-pulls"``, ``"time-budget"``, ``"callback"``,
        ``"interrupted"``, ...), ``nfev``, ``nfev_per_fidelity``,
        ``n_failed``, ``cost`` (summed costs), ``wall_time``, ``history``
        (one dict per evaluation in order: ``config``, ``fidelity``,
        ``fidelity_index``, ``value``, ``cost``, ``seconds``, ``status``
        ``"done"``/``"failed"``, ``error``) and ``policy`` (the policy
        object, e.g. for its GPs or ``summary()``).

    Raises
    ------
    ValueError
        On an invalid argument (the message names it and the allowed
        values), or when a batch fails with no success before it: for the GP
        methods that is the whole initial design (as scikit-learn's searches
        raise when every fit fails), for ``"direct"`` its first point.
        Random search goes on (its choices do not use the values).

    See Also
    --------
    minimize : the same for a value to minimise.
    mftune.MFTuner : the scikit-learn search object, for estimators.

    Examples
    --------
    >>> from mftune import Real, maximize
    >>> def f(config, n):   # the cheap fidelity is the target shifted by 0.05
    ...     return -(config["x"] - 0.3) ** 2 - (0.05 if n == 10 else 0.0)
    >>> res = maximize(f, {"x": Real(0.0, 1.0)}, fidelities=[10, 100], budget=1000,
    ...                random_state=0)
    >>> abs(res.x["x"] - 0.3) < 0.02
    True
    """
    if method not in POINT_POLICIES:
        raise ValueError(f"method must be one of {', '.join(POINT_POLICIES)}; got {method!r}")
    if not callable(func):
        raise ValueError(f"func must be callable as func(config, fidelity); got {func!r}")
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be callable or None; got {callback!r}")
    if budget is None and max_evals is None and time_budget is None:
        raise ValueError("give at least one of budget, max_evals and time_budget "
                         "(the GP policies have no stopping rule of their own)")
    if budget is not None:
        budget = check_positive(budget, "budget")
    if max_evals is not None:
        max_evals = check_batch_size(max_evals, "max_evals")
    check_n_jobs(n_jobs)
    if not isinstance(random_state, np.random.RandomState):
        try:  # what the policies will make of it: an int seed, a Generator or None
            np.random.default_rng(random_state)
        except (TypeError, ValueError):
            raise ValueError("random_state must be None, a non-negative int, a numpy "
                             f"Generator or RandomState; got {random_state!r}") from None
    space = Space(space)
    if space.is_conditional:
        raise ValueError("space must be a single dict of dimensions; the unit-cube policies "
                         "do not take conditional (list) spaces")
    fids, lam = _check_fidelities(fidelities, costs)
    if method in _MULTI and len(fids) < 2:
        raise ValueError(f"method={method!r} needs at least 2 fidelities; got {len(fids)} "
                         "(use 'gp-ucb', 'ei', 'direct' or 'random' for one)")
    params = dict(method_params or {})
    workers = effective_n_jobs(n_jobs)
    if workers > 1 and method in _BATCHED:
        params.setdefault("batch_size", workers)
    try:
        policy = POINT_POLICIES[method](space.n_dims, lam, budget, random_state=random_state,
                                        **params)
    except TypeError as exc:
        raise ValueError(f"method_params not accepted by method={method!r}: {exc}") from None
    evaluator = _FunctionEvaluator(func, space, fids, lam, _sign, callback,
                                   lenient=method == "random", n_jobs=n_jobs)
    result = run(policy, evaluator, budget=budget, max_pulls=max_evals,
                 time_budget=time_budget, callbacks=[lambda *_: evaluator.stop])
    out = _result(result, evaluator, policy, space, len(fids))
    if out.stopping_reason == "stopping-rule" and budget is not None:
        # the unit-cube policies have no stopping rule: done means their capital is spent
        out.stopping_reason = "budget"
        out.message = out.message.replace("stopping-rule", "budget")
    return out


def minimize(func: Callable[[dict, object], float], space, fidelities, **kwargs
             ) -> OptimizeResult:
    """Minimise ``func(config, fidelity)``; the arguments and result are :func:`maximize`'s.

    ``fun`` and the ``value`` of each ``history`` record are ``func``'s own
    values (not negated).

    Examples
    --------
    >>> from mftune import Real, minimize
    >>> res = minimize(lambda c, n: (c["x"] - 0.7) ** 2, {"x": Real(0.0, 1.0)},
    ...                fidelities=[1, 10], budget=300, random_state=0)
    >>> round(res.x["x"], 1)
    0.7
    """
    if "_sign" in kwargs:
        raise ValueError("minimize does not take _sign")
    return maximize(func, space, fidelities, _sign=-1.0, **kwargs)


def _result(result, evaluator: _FunctionEvaluator, policy, space: Space, n_fid: int
            ) -> OptimizeResult:
    history = evaluator.records
    top = [i for i, r in enumerate(history)
           if r["status"] == "done" and r["fidelity_index"] == n_fid - 1]
    if top:
        best = max(top, key=lambda i: evaluator.sign * history[i]["value"])
        x, fun = dict(history[best]["config"]), history[best]["value"]
        x_unit = space.to_unit([x])[0]
        message = f"best of {len(top)} target-fidelity evaluations; stopped: " \
                  f"{result.stopping_reason}"
    else:
        x, fun, x_unit = None, np.nan, None
        message = f"no successful evaluation at the target fidelity; stopped: " \
                  f"{result.stopping_reason}"
    per_fid = np.bincount([r["fidelity_index"] for r in history], minlength=n_fid)
    return OptimizeResult(
        x=x, fun=fun, x_unit=x_unit, success=bool(top), message=message,
        stopping_reason=result.stopping_reason, nfev=len(history),
        nfev_per_fidelity=per_fid, n_failed=sum(r["status"] == "failed" for r in history),
        cost=float(sum(r["cost"] for r in history)), wall_time=result.wall_time,
        history=history, policy=policy)
