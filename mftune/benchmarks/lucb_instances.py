"""Instances and runners for the LUCB experiments of Wang et al. (2023).

* **Figure 1** (Appendix B): Table 1 (K = 5, M = 3, EXPLORE-A should be
  cheaper) and Table 2 (K = 5, M = 5, EXPLORE-B should be cheaper), δ ∈
  {0.05, ..., 0.25}, 100 trials, µ̃1 = 0.95, µ̃2 = 0.75 [paper]. Only plotted
  in the paper (no numbers).
* **Table 3** (Appendix C): ``µ^(m)_k = 0.1(k + 4) + 0.01(m − 5)``,
  ``ζ = (0.04, 0.03, 0.02, 0.01, 0)``, ``λ = (1, 2, 3, 4, 5 I)`` for Case
  ``I = 1..4``, δ = 0.1, 100 trials [paper]. Not stated: the reward law, µ̃1,
  µ̃2, ``L`` and the time index — [RECON] Bernoulli rewards, µ̃1 = 0.95,
  µ̃2 = 0.75 (the Appendix B values), ``L = 4KM``, ``t`` = pulls so far.

Rewards are Bernoulli throughout (the model's rewards lie in [0, 1]).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed

from .bandits import BernoulliBandit
from .lucb_sim import simulate_lucb_batch

__all__ = [
    "FIGURE1_DELTAS",
    "PAPER_TABLE3",
    "LUCBCell",
    "run_lucb_cells",
    "wang_table1",
    "wang_table2",
    "wang_table3",
]

#: Table 3 of Wang et al. (2023), cost complexity ×10⁴, Cases 1-4 [paper].
PAPER_TABLE3 = {
    "A": (20.5, 20.0, 17.4, 17.4),
    "B": (36.1, 47.9, 59.5, 69.4),
    "baseline": (21.4, 42.0, 64.6, 86.2),
}
FIGURE1_DELTAS = (0.05, 0.10, 0.15, 0.20, 0.25)
#: µ̃1, µ̃2 of Appendix B [paper]; reused for Table 3 [RECON].
MU1_TILDE, MU2_TILDE = 0.95, 0.75


def wang_table1() -> BernoulliBandit:
    """Table 1 / Figure 1a: K = 5, M = 3 (EXPLORE-A expected cheaper) [paper]."""
    theta = [[0.70, 0.75, 0.50, 0.50, 0.30],
             [0.80, 0.775, 0.60, 0.55, 0.45],
             [0.90, 0.80, 0.70, 0.60, 0.50]]
    return BernoulliBandit(theta, [1.0, 1.1, 1.2], xi=[0.30, 0.15, 0.0], name="wang-table1")


def wang_table2() -> BernoulliBandit:
    """Table 2 / Figure 1b: K = 5, M = 5 (EXPLORE-B expected cheaper) [paper].

    As published, fidelity 4 violates its own bound: ``|µ^(4)_k − µ^(5)_k|`` is
    0.05 (arm 1) and 0.06 (arm 4) > ``ζ^(4) = 0.04``. We keep the paper's
    numbers (the confidence guarantee then does not formally apply).
    """
    theta = [[0.83, 0.82, 0.76, 0.82, 0.70],
             [0.84, 0.83, 0.80, 0.80, 0.72],
             [0.85, 0.85, 0.80, 0.82, 0.74],
             [0.85, 0.86, 0.80, 0.80, 0.76],
             [0.90, 0.88, 0.86, 0.84, 0.80]]
    return BernoulliBandit(theta, [1.0, 1.1, 1.2, 1.3, 1.4],
                           xi=[0.10, 0.08, 0.06, 0.04, 0.0], name="wang-table2")


def wang_table3(case: int) -> BernoulliBandit:
    """Table 3 instance, Case ``1..4`` (``λ^(5) = 5·case``) [paper; Bernoulli rewards RECON]."""
    if case not in (1, 2, 3, 4):
        raise ValueError(f"case must be one of 1, 2, 3, 4; got {case!r}")
    k = np.arange(1, 6)[None, :]
    m = np.arange(1, 6)[:, None]
    theta = 0.1 * (k + 4) + 0.01 * (m - 5)
    costs = [1.0, 2.0, 3.0, 4.0, 5.0 * case]
    return BernoulliBandit(theta, costs, xi=[0.04, 0.03, 0.02, 0.01, 0.0],
                           name=f"wang-table3-case{case}")


@dataclass
class LUCBCell:
    """Summary of the runs of one (instance, procedure, δ) cell."""

    instance: str
    procedure: str
    delta: float
    n_runs: int
    mean_cost: float
    sd_cost: float
    n_errors: int
    pulls_per_fidelity: list
    paper_mean: float | None = None
    wall_time: float = 0.0

    @property
    def ci95(self) -> float:
        return 1.96 * self.sd_cost / np.sqrt(self.n_runs)

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["ci95"] = self.ci95
        return d


def _cell(env, procedure, delta, n_runs, seed, paper, kwargs) -> LUCBCell:
    kw = dict(kwargs)
    if procedure in ("C", "baseline"):
        kw.pop("mu1_tilde", None)
        kw.pop("mu2_tilde", None)
    start = time.perf_counter()
    res = simulate_lucb_batch(env, n_runs, seed, procedure=procedure, delta=float(delta), **kw)
    return LUCBCell(
        instance=env.name, procedure=procedure, delta=float(delta), n_runs=int(n_runs),
        mean_cost=float(res.cost.mean()),
        sd_cost=float(res.cost.std(ddof=1)) if n_runs > 1 else 0.0,
        n_errors=int((~res.correct).sum()),
        pulls_per_fidelity=res.pulls.sum(axis=2).mean(axis=0).tolist(),
        paper_mean=paper, wall_time=time.perf_counter() - start,
    )


def run_lucb_cells(tasks, n_runs: int, seed: int = 0, n_jobs: int | None = None,
                   **kwargs) -> list[LUCBCell]:
    """Run every ``(env, procedure, δ, paper_mean)`` task with ``n_runs`` trials each.

    Trials are paired across tasks on the same instance (run ``r`` draws its
    noise from ``(seed, r)``); each task advances all its trials at once
    (:func:`~mftune.benchmarks.lucb_sim.simulate_lucb_batch`) and tasks are
    spread over ``n_jobs`` joblib workers.

    Parameters
    ----------
    tasks : iterable of (BernoulliBandit, str, float, float or None)
    n_runs : int
    seed : int
    n_jobs : int or None
    **kwargs
        Passed to :func:`~mftune.benchmarks.lucb_sim.simulate_lucb_batch`
        (``mu1_tilde``, ``mu2_tilde``, ``ties``, ``t_convention``, ``L``, ...);
        the µ̃ are dropped for EXPLORE-C and the Baseline.

    Returns
    -------
    list of LUCBCell
        In the order of ``tasks``.
    """
    if int(n_runs) != n_runs or n_runs < 1:
        raise ValueError(f"n_runs must be a positive integer; got {n_runs!r}")
    jobs = [delayed(_cell)(env, proc, delta, n_runs, seed, paper, kwargs)
            for env, proc, delta, paper in tasks]
    if n_jobs in (None, 1):
        return [fn(*a, **k) for fn, a, k in jobs]
    return Parallel(n_jobs=n_jobs)(jobs)
