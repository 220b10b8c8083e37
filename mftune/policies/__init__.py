"""Multi-fidelity bandit policies speaking the ask/tell protocol."""

from .base import ArmStats, Policy, PolicySummary, Pulls
from .elimination import IISE, MFE, IISEGamma, PhasedElimination, SuccessiveElimination
from .lucb import MultiFidelityLUCB
from .mf_ucb import MFUCB, UCB
from .regret_elimination import WangElimination
from .ugape import UGapEb, UGapEc

__all__ = [
    "IISE",
    "MFE",
    "MFUCB",
    "UCB",
    "ArmStats",
    "IISEGamma",
    "MultiFidelityLUCB",
    "PhasedElimination",
    "Policy",
    "PolicySummary",
    "Pulls",
    "SuccessiveElimination",
    "UGapEb",
    "UGapEc",
    "WangElimination",
]
