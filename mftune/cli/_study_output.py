"""Shared output of the study commands: the progress line, JSON lines, the result block."""

from __future__ import annotations

import json

import click


def fmt(x, digits: int = 4) -> str:
    """Compact number formatting (``-`` for missing)."""
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def echo_result(path, reason: str, mode: str, wall: float, error: str | None = None,
                statement: str | None = None) -> dict:
    """Print the study's result (text or one JSON line) and return the summary."""
    from ..engine.summary import study_summary  # replays the study: the engine, on demand

    summary = study_summary(path)
    if error:
        summary["error"] = error
    if statement:
        summary["statement"] = statement
    summary["reason"] = reason
    summary["wall_time"] = wall
    if mode == "json":
        click.echo(json.dumps({"type": "result", **summary}, default=str))
        return summary
    best = summary.get("best")
    obj = summary["study"]["objective"]
    click.echo(f"study {path}: {summary['status']} ({reason}) — {summary['pulls']} pulls "
               f"({summary['failed']} failed), cost {summary['cost']:.1f} s, "
               f"wall {wall:.1f} s")
    if summary.get("error"):
        click.echo(f"error: {summary['error']}")
    if reason in ("budget", "max-pulls") and summary["status"] != "finished":
        opt = "--budget SECONDS" if reason == "budget" else "--max-pulls N"
        click.echo(f"stopped by the {reason} limit; continue with: mftune resume {path} {opt}")
    if best:
        fname = summary["study"]["fidelity"]
        fval = None if best["fidelity"] is None else summary["study"]["values"][best["fidelity"]]
        click.echo(f"best configuration (arm {best['arm']}): {json.dumps(best['config'])}")
        click.echo(f"{obj} = {fmt(best['score'])} ({summary['study']['direction']}) at "
                   f"{fname}={fval}, mean of {best['n']} run(s)")
        click.echo(summary["statement"])
    return summary


def damaged(study, exc) -> click.ClickException:
    """The error of a study file SQLite cannot read through (a damaged page, say)."""
    return click.ClickException(f"{study}: the study file is damaged and cannot be read "
                                f"({exc})")
