"""Multi-fidelity bandit policies speaking the ask/tell protocol.

The classes are imported from their modules when first used (PEP 562): a
module that needs only the protocol (``mftune.policies.base``), such as the
HTTP worker's, does not load the SciPy optimisers and distributions some
policies use.
"""

from __future__ import annotations

import importlib

#: Public name -> the module of this package that defines it.
_MODULES = {
    "ArmStats": "base",
    "Policy": "base",
    "PolicySummary": "base",
    "Pulls": "base",
    "ContinuousPolicy": "continuous",
    "DirectSearch": "direct_search",
    "ExpectedImprovement": "ei",
    "PhasedElimination": "elimination",
    "GPUCB": "gp_ucb",
    "IISE": "iise",
    "IISEGamma": "iise",
    "MFE": "iise",
    "SuccessiveElimination": "iise",
    "MultiFidelityLUCB": "lucb",
    "MFGPUCB": "mf_gp_ucb",
    "GRAD": "mf_grad",
    "MFGRAD": "mf_grad",
    "MFNaive": "mf_naive",
    "MFUCB": "mf_ucb",
    "UCB": "mf_ucb",
    "RandomSearch": "random_search",
    "POINT_POLICIES": "registry",
    "WangElimination": "regret_elimination",
    "UGapEb": "ugape",
    "UGapEc": "ugape",
}

__all__ = sorted(_MODULES)


def __getattr__(name: str):
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_MODULES[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
