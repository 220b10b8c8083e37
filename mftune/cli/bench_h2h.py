"""``mftune bench head-to-head``: MFTuner against RandomizedSearchCV, halving, Optuna and SMAC."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import click
import numpy as np

from ._groups import OUT_FILE, bench, parse_list


@bench.command("head-to-head")
@click.option("--tasks", default="svm-magic-15k,hgb-letter,svm-magic-2k,kde", show_default=True,
              help="Comma-separated subset of svm-magic-15k, hgb-letter, svm-magic-2k, kde, "
                   "svm-letter, mlp-letter.")
@click.option("--seeds", default=None, type=click.IntRange(min=1),
              help="Seeds 0..SEEDS-1 (splits, candidates, samplers) [default: 5]; with "
                   "--report, only those seeds' rows are summarised.")
@click.option("--methods", default=None,
              help="Comma-separated subset of MFTuner, RandomizedSearchCV, "
                   "HalvingRandomSearchCV, Optuna TPE, Optuna TPE+Hyperband, SMAC, and the "
                   "references Centre (the space's centre, cross-validated once), "
                   "Optuna TPE (with centre) and SMAC (with centre) (any case) "
                   "[default: all but the references].")
@click.option("--budget", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Wall budget in seconds for every task, instead of each task's own "
                   "(for short smoke runs; the report's held shares are of this budget).")
@click.option("--space-shift", type=click.FloatRange(0, 1, max_open=True), default=0.0,
              show_default=True,
              help="Move every numeric range of each task's space up by this share of its "
                   "width (on its scale), for every method: the tasks' spaces are drawn "
                   "around good values, and 0.25 takes their centre off them.")
@click.option("--algorithms", default="", show_default=True,
              help="Extra MFTuner algorithms run beside the default, e.g. iise,lucb-c,mf-gp-ucb.")
@click.option("--grid-file", type=OUT_FILE, default=None,
              help="JSON of dense-grid optima (see --dense-grid); targets come from it.")
@click.option("--dense-grid", "dense", type=click.IntRange(min=2), default=None,
              help="Compute the dense grid (N points per dimension) per task and seed into "
                   "--grid-file, then exit.")
@click.option("--json", "json_out", type=OUT_FILE, default=None,
              help="Write the rows and the per task and method summary as JSON.")
@click.option("--baseline", type=click.Path(exists=True, dir_okay=False), multiple=True,
              help="The --json report of an earlier run: its targets are used, and its rows "
                   "of the methods not run now join the report (repeat for several: e.g. the "
                   "two reports of a run split over two processes); refused when its rows "
                   "ran on other data than this run's.")
@click.option("--report", "report", type=click.Path(exists=True, dir_okay=False),
              multiple=True,
              help="Print the table of an earlier --json report (repeat for several: their "
                   "rows joined), summarised by this version, and exit; runs nothing.")
@click.option("--tuner-params", default=None,
              help="A JSON object of extra MFTuner keywords for its rows, e.g. "
                   "'{\"algorithm_params\": {\"top_glr\": \"paired-t\"}}'.")
def head_to_head(tasks, seeds, methods, budget, space_shift, algorithms, grid_file, dense,
                 json_out, baseline, report, tuner_params):
    """Time-to-target and held test scores of MFTuner and its peers, side by side.

    Every method runs one evaluation at a time, one after the other, in this
    process, with the task's wall/cost budget. The target is the dense-grid
    optimum's test score (with --grid-file) or the best any method reached,
    minus the task's tolerance. Per task and method: seeds on target, median
    time-to-target, and the median test score of the recommendation held at
    25 %, 50 % and 100 % of the budget. Optuna and SMAC rows need
    `pip install 'mftune[bench]'` (skipped otherwise).
    """
    from ..benchmarks.head_to_head import (
        METHODS,
        REFERENCES,
        TASKS,
        _data,
        data_source,
        dense_grid,
        format_table,
        report_json,
        run_task,
        shift_space,
    )
    from ..policies.registry import available

    if report:
        rows = []
        for path in report:
            rows += _report(path)[1]
            _same_data(rows, None, "--report", path)
        click.echo(format_table([r for r in rows if seeds is None or r.seed < seeds]))
        return
    seeds = 5 if seeds is None else seeds
    chosen = parse_list(tasks, tuple(TASKS), "--tasks")
    extra = _tuner_params(tuner_params)
    if space_shift and (baseline or grid_file):
        raise click.BadParameter("the targets of --baseline and --grid-file are for the tasks' "
                                 "own spaces; use --space-shift without them",
                                 param_hint="--space-shift")
    by_case = {m.lower(): m for m in METHODS + REFERENCES}
    meths = METHODS if methods is None else parse_list(
        ",".join(by_case.get(m.strip().lower(), m.strip()) for m in methods.split(",")),
        METHODS + REFERENCES, "--methods")
    algos = parse_list(algorithms, tuple(a for a in available() if a != "auto"),
                       "--algorithms") if algorithms else ()
    if dense is not None:
        if grid_file is None:
            raise click.BadParameter("--dense-grid needs --grid-file", param_hint="--grid-file")
        out = json.loads(Path(grid_file).read_text()) if Path(grid_file).exists() else []
        for name in chosen:
            for seed in range(seeds):
                if any(e["task"] == name and e["seed"] == seed for e in out):
                    continue
                X, X_te, y, y_te, _ = _data(TASKS[name], seed)
                entry = dense_grid(TASKS[name], seed, dense, X, y, X_te, y_te)
                click.echo(f"{name} seed {seed}: best of {entry['n_configs']} "
                           f"{entry['best_params']} test {entry['best_test']:.4f}")
                out.append(entry)
                Path(grid_file).write_text(json.dumps(out, indent=1))
        return
    if grid_file and not Path(grid_file).exists():
        raise click.BadParameter(f"no file {grid_file!r}: compute it with --dense-grid N",
                                 param_hint="--grid-file")
    targets, every, source, clash = {}, [], {}, []
    now = {n: data_source(TASKS[n]) for n in chosen}
    for path in baseline:  # every row, to check its data; those of the methods run now go
        more, rows = _report(path, "--baseline")
        every += rows
        _same_data(every, now, "--baseline", path)
        for key, value in more.items():
            old = targets.get(key)
            if old is not None and value is not None and not np.isclose(old, value):
                clash.append(f"{key[0]} seed {key[1]}: {old:.4f} ({source[key]}), "
                             f"{value:.4f} ({path})")
            targets[key], source[key] = value, path
    if clash:  # e.g. a run split over two processes, each with its own methods' target
        click.echo(f"note: the --baseline reports give different targets for {len(clash)} "
                   f"(task, seed), e.g. {clash[0]}: the last report's is used for the methods "
                   "run now, and each report's rows keep the times to target measured "
                   "against its own", err=True)
    missing = [(n, s) for n in chosen for s in range(seeds) if (n, s) not in targets]
    if baseline and missing:
        raise click.BadParameter(f"has no target for (task, seed) {missing}",
                                 param_hint="--baseline")
    rows, start = [], time.perf_counter()
    for name in chosen:
        task = TASKS[name] if budget is None else replace(TASKS[name], budget=budget)
        if space_shift:
            task = replace(task, space=shift_space(task.space, space_shift))
        shifted = f"; space shifted by {space_shift:g}: {task.space}" if space_shift else ""
        click.echo(f"{name}: {task.description}; budget {task.budget:g} s{shifted}")
        for seed in range(seeds):
            rows.extend(run_task(task, seed, meths, algos, grid_file, log=click.echo,
                                 tuner_params=extra, target=targets.get((name, seed))))
    rows += [r for r in every if r.method not in meths and r.task in chosen and r.seed < seeds]
    click.echo(format_table(rows))
    click.echo(f"total wall time: {time.perf_counter() - start:.0f} s")
    if json_out:
        Path(json_out).write_text(json.dumps(report_json(rows), indent=1))


def _same_data(rows, data, option, path) -> None:
    """:func:`~mftune.benchmarks.head_to_head.check_same_data` once ``path``'s rows joined
    ``rows``, as a usage error of ``option`` naming it."""
    from ..benchmarks.head_to_head import check_same_data

    try:
        check_same_data(rows, data)
    except ValueError as exc:
        raise click.BadParameter(f"{path}: {exc}", param_hint=option) from None


def _report(path, option="--report"):
    """An earlier ``--json`` report's targets and every row (:func:`load_baseline`), or a
    usage error naming ``option`` when the file is not one."""
    from ..benchmarks.head_to_head import load_baseline

    try:
        return load_baseline(path, ())
    except (ValueError, KeyError, TypeError) as exc:  # JSONDecodeError is a ValueError
        raise click.BadParameter(f"{path!r} is not a --json report of this command ({exc})",
                                 param_hint=option) from None


#: MFTuner keywords the task and the benchmark set themselves (not for --tuner-params).
FIXED = ("estimator", "space", "fidelity", "fidelities", "n_candidates", "cv", "budget",
         "refit", "random_state")


def _tuner_params(text) -> dict | None:
    """``--tuner-params``: a JSON object of ``MFTuner`` keywords, checked by name."""
    if text is None:
        return None
    import inspect

    from ..search.tuner import MFTuner

    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--tuner-params") from exc
    allowed = sorted(set(inspect.signature(MFTuner).parameters) - set(FIXED))
    if not isinstance(value, dict) or set(value) - set(allowed):
        bad = sorted(set(value) - set(allowed)) if isinstance(value, dict) else value
        raise click.BadParameter(f"must be a JSON object of MFTuner keywords among "
                                 f"{', '.join(allowed)}; got {bad!r}",
                                 param_hint="--tuner-params")
    from ..benchmarks.head_to_head import TASKS
    from ..search.params import check_params

    probe = MFTuner(TASKS["kde"].estimator, TASKS["kde"].space, **value)
    try:  # the values too, before any run (the constructor checks them at fit)
        check_params(probe)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--tuner-params") from None
    return value
