"""Multi-fidelity bandit policies speaking the ask/tell protocol."""

from .base import ArmStats, Policy, PolicySummary, Pulls
from .elimination import IISE, MFE, IISEGamma, PhasedElimination, SuccessiveElimination

__all__ = [
    "IISE",
    "MFE",
    "ArmStats",
    "IISEGamma",
    "PhasedElimination",
    "Policy",
    "PolicySummary",
    "Pulls",
    "SuccessiveElimination",
]
