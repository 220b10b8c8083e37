"""Time-to-quality on the real tasks (SVM-MAGIC, KDE), decision time included.

Each method runs ask -> evaluate -> tell on a :class:`~mftune.benchmarks.tasks.TuningTask`
until its *elapsed time* — the measured seconds of its evaluations plus the
seconds spent in its own ``ask``/``tell`` (the paper counts the method's
processing time too) — exceeds a budget. The quality target is the best
score of a dense grid at the top fidelity minus a tolerance; the
time-to-quality of a run is the elapsed time at which a *target-fidelity*
evaluation first reaches it (``inf`` if never).

The grid reference is computed once and cached as JSON under
``$MFTUNE_CACHE`` or ``~/.cache/mftune``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..policies.gp_ucb import GPUCB
from ..policies.mf_gp_ucb import MFGPUCB
from ..policies.random_search import RandomSearch
from .tasks import TuningTask

__all__ = ["TaskRun", "grid_reference", "hit_in_initial_design", "run_task",
           "time_to_quality"]

TASK_METHODS = {"mf-gp-ucb": MFGPUCB, "gp-ucb": GPUCB, "random": RandomSearch}


def _cache_dir() -> Path:
    return Path(os.environ.get("MFTUNE_CACHE", Path.home() / ".cache" / "mftune"))


def grid_reference(task: TuningTask, n_per_dim: int, key: str, use_cache: bool = True) -> dict:
    """Best top-fidelity score over an ``n_per_dim``^d grid of the unit cube (cached)."""
    path = _cache_dir() / f"{key}-grid{n_per_dim}.json"
    if use_cache and path.exists():
        return json.loads(path.read_text())
    axes = [np.linspace(0.0, 1.0, n_per_dim)] * task.n_dims
    pts = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, task.n_dims)
    scores, secs = [], []
    for p in pts:
        s, t = task.evaluate_unit(p, task.n_fidelities - 1)
        scores.append(s)
        secs.append(t)
    best = int(np.argmax(scores))
    ref = {"best_score": float(scores[best]), "best_point": pts[best].tolist(),
           "best_config": {k: float(v) for k, v in task.space.from_unit(pts[best:best + 1])[0]
                           .items()},
           "n_points": len(pts), "n_per_dim": n_per_dim, "seconds": float(np.sum(secs)),
           "scores": [float(v) for v in scores]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(ref, indent=1))
    return ref


@dataclass
class TaskRun:
    """One tuning run: per evaluation its fidelity, score and elapsed time (s)."""

    method: str
    seed: int
    fidelities: np.ndarray
    scores: np.ndarray
    elapsed: np.ndarray  # cumulative evaluation + decision seconds after each evaluation
    decision_seconds: float
    n_init: int = 0  # size of the first batch (the initial design)


def run_task(task: TuningTask, method: str, time_budget: float, seed: int,
             target: float | None = None, ard: bool | None = None) -> TaskRun:
    """Run ``method`` on ``task`` until ``time_budget`` elapsed seconds (or ``target`` met).

    ``ard`` (when not None) sets the kernel of the GP methods (see
    :class:`~mftune.policies.gp.FidelityGP`).
    """
    if method not in TASK_METHODS:
        raise ValueError(f"method must be one of {', '.join(TASK_METHODS)}; got {method!r}")
    kwargs = {} if ard is None or method == "random" else {"ard": ard}
    policy = TASK_METHODS[method](task.n_dims, task.costs, None, random_state=seed, **kwargs)
    fids, scores, elapsed = [], [], []
    clock = decision = 0.0
    n_init = 0
    top = task.n_fidelities - 1
    while clock < time_budget:
        t0 = time.perf_counter()
        pulls = policy.ask()
        decision += time.perf_counter() - t0
        if len(pulls) == 0:
            break
        n_init = n_init or len(pulls)
        ys, cs = [], []
        for p, m in zip(pulls.points, pulls.fidelities.tolist(), strict=True):
            y, c = task.evaluate_unit(p, m)
            ys.append(y)
            cs.append(c)
            clock += c
            fids.append(m)
            scores.append(y)
            elapsed.append(clock + decision)
        t0 = time.perf_counter()
        policy.tell(pulls, ys, cs)
        decision += time.perf_counter() - t0
        clock_total = clock + decision
        if target is not None and any(
                f == top and s >= target for f, s in zip(fids, scores, strict=True)):
            break
        if clock_total >= time_budget:
            break
    return TaskRun(method, seed, np.array(fids), np.array(scores),
                   np.array(elapsed), decision, n_init)


def hit_in_initial_design(record: TaskRun, target: float, top: int) -> bool:
    """Whether the target was first reached by a point of the initial design."""
    hit = np.flatnonzero((record.fidelities == top) & (record.scores >= target))
    return bool(hit.size and hit[0] < record.n_init)


def time_to_quality(record: TaskRun, target: float, top: int) -> float:
    """Elapsed seconds at which a top-fidelity score first reached ``target`` (inf: never)."""
    hit = np.flatnonzero((record.fidelities == top) & (record.scores >= target))
    return float(record.elapsed[hit[0]]) if hit.size else float("inf")


def paired_summary(first: Sequence[float], second: Sequence[float]) -> dict:
    """Seed-by-seed ratios ``first / second`` of two methods' times to target.

    Only seeds where both reached the target count. Returns ``n`` (those
    seeds), ``median`` and ``gmean`` of the ratios (nan when ``n == 0``)
    and ``faster`` (seeds where ``first`` was strictly faster, counting a
    seed where only ``first`` reached the target).
    """
    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    both = np.isfinite(a) & np.isfinite(b) & (b > 0)
    r = a[both] / b[both]
    return {"n": int(both.sum()),
            "median": float(np.median(r)) if r.size else np.nan,
            "gmean": float(np.exp(np.mean(np.log(r)))) if r.size else np.nan,
            "faster": int(np.sum(a < b))}
