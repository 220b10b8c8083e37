"""The synthetic experiment of Kandasamy et al. (2016), Fig. 3 / App. D.

Every method runs on the same multi-fidelity test function with the same
capital ``Λ = K · λ^(M)`` through :func:`mftune.engine.driver.run` (``budget=Λ``);
initial designs and the extra checks count toward it. The simple regret

    S(Λ') = f* - max{ f^(M)(x_t) : m_t = M, cumulative cost ≤ Λ' }

is read off each run's history at several capitals ``Λ' ≤ Λ`` (before the
first target-fidelity query ``S = f* - min f^(M)``, the worst value on a
4096-point Sobol sample — the paper's ``f* + B`` convention with ``-B``
replaced by that minimum [RECON]). Runs are independent (seed = base + run
index) and spread over processes with joblib.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import qmc

from ..engine.driver import Evaluator, Outcomes, run
from ..policies import POINT_POLICIES
from ..policies.base import Pulls
from ..policies.continuous import ContinuousPolicy
from .mf_functions import MF_FUNCTIONS, MFFunction, get_mf_function

__all__ = [
    "METHODS",
    "FunctionEvaluator",
    "GP_METHODS",
    "SyntheticRun",
    "fidelity_histogram",
    "first_hit_capital",
    "format_first_hit_table",
    "format_histogram",
    "format_regret_table",
    "format_spend_table",
    "regret_summary",
    "run_one",
    "run_synthetic",
    "simple_regret",
]

FUNCTIONS = ("currin", "park", "borehole", "hartmann3", "hartmann6")

METHODS: dict[str, Callable[..., ContinuousPolicy]] = POINT_POLICIES


#: The methods that model the function with a Gaussian process.
GP_METHODS = ("mf-gp-ucb", "gp-ucb", "ei", "mf-naive")


class FunctionEvaluator(Evaluator):
    """Evaluates pulls of a continuous policy on an :class:`MFFunction`.

    The cost of a pull is the function's nominal cost of its fidelity; the
    values are computed vectorised per fidelity (with the function's noise).
    """

    def __init__(self, fn: MFFunction, rng: np.random.Generator | None = None):
        super().__init__(n_jobs=None)
        self.fn = fn
        self.rng = np.random.default_rng(rng)

    def evaluate(self, pulls: Pulls) -> Outcomes:
        y = np.empty(len(pulls))
        for m in np.unique(pulls.fidelities):
            sel = pulls.fidelities == m
            y[sel] = self.fn.evaluate(pulls.points[sel], int(m), self.rng)
        return Outcomes(y, self.fn.costs[pulls.fidelities])


@dataclass
class SyntheticRun:
    """One run's record: what was queried, at which fidelity, and its true value."""

    function: str
    method: str
    seed: int
    fidelities: np.ndarray
    cum_cost: np.ndarray
    target_values: np.ndarray  # noiseless f^(M) at every queried point
    wall_time: float
    extra: dict = field(default_factory=dict)


def _worst_value(fn: MFFunction) -> float:
    pts = qmc.Sobol(fn.n_dims, seed=0).random(4096)
    return float(fn(pts).min())


def _by_function_method(records: Sequence[SyntheticRun], methods: Sequence[str] | None = None
                        ) -> dict[tuple[str, str], list[SyntheticRun]]:
    """Records grouped by ``(function, method)`` in first-seen order (``methods``: keep only)."""
    groups: dict[tuple[str, str], list[SyntheticRun]] = {}
    for rec in records:
        if methods is None or rec.method in methods:
            groups.setdefault((rec.function, rec.method), []).append(rec)
    return groups


def simple_regret(record: SyntheticRun, capitals, f_opt: float, f_worst: float) -> np.ndarray:
    """``S(Λ')`` of one run at each capital (see the module docstring)."""
    top = record.fidelities == _n_fid(record) - 1
    out = []
    for cap in np.atleast_1d(capitals):
        ok = top & (record.cum_cost <= cap + 1e-9)
        best = record.target_values[ok].max() if ok.any() else f_worst
        out.append(f_opt - best)
    return np.array(out)


def _n_fid(record: SyntheticRun) -> int:
    return int(record.extra["n_fidelities"])


def run_one(function: str, method: str, capital_multiple: float, seed: int,
            noise_std: float = 0.0, **policy_kwargs) -> SyntheticRun:
    """Run ``method`` once on ``function`` with capital ``capital_multiple · λ^(M)``."""
    from threadpoolctl import threadpool_limits

    fn = get_mf_function(function, noise_std)
    capital = float(capital_multiple * fn.costs[-1])
    policy = METHODS[method](fn.n_dims, fn.costs, capital, random_state=seed, **policy_kwargs)
    evaluator = FunctionEvaluator(fn, np.random.default_rng([seed, 1]))
    start = time.perf_counter()
    with threadpool_limits(limits=1, user_api="blas"):
        res = run(policy, evaluator, budget=capital)
    wall = time.perf_counter() - start
    hist = policy.history()
    return SyntheticRun(
        function, method, seed, hist["fidelities"], hist["cum_cost"], fn(hist["points"]),
        wall, {"n_fidelities": fn.n_fidelities, "capital": capital,
               "n_pulls": res.n_pulls, **res.summary.extra},
    )


def run_synthetic(functions: Sequence[str] = FUNCTIONS, methods: Sequence[str] = tuple(METHODS),
                  runs: int = 20, capital_multiple: float = 25.0, seed: int = 0,
                  n_jobs: int = 1, noise_std: float = 0.0,
                  verbose: int = 0, ard: bool | None = None,
                  acq_method: str | None = None) -> list[SyntheticRun]:
    """All (function, method, run) combinations, in parallel over processes.

    DiRect is deterministic, so it runs once per function. ``ard`` (when not
    None) is passed to every GP method (:data:`GP_METHODS`), so they all
    model the function with the same kind of kernel; ``acq_method`` (when not
    None) is their acquisition maximiser (``"direct"``: the authors' DiRect).
    """
    for f in functions:
        if f not in MF_FUNCTIONS:
            raise ValueError(f"functions must be among {', '.join(MF_FUNCTIONS)}; got {f!r}")
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"methods must be among {', '.join(METHODS)}; got {m!r}")
    jobs = [(f, m, capital_multiple, seed + r, noise_std)
            for f in functions for m in methods
            for r in range(1 if (m == "direct" and noise_std == 0) else runs)]
    gp = {k: v for k, v in (("ard", ard), ("acq_method", acq_method)) if v is not None}
    kwargs = {m: (gp if m in GP_METHODS else {}) for m in methods}
    # longest first (multi-fidelity GP methods, many fidelities) for load balance
    heavy = {"mf-gp-ucb": 0, "mf-naive": 1}
    order = sorted(range(len(jobs)), key=lambda i: (heavy.get(jobs[i][1], 2),
                                                    -get_mf_function(jobs[i][0]).n_fidelities))
    done = Parallel(n_jobs=n_jobs, verbose=verbose)(
        delayed(run_one)(*jobs[i], **kwargs[jobs[i][1]]) for i in order)
    out: list[SyntheticRun] = [None] * len(jobs)  # type: ignore[list-item]
    for i, rec in zip(order, done, strict=True):
        out[i] = rec
    return out


def regret_summary(records: Sequence[SyntheticRun], fractions=(0.25, 0.5, 0.75, 1.0)):
    """``{function: {method: (capitals, median (k,), se (k,), n_runs, time)}}``."""
    out: dict[str, dict] = {}
    fns: dict[str, tuple[float, float]] = {}
    for rec in records:
        if rec.function not in fns:
            fn = get_mf_function(rec.function)
            fns[rec.function] = (fn.f_opt, _worst_value(fn))
    for (f, m), recs in _by_function_method(records).items():
        caps = np.asarray(fractions) * recs[0].extra["capital"]
        S = np.array([simple_regret(r, caps, *fns[f]) for r in recs])
        se = S.std(axis=0, ddof=1) / np.sqrt(len(recs)) if len(recs) > 1 else np.zeros(len(caps))
        out.setdefault(f, {})[m] = (caps, np.median(S, axis=0), se, len(recs),
                                    float(np.mean([r.wall_time for r in recs])))
    return out


def format_regret_table(records: Sequence[SyntheticRun], fractions=(0.25, 0.5, 0.75, 1.0)) -> str:
    """One block per function: median simple regret [standard error] at each capital."""
    summary = regret_summary(records, fractions)
    lines = []
    for f, by_method in summary.items():
        caps = next(iter(by_method.values()))[0]
        head = f"{'method':<10} {'runs':>4} " + " ".join(f"{'Λ=' + format(c, 'g'):>20}"
                                                      for c in caps) + f" {'s/run':>7}"
        lines += ["", f"{f}: simple regret S(Λ), median [s.e. of the mean]", head,
                  "-" * len(head)]
        for m, (_, med, se, n, wall) in by_method.items():
            cells = " ".join(f"{f'{a:.3g} [{b:.2g}]':>20}" for a, b in zip(med, se, strict=True))
            lines.append(f"{m:<10} {n:>4} {cells} {wall:>7.1f}")
    return "\n".join(lines)


def first_hit_capital(record: SyntheticRun, f_opt: float, tol: float = 1e-6) -> float:
    """Cumulative cost of the run's first target-fidelity query with regret ``< tol``.

    ``inf`` when no such query lies within the run's capital. Where every method
    ends at the exact maximiser (Park's and Borehole's corners), ``S(Λ)`` ties and
    this is what still tells the methods apart.
    """
    top = record.fidelities == _n_fid(record) - 1
    ok = top & (f_opt - record.target_values < tol) & (
        record.cum_cost <= record.extra["capital"] + 1e-9)
    return float(record.cum_cost[ok][0]) if ok.any() else np.inf


def format_first_hit_table(records: Sequence[SyntheticRun], tol: float = 1e-6) -> str:
    """Per function and method: median [min–max] of :func:`first_hit_capital`, runs reaching."""
    head = f"{'function':<10} {'method':<10} {'capital (median [min-max])':>30} {'reached':>8}"
    lines = [head, "-" * len(head)]
    for (f, m), recs in _by_function_method(records).items():
        f_opt = get_mf_function(f).f_opt
        caps = np.array([first_hit_capital(r, f_opt, tol) for r in recs])
        cell = f"{np.median(caps):.0f} [{caps.min():.0f}-{caps.max():.0f}]"
        lines.append(f"{f:<10} {m:<10} {cell:>30} {np.isfinite(caps).sum():>5}/{len(recs)}")
    return "\n".join(lines)


def format_spend_table(records: Sequence[SyntheticRun],
                       methods: Sequence[str] = ("mf-gp-ucb", "mf-naive")) -> str:
    """Where the capital went: median share per fidelity, queries, and the ζ/γ checks.

    One row per (function, method) among ``methods``: the median over runs of
    the fraction of the spent capital at each fidelity, the median number of
    queries per fidelity, and for MF-GP-UCB the median number of violation
    checks (extra lower-fidelity queries, charged) and of ζ increases.
    """
    groups = _by_function_method(records, methods)
    head = (f"{'function':<10} {'method':<10} {'capital share per fidelity':<30} "
            f"{'queries per fidelity':<24} {'checks':>6} {'viol.':>5}")
    lines = [head, "-" * len(head)]
    for (f, m), recs in groups.items():
        M = _n_fid(recs[0])
        share, count = [], []
        for r in recs:
            cost = np.diff(np.r_[0.0, r.cum_cost])
            per = np.bincount(r.fidelities, cost, minlength=M)
            share.append(per / per.sum())
            count.append(np.bincount(r.fidelities, minlength=M))
        sh = " ".join(f"{v:.2f}" for v in np.median(share, axis=0))
        ct = " ".join(f"{v:.0f}" for v in np.median(count, axis=0))
        checks = [r.extra.get("checks") for r in recs if r.extra.get("checks") is not None]
        viol = [r.extra.get("violations") for r in recs if r.extra.get("violations") is not None]
        c = f"{np.median(checks):.0f}" if checks else "-"
        v = f"{np.median(viol):.0f}" if viol else "-"
        lines.append(f"{f:<10} {m:<10} {sh:<30} {ct:<24} {c:>6} {v:>5}")
    return "\n".join(lines)


def fidelity_histogram(records: Sequence[SyntheticRun], n_bins: int = 8,
                       max_queries: int | None = None):
    """Queries per fidelity against the target value ``f^(M)(x)`` (paper Fig. 3, right).

    Returns ``(edges, counts)`` with ``counts[b, m]`` the number of queries at
    fidelity ``m`` whose ``f^(M)`` value falls in bin ``b`` (summed over runs;
    ``max_queries`` keeps each run's first queries, e.g. 184 as in the paper).
    """
    vals, fids = [], []
    for r in records:
        k = len(r.fidelities) if max_queries is None else max_queries
        vals.append(r.target_values[:k])
        fids.append(r.fidelities[:k])
    v, m = np.concatenate(vals), np.concatenate(fids)
    M = _n_fid(records[0])
    edges = np.linspace(v.min(), v.max(), n_bins + 1)
    b = np.clip(np.searchsorted(edges, v, side="right") - 1, 0, n_bins - 1)
    counts = np.zeros((n_bins, M), dtype=int)
    np.add.at(counts, (b, m), 1)
    return edges, counts


def format_histogram(edges, counts) -> str:
    """The histogram as a table: one row per ``f^(M)`` bin, one column per fidelity."""
    M = counts.shape[1]
    head = f"{'f^(M) bin':<18}" + "".join(f"{'m=' + str(m + 1):>8}" for m in range(M))
    lines = [head, "-" * len(head)]
    for b in range(counts.shape[0]):
        lines.append(f"[{edges[b]:6.2f}, {edges[b + 1]:6.2f})  "
                     + "".join(f"{c:>8d}" for c in counts[b]))
    return "\n".join(lines)
