"""Simulated bandits, test functions and real tuning tasks with known answers."""

from .bandits import (
    BernoulliBandit,
    GaussianBandit,
    SimulatedBandit,
    TruncatedGaussianBandit,
    load_instance,
)
from .iise_domains import make_iise_synthetic, synthetic_a, synthetic_b, yahtzee
from .simulate import BanditEvaluator, SimRecord, simulate_policy, simulate_runs

__all__ = [
    "BanditEvaluator",
    "BernoulliBandit",
    "GaussianBandit",
    "SimRecord",
    "SimulatedBandit",
    "TruncatedGaussianBandit",
    "load_instance",
    "make_iise_synthetic",
    "simulate_policy",
    "simulate_runs",
    "synthetic_a",
    "synthetic_b",
    "yahtzee",
]
