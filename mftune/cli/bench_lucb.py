"""``mftune bench lucb-table3`` and ``lucb-figure1``: Wang et al. (2023), Appendices B-C."""

from __future__ import annotations

import json
import time

import click
from scipy.stats import binom

from ..benchmarks.lucb_instances import (
    FIGURE1_DELTAS,
    MU1_TILDE,
    MU2_TILDE,
    PAPER_TABLE3,
    run_lucb_cells,
    wang_table1,
    wang_table2,
    wang_table3,
)
from ._groups import N_JOBS, PLOT_FILE, bench, parse_list, pyplot

PROCS = ("A", "B", "C", "baseline")
LABEL = {"A": "Explore-A", "B": "Explore-B [RECON]", "C": "Explore-C", "baseline": "Baseline"}


def _common(fn):
    """Options shared by the LUCB benchmarks."""
    opts = [
        click.option("--runs", default=100, show_default=True, type=click.IntRange(min=2),
                     help="Trials per cell (paired by index across procedures)."),
        click.option("--seed", default=0, show_default=True, type=int,
                     help="Trial r draws its rewards from the stream (seed, r)."),
        click.option("--n-jobs", default=1, show_default=True, type=N_JOBS,
                     help="joblib workers over cells (-1 = all cores)."),
        click.option("--json", "as_json", is_flag=True, help="Print the cells as JSON."),
        click.option("--plot", "plot_file", type=PLOT_FILE,
                     help="Save a figure to this file (needs matplotlib: pip install "
                          "'mftune[plot]')."),
        click.option("--mu1-tilde", default=MU1_TILDE, show_default=True,
                     type=click.FloatRange(0, 1),
                     help="Upper bound µ̃1 >= µ1 given to Explore-A/B."),
        click.option("--mu2-tilde", default=MU2_TILDE, show_default=True,
                     type=click.FloatRange(0, 1),
                     help="Lower bound µ̃2 <= µ2 given to Explore-A/B."),
        click.option("--ties", type=click.Choice(["index", "random"]), default="index",
                     show_default=True, help="Order of arms with equal UCB."),
        click.option("--t-convention", type=click.Choice(["pulls", "rounds"]), default="pulls",
                     show_default=True, help="What the time index t of β(n, t, δ) counts."),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def _check_tilde(mu1_tilde: float, mu2_tilde: float) -> None:
    """µ̃1 > µ̃2, checked before any run (the policy would refuse them in every cell)."""
    if not mu1_tilde > mu2_tilde:
        raise click.BadParameter(f"must exceed --mu2-tilde ({mu2_tilde}); got {mu1_tilde}",
                                 param_hint="--mu1-tilde")


def _error_bound(n_runs: int, delta: float) -> int:
    """Largest error count compatible with an error rate <= δ (one-sided binomial, 0.999)."""
    return int(binom.ppf(0.999, n_runs, delta))


@bench.command("lucb-table3")
@_common
@click.option("--procedures", default="A,B,baseline", show_default=True,
              help="Comma-separated subset of " + ", ".join(PROCS) + ".")
def lucb_table3(runs, seed, n_jobs, as_json, plot_file, mu1_tilde, mu2_tilde, ties,
                t_convention, procedures):
    """Table 3 of Wang et al. (2023): cost complexity (×10⁴) in Cases 1-4, δ = 0.1.

    µ^(m)_k = 0.1(k+4) + 0.01(m−5), ζ = (0.04, 0.03, 0.02, 0.01, 0), λ = (1, 2, 3, 4, 5·Case).
    [RECON] Bernoulli rewards, µ̃1 = 0.95, µ̃2 = 0.75, L = 4KM, t = pulls so far.
    """
    chosen = parse_list(procedures, PROCS, "--procedures")
    _check_tilde(mu1_tilde, mu2_tilde)
    tasks = [(wang_table3(case), proc, 0.1, PAPER_TABLE3.get(proc, (None,) * 4)[case - 1])
             for proc in chosen for case in (1, 2, 3, 4)]
    start = time.perf_counter()
    cells = run_lucb_cells(tasks, runs, seed, n_jobs, mu1_tilde=mu1_tilde, mu2_tilde=mu2_tilde,
                           ties=ties, t_convention=t_convention)
    wall = time.perf_counter() - start
    bound = _error_bound(runs, 0.1)
    if as_json:
        click.echo(json.dumps({"cells": [c.to_dict() for c in cells], "runs": runs, "seed": seed,
                               "mu1_tilde": mu1_tilde, "mu2_tilde": mu2_tilde, "ties": ties,
                               "t_convention": t_convention, "error_bound": bound,
                               "wall_time": wall}, indent=2))
    else:
        click.echo(f"Wang et al. (2023) Table 3 — cost complexity ×10^4, mean ± 95% CI over {runs} "
                   f"trials, delta=0.1; [RECON] Bernoulli rewards, mu~1={mu1_tilde}, "
                   f"mu~2={mu2_tilde}, L=4KM, t={t_convention}, ties={ties}")
        head = f"{'procedure':<18}" + "".join(f"{'Case ' + str(c):>24}" for c in (1, 2, 3, 4))
        click.echo(head)
        for proc in chosen:
            row = [c for c in cells if c.procedure == proc]
            ours = "".join(f"{c.mean_cost / 1e4:>13.1f} ± {c.ci95 / 1e4:<4.1f}"
                           f"{'(' + format(c.paper_mean, '.1f') + ')' if c.paper_mean else '':>7}"
                           for c in row)
            click.echo(f"{LABEL[proc]:<18}{ours}")
        click.echo("(paper values in parentheses)")
        click.echo(f"wrong answers per cell (out of {runs}; δ-rate bound {bound} = 0.999 "
                   "binomial quantile):")
        for proc in chosen:
            errs = " ".join(f"{c.n_errors:>4}" for c in cells if c.procedure == proc)
            click.echo(f"  {LABEL[proc]:<18}{errs}")
        click.echo("mean pulls per fidelity (m=1..5):")
        for c in cells:
            pf = " ".join(f"{v:>8.0f}" for v in c.pulls_per_fidelity)
            click.echo(f"  {LABEL[c.procedure]:<18} {c.instance:<18} {pf}")
        click.echo(f"total wall time: {wall:.1f} s")
    if plot_file:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6, 4))
        for proc in chosen:
            row = [c for c in cells if c.procedure == proc]
            ax.errorbar([1, 2, 3, 4], [c.mean_cost / 1e4 for c in row],
                        yerr=[c.ci95 / 1e4 for c in row], marker="o", label=LABEL[proc])
            if proc in PAPER_TABLE3:
                ax.plot([1, 2, 3, 4], PAPER_TABLE3[proc], ls=":", marker="x", color="grey")
        ax.set_xlabel("Case (λ^(5) = 5·Case)")
        ax.set_ylabel("cost complexity (×10⁴)")
        ax.set_title("Wang et al. Table 3 (dotted: paper)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(plot_file)
        click.echo(f"figure written to {plot_file}")


@bench.command("lucb-figure1")
@_common
@click.option("--procedures", default="A,B", show_default=True,
              help="Comma-separated subset of " + ", ".join(PROCS) + ".")
@click.option("--tables", default="1,2", show_default=True,
              help="Instances: 1 (Table 1, Fig. 1a) and/or 2 (Table 2, Fig. 1b).")
@click.option("--deltas", default=",".join(f"{d:g}" for d in FIGURE1_DELTAS), show_default=True,
              help="Comma-separated confidence levels δ.")
def lucb_figure1(runs, seed, n_jobs, as_json, plot_file, mu1_tilde, mu2_tilde, ties,
                 t_convention, procedures, tables, deltas):
    """Figure 1 of Wang et al. (2023): Explore-A vs Explore-B, cost vs δ on Tables 1 and 2.

    The paper only plots the curves (Explore-A cheaper on Table 1, Explore-B
    cheaper on Table 2); µ̃1 = 0.95, µ̃2 = 0.75 [paper]; Bernoulli rewards,
    L = 4KM, t = pulls so far [RECON].
    """
    chosen = parse_list(procedures, PROCS, "--procedures")
    which = parse_list(tables, ("1", "2"), "--tables")
    _check_tilde(mu1_tilde, mu2_tilde)
    try:
        dlist = tuple(float(d) for d in deltas.split(",") if d.strip())
    except ValueError as exc:
        raise click.BadParameter(f"not a list of numbers: {deltas!r}", param_hint="--deltas") \
            from exc
    if not dlist or not all(0 < d < 1 for d in dlist):
        raise click.BadParameter("each δ must lie in (0, 1)", param_hint="--deltas")
    envs = [{"1": wang_table1, "2": wang_table2}[w]() for w in ("1", "2") if w in which]
    tasks = [(env, proc, d, None) for env in envs for d in dlist for proc in chosen]
    start = time.perf_counter()
    cells = run_lucb_cells(tasks, runs, seed, n_jobs, mu1_tilde=mu1_tilde, mu2_tilde=mu2_tilde,
                           ties=ties, t_convention=t_convention)
    wall = time.perf_counter() - start
    if as_json:
        click.echo(json.dumps({"cells": [c.to_dict() for c in cells], "runs": runs, "seed": seed,
                               "mu1_tilde": mu1_tilde, "mu2_tilde": mu2_tilde,
                               "wall_time": wall}, indent=2))
    else:
        click.echo(f"Wang et al. (2023) Figure 1 — mean cost complexity ± 95% CI over {runs} "
                   f"trials; mu~1={mu1_tilde}, mu~2={mu2_tilde}; [RECON] Bernoulli, L=4KM, "
                   f"t={t_convention}, ties={ties}. Paper: curves only (A cheaper on Table 1, "
                   "B cheaper on Table 2).")
        for env in envs:
            expect = "A" if env.name == "wang-table1" else "B"
            click.echo(f"\n{env.name} (paper: Explore-{expect} cheaper)")
            click.echo(f"{'delta':>6}" + "".join(f"{LABEL[p]:>28}" for p in chosen)
                       + "   cheaper   wrong of " + str(runs) + " ("
                       + "/".join(LABEL[p].split()[0] for p in chosen) + ")")
            for d in dlist:
                row = [c for c in cells if c.instance == env.name and c.delta == d]
                vals = "".join(f"{c.mean_cost:>19.0f} ± {c.ci95:<6.0f}" for c in row)
                best = min(row, key=lambda c: c.mean_cost).procedure
                errs = "/".join(str(c.n_errors) for c in row)
                click.echo(f"{d:>6.2f}{vals}   {LABEL[best].split()[0]:<9} {errs}")
        click.echo(f"\ntotal wall time: {wall:.1f} s")
    if plot_file:
        plt = pyplot()
        fig, axes = plt.subplots(1, len(envs), figsize=(5 * len(envs), 4), squeeze=False)
        for ax, env in zip(axes[0], envs, strict=True):
            for proc in chosen:
                row = [c for c in cells if c.instance == env.name and c.procedure == proc]
                mean = [c.mean_cost for c in row]
                sd = [c.sd_cost for c in row]
                ax.plot(dlist, mean, marker="o", label=LABEL[proc])
                ax.fill_between(dlist, [m - s for m, s in zip(mean, sd, strict=True)],
                                [m + s for m, s in zip(mean, sd, strict=True)], alpha=0.2)
            ax.set_xlabel("δ")
            ax.set_ylabel("cost complexity (mean ± 1 sd)")
            ax.set_title(env.name)
            ax.legend()
        fig.tight_layout()
        fig.savefig(plot_file)
        click.echo(f"figure written to {plot_file}")
