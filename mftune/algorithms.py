"""The ``algorithm=`` registry of :class:`mftune.MFTuner`, and the ``"auto"`` rule.

Each entry maps a name to a factory building a policy from a
:class:`PolicyContext` (the tuner's candidates, fidelities, measured costs,
σ, bias bounds, δ, ε and seed). Adding a policy is one :func:`register` call::

    register("lucb-a", lambda ctx: LUCBExplore(ctx.n_arms, ctx.costs, ctx.xi, ...),
             bias="xi", description="LUCB-EXPLORE-A (Wang et al. 2023)")

Names that are planned but whose policy has not landed yet (``lucb-*``,
``mf-gp-ucb``, ``gp-ucb``) raise a ``ValueError`` listing what is available;
they are never mapped silently to another algorithm.

The ``"auto"`` rule (:func:`choose_algorithm`)
----------------------------------------------
1. One fidelity: ``"se"`` (nothing to trade).
2. Several fidelities and bounds estimated from a calibration (the default):
   ``"iise-gamma"``. Lower fidelities of a tuning problem shift every
   candidate's score in the same direction (less data or fewer iterations
   hurt all of them), so the spread of the biases γ is much smaller than
   twice the largest bias ξ, and IISE-γ's elimination margin ``γ_m`` is
   narrower than IISE's ``2ξ_m``. Measured on the calibrations of
   ``mftune demo`` and ``mftune bench tuner-vs-halving``: see docs/tuner.md.
3. Several fidelities and user-given ξ: ``"iise"`` (its bounds are the ones given).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .policies.elimination import IISE, IISEGamma, SuccessiveElimination

__all__ = ["PLANNED", "REGISTRY", "PolicyContext", "choose_algorithm", "make_policy", "register"]


@dataclass
class PolicyContext:
    """What a policy factory may use.

    Attributes
    ----------
    n_arms : int
    costs : ndarray of shape (M,)
        Running estimates of the seconds per pull at each fidelity.
    xi, gamma : ndarray of shape (M,) or None
        Bias bounds (None when the mode provides none).
    variance_proxy : float
        σ² of the rewards.
    delta : float
    epsilon : float or None
    random_state : int or None
    points : ndarray of shape (n_arms, d) or None
        Unit-cube encodings of the candidates (for the GP policies).
    space : Space
    batch_size : int
        Parallel workers the batch is run on (the tuner's effective
        ``n_jobs``); factories of policies with a batch rule pass it on as
        their ``batch_size`` (round-based policies ignore it).
    """

    n_arms: int
    costs: np.ndarray
    xi: np.ndarray | None
    gamma: np.ndarray | None
    variance_proxy: float
    delta: float
    epsilon: float | None
    random_state: int | None
    points: np.ndarray | None = None
    space: object = None
    batch_size: int = 1


@dataclass
class Entry:
    """A registered algorithm: its factory, the bias bound it uses, a description."""

    factory: Callable[[PolicyContext], object]
    bias: str | None  # "xi", "gamma" or None
    description: str


REGISTRY: dict[str, Entry] = {}
# Names accepted by the issue that wait for their policy to land.
PLANNED = ("lucb-a", "lucb-b", "lucb-c", "mf-gp-ucb", "gp-ucb")


def register(name: str, factory, *, bias: str | None, description: str) -> None:
    """Add (or replace) an algorithm of the registry."""
    if bias not in (None, "xi", "gamma"):
        raise ValueError(f"bias must be None, 'xi' or 'gamma'; got {bias!r}")
    REGISTRY[name] = Entry(factory, bias, description)


register("se", lambda c: SuccessiveElimination(
    c.n_arms, c.costs, delta=c.delta, variance_proxy=c.variance_proxy, epsilon=c.epsilon,
    random_state=c.random_state), bias=None,
    description="successive elimination at the top fidelity only (Poiani et al. 2022)")
register("iise", lambda c: IISE(
    c.n_arms, c.costs, c.xi, delta=c.delta, variance_proxy=c.variance_proxy,
    epsilon=c.epsilon, random_state=c.random_state), bias="xi",
    description="IISE with bias bounds ξ (Poiani et al. 2022, Alg. 1)")
register("iise-gamma", lambda c: IISEGamma(
    c.n_arms, c.costs, c.gamma, delta=c.delta, variance_proxy=c.variance_proxy,
    epsilon=c.epsilon, random_state=c.random_state), bias="gamma",
    description="IISE-γ with bounds γ on the bias variation (Poiani et al. 2022, Sec. 5)")


def available() -> list[str]:
    """Names accepted by ``algorithm=`` right now."""
    return ["auto", *REGISTRY]


def check_algorithm(name: str) -> Entry:
    """Return the entry of ``name`` or raise a ValueError listing the available ones."""
    if name in REGISTRY:
        return REGISTRY[name]
    if name in PLANNED:
        raise ValueError(
            f"algorithm={name!r} is not available in this build (its policy has not landed "
            f"yet); available algorithms: {available()}"
        )
    raise ValueError(f"algorithm must be one of {available()} or a policy object; got {name!r}")


def choose_algorithm(n_fidelities: int, bias_mode: str) -> tuple[str, str]:
    """The ``"auto"`` rule: return ``(name, reason)`` (see module docstring)."""
    if n_fidelities == 1:
        return "se", "a single fidelity: successive elimination at that fidelity"
    if bias_mode == "known":
        return "iise", f"{n_fidelities} fidelities with user-given bias bounds xi: IISE"
    if "iise-gamma" in REGISTRY:
        return "iise-gamma", (
            f"{n_fidelities} fidelities with {bias_mode} bounds: IISE-gamma, whose elimination "
            "margin is the measured spread of the biases (gamma), narrower than IISE's 2*xi "
            "when lower fidelities shift all candidates alike")
    return "iise", f"{n_fidelities} fidelities: IISE"


def make_policy(name: str, ctx: PolicyContext):
    """Build the policy ``name`` from ``ctx``."""
    return check_algorithm(name).factory(ctx)
