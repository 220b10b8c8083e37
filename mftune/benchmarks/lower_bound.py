"""Cost of the fixed-confidence policies against the multi-fidelity cost lower bound.

For an instance µ (K arms × M fidelities, known costs λ, bias bounds ξ and
noise σ), every δ-correct algorithm has E[c_τ] ≥ C*(µ)·log(1/(2.4δ))
(Poiani et al., NeurIPS 2024; docs/algorithms.md). This module
runs SE, IISE, IISE-γ, MFE, LUCB-Explore-A/B/C, GRAD and MF-GRAD on four
instance families and reports each policy's mean cost next to that bound.

Families
--------
* ``iise``: the IISE Table 1 instances (``iise_*.json`` in ``instance_dir``).
* ``wang``: Wang et al.'s Table 1, Table 2 and Table 3 (Cases 1-4) instances.
* ``mfgrad``: the MF-GRAD paper's instances (``mfgrad_*.json`` in ``instance_dir``).
* ``mfucb``: small seeded random instances from the MF-UCB [RECON] generator.

Which σ the bound uses
----------------------
Gaussian instances: their σ (the bound is exact). Bernoulli instances: the
Gaussian bound with σ² = min t(1 − t) over the range of the means, whose KL
dominates the Bernoulli KL on that range (every alternative of the bound
moves means inside it), so the value is a valid, conservative lower bound.
Other laws (Yahtzee's truncated Gaussian): the algorithms' variance proxy; a
nominal value only, labelled ``proxy``.

Optional policies
-----------------
The bound (``mftune.policies.lower_bound``) and GRAD/MF-GRAD
(``mftune.policies.mf_grad``) are imported lazily; when absent their columns
and rows are skipped with a note.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs

from ..policies.lower_bound import cost_lower_bound
from ..policies.mf_grad import GRAD, MFGRAD
from .bandits import BernoulliBandit, GaussianBandit, SimulatedBandit, load_instance
from .grad_sim import simulate_grad_batch
from .iise_table1 import INSTANCE_FILES as IISE_FILES
from .iise_table1 import MFE_C, _iise, _iise_gamma, _mfe, _se, make_domain
from .lucb_instances import MU1_TILDE, MU2_TILDE, wang_table1, wang_table2, wang_table3
from .lucb_sim import simulate_lucb_batch
from .mfucb_problems import MFUCBProblem, make_problem
from .simulate import simulate_runs

__all__ = [
    "FAMILIES", "POLICIES", "BoundInfo", "Cell", "Instance", "instance_bound", "load_family",
    "outside_model", "run_cells", "summarise",
]

FAMILIES = ("iise", "wang", "mfgrad", "mfucb")
POLICIES = ("SE", "IISE", "IISE-gamma", "MFE", "LUCB-A", "LUCB-B", "LUCB-C", "GRAD", "MF-GRAD")
#: Run only when named: MF-GRAD whose GLR rule also tests the top fidelity alone (δ/2 each).
EXTRA_POLICIES = ("MF-GRAD-top",)
GRAD_POLICIES = ("GRAD", "MF-GRAD", "MF-GRAD-top")
LABEL = {"LUCB-A": "LUCB-Explore-A", "LUCB-B": "LUCB-Explore-B", "LUCB-C": "LUCB-Explore-C",
         "IISE-gamma": "IISE-γ"}
ELIMINATION = ("SE", "IISE", "IISE-gamma", "MFE")
#: Policies told more than the bound's model (ξ): below the bound is no contradiction.
GIVEN_GAMMA = ("IISE-gamma",)
#: Above this many arms the pull-by-pull policies (LUCB, GRAD, MF-GRAD) and the bound
#: (O(K²M²) per evaluation) are skipped: the elimination policies' own benchmark is
#: ``mftune bench iise-table1``.
MAX_ARMS = 50
MFGRAD_NAMES = ("4x5", "5x2", "mu2", "mu3", "forever", "lucb_only_M")
#: Small MF-UCB-style problems (the [RECON] generator of mfucb_problems), redrawn until the
#: best arm leads by at least MFUCB_MIN_GAP.
MFUCB_SMALL = (
    MFUCBProblem("K5-M3", 5, (1, 10, 100), "gaussian", (1.0, 1.0)),
    MFUCBProblem("K8-M4", 8, (1, 5, 20, 50), "gaussian", (1.0, 1.0)),
    MFUCBProblem("K5-M2", 5, (1, 10), "bernoulli", (1.0, 1.0)),
)
MFUCB_MIN_GAP = 0.05


@dataclass
class Instance:
    """One bandit of a family, with what the LUCB-Explore rules and MFE are given."""

    name: str
    family: str
    env: SimulatedBandit
    mu_tilde: tuple  # (µ̃1, µ̃2) in the instance's own reward units
    mu_tilde_source: str
    mfe_c: float = 0.1


def mfgrad_instances(instance_dir) -> list[Instance]:
    """The ``mfgrad_*.json`` instances found in ``instance_dir`` (in MFGRAD_NAMES order)."""
    out = []
    for name in MFGRAD_NAMES:
        path = os.path.join(instance_dir, f"mfgrad_{name}.json")
        if not os.path.exists(path):
            continue
        env = load_instance(path)
        out.append(Instance(name, "mfgrad", env, *_mu_tilde(env, path)))
    return out


def _mu_tilde(env, path=None) -> tuple[tuple, str]:
    """µ̃ from the instance file (``lucb_explore_cfg``) or, [RECON], the true µ1 and µ2."""
    if path is not None:
        import json

        with open(path, encoding="utf-8") as fh:
            cfg = json.load(fh).get("lucb_explore_cfg")
        if cfg:
            return (float(cfg["mu_1_tilde"]), float(cfg["mu_2_tilde"])), "instance file"
    top = np.sort(env.mu)[::-1]
    return (float(top[0]), float(top[1])), "true µ1, µ2 [RECON]"


def load_family(family: str, instance_dir=None, seed: int = 0) -> tuple[list[Instance], str]:
    """The instances of ``family`` and a note (why some or all were skipped, or '')."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}; got {family!r}")
    if family == "wang":
        envs = [wang_table1(), wang_table2()] + [wang_table3(c) for c in (1, 2, 3, 4)]
        return [Instance(e.name, family, e, (MU1_TILDE, MU2_TILDE), "Wang et al. App. B")
                for e in envs], ""
    if family == "mfucb":
        out = []
        for prob in MFUCB_SMALL:
            for attempt in range(100):
                env = make_problem(prob, seed + 1000 * attempt)
                if np.sort(env.mu)[-1] - np.sort(env.mu)[-2] >= MFUCB_MIN_GAP:
                    break
            env.name = f"{prob.name}-{prob.rewards}-s{seed + 1000 * attempt}"
            out.append(Instance(env.name, family, env, *_mu_tilde(env)))
        return out, "[RECON] generator of mftune.benchmarks.mfucb_problems"
    if instance_dir is None:
        return [], f"family {family}: no --instance-dir given, skipped"
    if family == "mfgrad":
        found = mfgrad_instances(instance_dir)
        return found, "" if found else f"family mfgrad: no mfgrad_*.json in {instance_dir}"
    out = []
    for domain, fname in IISE_FILES.items():
        if os.path.exists(os.path.join(instance_dir, fname)):
            env = make_domain(domain, instance_dir)
            out.append(Instance(domain, family, env, *_mu_tilde(env), mfe_c=MFE_C[domain]))
    return out, "" if out else f"family iise: no iise_*.json in {instance_dir}"


# -- the bound -----------------------------------------------------------------------
@dataclass
class BoundInfo:
    """C*(µ) of an instance and how it was obtained (``c_star`` None: not available)."""

    c_star: float | None
    sigma: float | None
    kind: str  # "gaussian", "bernoulli-envelope", "proxy" or "n/a"
    note: str = ""
    omega: list | None = None
    optimal_fidelity: list | None = None

    def value(self, delta: float) -> float | None:
        """C*(µ)·log(1/(2.4δ)) (0 when 2.4δ ≥ 1)."""
        if self.c_star is None:
            return None
        return float(self.c_star * max(np.log(1.0 / (2.4 * delta)), 0.0))

    @property
    def valid(self) -> bool:
        return self.c_star is not None and self.kind != "proxy"


def bound_sigma(env: SimulatedBandit) -> tuple[float, str]:
    """The σ of the Gaussian bound for ``env`` and its kind (module docstring)."""
    if isinstance(env, GaussianBandit):
        return env.sigma, "gaussian"
    if isinstance(env, BernoulliBandit):
        lo, hi = float(env.theta.min()), float(env.theta.max())
        var = min(lo * (1 - lo), hi * (1 - hi))
        return float(np.sqrt(var)), "bernoulli-envelope"
    return float(np.sqrt(env.variance_proxy)), "proxy"


def outside_model(env: SimulatedBandit) -> bool:
    """Whether some true mean lies outside its bias bound (``|µ_{k,m} − µ_{k,M}| > ξ_m``)."""
    return bool(np.any(env.true_xi > env.xi + 1e-12))


def instance_bound(env: SimulatedBandit) -> BoundInfo:
    """C*(µ) for ``env`` with its bias bounds ``env.xi`` (see :class:`BoundInfo`).

    An instance outside the model (:func:`outside_model`, e.g. Wang's Table 2)
    has no bound: δ-correctness, on which the bound rests, is only asked of
    instances inside it.
    """
    if env.n_arms > MAX_ARMS:
        return BoundInfo(None, None, "n/a", f"K = {env.n_arms} > {MAX_ARMS}")
    if outside_model(env):
        return BoundInfo(None, None, "n/a", "means outside their bias bounds ξ: not an "
                         "instance of the bound's model")
    sigma, kind = bound_sigma(env)
    if not sigma > 0:
        return BoundInfo(None, None, "n/a", "a mean at 0 or 1: no Bernoulli envelope")
    try:
        lb = cost_lower_bound(env.theta.T, env.costs, env.xi, sigma)
    except ValueError as exc:  # e.g. means outside the bias bounds (Wang's Table 2)
        return BoundInfo(None, sigma, "n/a", f"solver: {exc}")
    return BoundInfo(float(lb.c_star), sigma, kind, omega=np.asarray(lb.omega).tolist(),
                     optimal_fidelity=np.asarray(lb.optimal_fidelity).tolist())


# -- policies --------------------------------------------------------------------------
def make_grad(env, kind="MF-GRAD", delta=0.01, learning_rate=None, run_index=0, seed=0,
              gradient="code"):
    """A GRAD or MF-GRAD policy for ``env`` (the interface of ``mftune.policies.mf_grad``).

    ``kind`` is one of :data:`GRAD_POLICIES` ("MF-GRAD-top": ``top_test=True``).
    ``learning_rate=None`` keeps the class's default (the theory rate);
    ``gradient`` is :class:`~mftune.policies.mf_grad.MFGRAD`'s. GRAD takes the
    full instance and pulls its top fidelity only.
    """
    cls, top_test = {"GRAD": (GRAD, False), "MF-GRAD": (MFGRAD, False),
                     "MF-GRAD-top": (MFGRAD, True)}[kind]
    return cls(env.n_arms, env.costs, env.xi, delta=delta,
               variance_proxy=env.variance_proxy, learning_rate=learning_rate,
               random_state=[int(seed), int(run_index), 1], gradient=gradient,
               top_test=top_test)


#: How LUCB's [0, 1] constants meet Gaussian rewards of standard deviation σ: the
#: rescaling ``s`` of the rewards and LUCB's ``fucb_bonus`` and ``commit_factor``.
#: "wang": Wang et al.'s constants with σ = 1/2 (s = 2σ) [RECON]; "authors": the MF-GRAD
#: authors' Gaussian LUCB (radius sqrt(2σ² log(Lt⁴/δ)/N), commit threshold
#: 3 sqrt(σ² log(L/δ)/(λ₁N)), f-UCB bonus unscaled) [code], i.e. s = sqrt(2)σ.
LUCB_CONVENTIONS = ("wang", "authors")


def lucb_view(inst: Instance, convention: str = "wang"):
    """The bandit LUCB runs on, its µ̃1, µ̃2, whether to clip, and LUCB's extra keywords.

    LUCB's radius is for rewards in [0, 1] (σ = 1/2). [RECON] A Gaussian
    instance is shown as ``(x − c)/s + 1/2`` with ``c = (µ̃1 + µ̃2)/2`` (ξ
    and µ̃ mapped alike, no clipping): ``s = 2σ`` (``convention="wang"``: the
    paper's tests with σ in place of 1/2) or ``s = sqrt(2)σ`` with
    ``fucb_bonus = 1/s`` and ``commit_factor = 1/sqrt(2)``
    (``convention="authors"``: the decisions of the MF-GRAD authors' LUCB,
    see :data:`LUCB_CONVENTIONS`). Bernoulli and bounded rewards are used as
    they are. Returns ``(env, µ̃1, µ̃2, clip, kwargs)``.
    """
    if convention not in LUCB_CONVENTIONS:
        raise ValueError(f"convention must be one of {LUCB_CONVENTIONS}; got {convention!r}")
    env, (m1, m2) = inst.env, inst.mu_tilde
    if not isinstance(env, GaussianBandit):
        return env, m1, m2, True, {}
    if convention == "wang":
        s, kw = 2.0 * env.sigma, {}
    else:
        s = np.sqrt(2.0) * env.sigma
        kw = {"fucb_bonus": 1.0 / s, "commit_factor": 1.0 / np.sqrt(2.0)}
    c = (m1 + m2) / 2.0
    view = GaussianBandit((env.theta - c) / s + 0.5, env.costs, sigma=env.sigma / s,
                          xi=env.xi / s, name=env.name)
    return view, (m1 - c) / s + 0.5, (m2 - c) / s + 0.5, False, kw


def _lucb_chunk(env, procedure, delta, m1, m2, clip, seed, start, count, max_pulls, name,
                kw=None):
    res = simulate_lucb_batch(env, count, seed, procedure=procedure, delta=delta,
                              mu1_tilde=m1, mu2_tilde=m2, clip=clip, run_offset=start,
                              max_pulls=max_pulls, **(kw or {}))
    recs = res.records(name, env.costs)
    for r in recs:
        r.run += start
    return recs


def run_lucb(inst, procedure, delta, n_runs, seed, n_jobs, max_pulls, convention="wang"):
    """Runs of one LUCB-Explore procedure, vectorised over runs (``lucb_sim``; exact)."""
    env, m1, m2, clip, kw = lucb_view(inst, convention)
    if procedure == "C":
        m1 = m2 = None
    name = f"LUCB-{procedure}"
    jobs = [delayed(_lucb_chunk)(env, procedure, delta, m1, m2, clip, seed, a, n,
                                 max_pulls, name, kw)
            for a, n in _chunks(n_runs, n_jobs)]
    parts = [fn(*a, **k) for fn, a, k in jobs] if len(jobs) == 1 \
        else Parallel(n_jobs=len(jobs))(jobs)
    return [r for part in parts for r in part]


#: Above this many (arm, fidelity) pairs the multi-fidelity pull-by-pull policies are
#: skipped (Yahtzee: K = 13, M = 8). MF-GRAD solves max-min problems over K(K−1) pairs of
#: 4M one-sided terms at every pull of every run; LUCB-Explore-A and -C change challenger
#: at nearly every round there, so rounds go one at a time (EXPLORE-A: no stop within 10⁶
#: pulls, 150 s of CPU for 4 runs; MF-GRAD: no stop within 10⁶ pulls, 260 s of CPU per
#: run). A 100-run cell would take hours; GRAD (one fidelity) runs.
MAX_ARM_FIDELITIES = 40
PULL_BY_PULL_MF = ("LUCB-A", "LUCB-B", "LUCB-C", "MF-GRAD", "MF-GRAD-top")


def skip_reason(policy: str, inst: Instance) -> str | None:
    """Why ``policy`` is not run on ``inst`` (None: it is run)."""
    if policy not in ELIMINATION and inst.env.n_arms > MAX_ARMS:
        return f"K = {inst.env.n_arms} > {MAX_ARMS}"
    km = inst.env.n_arms * inst.env.n_fidelities
    if policy in PULL_BY_PULL_MF and km > MAX_ARM_FIDELITIES:
        return f"K·M = {km} > {MAX_ARM_FIDELITIES}: too slow for this table"
    if policy.startswith("MF-GRAD") and outside_model(inst.env):
        # Outside the model few arms are ruled out and most pulls solve most of the K(K−1)
        # pair problems: about 5 ms per step for 100 runs of wang-table2, 10⁵ steps.
        return "means outside their bias bounds ξ: no bound, outside MF-GRAD's model"
    if policy in ("LUCB-A", "LUCB-B"):
        env, m1, m2, _, _ = lucb_view(inst)
        if not (0 <= m2 <= m1 <= 1):
            return "µ̃ outside [0, 1] after rescaling"
    return None


# -- cells -----------------------------------------------------------------------------
@dataclass
class Cell:
    """Runs of one policy on one instance at one δ."""

    family: str
    instance: str
    policy: str
    delta: float
    n_runs: int
    mean_cost: float | None = None
    ci95: float | None = None
    median_cost: float | None = None
    bound: float | None = None
    bound_kind: str = "n/a"
    ratio: float | None = None
    n_errors: int = 0  # wrong answers among the runs that stopped (capped runs excluded)
    n_capped: int = 0
    pulls_per_fidelity: list = field(default_factory=list)
    wall_time: float = 0.0
    cpu_time: float = 0.0  # CPU seconds of the process that ran the cell
    note: str = ""

    @property
    def below_bound(self) -> bool:
        """Mean cost below a valid bound: a bug, or not δ-correct at this δ.

        IISE-γ is never flagged: it is given γ (a bound on the spread of the
        biases), information outside the model class of the bound (ξ only).
        Nor is a cell with capped runs: their cost is the cap's, not a stopping
        time, so the mean says nothing of the bound.
        """
        return bool(self.ratio is not None and self.ratio < 1.0 and not self.n_capped
                    and self.policy not in GIVEN_GAMMA
                    and self.bound_kind in ("gaussian", "bernoulli-envelope"))

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["below_bound"] = self.below_bound
        return d


def _chunks(n_runs, n_jobs):
    """``(start, count)`` of contiguous run ranges, one per worker."""
    workers = 1 if n_jobs in (None, 1) else effective_n_jobs(n_jobs)
    bounds = np.linspace(0, n_runs, min(workers, n_runs) + 1).astype(int)
    return [(a, b - a) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def _grad_chunk(env, factory, seed, start, count, max_pulls):
    return simulate_grad_batch(env, factory(env), count, seed, run_offset=start,
                               max_pulls=max_pulls)[0]


def run_grad(env, factory, n_runs, seed, n_jobs, max_pulls):
    """Runs of GRAD or MF-GRAD, all runs of a worker advanced together (exact; grad_sim)."""
    jobs = [delayed(_grad_chunk)(env, factory, seed, a, n, max_pulls)
            for a, n in _chunks(n_runs, n_jobs)]
    parts = [fn(*a, **k) for fn, a, k in jobs] if len(jobs) == 1 \
        else Parallel(n_jobs=len(jobs))(jobs)
    return [r for part in parts for r in part]


def _records(policy, inst, delta, n_runs, seed, n_jobs, max_pulls, learning_rate=None,
             gradient="code"):
    if policy.startswith("LUCB-"):
        return run_lucb(inst, policy[-1], delta, n_runs, seed, n_jobs, max_pulls)
    env, factory = policy_setup(policy, inst, delta, seed, learning_rate, gradient)
    if policy not in ELIMINATION:
        return run_grad(env, factory, n_runs, seed, n_jobs, max_pulls)
    cap = None if policy in ELIMINATION else max_pulls  # a cap would turn block rounds off
    return simulate_runs(env, {policy: factory}, n_runs, seed, n_jobs, max_pulls=cap)


def policy_setup(policy, inst, delta, seed=0, learning_rate=None, gradient="code"):
    """``(env, factory)`` of an elimination, GRAD or MF-GRAD policy on ``inst``.

    The factory is called once here, so that a policy refusing the instance
    raises ValueError before any run. IISE-γ gets the instance's true γ as it
    is (not monotone on some instances: the fidelities it makes useless are
    skipped).
    """
    env = inst.env
    if policy in ELIMINATION:
        factory = {"SE": partial(_se, delta=delta), "IISE": partial(_iise, delta=delta),
                   "IISE-gamma": partial(_iise_gamma, delta=delta),
                   "MFE": partial(_mfe, delta=delta, c=inst.mfe_c)}[policy]
    else:
        factory = partial(make_grad, kind=policy.removesuffix("-CONST"), delta=delta,
                          learning_rate=learning_rate, seed=seed, gradient=gradient)
    factory(env)
    return env, factory


def run_cell(policy, inst, delta, n_runs, seed=0, n_jobs=None, max_pulls=10**6,
             bound: BoundInfo | None = None, learning_rate=None, gradient="code") -> Cell:
    """Run ``policy`` ``n_runs`` times on ``inst`` and summarise against ``bound``."""
    cell = Cell(inst.family, inst.name, policy, float(delta), int(n_runs))
    reason = skip_reason(policy.replace("-CONST", ""), inst)
    if reason is None and not policy.startswith("LUCB-"):
        try:
            policy_setup(policy, inst, delta, seed, learning_rate, gradient)
        except ValueError as exc:
            reason = f"refuses the instance ({str(exc).split(';')[0]})"
    if reason:
        cell.note = f"skipped: {reason}"
        return cell
    start, cpu = time.perf_counter(), time.process_time()
    recs = _records(policy, inst, delta, n_runs, seed, n_jobs, max_pulls, learning_rate,
                    gradient)
    cell.cpu_time = time.process_time() - cpu
    return fill_cell(cell, recs, inst, bound, max_pulls, time.perf_counter() - start)


def fill_cell(cell: Cell, recs, inst: Instance, bound: BoundInfo | None, max_pulls,
              wall_time: float) -> Cell:
    """Summarise the runs ``recs`` of ``cell`` (mean, CI, errors, caps) against ``bound``."""
    cell.wall_time = wall_time
    delta = cell.delta
    costs = np.array([r.cost for r in recs])
    cell.mean_cost = float(costs.mean())
    cell.median_cost = float(np.median(costs))
    cell.ci95 = float(1.96 * costs.std(ddof=1) / np.sqrt(costs.size)) if costs.size > 1 else 0.0
    cell.n_errors = sum(not r.correct and r.stopping_reason != "max-pulls" for r in recs)
    cell.n_capped = sum(r.stopping_reason == "max-pulls" for r in recs)
    pf = np.array([r.pulls_per_fidelity for r in recs], dtype=float).mean(axis=0)
    if pf.size == 1 < inst.env.n_fidelities:  # single-fidelity policy: its pulls are at M
        pf = np.concatenate([np.zeros(inst.env.n_fidelities - 1), pf])
    cell.pulls_per_fidelity = pf.tolist()
    notes = []
    if any(r.skipped_rounds for r in recs):
        notes.append("mfe-phase-skip")
    if cell.n_capped:
        notes.append(f"{cell.n_capped} run(s) hit the cap of {max_pulls} pulls")
    cell.note = "; ".join(notes)
    if bound is not None and bound.c_star is not None:
        cell.bound, cell.bound_kind = bound.value(delta), bound.kind
        cell.ratio = cell.mean_cost / cell.bound if cell.bound > 0 else None
    return cell


#: Learning rate of GRAD and MF-GRAD in ``bench lower-bound``: the constant 0.25 of the
#: authors' runs (MF-GRAD-CONST; lower median and spread than the theory rate in the
#: paper's appendix [summ]); None is the theory rate 1/sqrt(n+1).
GRAD_LEARNING_RATE = 0.25


def _weight(policy: str, inst: Instance, bound: BoundInfo) -> float:
    """A rough guess of a cell's run time, to start the slowest cells first.

    The pull-by-pull policies go first, ordered by the bound's pulls at the cheapest
    fidelity times the size of their per-pull problem; the elimination policies
    (vectorised rounds) follow, by the number of arms.
    """
    env = inst.env
    if policy in ELIMINATION:
        return float(env.n_arms)
    c_star = bound.c_star if bound is not None and bound.c_star is not None else 1.0
    size = env.n_arms * env.n_fidelities if policy.startswith("MF-GRAD") else env.n_arms
    return 1e6 + c_star / float(env.costs[0]) * size


def run_cells(instances, policies=POLICIES, delta=0.01, n_runs=100, seed=0, n_jobs=None,
              max_pulls=10**6, bounds=None, learning_rate=GRAD_LEARNING_RATE,
              on_cell=None, gradient="code") -> list[Cell]:
    """Every (instance, policy) cell; ``bounds`` maps instance name -> BoundInfo.

    ``learning_rate`` is GRAD's and MF-GRAD's (:data:`GRAD_LEARNING_RATE`), ``gradient``
    MF-GRAD's (:class:`~mftune.policies.mf_grad.MFGRAD`).
    With several workers (``n_jobs``) the cells, not the runs of a cell, are
    spread over them, the slowest first (:func:`_weight`): one long cell then
    runs beside all the others instead of holding every worker up. The runs
    and their results do not depend on ``n_jobs``. ``on_cell(cell)`` is
    called as each cell finishes (e.g. to print progress). Cells come back in
    (instance, policy) order.
    """
    bounds = bounds if bounds is not None else {i.name: instance_bound(i.env) for i in instances}
    tasks = [(p, inst) for inst in instances for p in policies]
    jobs = [delayed(run_cell)(p, inst, delta, n_runs, seed, 1, max_pulls, bounds[inst.name],
                              learning_rate=learning_rate if p in GRAD_POLICIES else None,
                              gradient=gradient)
            for p, inst in tasks]
    workers = 1 if n_jobs in (None, 1) else effective_n_jobs(n_jobs)
    if workers == 1:
        done = (fn(*a, **k) for fn, a, k in jobs)
    else:
        order = sorted(range(len(tasks)), key=lambda t: -_weight(
            tasks[t][0], tasks[t][1], bounds[tasks[t][1].name]))
        done = Parallel(n_jobs=workers, pre_dispatch="n_jobs",
                        return_as="generator_unordered")(jobs[t] for t in order)
    at = {(inst.name, p): t for t, (p, inst) in enumerate(tasks)}
    cells: list = [None] * len(tasks)
    for cell in done:
        cells[at[cell.instance, cell.policy]] = cell
        if on_cell is not None:
            on_cell(cell)
    return cells


def summarise(cells: list[Cell]) -> list[dict]:
    """Per policy: median ratio to the bound over its cells with a bound (``n_bounded`` of
    the ``n_cells`` it ran) and the cells below it."""
    out = []
    for policy in dict.fromkeys(c.policy for c in cells):
        mine = [c for c in cells if c.policy == policy and c.mean_cost is not None]
        ratios = [c.ratio for c in mine if c.ratio is not None]
        out.append({"policy": policy, "n_cells": len(mine), "n_bounded": len(ratios),
                    "given_gamma": policy in GIVEN_GAMMA,
                    "median_ratio": float(np.median(ratios)) if ratios else None,
                    "below_bound": [f"{c.instance} (δ={c.delta:g})" for c in mine
                                    if c.below_bound]})
    return out
