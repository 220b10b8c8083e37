"""``mftune bench curves``: the default's cost against top-fidelity SE on learning-curve
instances."""

from __future__ import annotations

import json
import time

import click

from ..benchmarks.curves import CURVE_KINDS, METHODS, compare, summarise
from ._groups import N_JOBS, OUT_FILE, bench, parse_list


def format_summary(summary, reference: str) -> str:
    """One text table: a row per (kind, method)."""
    w = max([12, *(len(s["method"]) + 1 for s in summary)])
    rw = max(14, len(f"cost / {reference}") + 2)
    lines = [f"{'kind':<8}{'method':<{w}}{'runs':>5}{'median cost':>13}"
             f"{f'cost / {reference}':>{rw}}{'IQR':>14}{'<= 1':>6}{'top pulls':>10}"
             f"{'wrong':>7}{'certified':>10}"]
    for s in summary:
        iqr = f"{s['ratio_q25']:.2f}-{s['ratio_q75']:.2f}"
        lines.append(f"{s['kind']:<8}{s['method']:<{w}}{s['runs']:>5}{s['median_cost']:>13.4g}"
                     f"{s['median_ratio']:>{rw}.2f}{iqr:>14}{s['at_most_reference']:>6}"
                     f"{s['median_top_pulls']:>10.0f}{s['wrong']:>7}{s['certified']:>10}")
    return "\n".join(lines)


@bench.command("curves")
@click.option("--kinds", default=",".join(CURVE_KINDS), show_default=True,
              help=f"Instance kinds, comma-separated ({', '.join(CURVE_KINDS)}).")
@click.option("--runs", default=20, show_default=True, type=click.IntRange(1),
              help="Instances per kind (each run by every method).")
@click.option("--delta", default=0.05, show_default=True, type=click.FloatRange(0, 1,
              min_open=True, max_open=True), help="δ of every method.")
@click.option("--epsilon", default="0.005", show_default=True,
              help="ε of every method: a number > 0 or 'auto'.")
@click.option("--arms", "n_arms", default=16, show_default=True, type=click.IntRange(2),
              help="Candidates per instance.")
@click.option("--methods", default="default,se,se-mixture", show_default=True,
              help=f"Methods, comma-separated ({', '.join(METHODS)}).")
@click.option("--reference", default="se", show_default=True,
              type=click.Choice(sorted(METHODS)), help="The method ratios are taken to.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--n-jobs", default=1, show_default=True, type=N_JOBS,
              help="Processes over the runs.")
@click.option("--json", "json_out", type=OUT_FILE,
              help="Write every run and the summary to this file.")
def curves(kinds, runs, delta, epsilon, n_arms, methods, reference, seed, n_jobs, json_out):
    """Cost of the default search against successive elimination at the top fidelity.

    Simulated instances shaped like real learning curves (gaps 0.002-0.04
    between the leaders, bias 0.01-0.3 at the cheapest of 5 fidelities,
    noise 0.005-0.05, costs x4 per fidelity): "hard" (the cheaper
    fidelities scramble the leaders), "ranked" (they rank every candidate as
    the top does) and "trap" (flat curves and a late-blooming best). Every
    method runs on the same instances with the same delta and epsilon and
    estimates sigma, the bias bounds and the costs itself.
    """
    kinds = parse_list(kinds, CURVE_KINDS, "--kinds")
    methods = parse_list(methods, tuple(METHODS), "--methods")
    if reference not in methods:
        raise click.BadParameter(f"{reference!r} is not among --methods {methods}",
                                 param_hint="--reference")
    if epsilon != "auto":
        try:
            epsilon = float(epsilon)
        except ValueError:
            raise click.BadParameter(f"a number > 0 or 'auto'; got {epsilon!r}",
                                     param_hint="--epsilon") from None
        if not epsilon > 0:
            raise click.BadParameter(f"a number > 0 or 'auto'; got {epsilon!r}",
                                     param_hint="--epsilon")
    t0 = time.perf_counter()
    rows = compare(kinds, runs, delta=delta, epsilon=epsilon, n_arms=n_arms, seed=seed,
                   methods=methods, n_jobs=n_jobs)
    summary = summarise(rows, reference)
    click.echo(f"delta={delta:g}, epsilon={epsilon}, {n_arms} candidates, 5 fidelities, "
               f"{runs} instances per kind")
    click.echo(format_summary(summary, reference))
    click.echo(f"wall time {time.perf_counter() - t0:.0f} s")
    if json_out:
        with open(json_out, "w") as fh:
            json.dump({"summary": summary, "runs": rows}, fh, indent=1, default=str)
