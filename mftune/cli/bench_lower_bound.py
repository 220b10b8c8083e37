"""``mftune bench lower-bound``: policies' costs against the bound C*(µ)·log(1/(2.4δ))."""

from __future__ import annotations

import json
import time

import click
import numpy as np

from ..benchmarks.lower_bound import (
    EXTRA_POLICIES,
    FAMILIES,
    GRAD_LEARNING_RATE,
    LABEL,
    POLICIES,
    instance_bound,
    load_family,
    run_cells,
    summarise,
)
from ..policies.glr import STATISTICS
from ._groups import N_JOBS, PLOT_FILE, bench, parse_list, pyplot

#: The δ of the --plot figure (besides --delta).
PLOT_DELTAS = (0.1, 0.01, 0.001)


def _num(x, width=10) -> str:
    if x is None:
        return f"{'–':>{width}}"
    return f"{x:>{width}.4g}" if abs(x) < 1e5 else f"{x:>{width}.3e}"


def format_family(family, instances, bounds, cells, note="") -> str:
    """One text table: a row per (instance, policy)."""
    lines = [f"\n== family {family}" + (f" ({note})" if note else "")]
    for inst in instances:
        b = bounds[inst.name]
        env = inst.env
        if b.c_star is None:
            head = f"bound n/a ({b.note})"
        else:
            head = f"C* = {b.c_star:.5g} (σ = {b.sigma:.4g}, {b.kind})"
        lines.append(f"{inst.name}: K={env.n_arms}, M={env.n_fidelities}, best arm "
                     f"{env.best_arm}; {head}; µ̃ for Explore-A/B: {inst.mu_tilde_source}")
        lines.append(f"  {'policy':<16}{'mean cost':>12} {'± 95% CI':>10} {'bound':>10} "
                     f"{'ratio':>8} {'wrong':>7} {'capped':>7} {'wall s':>7} {'cpu s':>7}  note")
        for c in (c for c in cells if c.instance == inst.name):
            name = LABEL.get(c.policy, c.policy)
            if c.mean_cost is None:
                lines.append(f"  {name:<16}{'–':>12} {'':>10} {'':>10} {'':>8} {'':>7} "
                             f"{'':>7} {'':>7} {'':>7}  {c.note}")
                continue
            flag = "  BELOW THE BOUND" if c.below_bound else ""
            ratio = ("–" if c.ratio is None  # capped runs: the ratio is a lower bound
                     else f"{'≥' if c.n_capped else ''}{c.ratio:.2f}").rjust(8)
            lines.append(f"  {name:<16}{_num(c.mean_cost, 12)} {_num(c.ci95)} {_num(c.bound)} "
                         f"{ratio} {c.n_errors:>3}/{c.n_runs:<3} {c.n_capped:>3}/{c.n_runs:<3} "
                         f"{c.wall_time:>7.1f} {c.cpu_time:>7.1f}  {c.note}{flag}")
    return "\n".join(lines)


def format_summary(summary) -> str:
    lines = ["\nper policy: median ratio mean cost / bound over the instances with a bound"]
    for s in summary:
        name = LABEL.get(s["policy"], s["policy"])
        med = f"{s['median_ratio']:.2f}" if s["median_ratio"] is not None else "–"
        if not s["n_cells"]:
            lines.append(f"  {name:<16} not run")
            continue
        below = ("below the bound on " + ", ".join(s["below_bound"]) + " — a bug or not "
                 "δ-correct there") if s["below_bound"] else "never below the bound"
        if s["median_ratio"] is None:
            below = "no bound available"
        if s["given_gamma"]:
            below = "given γ, outside the bound's model: not checked"
        lines.append(f"  {name:<16} median ratio {med:>8} over {s['n_bounded']} cell(s); {below}")
    return "\n".join(lines)


def _plot(plot_file, per_delta, instances, bounds):
    plt = pyplot()
    n = len(instances)
    cols = min(3, n)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.5 * cols, 3.6 * rows), squeeze=False)
    for ax, inst in zip(axes.flat, instances, strict=False):
        deltas = sorted(per_delta, reverse=True)
        x = [np.log(1.0 / d) for d in deltas]
        for policy in dict.fromkeys(c.policy for cs in per_delta.values() for c in cs):
            y = [next((c.mean_cost for c in per_delta[d] if c.instance == inst.name
                       and c.policy == policy), None) for d in deltas]
            if all(v is not None for v in y):
                ax.plot(x, y, marker="o", label=LABEL.get(policy, policy))
        b = bounds[inst.name]
        if b.c_star is not None:
            ax.plot(x, [b.value(d) for d in deltas], "k--", label=f"C*·log(1/2.4δ) ({b.kind})")
        ax.set_yscale("log")
        ax.set_title(inst.name, fontsize=9)
        ax.set_xlabel("log(1/δ)")
        ax.set_ylabel("mean cost")
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(plot_file)


@bench.command("lower-bound")
@click.option("--runs", default=100, show_default=True, type=click.IntRange(min=2),
              help="Seeded runs per (instance, policy), paired by index.")
@click.option("--delta", default=0.01, show_default=True,
              type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="Confidence δ of every policy and of the bound.")
@click.option("--families", default="wang,mfgrad,mfucb,iise", show_default=True,
              help="Comma-separated subset of " + ", ".join(FAMILIES) + ".")
@click.option("--policies", default=",".join(POLICIES), show_default=True,
              help="Comma-separated subset of " + ", ".join(POLICIES + EXTRA_POLICIES)
              + " (MF-GRAD-top, run only when named: MF-GRAD whose GLR rule also tests the "
              "top fidelity alone, δ/2 each).")
@click.option("--instances", default=None,
              help="Comma-separated instance names to keep (default: every instance of the "
                   "families).")
@click.option("--instance-dir", type=click.Path(exists=True, file_okay=False),
              help="Folder with iise_*.json and mfgrad_*.json; without it those families "
                   "are skipped.")
@click.option("--max-pulls", default=10**6, show_default=True, type=click.IntRange(min=1),
              help="Pull cap per run of LUCB, GRAD and MF-GRAD (the elimination policies "
                   "always stop); capped runs are counted.")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Run r draws its noise from (seed, r); seeds the mfucb instances.")
@click.option("--n-jobs", default=1, show_default=True, type=N_JOBS,
              help="joblib workers over the cells, the slowest started first (-1 = all "
                   "cores); results do not depend on it.")
@click.option("--learning-rate", "learning_rate", default=str(GRAD_LEARNING_RATE),
              show_default=True,
              help="GRAD's and MF-GRAD's learning rate: a constant (0.25 = MF-GRAD-CONST, the "
                   "authors' runs) or 'theory' for 1/sqrt(n+1).")
@click.option("--gradient", default="code", show_default=True,
              type=click.Choice(STATISTICS),
              help="MF-GRAD's sub-gradient: the max-min of the pair values, as the authors' "
                   "code ('code'), or of their GLR excess ('glr', which leaves out the cost "
                   "of projecting infeasible empirical columns).")
@click.option("--json", "as_json", is_flag=True, help="Print the cells as JSON.")
@click.option("--plot", "plot_file", type=PLOT_FILE,
              help="Also run δ = 0.1, 0.01, 0.001 and save cost against log(1/δ) with the "
                   "bound's line (needs matplotlib: pip install 'mftune[plot]').")
def lower_bound(runs, delta, families, policies, instances, instance_dir, max_pulls, seed, n_jobs,
                learning_rate, gradient, as_json, plot_file):
    """Mean cost of each policy against the bound C*(µ)·log(1/(2.4δ)) (Poiani et al. 2024).

    One table per family: mean cost ± 95% CI, the bound, their ratio, wrong
    answers (among the runs that stopped) and runs that hit --max-pulls. A mean cost
    below a valid
    bound is flagged: the policy has a bug or is not δ-correct at that δ.
    """
    if learning_rate == "theory":
        lr = None
    else:
        try:
            lr = float(learning_rate)
        except ValueError:
            lr = -1.0
        if not lr > 0:
            raise click.BadParameter(f"{learning_rate!r} is neither a positive number nor "
                                     "'theory'", param_hint="--learning-rate")
    fams = parse_list(families, FAMILIES, "--families")
    pols = parse_list(policies, POLICIES + EXTRA_POLICIES, "--policies")
    loaded = {fam: load_family(fam, instance_dir, seed) for fam in fams}
    if instances is not None:
        keep = [v.strip() for v in instances.split(",") if v.strip()]
        known = [i.name for insts, _ in loaded.values() for i in insts]
        bad = [k for k in keep if k not in known]
        if bad or not keep:
            raise click.BadParameter(f"{', '.join(bad) or 'empty'} not among the instances of "
                                     f"the families: {', '.join(known)}",
                                     param_hint="--instances")
        loaded = {f: ([i for i in insts if i.name in keep], note)
                  for f, (insts, note) in loaded.items()}
    every = [i for fam in fams for i in loaded[fam][0]]
    if not every:  # every family skipped: say why instead of an empty table
        raise click.UsageError("nothing to run: " + "; ".join(note for _, note in loaded.values()))
    start = time.perf_counter()
    bounds = {i.name: instance_bound(i.env) for i in every}
    n_cells = len(every) * len(pols)
    finished = []

    def progress(cell):
        finished.append(cell)
        click.echo(f"[{len(finished)}/{n_cells} cells, {time.perf_counter() - start:.0f} s] "
                   f"{cell.instance} {LABEL.get(cell.policy, cell.policy)}: "
                   f"{cell.wall_time:.1f} s wall, {cell.cpu_time:.1f} s CPU", err=True)

    all_cells = run_cells(every, pols, delta, runs, seed, n_jobs, max_pulls, bounds, lr,
                          on_cell=progress, gradient=gradient)
    out, texts = [], []
    for fam in fams:
        instances, note = loaded[fam]
        cells = [c for c in all_cells if c.family == fam]
        out.append({"family": fam, "note": note,
                    "instances": [{"name": i.name, "K": i.env.n_arms, "M": i.env.n_fidelities,
                                   "mu_tilde": list(i.mu_tilde), "bound": bounds[i.name].__dict__}
                                  for i in instances],
                    "cells": [c.to_dict() for c in cells]})
        texts.append(format_family(fam, instances, bounds, cells, note) if instances
                     else f"\n== {note}")  # the note names the family
    summary = summarise(all_cells)
    wall = time.perf_counter() - start
    if as_json:
        click.echo(json.dumps({"families": out, "summary": summary, "runs": runs,
                               "delta": delta, "seed": seed, "max_pulls": max_pulls,
                               "grad_learning_rate": lr, "mfgrad_gradient": gradient,
                               "wall_time": wall}, indent=2))
    else:
        click.echo(f"Cost against the lower bound C*(µ)·log(1/(2.4δ)) — delta={delta:g}, "
                   f"{runs} runs, seed {seed}, pull cap {max_pulls} (LUCB, GRAD, MF-GRAD), "
                   f"GRAD/MF-GRAD learning rate {learning_rate}, MF-GRAD gradient {gradient}")
        for text in texts:
            click.echo(text)
        click.echo(format_summary(summary))
        cpu = sum(c.cpu_time for c in all_cells)
        click.echo(f"total wall time: {wall:.1f} s (CPU time of the cells: {cpu:.1f} s)")
    if plot_file:
        per_delta = {delta: all_cells}
        for d in PLOT_DELTAS:
            if d != delta:
                per_delta[d] = run_cells(every, pols, d, runs, seed, n_jobs, max_pulls,
                                         bounds, lr, gradient=gradient)
        _plot(plot_file, per_delta, every, bounds)
        if not as_json:
            click.echo(f"figure written to {plot_file}")
