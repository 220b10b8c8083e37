"""``mftune bench mfgpucb-synthetic | svm-magic | kde``: the MF-GP-UCB experiments."""

from __future__ import annotations

import json
import os
import time

import click
import numpy as np

from ._groups import N_JOBS, OUT_FILE, PLOT_FILE, Finite, bench, parse_list, pyplot

SYN_FUNCTIONS = ("currin", "park", "borehole", "hartmann3", "hartmann6")
SYN_METHODS = ("mf-gp-ucb", "gp-ucb", "ei", "direct", "mf-naive", "random")


ard_option = click.option(
    "--ard/--isotropic", default=None,
    help="Kernel of every GP method: one length scale per dimension, or the authors' single "
         "one [default: the policies' default, isotropic].")


def _kernel_name(ard) -> str:
    return {None: "policy default", True: "ARD", False: "isotropic"}[ard]


def _verdict(records, fractions) -> str:
    """Per capital: on how many functions MF-GP-UCB's median is below both GP-UCB's
    and MF-NAIVE's, and on how many it is below or tied (equal to 1e-6 relative,
    e.g. every method at the exact corner maximiser of Park)."""
    from ..benchmarks.mf_synthetic import regret_summary

    summary = regret_summary(records, fractions)
    lines = []
    for k, frac in enumerate(fractions):
        wins, not_worse, total = 0, 0, 0
        for by_method in summary.values():
            if not {"mf-gp-ucb", "gp-ucb", "mf-naive"} <= by_method.keys():
                continue
            total += 1
            mf = by_method["mf-gp-ucb"][1][k]
            others = [by_method[m][1][k] for m in ("gp-ucb", "mf-naive")]
            wins += all(mf < o for o in others)
            not_worse += all(mf <= o or np.isclose(mf, o, rtol=1e-6, atol=1e-7)
                             for o in others)
        if total:
            lines.append(f"Λ = {frac:g}·capital: MF-GP-UCB median below both GP-UCB and "
                         f"MF-NAIVE on {wins}/{total} functions, below or tied on "
                         f"{not_worse}/{total}")
    return "\n".join(lines)


def _plot(records, fractions, path, histogram):
    plt = pyplot()
    from ..benchmarks.mf_synthetic import regret_summary

    grid = np.linspace(0.05, 1.0, 20)
    summary = regret_summary(records, grid)
    n = len(summary) + (histogram is not None)
    fig, axes = plt.subplots(1, n, figsize=(4 * n, 3.4), squeeze=False)
    for ax, (f, by_method) in zip(axes[0], summary.items(), strict=False):
        for m, (caps, med, se, _, _) in by_method.items():
            ax.errorbar(caps, np.maximum(med, 1e-8), yerr=se, label=m, capsize=2)
        ax.set_yscale("log")
        ax.set_title(f)
        ax.set_xlabel("capital Λ")
        ax.set_ylabel("S(Λ)")
    axes[0][0].legend(fontsize=7)
    if histogram is not None:
        edges, counts = histogram
        ax = axes[0][-1]
        centres = 0.5 * (edges[:-1] + edges[1:])
        width = (edges[1] - edges[0]) / (counts.shape[1] + 1)
        for m in range(counts.shape[1]):
            ax.bar(centres + (m - 1) * width, counts[:, m], width, label=f"m={m + 1}")
        ax.set_title("Hartmann-3D: queries per fidelity")
        ax.set_xlabel("f^(3)(x)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    click.echo(f"plot written to {path}")


@bench.command("mfgpucb-synthetic")
@click.option("--functions", default=",".join(SYN_FUNCTIONS), show_default=True,
              help="Comma-separated subset of " + ", ".join(SYN_FUNCTIONS) + ", bad-currin.")
@click.option("--methods", default=",".join(SYN_METHODS), show_default=True,
              help="Comma-separated subset of " + ", ".join(SYN_METHODS) + ".")
@click.option("--runs", default=20, show_default=True, type=click.IntRange(min=1),
              help="Independent runs per (function, method); DiRect runs once.")
@click.option("--capital-multiple", "capital_multiple", default=25.0, show_default=True,
              type=Finite(min=11.0),
              help="Capital Λ = K · λ^(M) (the top fidelity's cost).")
@click.option("--noise", default=0.0, show_default=True, type=Finite(min=0.0),
              help="Gaussian observation-noise standard deviation.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--n-jobs", default=1, show_default=True, type=N_JOBS,
              help="joblib workers over runs (-1 = all cores).")
@click.option("--plot", "plot_path", type=PLOT_FILE,
              help="Write regret curves (and the Hartmann-3D histogram) to this file.")
@click.option("--save", type=OUT_FILE, help="Save the run records as JSON.")
@click.option("--acq-method", "acq_method", type=click.Choice(["lbfgsb", "direct"]),
              help="Acquisition maximiser of every GP method: multi-start L-BFGS-B, or the "
                   "authors' DiRect (slower; never samples the cube's boundary) [default: "
                   "the policies' default, lbfgsb].")
@click.option("--hit-tolerance", default=1e-6, show_default=True,
              type=Finite(min=0.0, min_open=True),
              help="Regret under which the first-hit table counts the optimum as found.")
@ard_option
def mfgpucb_synthetic(functions, methods, runs, capital_multiple, noise, seed, n_jobs,
                      plot_path, save, acq_method, hit_tolerance, ard):
    """Simple regret S(Λ) of MF-GP-UCB and the baselines on the synthetic functions.

    Prints the median over runs [standard error of the mean] at 1/4, 1/2, 3/4
    and all of the capital, the mean wall seconds per run, and — when
    Hartmann-3D is among the functions — the MF-GP-UCB queries per fidelity
    against f^(3), as in the paper's Fig. 3 (right).
    """
    from ..benchmarks.mf_synthetic import (
        fidelity_histogram,
        format_first_hit_table,
        format_histogram,
        format_regret_table,
        format_spend_table,
        run_synthetic,
    )

    fns = parse_list(functions, SYN_FUNCTIONS + ("bad-currin",), "--functions")
    meths = parse_list(methods, SYN_METHODS, "--methods")
    fractions = (0.25, 0.5, 0.75, 1.0)
    start = time.perf_counter()
    records = run_synthetic(fns, meths, runs, capital_multiple, seed, n_jobs, noise, verbose=5,
                            ard=ard, acq_method=acq_method)
    wall = time.perf_counter() - start
    click.echo(f"MF-GP-UCB synthetic benchmark — {runs} runs, capital = {capital_multiple:g} "
               f"× λ^(M), noise sd {noise:g}, seed {seed}, GP kernel {_kernel_name(ard)}, "
               f"acquisition maximiser {acq_method or 'policy default'}")
    click.echo(format_regret_table(records, fractions))
    click.echo("")
    click.echo(_verdict(records, fractions))
    click.echo("")
    click.echo(f"Capital at the first target-fidelity query with regret < {hit_tolerance:g} "
               "(ties in S(Λ) at an exact maximiser are told apart here):")
    click.echo(format_first_hit_table(records, hit_tolerance))
    if {"mf-gp-ucb", "mf-naive"} & set(meths):
        click.echo("")
        click.echo("Where the capital went (median over runs):")
        click.echo(format_spend_table(records))
    hist = None
    h3 = [r for r in records if r.function == "hartmann3" and r.method == "mf-gp-ucb"]
    if h3:
        hist = fidelity_histogram(h3, n_bins=8)
        click.echo("")
        click.echo(f"Hartmann-3D, MF-GP-UCB: queries per fidelity by f^(3) value "
                   f"(all {len(h3)} runs, initial design included)")
        click.echo(format_histogram(*hist))
    click.echo(f"\ntotal wall time: {wall:.1f} s")
    if save:
        with open(save, "w") as fh:
            json.dump([{"function": r.function, "method": r.method, "seed": r.seed,
                        "fidelities": r.fidelities.tolist(), "cum_cost": r.cum_cost.tolist(),
                        "target_values": r.target_values.tolist(), "wall_time": r.wall_time,
                        "extra": r.extra} for r in records], fh)
    if plot_path:
        _plot(records, fractions, plot_path, hist)


def _task_bench(task, key, methods, seeds, time_budget, tolerance, grid, scale, unit,
                ard=None):
    from ..benchmarks.task_bench import (
        grid_reference,
        hit_in_initial_design,
        paired_summary,
        run_task,
        time_to_quality,
    )

    click.echo(f"task: {task.name}; fidelities {task.fidelities}; data: "
               f"{getattr(task, 'data_source', 'synthetic (RECON)')}; GP kernel "
               f"{_kernel_name(ard)}")
    ref = grid_reference(task, grid, key)
    target = ref["best_score"] - tolerance
    click.echo(f"dense-grid reference: {ref['n_points']} points ({grid} per dimension, log "
               f"scale) at the top fidelity, best {ref['best_score'] * scale:.3f}{unit} at "
               f"{ref['best_config']} ({ref['seconds']:.0f} s); target = best - "
               f"{tolerance * scale:g}{unit}")
    if "scores" in ref:  # grids cached before the scores were stored lack them
        frac = float(np.mean(np.asarray(ref["scores"]) >= target))
        click.echo(f"grid points meeting the target: {frac:.1%} (so k uniform top-fidelity "
                   f"draws hit it with probability about 1 - (1 - {frac:.3f})^k)")
    top = task.n_fidelities - 1
    head = (f"{'method':<10} {'median time-to-target (s)':>26} {'reached':>8} "
            f"{'median best (top fid.)':>23} {'decision s':>11} {'evals lo/top':>13} "
            f"{'hit in init':>11}")
    rows = [head, "-" * len(head)]
    per_seed = {m: [] for m in methods}
    load0 = os.getloadavg()
    for seed in range(seeds):
        for m in methods:  # interleaved, so load changes hit both methods alike
            rec = run_task(task, m, time_budget, seed, target, ard)
            per_seed[m].append(rec)
    ttqs = {m: np.array([time_to_quality(r, target, top) for r in recs])
            for m, recs in per_seed.items()}
    for m, recs in per_seed.items():
        ttq = ttqs[m]
        best = [r.scores[r.fidelities == top].max() if np.any(r.fidelities == top) else np.nan
                for r in recs]
        lo = np.median([np.sum(r.fidelities < top) for r in recs])
        hi = np.median([np.sum(r.fidelities == top) for r in recs])
        rows.append(f"{m:<10} {np.median(ttq):>26.1f} {np.isfinite(ttq).sum():>5}/{len(recs)} "
                    f"{np.nanmedian(best) * scale:>22.3f}{unit} "
                    f"{np.median([r.decision_seconds for r in recs]):>11.2f} "
                    f"{lo:>6.0f}/{hi:<6.0f} "
                    f"{sum(hit_in_initial_design(r, target, top) for r in recs):>5}/{len(recs)}")
        rows.append(f"{'':<10} per seed: " + ", ".join(f"{t:.1f}" for t in ttq))
    first = methods[0]
    for other in methods[1:]:
        p = paired_summary(ttqs[first], ttqs[other])
        rows.append(f"paired by seed, {first} / {other}: median {p['median']:.2f}, geometric "
                    f"mean {p['gmean']:.2f} over the {p['n']} seeds both reached; {first} "
                    f"faster on {p['faster']} of {seeds}")
    click.echo("\n".join(rows))
    click.echo(f"load average (1, 5, 15 min) at start {load0[0]:.1f}, {load0[1]:.1f}, "
               f"{load0[2]:.1f}; at end " + ", ".join(f"{v:.1f}" for v in os.getloadavg())
               + " — methods interleaved seed by seed, so load hits both alike")


@bench.command("svm-magic")
@click.option("--seeds", default=5, show_default=True, type=click.IntRange(min=1))
@click.option("--methods", default="mf-gp-ucb,gp-ucb", show_default=True,
              help="Comma-separated subset of mf-gp-ucb, gp-ucb, random.")
@click.option("--time-budget", default=150.0, show_default=True,
              type=Finite(min=0, min_open=True),
              help="Elapsed seconds (evaluations + decisions) per run.")
@click.option("--tolerance", default=0.5, show_default=True, type=Finite(min=0),
              help="Accuracy points below the grid's best that count as reached.")
@click.option("--grid", default=12, show_default=True, type=click.IntRange(min=2),
              help="Grid points per dimension of the reference (cached).")
@ard_option
def svm_magic(seeds, methods, time_budget, tolerance, grid, ard):
    """Time for MF-GP-UCB and GP-UCB to come within --tolerance accuracy points of the
    dense-grid best 5-fold CV accuracy (RBF-SVM, MAGIC, 500/2000 rows)."""
    from ..benchmarks.tasks import SVMMagic

    task = SVMMagic()
    key = "svm-magic" if task.data_source.startswith("MAGIC") else "svm-substitute"
    meths = parse_list(methods, ("mf-gp-ucb", "gp-ucb", "random"), "--methods")
    _task_bench(task, key, meths, seeds, time_budget, tolerance / 100, grid, 100, " %", ard)


@bench.command("kde")
@click.option("--seeds", default=5, show_default=True, type=click.IntRange(min=1))
@click.option("--methods", default="mf-gp-ucb,gp-ucb", show_default=True,
              help="Comma-separated subset of mf-gp-ucb, gp-ucb, random.")
@click.option("--time-budget", default=30.0, show_default=True,
              type=Finite(min=0, min_open=True), help="Elapsed seconds per run.")
@click.option("--tolerance", default=0.005, show_default=True, type=Finite(min=0),
              help="Mean log-likelihood below the grid's best that counts as reached.")
@click.option("--grid", default=100, show_default=True, type=click.IntRange(min=2))
@ard_option
def kde(seeds, methods, time_budget, tolerance, grid, ard):
    """Time to come within --tolerance of the grid's best CV log-likelihood of a 1-D KDE
    bandwidth (300 / 3000 points)."""
    from ..benchmarks.tasks import KDEBandwidth

    meths = parse_list(methods, ("mf-gp-ucb", "gp-ucb", "random"), "--methods")
    _task_bench(KDEBandwidth(), "kde", meths, seeds, time_budget, tolerance, grid, 1, "", ard)


@bench.command("mfgpucb-overhead")
@click.option("--function", "function", default="borehole", show_default=True,
              type=click.Choice(SYN_FUNCTIONS))
@click.option("--n-obs", default=200, show_default=True, type=click.IntRange(min=20))
@click.option("--steps", default=30, show_default=True, type=click.IntRange(min=3))
@click.option("--seed", default=0, show_default=True, type=int)
def mfgpucb_overhead(function, n_obs, steps, seed):
    """Seconds per MF-GP-UCB (and GP-UCB) decision with --n-obs observations, BLAS on 1 thread.

    A step is ask (acquisition maximisation) + tell (posterior refresh; every
    25th a marginal-likelihood refit, which shows in the max column).
    """
    from ..benchmarks.gp_overhead import measure_overhead

    res = measure_overhead(function, n_obs, min(50, n_obs // 4), steps, seed)
    click.echo(f"decision overhead on {function} (d = {res['n_dims']}), starting from "
               f"{n_obs} observations, {steps} timed steps")
    head = (f"{'method':<10} {'median step':>12} {'10%':>8} {'90%':>8} {'max':>8} "
            f"{'median ask':>11} {'median tell':>12} {'obs at end':>11}")
    click.echo(head)
    click.echo("-" * len(head))
    for m in ("mf-gp-ucb", "gp-ucb"):
        r = res[m]
        click.echo(f"{m:<10} {r['median_step']:>11.3f}s {r['q10_step']:>7.3f}s "
                   f"{r['q90_step']:>7.3f}s {r['max_step']:>7.3f}s {r['median_ask']:>10.3f}s "
                   f"{r['median_tell']:>11.3f}s {r['n_obs_end']:>11d}")
    ratio = res["mf-gp-ucb"]["median_step"] / res["gp-ucb"]["median_step"]
    click.echo(f"ratio MF-GP-UCB / GP-UCB (same run): {ratio:.2f}")
