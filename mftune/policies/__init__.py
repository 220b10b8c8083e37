"""Multi-fidelity bandit policies speaking the ask/tell protocol."""

from .base import ArmStats, Policy, PolicySummary, Pulls
from .continuous import ContinuousPolicy
from .direct_search import DirectSearch
from .ei import ExpectedImprovement
from .elimination import PhasedElimination
from .gp_ucb import GPUCB
from .iise import IISE, MFE, IISEGamma, SuccessiveElimination
from .lucb import MultiFidelityLUCB
from .mf_gp_ucb import MFGPUCB
from .mf_grad import GRAD, MFGRAD
from .mf_naive import MFNaive
from .mf_ucb import MFUCB, UCB
from .random_search import RandomSearch
from .registry import POINT_POLICIES
from .regret_elimination import WangElimination
from .ugape import UGapEb, UGapEc

__all__ = [
    "GPUCB",
    "GRAD",
    "IISE",
    "MFGPUCB",
    "MFGRAD",
    "MFE",
    "MFUCB",
    "UCB",
    "ArmStats",
    "ContinuousPolicy",
    "DirectSearch",
    "ExpectedImprovement",
    "IISEGamma",
    "MFNaive",
    "POINT_POLICIES",
    "MultiFidelityLUCB",
    "PhasedElimination",
    "Policy",
    "PolicySummary",
    "Pulls",
    "RandomSearch",
    "SuccessiveElimination",
    "UGapEb",
    "UGapEc",
    "WangElimination",
]
