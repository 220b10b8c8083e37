"""Multi-fidelity bandit policies speaking the ask/tell protocol."""

from .base import ArmStats, Policy, PolicySummary, Pulls
from .continuous import ContinuousPolicy
from .direct_search import DirectSearch
from .ei import ExpectedImprovement
from .elimination import IISE, MFE, IISEGamma, PhasedElimination, SuccessiveElimination
from .gp_ucb import GPUCB
from .mf_gp_ucb import MFGPUCB
from .mf_naive import MFNaive
from .random_search import RandomSearch

__all__ = [
    "GPUCB",
    "IISE",
    "MFGPUCB",
    "MFE",
    "ArmStats",
    "ContinuousPolicy",
    "DirectSearch",
    "ExpectedImprovement",
    "IISEGamma",
    "MFNaive",
    "PhasedElimination",
    "Policy",
    "PolicySummary",
    "Pulls",
    "RandomSearch",
    "SuccessiveElimination",
]
