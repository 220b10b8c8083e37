"""Name → policy lookup for studies (the command line and the study store).

A study records its algorithm by name and its settings as JSON; a resumed
study rebuilds the policy with :func:`make_policy`. This is a thin adapter
over the one algorithm registry, :mod:`mftune.algorithms` (shared with
:class:`mftune.MFTuner`): a policy registered there is available here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .base import Policy

__all__ = ["POLICIES", "PolicyEntry", "make_policy"]


@dataclass(frozen=True)
class PolicyEntry:
    """What a study needs to know of an algorithm.

    Attributes
    ----------
    needs : tuple of str
        Bias bounds the policy needs (``"xi"`` or ``"gamma"``), estimated by
        the calibration when the space file does not give them.
    description : str
    """

    needs: tuple[str, ...]
    description: str


class _Entries(Mapping):
    """Read-only view of :data:`mftune.algorithms.REGISTRY` as :class:`PolicyEntry`."""

    @staticmethod
    def _registry():
        from .. import algorithms

        return algorithms.REGISTRY

    def __getitem__(self, name: str) -> PolicyEntry:
        entry = self._registry()[name]
        return PolicyEntry(() if entry.bias is None else (entry.bias,), entry.description)

    def __iter__(self):
        return iter(self._registry())

    def __len__(self) -> int:
        return len(self._registry())


POLICIES: Mapping[str, PolicyEntry] = _Entries()


def make_policy(name: str, n_arms: int, settings: dict, random_state=None) -> Policy:
    """Build the policy ``name`` for ``n_arms`` arms from JSON settings.

    Parameters
    ----------
    name : str
        A key of :data:`POLICIES`.
    n_arms : int
    settings : dict
        ``costs`` (list, strictly increasing), ``sigma`` (noise scale; the
        policies get ``σ²``), ``delta``, ``epsilon`` (or None), the bounds
        listed in the entry's ``needs`` and ``batch_size`` (default 1: the
        pulls a batch-rule policy asks at once; stored with the study so a
        resume asks the same batches) and ``futility_switch`` (default False:
        IISE / IISE-γ with the papers' switch rule; MFTuner's studies store True),
        ``cost_balance`` (default None, the papers' rule; MFTuner's studies
        store theirs), ``best_first`` (default False, the papers' rounds;
        MFTuner's studies store True) and its ``chunk_cost``
        and ``algorithm_params`` (MFTuner's, when given).
    random_state : int or None

    Returns
    -------
    Policy
    """
    from .. import algorithms

    if name not in algorithms.REGISTRY:
        raise ValueError(f"algorithm must be one of {', '.join(sorted(POLICIES))}; got {name!r}")

    def arr(key):
        value = settings.get(key)
        return None if value is None else np.asarray(value, dtype=float)

    ctx = algorithms.PolicyContext(
        n_arms=int(n_arms), costs=arr("costs"), xi=arr("xi"), gamma=arr("gamma"),
        variance_proxy=float(settings["sigma"]) ** 2, delta=float(settings["delta"]),
        epsilon=settings.get("epsilon"), random_state=random_state,
        batch_size=int(settings.get("batch_size", 1)),
        futility_switch=bool(settings.get("futility_switch", False)),
        cost_balance=settings.get("cost_balance"),
        best_first=bool(settings.get("best_first", False)),
        chunk_cost=settings.get("chunk_cost"),
        params=dict(settings.get("algorithm_params") or {}),
    )
    return algorithms.make_policy(name, ctx)
