"""Simulated bandits, test functions and real tuning tasks with known answers."""

from .bandits import (
    BernoulliBandit,
    GaussianBandit,
    SimulatedBandit,
    TruncatedGaussianBandit,
    load_instance,
)
from .iise_domains import make_iise_synthetic, synthetic_a, synthetic_b, yahtzee
from .mf_functions import MFFunction, get_mf_function
from .simulate import BanditEvaluator, SimRecord, simulate_policy, simulate_runs
from .tasks import KDEBandwidth, SVMMagic, TuningTask

__all__ = [
    "BanditEvaluator",
    "BernoulliBandit",
    "GaussianBandit",
    "KDEBandwidth",
    "MFFunction",
    "SVMMagic",
    "SimRecord",
    "SimulatedBandit",
    "TruncatedGaussianBandit",
    "TuningTask",
    "get_mf_function",
    "load_instance",
    "make_iise_synthetic",
    "simulate_policy",
    "simulate_runs",
    "synthetic_a",
    "synthetic_b",
    "yahtzee",
]
