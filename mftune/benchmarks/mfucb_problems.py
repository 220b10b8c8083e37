"""The four synthetic problems of Kandasamy et al. (2016), Figure 2, and their runner.

Panel settings (K, M, costs, reward law, plotted capital range) are from the
figure [paper]; the curves are only plotted, no numbers are given. How the
means, bias bounds, noise and ρ were drawn is in the paper's Appendix C, which
was not available: the generator below is a **[RECON]** (docs/algorithms.md)::

    µ^(M)_k ~ U(0, 1) i.i.d.;  ζ^(m) = 0.2 · 2^{−(m−1)/2} (m < M),  ζ^(M) = 0
    µ^(m)_k = µ^(M)_k + ζ^(m) u_{k,m},  u_{k,m} ~ U(−1, 1)   (clipped to [0, 1])
    Gaussian noise σ = 0.2 (sub-Gaussian ψ); Bernoulli rewards use Hoeffding's ψ; ρ = 2.

The ζ^(m) satisfy Assumption 1 for quadratic ψ. Regret is reported under both
definitions (:mod:`mftune.benchmarks.regret`) at a grid of capitals.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed

from ..engine.driver import run
from ..policies.mf_ucb import MFUCB, UCB
from ..policies.regret_elimination import WangElimination
from .bandits import BernoulliBandit, GaussianBandit, SimulatedBandit
from .regret import RegretRecorder, regret_curves
from .simulate import BanditEvaluator

__all__ = ["FIGURE2_PROBLEMS", "MFUCBProblem", "RegretResult", "make_problem", "run_figure2"]


@dataclass(frozen=True)
class MFUCBProblem:
    """One Figure 2 panel: sizes, costs, reward law and plotted capital range [paper]."""

    name: str
    n_arms: int
    costs: tuple
    rewards: str  # "gaussian" or "bernoulli"
    capital_range: tuple

    def capitals(self, n_points: int = 10) -> np.ndarray:
        """An even grid of capitals over the plotted range."""
        return np.linspace(*self.capital_range, n_points)


FIGURE2_PROBLEMS = (
    MFUCBProblem("K500-M3", 500, (1, 10, 100), "gaussian", (0.5e5, 5e5)),
    MFUCBProblem("K500-M4", 500, (1, 5, 20, 50), "gaussian", (0.5e5, 2.5e5)),
    MFUCBProblem("K200-M2", 200, (1, 10), "bernoulli", (1e4, 1e5)),
    MFUCBProblem("K1000-M5", 1000, (1, 3, 10, 30, 100), "bernoulli", (1e5, 1e6)),
)
SIGMA = 0.2
RHO = 2.0


def recon_zeta(n_fidelities: int, scale: float = 0.2) -> np.ndarray:
    """[RECON] bias bounds ``ζ^(m) = scale · 2^{−(m−1)/2}`` for ``m < M``, ``ζ^(M) = 0``."""
    zeta = scale * 2.0 ** (-np.arange(n_fidelities) / 2.0)
    zeta[-1] = 0.0
    return zeta


def make_problem(problem: MFUCBProblem, seed: int = 0) -> SimulatedBandit:
    """Draw a Figure 2 instance with the [RECON] generator (module docstring)."""
    rng = np.random.default_rng([int(seed), problem.n_arms, len(problem.costs)])
    M, K = len(problem.costs), problem.n_arms
    mu = rng.uniform(0.0, 1.0, K)
    zeta = recon_zeta(M)
    theta = mu[None, :] + zeta[:, None] * rng.uniform(-1.0, 1.0, (M, K))
    theta[-1] = mu
    theta = np.clip(theta, 0.0, 1.0)
    name = f"{problem.name}-{problem.rewards}-[RECON]"
    if problem.rewards == "gaussian":
        return GaussianBandit(theta, problem.costs, sigma=SIGMA, xi=zeta, name=name)
    return BernoulliBandit(theta, problem.costs, xi=zeta, name=name)


def _policy(kind, env, psi_kind, budget, rho, random_state):
    if kind == "MF-UCB":
        return MFUCB(env.n_arms, env.costs, env.xi, rho, psi_kind, SIGMA, budget, random_state)
    if kind == "UCB":
        return UCB(env.n_arms, env.costs, rho, psi_kind, SIGMA, budget, random_state)
    return WangElimination(env.n_arms, env.costs, budget)


@dataclass
class RegretResult:
    """Runs of one policy on one problem: regret curves and plays per (fidelity, arm)."""

    problem: str
    policy: str
    capitals: np.ndarray
    kandasamy: np.ndarray  # (runs, G)
    kandasamy_played: np.ndarray
    wang: np.ndarray
    plays: np.ndarray  # (M, K) mean plays at the largest capital
    wall_time: float

    def to_dict(self) -> dict:
        return {
            "problem": self.problem, "policy": self.policy,
            "capitals": self.capitals.tolist(),
            "kandasamy_mean": self.kandasamy.mean(axis=0).tolist(),
            "kandasamy_sd": self.kandasamy.std(axis=0, ddof=1).tolist()
            if len(self.kandasamy) > 1 else None,
            "kandasamy_played_mean": self.kandasamy_played.mean(axis=0).tolist(),
            "wang_mean": self.wang.mean(axis=0).tolist(),
            "plays_per_fidelity": self.plays.sum(axis=1).tolist(),
            "wall_time": self.wall_time,
        }


def _one(env, kind, psi_kind, capitals, rho, seed, r):
    rng = np.random.default_rng([int(seed), int(r)])
    if kind == "elimination":  # depends on the capital: one run per grid point
        rows, plays = [], None
        for cap in capitals:
            pol = _policy(kind, env, psi_kind, float(cap), rho, None)
            rec = RegretRecorder()
            run(pol, BanditEvaluator(env, np.random.default_rng([int(seed), int(r)])),
                callbacks=[rec])
            c = regret_curves(rec.arms, rec.fidelities, env.mu, env.costs, [cap])
            rows.append((c.kandasamy[0], c.kandasamy_played[0], c.wang[0]))
            plays = pol.stats.counts
        return np.array(rows).T, plays
    pol = _policy(kind, env, psi_kind, float(max(capitals)), rho, [int(seed), int(r), 1])
    pol.play_simulated(env, rng)  # same plays as run(pol, BanditEvaluator(env, rng))
    c = regret_curves(pol.history_arms_, pol.history_fidelities_, env.mu, env.costs, capitals)
    return np.stack([c.kandasamy, c.kandasamy_played, c.wang]), pol.stats.counts


def run_figure2(problems=FIGURE2_PROBLEMS, policies=("UCB", "MF-UCB"), n_runs=10, seed=0,
                n_jobs=None, n_capitals=10, rho=RHO) -> list[RegretResult]:
    """Regret of each policy on each Figure 2 problem at a grid of capitals.

    UCB and MF-UCB are anytime, so one run up to the largest capital gives the
    whole curve; Wang et al.'s elimination depends on the capital and is run
    once per grid point. Runs are paired by index (noise stream ``(seed, r)``).

    Parameters
    ----------
    problems : iterable of MFUCBProblem
    policies : iterable of {"UCB", "MF-UCB", "elimination"}
    n_runs : int
    seed : int
        Seeds the [RECON] instances and the runs.
    n_jobs : int or None
        joblib workers over runs.
    n_capitals : int
        Points of the capital grid.
    rho : float
        ρ of UCB and MF-UCB.
    """
    allowed = ("UCB", "MF-UCB", "elimination")
    for p in policies:
        if p not in allowed:
            raise ValueError(f"policies must be drawn from {allowed}; got {p!r}")
    if int(n_runs) != n_runs or n_runs < 1:
        raise ValueError(f"n_runs must be a positive integer; got {n_runs!r}")
    results = []
    for prob in problems:
        env = make_problem(prob, seed)
        psi_kind = "sub-gaussian" if prob.rewards == "gaussian" else "hoeffding"
        caps = prob.capitals(n_capitals)
        for kind in policies:
            start = time.perf_counter()
            jobs = (delayed(_one)(env, kind, psi_kind, caps, rho, seed, r) for r in range(n_runs))
            if n_jobs in (None, 1):
                outs = [fn(*a, **k) for fn, a, k in jobs]
            else:
                outs = Parallel(n_jobs=n_jobs)(jobs)
            curves = np.stack([o[0] for o in outs])  # (runs, 3, G)
            results.append(RegretResult(
                problem=env.name, policy=kind, capitals=caps,
                kandasamy=curves[:, 0], kandasamy_played=curves[:, 1], wang=curves[:, 2],
                plays=np.mean([o[1] for o in outs], axis=0),
                wall_time=time.perf_counter() - start,
            ))
    return results
