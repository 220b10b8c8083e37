"""``mftune bench parallel``: pulls per second with ``n_jobs=1`` and ``n_jobs=2``."""

from __future__ import annotations

import click

from ._groups import bench


@bench.command("parallel")
@click.option("--seeds", default=6, show_default=True, type=click.IntRange(min=1),
              help="Searches 0..SEEDS-1 (candidates and splits), each at every n_jobs.")
@click.option("--max-pulls", default=200, show_default=True, type=click.IntRange(min=10),
              help="Cap on the pulls of one search (calibration not counted).")
@click.option("--n-candidates", default=64, show_default=True, type=click.IntRange(min=2))
@click.option("--jobs", default="1,2", show_default=True,
              help="Comma-separated n_jobs values; the first is the reference of the ratio.")
def parallel(seeds, max_pulls, n_candidates, jobs):
    """MFTuner on SVM-MAGIC at each n_jobs, side by side: pulls per second and the ratio.

    The same search (fixed costs, same seed, so the same pulls) is timed at
    every n_jobs in one process. Run it on an otherwise idle machine, at
    normal priority, and quote the load average it prints.
    """
    from ..benchmarks.parallel_speedup import format_rows, run_speedup

    try:
        values = [int(v) for v in jobs.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter("must be comma-separated integers", param_hint="--jobs") \
            from None
    if not values or any(v == 0 for v in values):
        raise click.BadParameter("must be non-zero integers", param_hint="--jobs")
    rows, info = run_speedup(seeds=range(seeds), max_pulls=max_pulls,
                             n_candidates=n_candidates, jobs=values, log=click.echo)
    click.echo(format_rows(rows, info))
