"""What continuation saves: ``MFTuner`` with and without it, side by side in one run.

On a task of :data:`mftune.benchmarks.tuner_vs_halving.TASKS` with an
estimator-parameter fidelity (``hgb-letter``: HistGradientBoosting on letter,
``max_iter`` 8/24/72, 16 candidates, 3-fold CV), for each seed:

1. **Same pulls, interleaved** — one search (``costs="levels"``, so its
   decisions do not depend on timing; ``max_pulls``) runs every pull twice,
   back to back, alternating which goes first: once fitted from scratch
   (``continuation=False``) and once with ``continuation="auto"`` (checked:
   same scores). Interleaving pull by pull keeps the machine's drift out of
   the comparison — two whole runs one after the other on a shared machine
   differed by 1.7x on identical pulls. Printed: both summed costs, their
   difference (the measured saving) next to ``continuation_saved_`` (the
   tuner's own estimate), and the paired per-pull cost ratios.
2. **Defaults with a budget** — two whole runs one after the other
   (``continuation=False`` first on even seeds), defaults (measured costs)
   and the task's cost budget: what each reaches in the same seconds of
   fitting. Drift between the runs is not controlled here.

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

from ..engine.driver import Outcomes
from ..search import tuner as tuner_module
from ..search.evaluation import CVEvaluator
from ..search.tuner import MFTuner
from .tuner_vs_halving import TASKS, _split

__all__ = ["PairedEvaluator", "main", "run_interleaved", "run_pair"]


class PairedEvaluator:
    """Evaluate every pull with and without continuation, back to back, alternating order.

    Built with :class:`~mftune.search.evaluation.CVEvaluator`'s arguments; ``on``
    has the continuation, ``off`` fits every pull from scratch. The search
    sees ``on``'s outcomes; ``off.records`` holds the refits of the same pulls.
    """

    def __init__(self, *args, continuation=None, **kw):
        self.__dict__["on"] = CVEvaluator(*args, continuation=continuation, **kw)
        self.__dict__["off"] = CVEvaluator(*args, continuation=None, **kw)
        self.__dict__["k"] = 0

    def __getattr__(self, name):
        return getattr(self.on, name)

    def __setattr__(self, name, value):  # e.g. ``phase``: both evaluators
        setattr(self.on, name, value)
        setattr(self.off, name, value)

    def evaluate(self, pulls) -> Outcomes:
        outs = []
        for i in range(len(pulls)):
            order = (self.off, self.on) if (self.k + i) % 2 == 0 else (self.on, self.off)
            res = {id(ev): ev.evaluate(pulls[i:i + 1]) for ev in order}
            on, off = res[id(self.on)], res[id(self.off)]
            if not np.array_equal(on.rewards, off.rewards):
                raise RuntimeError("a continued pull scored differently from its refit")
            outs.append(on)
        self.__dict__["k"] += len(pulls)
        return Outcomes(np.concatenate([o.rewards for o in outs]),
                        np.concatenate([o.costs for o in outs]),
                        sum((o.status for o in outs), []), sum((o.errors for o in outs), []))

    def release(self, pulls) -> None:
        self.on.release(pulls)
        self.off.release(pulls)


def run_interleaved(task, seed, X, y, **kw) -> tuple[MFTuner, list, float]:
    """One search whose pulls run with and without continuation (:class:`PairedEvaluator`)."""
    t = _tuner(task, seed, continuation="auto", **kw)
    holder = {}

    def make(*args, **kwargs):
        holder["ev"] = PairedEvaluator(*args, **kwargs)
        return holder["ev"]

    original = tuner_module.CVEvaluator
    tuner_module.CVEvaluator = make  # the tuner builds its evaluator through this name
    try:
        t0 = time.perf_counter()
        t.fit(X, y)
        wall = time.perf_counter() - t0
    finally:
        tuner_module.CVEvaluator = original
    return t, holder["ev"].off.records, wall


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
                    help="search pulls of the interleaved comparison")
    ap.add_argument("--budget", type=float, default=None,
                    help="cost budget of the defaults comparison (default: the task's)")
    ap.add_argument("--n-jobs", type=int, default=None,
                    help="n_jobs of the budget comparison (the interleaved one runs one pull "
                         "at a time)")
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
        print(f"seed {seed} ({source}); 1. same pulls interleaved: costs='levels', "
              f"max_pulls={args.max_pulls}")
        on, off_recs, wall = run_interleaved(task, seed, X, y, costs="levels",
                                             max_pulls=args.max_pulls)
        p = on.pulls_
        c_on, c_off = p["cost"], np.array([r.cost for r in off_recs])
        cont = p["continued"]
        print(f"  {len(c_on)} pulls, {int(cont.sum())} continued; summed cost: refit "
              f"{c_off.sum():.1f} s, continued {c_on.sum():.1f} s; measured saving "
              f"{c_off.sum() - c_on.sum():.1f} s ({100 * (1 - c_on.sum() / c_off.sum()):.0f} %); "
              f"estimate continuation_saved_ {on.continuation_saved_:.1f} s (reused-work "
              f"upper bound {p['reused_cost'].sum() - p['cache_time'].sum():.1f} s) "
              f"(cache pickling {p['cache_time'].sum():.2f} s, peak cache "
              f"{on._evaluator.cache.peak_bytes / 2**20:.1f} MB); wall {wall:.0f} s for both")
        paired = float((c_off - c_on)[cont].sum() - p["cache_time"][~cont].sum())
        print(f"  measured on the continued pulls alone (their refit minus them, less the "
              f"other pulls' pickling): {paired:.1f} s")
        pairs = list(zip(p["candidate"].tolist(), p["fidelity"].tolist(), strict=True))
        fresh = {pair for pair, c in zip(pairs, cont, strict=True) if not c}
        measured = np.array([pair in fresh for pair in pairs], dtype=bool)
        for label, m in (("from the candidate's fresh pulls", cont & measured),
                         ("from the scaled reused work", cont & ~measured)):
            print(f"  continued pulls whose saving is estimated {label}: {int(m.sum())}; "
                  f"estimate {p['saved_cost'][m].sum():.1f} s, measured "
                  f"{(c_off - c_on)[m].sum() + p['cache_time'][m].sum():.1f} s "
                  "(pickling excluded from both)")
        ratio = c_on / c_off
        print(f"  per-pull cost ratio continued/refit, median [min-max]: continued pulls "
              f"{_q(ratio[cont])}; the other pulls (both from scratch: the control) "
              f"{_q(ratio[~cont])}")
        print("  mean seconds per pull, refit -> with continuation: " + ", ".join(
            f"{task.fidelity}={task.levels[f]}: {c_off[p['fidelity'] == f].mean():.2f} -> "
            f"{c_on[p['fidelity'] == f].mean():.2f} ({int(cont[p['fidelity'] == f].sum())}/"
            f"{int(np.sum(p['fidelity'] == f))} continued)"
            for f in range(len(task.levels)) if np.any(p["fidelity"] == f)))
        if args.skip_budget:
            continue
        print(f"seed {seed}; 2. defaults with budget={budget:g} s of cost (two runs, one "
              "after the other)")
        print(HEADER + "reached  stop          test acc")
        order = (False, "auto") if seed % 2 == 0 else ("auto", False)
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
