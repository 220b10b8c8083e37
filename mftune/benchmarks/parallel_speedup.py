"""Pulls per second of ``MFTuner`` with ``n_jobs=1`` and ``n_jobs=2``, side by side.

The task is :class:`~mftune.benchmarks.tasks.SVMMagic` (RBF ``SVC`` on 2,000
standardised MAGIC rows, ``C ∈ [1e-1, 1e5]``, bandwidth ``h ∈ [1e-3, 1e1]``
i.e. ``gamma = 1/(2h²) ∈ [5e-3, 5e5]``, both log-uniform; 500 rows as the low
fidelity, the whole training fold as the target; 5-fold CV), searched by
``MFTuner`` with its defaults (``algorithm="auto"``, adaptive bias bounds,
``epsilon="auto"``) except fixed costs (``costs="levels"``): its decisions then
do not depend on timing, so every ``n_jobs`` makes exactly the same pulls
(checked) and the ratio of pulls per second is the ratio of wall times for
identical work. One search ends after a few seconds, so several seeds (each
its own candidates and splits) are summed.

For each seed the settings run one after the other, in alternating order
(1, 2, then 2, 1, ...), in one process, so any drift in the machine's load
hits them alike. The loky worker processes are started once, before the
timed runs (a process pays that once; it is measured and printed apart).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np
from joblib import effective_n_jobs

from ..space import Real
from .tasks import SVMMagic

__all__ = ["SpeedupRow", "format_rows", "run_speedup", "svm_magic_tuner"]


@dataclass
class SpeedupRow:
    """One timed fit."""

    n_jobs: int
    seed: int
    pulls: int
    wall: float
    busy: float  # summed pull seconds (fit + score), measured inside the workers
    stopping_reason: str
    best_index: int

    @property
    def pulls_per_second(self) -> float:
        return self.pulls / self.wall


def svm_magic_tuner(task: SVMMagic, n_jobs: int, seed: int, max_pulls: int,
                    n_candidates: int):
    """The ``MFTuner`` of the benchmark (no refit: only the search is timed)."""
    from sklearn.svm import SVC

    from ..search.tuner import MFTuner

    space = {"C": Real(1e-1, 1e5, log=True), "gamma": Real(5e-3, 5e5, log=True)}
    return MFTuner(SVC(tol=task.tol, max_iter=task.max_iter), space, fidelity="n_samples",
                   fidelities=list(task.fidelities[:-1]), n_candidates=n_candidates,
                   cv=task.cv, costs="levels", max_pulls=max_pulls, refit=False,
                   n_jobs=n_jobs, random_state=seed)


def _warm_up(n_jobs: int) -> float:
    """Start joblib's loky workers (and import scikit-learn in them); return the seconds."""
    from joblib import Parallel, delayed

    start = time.perf_counter()
    Parallel(n_jobs=n_jobs)(delayed(_import_sklearn)() for _ in range(2 * n_jobs))
    return time.perf_counter() - start


def _import_sklearn() -> int:
    import sklearn.svm  # noqa: F401

    return os.getpid()


def run_speedup(*, seeds=range(6), max_pulls: int = 200, n_candidates: int = 64,
                jobs=(1, 2), log=print) -> tuple[list[SpeedupRow], dict]:
    """Time the same searches at each ``n_jobs``; return the rows and run information.

    Raises ``RuntimeError`` if two settings made different pulls (the ratio
    would then compare different work).
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    # SVC's max_iter cap warns on every large-C fit; the workers inherit this filter
    os.environ.setdefault("PYTHONWARNINGS", "ignore:Solver terminated early")
    task = SVMMagic(random_state=0)
    seeds = list(seeds)
    info = {"data": task.data_source, "rows": int(task.y.size), "seeds": seeds,
            "max_pulls": max_pulls, "n_candidates": n_candidates, "cpu_count": os.cpu_count(),
            "load_before": os.getloadavg()}
    info["loky_start"] = {j: _warm_up(j) for j in jobs if j != 1}
    rows = []
    for r, seed in enumerate(seeds):
        order = list(jobs) if r % 2 == 0 else list(reversed(jobs))
        reference = None
        for j in order:
            tuner = svm_magic_tuner(task, j, seed, max_pulls, n_candidates)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                start = time.perf_counter()
                tuner.fit(task.X, task.y)
                wall = time.perf_counter() - start
            p = tuner.pulls_
            made = (p["candidate"].tolist(), p["fidelity"].tolist(), p["split"].tolist())
            if reference is None:
                reference = made
            elif made != reference:
                raise RuntimeError("n_jobs changed the pulls made; the ratio would be meaningless")
            row = SpeedupRow(j, seed, len(p["candidate"]), wall, float(np.sum(p["cost"])),
                             tuner.stopping_reason_, int(tuner.best_index_))
            rows.append(row)
            log(f"  seed {seed} n_jobs={j}: {row.pulls} pulls in {wall:.1f} s "
                f"({row.pulls_per_second:.2f} pulls/s), pull seconds {row.busy:.1f}, "
                f"stop {row.stopping_reason}, best #{row.best_index}")
    info["load_after"] = os.getloadavg()
    return rows, info


def format_rows(rows: list[SpeedupRow], info: dict) -> str:
    """Pulls per second per ``n_jobs`` over all seeds, and the ratio to the first ``n_jobs``.

    Also the per-seed ratios (min, median, max) and ``busy`` — the summed pull
    seconds over ``workers × wall`` (joblib's effective count for ``n_jobs``), how full
    the workers were kept.
    """
    jobs = list(dict.fromkeys(r.n_jobs for r in rows))
    by = {j: [r for r in rows if r.n_jobs == j] for j in jobs}
    pulls = {j: sum(r.pulls for r in by[j]) for j in jobs}
    wall = {j: sum(r.wall for r in by[j]) for j in jobs}
    busy = {j: sum(r.busy for r in by[j]) for j in jobs}
    pps = {j: pulls[j] / wall[j] for j in jobs}
    ref = jobs[0]
    lines = [f"SVM-MAGIC ({info['data']}, {info['rows']} rows), {info['n_candidates']} "
             f"candidates, seeds {info['seeds'][0]}..{info['seeds'][-1]}: the same "
             f"{pulls[ref]} pulls at every n_jobs",
             f"{'n_jobs':>6s} {'pulls':>6s} {'wall s':>8s} {'pulls/s':>8s} {'ratio':>6s} "
             f"{'per seed min-med-max':>21s} {'pull s':>7s} {'busy':>5s}"]
    for j in jobs:
        per = [a.wall / b.wall for a, b in zip(by[ref], by[j], strict=True)]
        lines.append(f"{j:>6d} {pulls[j]:>6d} {wall[j]:>8.1f} {pps[j]:>8.2f} "
                     f"{pps[j] / pps[ref]:>5.2f}x {min(per):>7.2f} {np.median(per):>6.2f} "
                     f"{max(per):>6.2f} {busy[j]:>7.1f} "
                     f"{busy[j] / (effective_n_jobs(j) * wall[j]):>5.0%}")
    lb, la = info["load_before"], info["load_after"]
    lines.append(f"load average before {lb[0]:.2f} {lb[1]:.2f} {lb[2]:.2f}, after "
                 f"{la[0]:.2f} {la[1]:.2f} {la[2]:.2f}; {info['cpu_count']} CPUs"
                 + ("; loky start-up " + ", ".join(
                     f"{s:.1f} s (n_jobs={j})" for j, s in info["loky_start"].items())
                    + " (once per process, before the timed runs)" if info["loky_start"]
                    else ""))
    return "\n".join(lines)
