"""Fidelity schedules: the resource levels a tuner evaluates at."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["geometric_schedule"]


def geometric_schedule(min_resources, max_resources, factor=3) -> list[int]:
    """Levels ``min, min·factor, min·factor², ...`` capped by, and ending at, ``max``.

    The same rule as scikit-learn's successive halving: each level is
    ``factor`` times the previous one; the last level is ``max_resources``
    (a level closer than ``factor`` to it is dropped, so consecutive levels
    always differ by a meaningful ratio).

    Parameters
    ----------
    min_resources, max_resources : int
        Smallest and largest level, ``1 <= min < max``.
    factor : float, default=3
        Ratio between consecutive levels, ``> 1``.

    Returns
    -------
    list of int
        Strictly increasing levels.
    """
    for label, v in (("min_resources", min_resources), ("max_resources", max_resources)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or v < 1:
            raise ValueError(f"{label} must be a number >= 1; got {v!r}")
    if not min_resources < max_resources:
        raise ValueError(
            f"min_resources must be < max_resources; got {min_resources!r} >= {max_resources!r}"
        )
    if isinstance(factor, bool) or not isinstance(factor, numbers.Real) or not factor > 1:
        raise ValueError(f"factor must be a number > 1; got {factor!r}")
    n_levels = int(np.floor(np.log(max_resources / min_resources) / np.log(factor) + 1e-9))
    levels = [int(round(min_resources * factor**k)) for k in range(n_levels + 1)]
    levels = [lv for lv in levels if lv * factor <= max_resources * (1 + 1e-9)]
    return sorted(set(levels)) + [int(max_resources)]
