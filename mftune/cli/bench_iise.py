"""``mftune bench iise-table1``: Table 1 of Poiani et al. (2022)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from ..benchmarks.iise_table1 import DOMAINS, INSTANCE_FILES, format_table1, run_table1
from ._groups import N_JOBS, bench, parse_list


@bench.command("iise-table1")
@click.option("--runs", default=100, show_default=True, type=click.IntRange(min=2),
              help="Independent runs per domain (paired by index across algorithms).")
@click.option("--domains", default=",".join(DOMAINS), show_default=True,
              help="Comma-separated subset of " + ", ".join(DOMAINS) + ".")
@click.option("--instance-dir", type=click.Path(exists=True, file_okay=False),
              help="Folder with the authors' instances (iise_*.json).")
@click.option("--generated", is_flag=True,
              help="Generate the synthetic instances from --seed instead (Yahtzee is exact).")
@click.option("--mode", type=click.Choice(["as_run", "script", "clean"]), default="as_run",
              show_default=True, help="Generator variant for --generated instances.")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Seed of the generated instances and of the runs' noise.")
@click.option("--n-jobs", default=-1, show_default=True, type=N_JOBS,
              help="joblib workers over runs (-1 = all cores).")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
def iise_table1(runs, domains, instance_dir, generated, mode, seed, n_jobs, as_json):
    """Cost of MFE, SE, IISE and IISE-γ as % of SE, mean ± 95% CI, δ = 0.001.

    Prints our value beside the paper's, the wrong answers over the runs and
    the wall time. Rows marked mfe-phase-skip used the simulator-only MFE
    shortcut that reads the true means (see mftune.benchmarks.simulate).
    """
    if instance_dir and generated:
        raise click.UsageError("--instance-dir and --generated are mutually exclusive")
    if not instance_dir and not generated:
        raise click.UsageError("give --instance-dir DIR (the authors' instances) or --generated")
    chosen = parse_list(domains, DOMAINS, "--domains")
    missing = [INSTANCE_FILES[d] for d in chosen
               if instance_dir and not (Path(instance_dir) / INSTANCE_FILES[d]).exists()]
    if missing:
        raise click.BadParameter(f"no {', '.join(missing)} in {instance_dir!r} (choose "
                                 "--domains, or --generated)", param_hint="--instance-dir")
    start = time.perf_counter()
    rows = run_table1(chosen, runs, instance_dir, seed, n_jobs, mode)
    wall = time.perf_counter() - start
    if as_json:
        click.echo(json.dumps({"rows": [r.to_dict() for r in rows], "wall_time": wall,
                               "runs": runs, "seed": seed,
                               "source": instance_dir or f"generated:{mode}"}, indent=2))
        return
    source = (f"instances from {instance_dir}" if instance_dir
              else f"generated ({mode}, seed {seed})")
    click.echo(f"IISE Table 1 reproduction — {runs} runs, delta=0.001, {source}")
    click.echo(format_table1(rows))
    click.echo(f"total wall time: {wall:.1f} s")
