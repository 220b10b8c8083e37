"""``mftune bench mfucb-figure2``: Kandasamy et al. (2016), Figure 2 (with a [RECON] generator)."""

from __future__ import annotations

import json
import time

import click
import numpy as np

from ..benchmarks.mfucb_problems import FIGURE2_PROBLEMS, make_problem, run_figure2
from ._groups import N_JOBS, PLOT_FILE, Finite, bench, parse_list, pyplot

POLICIES = ("UCB", "MF-UCB", "elimination")
#: Arm groups of the plays table, by rank of the true mean (fractions of K, worst first).
GROUPS = ((0.0, 0.5), (0.5, 0.8), (0.8, 0.95), (0.95, 0.99), (0.99, 1.0))


def _group_plays(plays: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Mean plays per arm per fidelity in each rank group, shape (groups, M)."""
    order = np.argsort(mu)
    K = mu.size
    out = []
    for lo, hi in GROUPS:
        idx = order[int(round(lo * K)):max(int(round(hi * K)), int(round(lo * K)) + 1)]
        out.append(plays[:, idx].mean(axis=1))
    return np.array(out)


@bench.command("mfucb-figure2")
@click.option("--runs", default=10, show_default=True, type=click.IntRange(min=2),
              help="Runs per problem and policy (paired by index).")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Seeds the [RECON] instances and the runs' noise.")
@click.option("--n-jobs", default=1, show_default=True, type=N_JOBS,
              help="joblib workers over runs (-1 = all cores).")
@click.option("--policies", default="UCB,MF-UCB", show_default=True,
              help="Comma-separated subset of " + ", ".join(POLICIES) + ".")
@click.option("--problems", default=",".join(p.name for p in FIGURE2_PROBLEMS),
              show_default=True, help="Comma-separated subset of the four panels.")
@click.option("--capitals", "n_capitals", default=10, show_default=True,
              type=click.IntRange(min=2), help="Points of the capital grid per panel.")
@click.option("--rho", default=2.0, show_default=True,
              type=Finite(min=0, min_open=True),
              help="Exploration parameter ρ of UCB and MF-UCB [RECON default].")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option("--plot", "plot_file", type=PLOT_FILE,
              help="Save regret-vs-capital panels and plays per arm per fidelity "
                   "(needs matplotlib: pip install 'mftune[plot]').")
def mfucb_figure2(runs, seed, n_jobs, policies, problems, n_capitals, rho, as_json, plot_file):
    """Regret of UCB vs MF-UCB at a grid of capitals on the four Figure 2 problems.

    Panel sizes, costs and reward laws are the paper's; the means, bias bounds
    ζ^(m) = 0.2·2^{-(m-1)/2}, noise σ = 0.2 and ρ = 2 are a [RECON] (the paper's
    Appendix C was not available; it plots curves only, so there are no
    published numbers to print). Regret: Kandasamy et al.'s Λµ* − Σλ^(m_t)µ_{I_t}
    and Wang et al.'s (Λ/λ^(1))µ* − Σµ_{I_t}.
    """
    chosen = parse_list(policies, POLICIES, "--policies")
    names = parse_list(problems, tuple(p.name for p in FIGURE2_PROBLEMS), "--problems")
    probs = [p for p in FIGURE2_PROBLEMS if p.name in names]
    start = time.perf_counter()
    results = run_figure2(probs, chosen, runs, seed, n_jobs, n_capitals, rho)
    wall = time.perf_counter() - start
    if as_json:
        click.echo(json.dumps({"results": [r.to_dict() for r in results], "runs": runs,
                               "seed": seed, "rho": rho, "wall_time": wall}, indent=2))
    else:
        click.echo(f"Kandasamy et al. (2016) Figure 2 — mean regret over {runs} runs, rho={rho}. "
                   "[RECON] instances (App. C unavailable): mu^(M)~U(0,1), "
                   "zeta^(m)=0.2*2^{-(m-1)/2}, Gaussian sigma=0.2 / Bernoulli. Paper: curves "
                   "only (MF-UCB below UCB on all four).")
        for prob in probs:
            env = make_problem(prob, seed)
            rows = [r for r in results if r.problem == env.name]
            click.echo(f"\n{env.name}: K={prob.n_arms}, costs={list(prob.costs)}")
            click.echo("  Kandasamy regret (Λµ* − Σλµ), mean ± sd:")
            click.echo(f"  {'capital':>10}" + "".join(f"{r.policy:>22}" for r in rows))
            for g, cap in enumerate(rows[0].capitals):
                vals = "".join(f"{r.kandasamy[:, g].mean():>13.0f} ± "
                               f"{r.kandasamy[:, g].std(ddof=1):<6.0f}" for r in rows)
                click.echo(f"  {cap:>10.0f}{vals}")
            last = {r.policy: r for r in rows}
            click.echo("  Wang regret ((Λ/λ1)µ* − Σµ) at the largest capital: " + ", ".join(
                f"{p} {r.wang[:, -1].mean():.0f}" for p, r in last.items()))
            if "UCB" in last and "MF-UCB" in last:
                ok = last["MF-UCB"].kandasamy[:, -1].mean() < last["UCB"].kandasamy[:, -1].mean()
                click.echo(f"  MF-UCB below UCB at the largest capital: {'yes' if ok else 'NO'}")
            if "MF-UCB" in last:
                grp = _group_plays(last["MF-UCB"].plays, env.mu)
                click.echo("  MF-UCB mean plays per arm at each fidelity, arms grouped by rank of "
                           "µ^(M) (worst first):")
                click.echo("  " + f"{'rank group':<14}" + "".join(f"{'m=' + str(m + 1):>9}"
                                                             for m in range(grp.shape[1])))
                for (lo, hi), g in zip(GROUPS, grp, strict=True):
                    click.echo("  " + f"{f'{int(lo*100)}-{int(hi*100)}%':<14}"
                               + "".join(f"{v:>9.1f}" for v in g))
        click.echo(f"\ntotal wall time: {wall:.1f} s")
    if plot_file:
        plt = pyplot()
        fig, axes = plt.subplots(2, len(probs), figsize=(4.5 * len(probs), 7), squeeze=False)
        for j, prob in enumerate(probs):
            env = make_problem(prob, seed)
            ax = axes[0, j]
            for r in (r for r in results if r.problem == env.name):
                m, sd = r.kandasamy.mean(axis=0), r.kandasamy.std(axis=0, ddof=1)
                ax.plot(r.capitals, m, marker="o", label=r.policy)
                ax.fill_between(r.capitals, m - sd, m + sd, alpha=0.2)
            ax.set_title(f"K={prob.n_arms}, costs={list(prob.costs)} [RECON]", fontsize=8)
            ax.set_xlabel("capital Λ")
            ax.set_ylabel("regret")
            ax.legend(fontsize=8)
            ax = axes[1, j]
            mf = [r for r in results if r.problem == env.name and r.policy == "MF-UCB"]
            if mf:
                plays = mf[0].plays[:, np.argsort(env.mu)]
                bottom = np.zeros(plays.shape[1])
                for m in range(plays.shape[0]):
                    ax.bar(np.arange(plays.shape[1]), plays[m], bottom=bottom, width=1.0,
                           label=f"m={m + 1}")
                    bottom += plays[m]
                ax.set_yscale("symlog")
                ax.set_xlabel("arms sorted by µ^(M)")
                ax.set_ylabel("MF-UCB plays")
                ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(plot_file)
        click.echo(f"figure written to {plot_file}")
