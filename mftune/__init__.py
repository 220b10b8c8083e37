"""mftune: hyperparameter tuning with multi-fidelity bandits.

Public names are imported lazily (PEP 562), so ``import mftune`` stays cheap
for training scripts that only call :func:`mftune.report`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

# name -> module that defines it
_EXPORTS = {
    "MFTuner": "mftune.search.tuner",
    "Space": "mftune.space",
    "Real": "mftune.space",
    "Integer": "mftune.space",
    "Categorical": "mftune.space",
    "report": "mftune.scripts.reporting",
    "run": "mftune.engine.driver",
    "Evaluator": "mftune.engine.driver",
    "Outcome": "mftune.engine.driver",
    "Outcomes": "mftune.engine.driver",
    "RunResult": "mftune.engine.driver",
    "Policy": "mftune.policies.base",
    "Pulls": "mftune.policies.base",
    "SuccessiveElimination": "mftune.policies.iise",
    "IISE": "mftune.policies.iise",
    "IISEGamma": "mftune.policies.iise",
    "MFE": "mftune.policies.iise",
    "MultiFidelityLUCB": "mftune.policies.lucb",
    "MFUCB": "mftune.policies.mf_ucb",
    "UCB": "mftune.policies.mf_ucb",
    "UGapEb": "mftune.policies.ugape",
    "UGapEc": "mftune.policies.ugape",
    "MFGPUCB": "mftune.policies.mf_gp_ucb",
    "GPUCB": "mftune.policies.gp_ucb",
    "MFGRAD": "mftune.policies.mf_grad",
    "GRAD": "mftune.policies.mf_grad",
    "maximize": "mftune.search.optimize",
    "minimize": "mftune.search.optimize",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mftune' has no attribute {name!r}")


def __dir__():
    return __all__


if TYPE_CHECKING:  # pragma: no cover
    from .engine.driver import Evaluator, Outcome, Outcomes, RunResult, run  # noqa: F401
    from .policies import (  # noqa: F401
        GPUCB,
        GRAD,
        IISE,
        MFE,
        MFGPUCB,
        MFGRAD,
        MFUCB,
        UCB,
        IISEGamma,
        MultiFidelityLUCB,
        Policy,
        Pulls,
        SuccessiveElimination,
        UGapEb,
        UGapEc,
    )
    from .scripts.reporting import report  # noqa: F401
    from .search.optimize import maximize, minimize  # noqa: F401
    from .search.tuner import MFTuner  # noqa: F401
    from .space import Categorical, Integer, Real, Space  # noqa: F401
