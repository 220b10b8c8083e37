"""``mftune status``, ``mftune report`` and ``mftune export``: read a study file."""

from __future__ import annotations

import json
import sqlite3
import sys

import click

from ..study.store import StudyFileError, StudyStore
from ._groups import PLOT_FILE, main, pyplot
from ._study_output import damaged, fmt


def _check_study(study) -> None:
    if not StudyStore.exists(study):
        raise click.ClickException(f"{study}: no study there "
                                   f"({StudyStore.missing_reason(study)})")


def _summary(study) -> dict:
    from ..engine.summary import study_summary  # replays the study: the engine, on demand

    _check_study(study)
    try:
        return study_summary(study)
    except StudyFileError as exc:  # its message names the path
        raise click.ClickException(str(exc)) from None
    except sqlite3.DatabaseError as exc:
        raise damaged(study, exc) from None
    except (ValueError, RuntimeError) as exc:
        raise click.ClickException(f"{study}: {exc}") from None


def _table(header, rows) -> str:
    cells = [[str(h) for h in header]] + [[fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt_setting(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(fmt(float(v)) for v in value) + "]"
    return fmt(value)


@main.command()
@click.argument("study", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def status(study, as_json):
    """Where the study in STUDY stands: runs and cost per fidelity, arms alive, best so far."""
    s = _summary(study)
    if as_json:
        click.echo(json.dumps(s, indent=2, default=str))
        return
    st = s["study"]
    last = st.get("last_reason")
    stopped = f" (last run stopped: {last})" if last and s["status"] != "finished" else ""
    click.echo(f"{study}: {st['algorithm']}, {st['direction']} {st['objective']}, "
               f"{st['n_candidates']} configurations, seed {st['seed']} — {s['status']}"
               + stopped)
    rows = [[f["value"], f["pulls"], f["failed"], f["running"], f["pending"], f["cost"],
             f["arms"], f["eliminated"]] for f in s["fidelities"]]
    click.echo(_table([st["fidelity"], "pulls", "failed", "running", "pending", "cost_s",
                       "arms", "eliminated"], rows))
    click.echo(f"total: {s['pulls']} pulls ({s['failed']} failed, {s['running']} running), "
               f"cost {s['cost']:.2f} s")
    if s["calibration"]:
        c = s["calibration"]
        click.echo(f"calibration: {c['pulls']}/{c['planned']} pulls, cost {c['cost']:.2f} s")
    if s["waves"]:  # a search with waves: what each ended wave brought
        click.echo("waves ended: " + ", ".join(
            f"{w['wave']} (+{w['new']} candidates)" if w["reason"] is None
            else f"{w['wave']} (no more: {w['reason']})" for w in s["waves"]))
    if s.get("settings"):
        se = s["settings"]
        est = set(se.get("estimated", []))
        parts = [f"{k}={_fmt_setting(se[k])}{' (estimated)' if k in est else ''}"
                 for k in ("sigma", "xi", "gamma", "costs") if se.get(k) is not None]
        click.echo("settings: delta=" + fmt(se["delta"]) + ", " + ", ".join(parts))
    if s.get("error"):
        click.echo(f"error: {s['error']}")
    fails = s["failures"]
    if fails["count"]:
        click.echo(f"failed pulls: {fails['count']}; last: {fails['last']}")
        others = [c for c in fails["causes"] if c["cause"] != fails["last"]]
        for c in others[:2]:
            click.echo(f"  also: {c['cause']} ({c['count']}x)")
    if s.get("best"):
        b = s["best"]
        fval = None if b["fidelity"] is None else st["values"][b["fidelity"]]
        gp = s.get("evaluated") is not None  # a GP study eliminates nothing
        click.echo(f"evaluated: {s['evaluated']} of {st['n_candidates']} configurations (the "
                   "policy proposes them as it goes)" if gp
                   else f"alive: {s['alive']} of {st['n_candidates']}")
        click.echo(f"best so far: arm {b['arm']} {json.dumps(b['config'])} "
                   f"{st['objective']}={fmt(b['score'])} at {st['fidelity']}={fval} "
                   f"(n={b['n']})")
        click.echo(s["statement"])


@main.command()
@click.argument("study", type=click.Path(dir_okay=False))
@click.option("--plot", "plot_file", type=PLOT_FILE,
              help="Also draw the figures into FILE (needs matplotlib: mftune[plot]).")
def report(study, plot_file):
    """Cost per fidelity, elimination timeline and best score vs cost of STUDY."""
    s = _summary(study)
    st = s["study"]
    total = s["cost"] or 1.0
    click.echo(f"cost per fidelity ({st['fidelity']}):")
    click.echo(_table([st["fidelity"], "pulls", "cost_s", "share_%"],
                      [[f["value"], f["pulls"], f["cost"], 100 * f["cost"] / total]
                       for f in s["fidelities"]]))
    if s["calibration"]:
        click.echo(f"(calibration: {s['calibration']['cost']:.2f} s included)")
    tl = s["timeline"]
    if tl:
        gp = s.get("evaluated") is not None
        what = "configurations evaluated" if gp else "survivors"
        click.echo(f"\n{'timeline' if gp else 'elimination timeline'} (one line per round "
                   f"where the {what} changed, and the last):")
        keep = [t for i, t in enumerate(tl) if i == 0 or i == len(tl) - 1
                or t["survivors"] != tl[i - 1]["survivors"]]
        click.echo(_table(["round", st["fidelity"], "evaluated" if gp else "survivors",
                           "cost_s", "best_arm",
                           "best_" + st["objective"]],
                          [[t["batch"], st["values"][t["fidelity"]], t["survivors"], t["cost"],
                            t["best_arm"], t["best_score"]] for t in keep]))
    if s.get("best"):
        click.echo(f"\n{s['statement']}")
    if plot_file:
        _plot(s, plot_file)
        click.echo(f"figure written to {plot_file}")


def _plot(s: dict, path) -> None:
    plt = pyplot()
    st = s["study"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    f = s["fidelities"]
    axes[0].bar([str(x["value"]) for x in f], [x["cost"] for x in f])
    axes[0].set(xlabel=st["fidelity"], ylabel="cost (s)", title="cost per fidelity")
    tl = s["timeline"]
    if tl:
        cost = [t["cost"] for t in tl]
        axes[1].step(cost, [t["survivors"] for t in tl], where="post")
        axes[1].set(xlabel="cumulative cost (s)", ylabel="configurations alive",
                    title="elimination timeline")
        axes[2].plot(cost, [t["best_score"] for t in tl], marker=".")
        axes[2].set(xlabel="cumulative cost (s)", ylabel=st["objective"],
                    title="best so far vs cost")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


@main.command()
@click.argument("study", type=click.Path(dir_okay=False))
@click.option("--csv", "csv_file", required=True, type=click.Path(dir_okay=False),
              help="CSV file to write (one row per run, with the parameters; "
                   "- for standard output).")
def export(study, csv_file):
    """Write every run of STUDY to a CSV file (``--csv -``: standard output)."""
    from ..engine.summary import export_csv, export_rows, write_csv

    _check_study(study)
    try:
        if csv_file == "-":
            header, rows = export_rows(study)
            write_csv(sys.stdout, header, rows)
            n = len(rows)
        else:
            n = export_csv(study, csv_file)
    except StudyFileError as exc:
        raise click.ClickException(str(exc)) from None
    except sqlite3.DatabaseError as exc:
        raise damaged(study, exc) from None
    click.echo(f"{n} rows written to {'standard output' if csv_file == '-' else csv_file}",
               err=csv_file == "-")
