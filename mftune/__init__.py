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
from .space import Categorical, Integer, Real, Space  # noqa: E402
from .tuner import MFTuner  # noqa: E402

__all__ = [
    "Categorical",
    "IISE",
    "Integer",
    "MFTuner",
    "Real",
    "Space",
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
    "run",
]
