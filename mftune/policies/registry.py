"""Name → policy lookup used by the command line and the study store.

A study records its algorithm by name and its settings as JSON; a resumed
study rebuilds the policy with :func:`make_policy`. Other finite-arm
policies plug in with one :func:`register_policy` call in their module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .base import Policy
from .elimination import IISE, IISEGamma, SuccessiveElimination

__all__ = ["POLICIES", "PolicyEntry", "make_policy", "register_policy"]


@dataclass(frozen=True)
class PolicyEntry:
    """A registered policy.

    Attributes
    ----------
    factory : callable
        ``factory(n_arms, settings, random_state) -> Policy``; ``settings``
        is a dict with ``costs``, ``sigma``, ``delta``, ``epsilon`` and the
        bias bounds the policy needs.
    needs : tuple of str
        Bias bounds the policy needs (``"xi"``, ``"gamma"``), estimated by the
        calibration when the space file does not give them.
    description : str
    """

    factory: Callable[[int, dict, object], Policy]
    needs: tuple[str, ...]
    description: str


POLICIES: dict[str, PolicyEntry] = {}


def register_policy(name: str, factory, needs=(), description: str = "") -> None:
    """Register a finite-arm policy under ``name`` (lower case, dashes)."""
    POLICIES[name] = PolicyEntry(factory, tuple(needs), description)


def make_policy(name: str, n_arms: int, settings: dict, random_state=None) -> Policy:
    """Build the policy ``name`` for ``n_arms`` arms from JSON settings.

    Parameters
    ----------
    name : str
        A key of :data:`POLICIES`.
    n_arms : int
    settings : dict
        ``costs`` (list, strictly increasing), ``sigma`` (noise scale; the
        policies get ``σ²``), ``delta``, ``epsilon`` (or None) and the bounds
        listed in the entry's ``needs``.
    random_state : int or None

    Returns
    -------
    Policy
    """
    if name not in POLICIES:
        raise ValueError(f"algorithm must be one of {', '.join(sorted(POLICIES))}; got {name!r}")
    return POLICIES[name].factory(int(n_arms), settings, random_state)


def _common(s: dict) -> dict:
    return {"delta": s["delta"], "variance_proxy": float(s["sigma"]) ** 2,
            "epsilon": s.get("epsilon"), }


register_policy(
    "se",
    lambda k, s, rs: SuccessiveElimination(k, np.asarray(s["costs"]), random_state=rs,
                                           **_common(s)),
    needs=(), description="successive elimination at the top fidelity only (reference)",
)
register_policy(
    "iise",
    lambda k, s, rs: IISE(k, np.asarray(s["costs"]), np.asarray(s["xi"]), random_state=rs,
                          **_common(s)),
    needs=("xi",), description="IISE, Poiani et al. 2022 (bias bounds xi)",
)
register_policy(
    "iise-gamma",
    lambda k, s, rs: IISEGamma(k, np.asarray(s["costs"]), np.asarray(s["gamma"]),
                               random_state=rs, **_common(s)),
    needs=("gamma",), description="IISE-gamma (bounds gamma on the bias variation)",
)
