"""mftune: hyperparameter tuning with multi-fidelity bandits."""

from __future__ import annotations

__version__ = "0.1.0"

from .driver import Evaluator, Outcome, Outcomes, RunResult, run  # noqa: E402
from .policies import (  # noqa: E402
    IISE,
    MFE,
    IISEGamma,
    Policy,
    Pulls,
    SuccessiveElimination,
)
from .script import report  # noqa: E402

__all__ = [
    "IISE",
    "MFE",
    "Evaluator",
    "IISEGamma",
    "Outcome",
    "Outcomes",
    "Policy",
    "Pulls",
    "RunResult",
    "SuccessiveElimination",
    "__version__",
    "report",
    "run",
]
