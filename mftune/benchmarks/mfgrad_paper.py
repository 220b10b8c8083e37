"""The experiments of Poiani et al., *Optimal Multi-Fidelity Best-Arm Identification* (2024).

The paper's results are figures only, so the reference values printed beside
ours are **re-runs of the authors' code**
(riccardopoiani/adv-mf-bai @ 5f61d7b, practical thresholds), not published
numbers. Three parts:

* **cost**: mean cost at δ = 0.01 of MF-GRAD (η_n = 1/√(n+1)), MF-GRAD-CONST
  (η = 0.25), GRAD (η = 0.25, as in the reference runs), IISE (the IISE
  paper's radius, as everywhere in mftune) and IISE-code, the IISE of the
  MF-GRAD repository (:func:`simulate_iise_code`), which the reference runs use;
* **proportions**: 5x2, MF-GRAD's empirical cost proportions λ_m N_{k,m}/c
  with the stopping rule disabled, after 10⁴ and 10⁵ pulls, against ω*
  (total variation distance);
* **forever**: LUCB-Explore-A/-B on the ``forever`` instance within a pull
  cap, against LUCB on the top fidelity only (``lucb_only_M``), with the MF-GRAD
  authors' Gaussian constants and with Wang et al.'s
  (:data:`~mftune.benchmarks.lower_bound.LUCB_CONVENTIONS`).
"""

from __future__ import annotations

import json
import os
import time

import numpy as np
from joblib import Parallel, delayed

from ..policies.iise import iise_thresholds
from .grad_sim import simulate_grad_batch
from .lower_bound import (
    LUCB_CONVENTIONS,
    Cell,
    fill_cell,
    instance_bound,
    make_grad,
    mfgrad_instances,
    run_cell,
    run_lucb,
)
from .simulate import SimRecord

__all__ = ["COST_POLICIES", "REFERENCE", "cost_comparison", "decision_time", "forever",
           "proportions", "simulate_iise_code"]

#: (label, learning rate); None = the class's default (theory) rate.
COST_POLICIES = (("MF-GRAD", None), ("MF-GRAD-CONST", 0.25), ("GRAD", 0.25), ("IISE", None),
                 ("IISE-code", None))
#: Reference runs of the authors' code: (mean cost, 95% CI half-width, runs),
#: and C*·ln(1/δ) at δ = 0.01 [RECON solver].
REFERENCE = {
    "4x5": {"bound_ln": 9.21, "MF-GRAD-CONST": (82.7, 5.1, 100), "MF-GRAD": (99.0, 7.5, 50),
            "GRAD": (364, 27, 100), "IISE-code": (224, 9, 100)},
    "5x2": {"bound_ln": 122.7, "MF-GRAD-CONST": (596, 71, 100), "MF-GRAD": (736, 116, 50),
            "GRAD": (937, 59, 100), "IISE-code": (2290, 93, 100)},
    "mu2": {"bound_ln": 16.67, "MF-GRAD-CONST": (132, 27, 30), "GRAD": (178, 13, 100),
            "IISE-code": (549, 23, 100)},
    "mu3": {"bound_ln": 9.06, "MF-GRAD-CONST": (55.6, 9.1, 30), "GRAD": (77.1, 6.6, 100),
            "IISE-code": (82.0, 5.4, 100)},
    "forever": {"bound_ln": 18421, "MF-GRAD-CONST": (46700, 8000, 30),
                "GRAD": (29700, 2900, 100), "IISE-code": (114000, 5000, 100)},
}
#: 5x2 reference (one run each): cost share of the best arm at its top fidelity after
#: 10⁴ / 10⁵ pulls; ω* puts 0.6128 there and 0.0968 on each other arm's fidelity 0.
REFERENCE_PROPORTIONS = {"MF-GRAD-CONST": {10**4: 0.601, 10**5: 0.607},
                         "MF-GRAD": {10**4: 0.485, 10**5: 0.586}}
#: forever reference: LUCB-Explore-A 3/3 and -B 3/3 runs not stopped at 10⁶ samples;
#: LUCB on lucb_only_M stopped 10/10, mean cost 370 000 (≈ 74 000 pulls).
REFERENCE_FOREVER = {"LUCB-A": "0/3 stopped at 10^6", "LUCB-B": "0/3 stopped at 10^6",
                     "LUCB-top": "10/10 stopped, mean cost 370000"}
#: Cost-part runs advanced together by one worker (memory stays small, stragglers few).
BATCH = 100
DELTA = 0.01


def _instances(instance_dir, names):
    found = {i.name: i for i in mfgrad_instances(instance_dir)}
    missing = [n for n in names if n not in found]
    if missing:
        raise ValueError(f"instance_dir {instance_dir!r} lacks mfgrad_{missing[0]}.json")
    return [found[n] for n in names]


def cost_comparison(instance_dir, names=("4x5",), n_runs=1000, seed=0, n_jobs=None,
                    max_pulls=10**6, delta=DELTA) -> list[Cell]:
    """The cost cells of :data:`COST_POLICIES` on the named instances (MF-GRAD rows skip
    themselves with a note where a policy refuses an instance)."""
    cells = []
    for inst in _instances(instance_dir, names):
        bound = instance_bound(inst.env)
        for label, lr in COST_POLICIES:
            if label == "IISE-code":
                start = time.perf_counter()
                recs = simulate_iise_code(inst.env, delta, n_runs, seed)
                cells.append(fill_cell(Cell(inst.family, inst.name, label, delta, n_runs), recs,
                                       inst, bound, None, time.perf_counter() - start))
                continue
            cells.append(run_cell(label, inst, delta, n_runs, seed, n_jobs, max_pulls, bound,
                                  learning_rate=lr))
    return cells


def simulate_iise_code(env, delta: float, n_runs: int, seed: int = 0) -> list[SimRecord]:
    """IISE as the MF-GRAD repository runs it (``algorithms/successive_elimination.py``) [code].

    The phases, the switch (``α_m >= 4 B(t, δ/(KM))`` on the rounds ``t`` of
    the phase, :func:`~mftune.radii.iise_radius`) and the elimination margin
    ``2ξ_m`` are the IISE paper's, as in :class:`~mftune.policies.iise.IISE`;
    the elimination radius is the repository's "practical" one,
    ``sqrt(2σ² (log log T + log(KM/δ)) / N)`` with ``T`` the samples taken so far
    (all arms and fidelities) and ``N`` the arm's samples in the phase, in place
    of the paper's ``B(N, δ/(KM)) = sqrt(2σ² log(4N²KM/δ) / N)``. No proof
    covers it. Vectorised over runs; Gaussian rewards drawn from one generator
    ``default_rng([seed, n_runs])`` (runs are not paired with the other policies').
    """
    R, K, M = int(n_runs), env.n_arms, env.n_fidelities
    s2, xi, theta = env.variance_proxy, env.xi, env.theta
    sigma = np.sqrt(s2)
    alpha = iise_thresholds(env.costs, xi, 4.0)
    dprime = delta / (K * M)
    rng = np.random.default_rng([int(seed), R])
    phase = np.zeros(R, dtype=int)
    active = np.ones((R, K), dtype=bool)
    counts = np.zeros((R, M, K))
    sums = np.zeros((R, M, K))
    live = np.arange(R)
    while live.size:
        m = phase[live]
        act = active[live]
        reward = theta[m] + sigma * rng.standard_normal((live.size, K))
        counts[live, m] += act
        sums[live, m] += np.where(act, reward, 0.0)
        n = counts[live, m]
        total = counts[live].sum(axis=(1, 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = sums[live, m] / n
            conf = np.sqrt(2 * s2 * (np.log(np.log(total)) + np.log(K * M / delta))[:, None] / n)
        lb = np.where(act, mean - conf - xi[m][:, None], -np.inf)
        ub = np.where(act, mean + conf + xi[m][:, None], np.inf)
        active[live] = act & ~(lb.max(axis=1)[:, None] >= ub)
        t = n.max(axis=1)
        b = np.sqrt(2 * s2 * np.log(4 * t * t / dprime) / t)
        phase[live] += (m < M - 1) & (alpha[m] >= 4 * b)
        live = live[active[live].sum(axis=1) > 1]
    cost = np.einsum("rmk,m->r", counts, env.costs)
    rec = np.argmax(active, axis=1)
    return [SimRecord(policy="IISE-code", run=r, cost=float(cost[r]),
                      pulls_per_fidelity=counts[r].sum(axis=1).tolist(),
                      recommendation=int(rec[r]), correct=bool(rec[r] == env.best_arm),
                      wall_time=float("nan"), n_rounds=int(counts[r].sum()), skipped_rounds=0,
                      stopping_reason="stopping-rule") for r in range(R)]


def omega_star(inst, instance_dir) -> tuple[np.ndarray, str]:
    """ω* (K, M): from the solver when available, else the instance file's derived value."""
    b = instance_bound(inst.env)
    if b.omega is not None:
        return np.asarray(b.omega), "cost_lower_bound"
    with open(os.path.join(instance_dir, f"mfgrad_{inst.name}.json"), encoding="utf-8") as fh:
        support = json.load(fh)["derived_lower_bound"]["omega_star_support"]
    omega = np.zeros((inst.env.n_arms, inst.env.n_fidelities))
    for k, m, w in support:
        omega[int(k), int(m)] = w
    return omega, "instance file"


def _prop_run(env, lr, checkpoints, seed, start, count):
    """Cost proportions (K, M) of runs ``start..start+count`` at each checkpoint (stopping off)."""
    pol = make_grad(env, "MF-GRAD", DELTA, lr, seed=seed)
    pol.stopping = False
    _, snaps = simulate_grad_batch(env, pol, count, seed, run_offset=start,
                                   max_pulls=max(checkpoints), snapshots=checkpoints)
    out = {}
    for n, counts in snaps.items():  # counts (R, M, K) -> cost proportions (R, K, M)
        spent = counts * env.costs[:, None]
        out[n] = np.swapaxes(spent / spent.sum(axis=(1, 2), keepdims=True), 1, 2)
    return out


def proportions(instance_dir, n_runs=100, checkpoints=(10**4, 10**5), seed=0, n_jobs=None,
                name="5x2") -> dict:
    """MF-GRAD(-CONST) cost proportions with stopping disabled, vs ω* (needs MF-GRAD)."""
    inst = _instances(instance_dir, [name])[0]
    omega, source = omega_star(inst, instance_dir)
    result = {"instance": name, "omega_star": omega.tolist(), "omega_source": source,
              "checkpoints": list(checkpoints), "runs": n_runs, "policies": {}}
    workers = 1 if n_jobs in (None, 1) else max(1, min(int(n_jobs), n_runs))
    edges = np.linspace(0, n_runs, workers + 1).astype(int)
    for label, lr in (("MF-GRAD", None), ("MF-GRAD-CONST", 0.25)):
        jobs = [delayed(_prop_run)(inst.env, lr, checkpoints, seed, a, b - a)
                for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]
        outs = ([fn(*a, **k) for fn, a, k in jobs] if len(jobs) == 1
                else Parallel(n_jobs=len(jobs))(jobs))
        rows = {}
        for n in checkpoints:
            props = np.concatenate([o[n] for o in outs])
            mean = props.mean(axis=0)
            half = (1.96 * props.std(axis=0, ddof=1) / np.sqrt(n_runs) if n_runs > 1
                    else np.zeros_like(mean))
            tv = 0.5 * np.abs(props - omega).sum(axis=(1, 2))
            rows[n] = {"mean": mean.tolist(), "ci95": half.tolist(),
                       "tv_mean": float(tv.mean()), "tv_of_mean": float(
                           0.5 * np.abs(mean - omega).sum())}
        result["policies"][label] = rows
    return result


def forever(instance_dir, n_runs=10, max_pulls=10**6, seed=0, n_jobs=None,
            conventions=LUCB_CONVENTIONS[::-1]) -> list[dict]:
    """LUCB-Explore-A/-B on ``forever`` and LUCB on ``lucb_only_M`` within ``max_pulls``.

    Each procedure is run with every LUCB convention of ``conventions``
    ("authors": the MF-GRAD authors' constants, which their reference runs
    use; "wang": Wang et al.'s [0, 1] constants with σ = 1/2, mftune's default).
    """
    inst, top = _instances(instance_dir, ["forever", "lucb_only_M"])
    out = []
    for conv in conventions:
        for label, target, proc in (("LUCB-A", inst, "A"), ("LUCB-B", inst, "B"),
                                    ("LUCB-top", top, "baseline")):
            recs = run_lucb(target, proc, DELTA, n_runs, seed, n_jobs, max_pulls, conv)
            stopped = [r for r in recs if r.stopping_reason != "max-pulls"]
            pulls = np.array([r.pulls_per_fidelity for r in recs], dtype=float)
            out.append({
                "policy": label, "convention": conv, "instance": target.name, "runs": n_runs,
                "stopped": len(stopped), "max_pulls": max_pulls,
                "wrong": sum(not r.correct for r in stopped),
                "mean_cost_stopped": (float(np.mean([r.cost for r in stopped])) if stopped
                                      else None),
                "mean_pulls": float(pulls.sum(axis=1).mean()),
                "share_fidelity0": float(pulls[:, 0].sum() / pulls.sum()),
                "reference": REFERENCE_FOREVER[label] if conv == "authors" else "–",
            })
    return out


def decision_time(instance_dir, name="4x5", n_pulls=2000, seed=0) -> dict:
    """MF-GRAD's decision time per pull through the ask/tell protocol (one run at a time).

    Runs MF-GRAD (η = 0.25, practical threshold, δ = 0.01) on ``name``
    seed after seed until ``n_pulls`` pulls were made; a pull's time is its
    :meth:`ask` (sub-gradient, learner, tracking) plus its :meth:`tell` (GLR
    test), wall clock (median, mean, 90% quantile) and CPU time (mean: what
    the process used, whatever else runs on the machine). The authors' Python
    takes about 15 ms per pull on 4x5 (a re-run of their code).
    """
    env = _instances(instance_dir, [name])[0].env
    times, cpu, r = [], [], 0
    while len(times) < n_pulls:
        pol = make_grad(env, "MF-GRAD", DELTA, 0.25)
        rng = np.random.default_rng([int(seed), r])
        while not pol.done and len(times) < n_pulls:
            start, c0 = time.perf_counter(), time.process_time()
            pulls = pol.ask()
            asked, c_asked = time.perf_counter() - start, time.process_time() - c0
            rewards = env.pull(pulls.arms, pulls.fidelities, rng)
            start, c0 = time.perf_counter(), time.process_time()
            pol.tell(pulls, rewards)
            times.append(asked + time.perf_counter() - start)
            cpu.append(c_asked + time.process_time() - c0)
        r += 1
    t = np.array(times)
    return {"instance": name, "pulls": int(t.size), "runs": r, "median_s": float(np.median(t)),
            "mean_s": float(t.mean()), "p90_s": float(np.quantile(t, 0.9)),
            "cpu_mean_s": float(np.mean(cpu))}
