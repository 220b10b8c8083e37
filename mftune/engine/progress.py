"""The progress reporter of every search: a line per second, failures at once, the trace."""

from __future__ import annotations

import time

import numpy as np

__all__ = ["Progress", "say_failures"]


class Progress:
    """Progress line (verbose >= 1) and the anytime trace of a run.

    Called after every batch with ``(pulls, outcomes, policy)``; records the
    wall time, the cost spent, the pulls and the recommended candidate, and
    the time at which each candidate was eliminated.
    """

    def __init__(self, verbose: int, candidates, metric: str, start_cost: float = 0.0,
                 start_pulls: int = 0, budget=None, stream=None):
        self.verbose = verbose
        self.candidates = candidates
        self.metric = metric
        self.cost = float(start_cost)
        self.n_pulls = int(start_pulls)
        self.budget = budget
        self.t0 = time.perf_counter()
        self.history: list[tuple[float, float, int, int]] = []
        self.eliminated_time = np.full(len(candidates), np.nan)
        self._last_print = -np.inf
        self.stream = stream
        self.n_failed = 0

    def __call__(self, pulls, outcomes, policy) -> None:
        now = time.perf_counter() - self.t0
        self.cost += float(outcomes.costs.sum())
        self.n_pulls += len(pulls)
        best = int(policy.recommend())
        self.n_failed += say_failures(pulls, outcomes, self.verbose, self.stream)
        self.history.append((now, self.cost, self.n_pulls, best))
        if hasattr(policy, "active"):
            grown = policy.active.size - self.eliminated_time.size  # candidates that arrived
            if grown > 0:
                self.eliminated_time = np.r_[self.eliminated_time, np.full(grown, np.nan)]
            newly = ~policy.active & np.isnan(self.eliminated_time)
            self.eliminated_time[newly] = now
        if self.verbose >= 1 and (self.verbose >= 2 or now - self._last_print >= 1.0):
            self._last_print = now
            alive = (f"{int(policy.active.sum())} alive" if hasattr(policy, "active")
                     else f"{len(self.candidates)} proposed")  # a GP policy eliminates none
            fid = getattr(policy, "fidelity_", None)
            budget = "" if self.budget is None else f"/{self.budget:.0f}"
            print(f"[mftune] {self.n_pulls:6d} pulls | cost {self.cost:8.1f}{budget} s | "
                  f"{alive}" + ("" if fid is None else f" | fidelity {fid}")
                  + f" | best #{best} {self.candidates[best]}", file=self.stream, flush=True)


def say_failures(pulls, outcomes, verbose: int, stream=None) -> int:
    """Print the cause of every failed pull of a batch at once (verbose >= 1); count them."""
    n = 0
    for i, status in enumerate(outcomes.status):
        if status == "done":
            continue
        n += 1
        if verbose < 1:
            continue
        lines = [ln.strip() for ln in (outcomes.errors[i] or "").strip().splitlines()]
        lines = [ln for ln in lines if ln]
        cause = lines[0] if lines else "no error message"
        if len(lines) > 1:
            cause += " | " + " | ".join(lines[-3:])
        print(f"[mftune] pull {status} (candidate #{int(pulls.arms[i])}, fidelity "
              f"{int(pulls.fidelities[i])}): {cause[:500]}", file=stream, flush=True)
    return n
