"""``mftune bench mfgrad-paper``: the experiments of Poiani et al. (NeurIPS 2024)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
import numpy as np

from ..benchmarks.lower_bound import LABEL
from ..benchmarks.mfgrad_paper import (
    REFERENCE,
    REFERENCE_PROPORTIONS,
    cost_comparison,
    decision_time,
    forever,
    proportions,
)
from ._groups import N_JOBS, bench, parse_list

PARTS = ("cost", "proportions", "forever", "timing")
COST_INSTANCES = tuple(REFERENCE)


def _ref(name, policy) -> str:
    r = REFERENCE.get(name, {}).get(policy)
    return f"{r[0]:g} ± {r[1]:g} ({r[2]})" if r else "–"


def _cost_text(cells, delta) -> list[str]:
    lines = [f"\nCost at delta={delta:g}: mean ± 95% CI (runs); reference = a re-run of the "
             "authors' code, not published numbers"]
    for name in dict.fromkeys(c.instance for c in cells):
        mine = [c for c in cells if c.instance == name]
        bound = next((c.bound for c in mine if c.bound is not None), None)
        ours = f"{bound:.4g}" if bound is not None else "n/a (no lower_bound module)"
        lines.append(f"{name}: C*·log(1/(2.4δ)) = {ours}; reference C*·ln(1/δ) = "
                     f"{REFERENCE.get(name, {}).get('bound_ln', '–')}")
        lines.append(f"  {'policy':<15}{'ours':>26} {'median':>10} {'ratio':>7} {'wrong':>7} "
                     f"{'capped':>7} {'reference':>22}  note")
        for c in mine:
            if c.mean_cost is None:
                lines.append(f"  {c.policy:<15}{'–':>26} {'':>10} {'':>7} {'':>7} {'':>7} "
                             f"{_ref(name, c.policy):>22}  {c.note}")
                continue
            # capped runs end at the cap: their mean, and its ratio, are lower bounds
            ratio = "–" if c.ratio is None else f"{'≥' if c.n_capped else ''}{c.ratio:.1f}"
            val = f"{c.mean_cost:.4g} ± {c.ci95:.3g} ({c.n_runs})"
            lines.append(f"  {c.policy:<15}{val:>26} {c.median_cost:>10.4g} {ratio:>7} "
                         f"{c.n_errors:>3}/{c.n_runs:<3} {c.n_capped:>3}/{c.n_runs:<3} "
                         f"{_ref(name, c.policy):>22}  {c.note}")
    return lines


def _prop_text(res) -> list[str]:
    lines = [f"\nCost proportions on {res['instance']} with stopping disabled, mean of "
             f"{res['runs']} runs (ω* from {res['omega_source']})"]
    if "note" in res:
        return lines + [f"  {res['note']}"]
    omega = np.asarray(res["omega_star"])
    best = int(np.argmax(omega[:, -1]))
    for label, rows in res["policies"].items():
        for n, row in rows.items():
            mean = np.asarray(row["mean"])
            ref = REFERENCE_PROPORTIONS.get(label, {}).get(int(n))  # measured at that count
            ref_txt = "–" if ref is None else f"{ref:.3f}"
            lines.append(f"  {label:<14} after {n:>7} pulls: best arm at M {mean[best, -1]:.3f} "
                         f"(ω* {omega[best, -1]:.4f}, reference {ref_txt}); other arms at f0 "
                         f"{', '.join(f'{v:.3f}' for v in np.delete(mean[:, 0], best))}; "
                         f"TV(mean, ω*) {row['tv_of_mean']:.3f}, mean TV {row['tv_mean']:.3f}")
    return lines


def _forever_text(rows) -> list[str]:
    lines = ["\nforever (δ = 0.01): LUCB-Explore-A/-B vs LUCB on the top fidelity; constants "
             "'authors' = the MF-GRAD repository's Gaussian LUCB, 'wang' = Wang et al.'s with "
             "σ = 1/2 (mftune's default)"]
    for r in rows:
        name = LABEL.get(r["policy"], "LUCB, top fidelity only")
        cost = (f"mean cost of stopped runs {r['mean_cost_stopped']:.4g}"
                if r["mean_cost_stopped"] is not None else "no run stopped")
        share = (f"share of pulls at fidelity 0 {r['share_fidelity0']:.3f}; "
                 if r["policy"] != "LUCB-top" else "")
        lines.append(f"  {r.get('convention', ''):<8}{name:<24} on {r['instance']:<12} "
                     f"{r['stopped']}/{r['runs']} stopped within {r['max_pulls']} pulls; {cost}; "
                     f"{r['wrong']} wrong; {share}reference: {r['reference']}")
    return lines


@bench.command("mfgrad-paper")
@click.option("--instance-dir", required=True, type=click.Path(exists=True, file_okay=False),
              help="Folder with the mfgrad_*.json instances.")
@click.option("--parts", default=",".join(PARTS), show_default=True,
              help="Comma-separated subset of " + ", ".join(PARTS) + ".")
@click.option("--instances", default="4x5", show_default=True,
              help="Cost part: comma-separated subset of " + ", ".join(COST_INSTANCES) + ".")
@click.option("--runs", default=1000, show_default=True, type=click.IntRange(min=2),
              help="Cost part: runs per (instance, policy).")
@click.option("--max-pulls", default=10**6, show_default=True, type=click.IntRange(min=1),
              help="Cost part: pull cap per run of GRAD and MF-GRAD.")
@click.option("--prop-runs", default=100, show_default=True, type=click.IntRange(min=1),
              help="Proportions part: runs (the paper: 100).")
@click.option("--prop-pulls", default=100_000, show_default=True,
              type=click.IntRange(min=10_000), help="Proportions part: pulls per run "
              "(proportions are read after 10^4 pulls and at the end).")
@click.option("--forever-runs", default=10, show_default=True, type=click.IntRange(min=1),
              help="Forever part: runs per procedure.")
@click.option("--forever-cap", default=10**6, show_default=True, type=click.IntRange(min=1),
              help="Forever part: pull cap per run.")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Run r draws its noise from (seed, r).")
@click.option("--n-jobs", default=1, show_default=True, type=N_JOBS,
              help="joblib workers over runs (-1 = all cores).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def mfgrad_paper(instance_dir, parts, instances, runs, max_pulls, prop_runs, prop_pulls,
                 forever_runs, forever_cap, seed, n_jobs, as_json):
    """MF-GRAD paper: cost comparison, 5x2 cost proportions vs ω*, LUCB on "forever".

    The paper gives figures only; the reference values printed beside ours
    are re-runs of the authors' code (docs/benchmarks.md).
    """
    chosen = parse_list(parts, PARTS, "--parts")
    names = parse_list(instances, COST_INSTANCES, "--instances")
    needed = {"cost": names, "proportions": ["5x2"], "forever": ["forever", "lucb_only_M"],
              "timing": ["4x5"]}
    missing = sorted({f"mfgrad_{n}.json" for part in chosen for n in needed[part]
                      if not (Path(instance_dir) / f"mfgrad_{n}.json").exists()})
    if missing:
        raise click.BadParameter(f"no {', '.join(missing)} in {instance_dir!r}",
                                 param_hint="--instance-dir")
    start = time.perf_counter()
    out = {"seed": seed}
    if "cost" in chosen:
        cells = cost_comparison(instance_dir, names, runs, seed, n_jobs, max_pulls)
        out["cost"] = [c.to_dict() for c in cells]
    if "proportions" in chosen:
        out["proportions"] = proportions(instance_dir, prop_runs, (10_000, prop_pulls)
                                         if prop_pulls > 10_000 else (10_000,), seed, n_jobs)
    if "forever" in chosen:
        out["forever"] = forever(instance_dir, forever_runs, forever_cap, seed, n_jobs)
    if "timing" in chosen:
        out["timing"] = decision_time(instance_dir, seed=seed)
    out["wall_time"] = time.perf_counter() - start
    if as_json:
        click.echo(json.dumps(out, indent=2))
        return
    click.echo("Poiani et al. (NeurIPS 2024), Optimal Multi-Fidelity Best-Arm Identification")
    lines = []
    if "cost" in out:
        lines += _cost_text(cells, 0.01)
    if "proportions" in out:
        lines += _prop_text(out["proportions"])
    if "forever" in out:
        lines += _forever_text(out["forever"])
    if "timing" in out:
        t = out["timing"]
        lines.append(f"\nMF-GRAD decision time per pull (ask + tell, one run at a time) on "
                     f"{t['instance']}: median {1e3 * t['median_s']:.2f} ms, mean "
                     f"{1e3 * t['mean_s']:.2f} ms, 90% {1e3 * t['p90_s']:.2f} ms, CPU mean "
                     f"{1e3 * t['cpu_mean_s']:.2f} ms over "
                     f"{t['pulls']} pulls ({t['runs']} runs); the authors' Python: about 15 ms")
    click.echo("\n".join(lines))
    click.echo(f"total wall time: {out['wall_time']:.1f} s")
