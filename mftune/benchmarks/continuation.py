"""What continuation saves: ``MFTuner`` with and without it, side by side in one run.

On a task of :data:`mftune.benchmarks.tuner_vs_halving.TASKS` with an
estimator-parameter fidelity (``hgb-letter``: HistGradientBoosting on letter,
``max_iter`` 8/24/72, 16 candidates, 3-fold CV), for each seed:

1. **Same decisions** — ``costs="levels"`` and ``max_pulls``: the policy's
   choices do not depend on timing, so the runs with ``continuation=False``
   and ``continuation="auto"`` pull the same (candidate, fidelity, split)
   sequence (checked: same pulls, same scores). The difference of their
   summed costs is the measured saving; it is printed next to
   ``continuation_saved_``, the tuner's own estimate.
2. **Defaults with a budget** — both with their defaults (measured costs) and
   the task's cost budget: what each reaches in the same seconds of fitting
   (pulls, highest fidelity, recommendation's test accuracy).

The two runs of a pair run one after the other (``continuation=False`` first
on even seeds, second on odd ones); on a shared machine compare the pairs,
not absolute seconds. The paired ratio of each pull's cost in the two runs
(same candidate, fidelity and split) is printed for the continued pulls and,
as a control for the machine's drift, for the pulls both runs fitted from
scratch.

Run: ``OMP_NUM_THREADS=1 nice -n 19 python -m mftune.benchmarks.continuation``
(``--help`` for options).
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

from ..tuner import MFTuner
from .tuner_vs_halving import TASKS, _split

__all__ = ["main", "run_pair"]


def _tuner(task, seed, **kw) -> MFTuner:
    cv = StratifiedKFold(task.cv, shuffle=True, random_state=seed)
    return MFTuner(task.estimator, task.space, fidelity=task.fidelity, fidelities=task.levels,
                   n_candidates=task.n_candidates, cv=cv, refit=False, random_state=seed, **kw)


def _row(label, t: MFTuner, wall: float, extra: str = "") -> str:
    p = t.pulls_
    cache = t._evaluator.cache if t._evaluator is not None else None
    peak = 0.0 if cache is None else cache.peak_bytes / 2**20
    return (f"  {label:12s} {len(p['cost']):5d} {int(p['continued'].sum()):9d} "
            f"{t.total_cost_:8.1f} {t.continuation_saved_:8.1f} "
            f"{float(np.sum(p['cache_time'])):8.2f} {peak:8.1f} {wall:7.1f}  {extra}")


def _q(v) -> str:
    if not len(v):
        return "-"
    return f"{np.median(v):.2f} [{v.min():.2f}-{v.max():.2f}] (n={len(v)})"


HEADER = "  continuation pulls continued  cost s  saved s  cache s  peak MB  wall s  "


def run_pair(task, seed, X, y, order, **kw) -> dict:
    """Fit the tuner with ``continuation=False`` and ``"auto"`` (in ``order``)."""
    out = {}
    for cont in order:
        t = _tuner(task, seed, continuation=cont, **kw)
        t0 = time.perf_counter()
        t.fit(X, y)
        out[cont] = (t, time.perf_counter() - t0)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default="hgb-letter", choices=sorted(TASKS))
    ap.add_argument("--seeds", default="0", help="comma-separated seeds")
    ap.add_argument("--max-pulls", type=int, default=30,
                    help="search pulls of the same-decisions comparison")
    ap.add_argument("--budget", type=float, default=None,
                    help="cost budget of the defaults comparison (default: the task's)")
    ap.add_argument("--n-jobs", type=int, default=None)
    ap.add_argument("--pool", type=int, default=None,
                    help="training-pool rows (default: the task's)")
    ap.add_argument("--skip-budget", action="store_true")
    args = ap.parse_args(argv)
    task = TASKS[args.task]
    if args.pool is not None:
        task = replace(task, n_pool=args.pool)
    if task.fidelity == "n_samples":
        raise SystemExit(f"{args.task}: continuation needs an estimator-parameter fidelity")
    budget = task.budget if args.budget is None else args.budget
    print(f"{task.name}: {task.description} (pool {task.n_pool} rows); "
          f"{task.n_candidates} candidates; "
          f"n_jobs={args.n_jobs}; load average {os.getloadavg()[0]:.1f}")
    for seed in (int(s) for s in args.seeds.split(",")):
        X, X_te, y, y_te, source = _split(task, seed)
        # warm-up, so that neither run of a pair pays the process's first fit
        clone(task.estimator).set_params(**{task.fidelity: task.levels[0]}).fit(X[:2000], y[:2000])
        order = (False, "auto") if seed % 2 == 0 else ("auto", False)
        print(f"seed {seed} ({source}); 1. same decisions: costs='levels', "
              f"max_pulls={args.max_pulls} (runs in order {order})")
        print(HEADER)
        pair = run_pair(task, seed, X, y, order, costs="levels", max_pulls=args.max_pulls,
                        n_jobs=args.n_jobs)
        (off, w_off), (on, w_on) = pair[False], pair["auto"]
        same = all(np.array_equal(off.pulls_[c], on.pulls_[c])
                   for c in ("candidate", "fidelity", "split", "score"))
        print(_row("False", off, w_off))
        print(_row("auto", on, w_on, f"same pulls and scores: {same}"))
        diff = off.total_cost_ - on.total_cost_
        print(f"  measured saving {diff:.1f} s of {off.total_cost_:.1f} s "
              f"({100 * diff / off.total_cost_:.0f} %); estimate continuation_saved_ "
              f"{on.continuation_saved_:.1f} s; wall ratio auto/False {w_on / w_off:.2f}")
        if same:  # paired by pull: the same (candidate, fidelity, split) in both runs
            ratio = on.pulls_["cost"] / off.pulls_["cost"]
            cont = on.pulls_["continued"]
            print(f"  paired cost ratio auto/False, median [min-max]: continued pulls "
                  f"{_q(ratio[cont])}; pulls fitted from scratch in both {_q(ratio[~cont])}")
            if cont.any() and (~cont).any():
                drift = np.median(ratio[~cont])
                print(f"  continued pulls cost {np.median(ratio[cont]) / drift:.2f} x their "
                      f"refit after dividing by the drift ratio {drift:.2f}")
        by_f = [(f, off.pulls_["cost"][off.pulls_["fidelity"] == f].mean(),
                 on.pulls_["cost"][on.pulls_["fidelity"] == f].mean())
                for f in range(len(task.levels)) if np.any(off.pulls_["fidelity"] == f)]
        print("  mean seconds per pull at " + ", ".join(
            f"{task.fidelity}={task.levels[f]}: {a:.2f} -> {b:.2f}" for f, a, b in by_f))
        if args.skip_budget:
            continue
        print(f"seed {seed}; 2. defaults with budget={budget:g} s of cost")
        print(HEADER + "reached  stop          test acc")
        pair = run_pair(task, seed, X, y, order, budget=budget, n_jobs=args.n_jobs)
        for cont in (False, "auto"):
            t, wall = pair[cont]
            best = int(t.best_index_)
            params = dict(t.candidates_[best], **{task.fidelity: task.levels[-1]})
            acc = clone(task.estimator).set_params(**params).fit(X, y).score(X_te, y_te)
            reached = int(t.cv_results_["fidelity_reached"][best])
            print(_row(str(cont), t, wall,
                       f"f{reached}      {t.stopping_reason_:12s}  {acc:.4f}"))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
