"""Shared output of the study commands: the progress line, JSON lines, the result block."""

from __future__ import annotations

import json
import sys
import time

import click

from ..study.summary import study_summary


def fmt(x, digits: int = 4) -> str:
    """Compact number formatting (``-`` for missing)."""
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


class Progress:
    """Event sink of a :class:`~mftune.scripts.study.StudyRunner`: status line, JSON lines, or none.

    Parameters
    ----------
    mode : {"line", "json", "quiet"}
    """

    def __init__(self, mode: str = "line"):
        self.mode = mode
        self.runner = None
        self.tty = sys.stderr.isatty()
        self.start = time.monotonic()
        self.n = self.failed = 0
        self.cost = 0.0
        self._last = 0.0

    def __call__(self, event: dict) -> None:
        if event["type"] == "pull":
            self.n += 1
            self.failed += event["status"] != "done"
            self.cost += event["cost"] or 0.0
        if self.mode == "json":
            click.echo(json.dumps({**event, **self._snapshot()}, default=str))
            return
        if self.mode == "quiet":
            return
        if event["type"] == "calibrated":
            s = event["settings"]
            est = ", ".join(f"{k}={_short(s[k])}" for k in s.get("estimated", []))
            self._clear()
            click.echo(f"calibration done: {est or 'nothing to estimate'}", err=True)
            return
        now = time.monotonic()
        if self.tty and (event["type"] != "pull" or now - self._last > 0.2):
            self._last = now
            click.echo("\r" + self._line().ljust(100)[:120], nl=False, err=True)
        elif not self.tty and event["type"] == "batch":
            key = (event["fidelity"], event["survivors"])
            if key != getattr(self, "_key", None) or now - self._last > 10:
                self._key, self._last = key, now
                click.echo(self._line(), err=True)

    def _snapshot(self) -> dict:
        pol = getattr(self.runner, "policy", None)
        snap = {"pulls": self.n, "failed": self.failed, "cost": round(self.cost, 4),
                "elapsed": round(time.monotonic() - self.start, 3)}
        if pol is not None:
            snap["survivors"] = int(pol.active.sum())
            arm = int(pol.recommend())
            counts = pol.stats.counts[:, arm]
            if counts.any():
                m = int(counts.nonzero()[0][-1])
                snap["best_arm"] = arm
                snap["best_score"] = float(self.runner.study.sign * pol.stats.sums[m, arm]
                                           / counts[m])
        return snap

    def _line(self) -> str:
        s = self._snapshot()
        pol = getattr(self.runner, "policy", None)
        parts = [f"{s['pulls']} pulls", f"{s['failed']} failed", f"cost {s['cost']:.1f} s"]
        if pol is None:
            parts.append("calibrating")
        else:
            k = pol.n_arms
            fid = getattr(pol, "fidelity_", None)
            if fid is not None:
                parts.append(f"fidelity {fid + 1}/{pol.n_fidelities}")
            parts.append(f"survivors {s['survivors']}/{k}")
            if "best_score" in s:
                parts.append(f"best {s['best_score']:.4g} (arm {s['best_arm']})")
        return " | ".join(parts)

    def _clear(self) -> None:
        if self.tty and self.mode == "line":
            click.echo("\r" + " " * 100 + "\r", nl=False, err=True)

    def finish(self) -> None:
        """End the status line."""
        if self.tty and self.mode == "line":
            click.echo("", err=True)


def _short(v):
    if isinstance(v, list):
        return "[" + ", ".join(f"{x:.3g}" for x in v) + "]"
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def echo_result(path, reason: str, mode: str, wall: float, error: str | None = None) -> dict:
    """Print the study's result (text or one JSON line) and return the summary."""
    summary = study_summary(path)
    if error:
        summary["error"] = error
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
