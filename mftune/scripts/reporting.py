"""How a training script reports its score to mftune: :func:`report`.

Kept apart from :mod:`mftune.scripts.runner` (which runs the scripts) so that a
training script's ``from mftune import report`` imports nothing but the
standard library: every pull starts a fresh interpreter, and importing the
driver and the policies (scipy, scikit-learn) would cost each run seconds on
a busy machine.
"""

from __future__ import annotations

import json
import math
import os

__all__ = ["SCORE_PREFIX", "report"]

SCORE_PREFIX = "mftune-score:"


def report(score: float, cost: float | None = None) -> None:
    """Report a run's score to mftune (call it once, at the end of a training script).

    Writes ``{"score": score}`` (and ``"cost"``) atomically to the file named by
    ``MFTUNE_RESULT_FILE``; outside mftune (no such variable) prints the line
    ``mftune-score: <score>`` instead.

    Parameters
    ----------
    score : float
        The objective value, in the study's direction (maximised or minimised).
    cost : float, optional
        The run's cost; by default mftune uses the measured wall time.
    """
    for name, v in (("score", score), ("cost", cost)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                              or not math.isfinite(v)):
            raise ValueError(f"{name} must be a finite number; got {v!r}")
    path = os.environ.get("MFTUNE_RESULT_FILE")
    if not path:
        print(f"{SCORE_PREFIX} {float(score)!r}", flush=True)
        return
    payload = {"score": float(score)}
    if cost is not None:
        payload["cost"] = float(cost)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(payload, fh)
    os.replace(tmp, path)
