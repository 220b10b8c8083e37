"""Argument checks shared by policies, environments and the tuner.

Every check raises :class:`ValueError` whose message names the argument and
states the values it accepts, so a user can fix the call without reading code.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "check_batch_size",
    "check_bias",
    "check_costs",
    "check_delta",
    "check_n_jobs",
    "check_positive",
    "check_probability",
    "check_theta",
    "check_variance_proxy",
    "useful_fidelities",
]


def _as_1d_float(value, name: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 1-D sequence of numbers; got {value!r}") from exc
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"{name} must be a non-empty 1-D sequence of numbers; got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain finite numbers only; got {arr.tolist()}")
    return arr


def check_delta(delta, name: str = "delta") -> float:
    """Return ``delta`` as a float after checking ``0 < delta < 1``."""
    return check_probability(delta, name, open_interval=True)


def check_probability(value, name: str, *, open_interval: bool = True) -> float:
    """Check a probability-like scalar.

    Parameters
    ----------
    value : float
        The value to check.
    name : str
        Argument name used in the error message.
    open_interval : bool, default=True
        Require ``0 < value < 1`` when true, ``0 <= value <= 1`` otherwise.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number in (0, 1); got {value!r}")
    value = float(value)
    ok = (0.0 < value < 1.0) if open_interval else (0.0 <= value <= 1.0)
    if not ok:
        interval = "(0, 1)" if open_interval else "[0, 1]"
        raise ValueError(f"{name} must lie in the interval {interval}; got {value!r}")
    return value


def check_positive(value, name: str, *, strict: bool = True) -> float:
    """Check a real scalar that must be positive (``> 0``, or ``>= 0`` if not strict)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite real number; got {value!r}")
    value = float(value)
    if (strict and value <= 0) or (not strict and value < 0):
        bound = "> 0" if strict else ">= 0"
        raise ValueError(f"{name} must be {bound}; got {value!r}")
    return value


def check_batch_size(value, name: str = "batch_size") -> int:
    """Check a number of pulls per batch: an integer ``>= 1``."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral | np.integer)
            or value < 1):
        raise ValueError(f"{name} must be an integer >= 1; got {value!r}")
    return int(value)


def check_n_jobs(value, name: str = "n_jobs"):
    """Check a joblib worker count: None or a non-zero integer (-1: every core)."""
    if value is not None and (isinstance(value, bool) or not isinstance(
            value, numbers.Integral | np.integer) or value == 0):
        raise ValueError(f"{name} must be None or a non-zero integer (-1: every core); "
                         f"got {value!r}")
    return value


def check_variance_proxy(value, n_fidelities: int) -> tuple[float, np.ndarray | None]:
    """A sub-Gaussian σ²: one positive number, or one per fidelity.

    Returns
    -------
    variance_proxy : float
        The number, or the largest of the per-fidelity values.
    per_fidelity : ndarray of shape (n_fidelities,) or None
        The per-fidelity values (``None`` for one number).
    """
    if np.ndim(value) == 0:
        return check_positive(value, "variance_proxy"), None
    per = np.asarray(value, dtype=float)
    if per.shape != (n_fidelities,) or not np.all(np.isfinite(per)) or np.any(per <= 0):
        raise ValueError(f"variance_proxy must be a positive number or one per "
                         f"fidelity ({n_fidelities}); got {value!r}")
    return float(per.max()), per


def check_costs(costs, name: str = "costs", n_fidelities: int | None = None) -> np.ndarray:
    """Check per-fidelity costs: positive and strictly increasing.

    A fidelity that is not cheaper than the next one is dominated (the next one
    is at least as informative for no more cost), so it is refused here rather
    than silently kept.
    """
    arr = _as_1d_float(costs, name)
    if n_fidelities is not None and arr.size != n_fidelities:
        raise ValueError(
            f"{name} must have one entry per fidelity ({n_fidelities}); got {arr.size}"
        )
    if np.any(arr <= 0):
        raise ValueError(f"{name} must be positive (> 0); got {arr.tolist()}")
    if np.any(np.diff(arr) <= 0):
        bad = int(np.flatnonzero(np.diff(arr) <= 0)[0])
        raise ValueError(
            f"{name} must be strictly increasing (lambda_1 < ... < lambda_M); fidelity {bad} "
            f"costs {arr[bad]!r} and fidelity {bad + 1} costs {arr[bad + 1]!r}, so fidelity "
            f"{bad} is dominated — remove it"
        )
    return arr


def check_bias(bias, name: str = "xi", n_fidelities: int | None = None,
               monotone: bool = True) -> np.ndarray:
    """Check bias bounds: non-negative, last entry 0, strictly decreasing if ``monotone``.

    The top fidelity is the target, so its bias is 0. With ``monotone``, a
    lower fidelity whose bias bound is not larger than the next one's is
    refused as dominated; without it, the bounds are taken as given (the
    elimination policies skip the fidelities they make useless).
    """
    arr = _as_1d_float(bias, name)
    if n_fidelities is not None and arr.size != n_fidelities:
        raise ValueError(
            f"{name} must have one entry per fidelity ({n_fidelities}); got {arr.size}"
        )
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative; got {arr.tolist()}")
    if arr[-1] != 0:
        raise ValueError(
            f"{name} must end with 0 (the top fidelity is unbiased); got {arr.tolist()}"
        )
    if monotone and np.any(np.diff(arr) >= 0):
        bad = int(np.flatnonzero(np.diff(arr) >= 0)[0])
        raise ValueError(
            f"{name} must be strictly decreasing to 0 ({name}_1 > ... > {name}_M = 0); "
            f"fidelity {bad} has {arr[bad]!r} and fidelity {bad + 1} has {arr[bad + 1]!r}, "
            f"so fidelity {bad} is dominated — remove it"
        )
    return arr


def check_theta(theta, name: str = "theta", n_fidelities: int | None = None) -> np.ndarray:
    """Check an (M, K) matrix of means (rows are fidelities, last row the truth)."""
    try:
        arr = np.asarray(theta, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an (M, K) array of numbers") from exc
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 2:
        raise ValueError(
            f"{name} must be a 2-D array of shape (n_fidelities, n_arms) with at least "
            f"2 arms; got shape {arr.shape}"
        )
    if n_fidelities is not None and arr.shape[0] != n_fidelities:
        raise ValueError(
            f"{name} must have one row per fidelity ({n_fidelities}); got {arr.shape[0]} rows"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain finite numbers only")
    return arr


def useful_fidelities(bias) -> np.ndarray:
    """Indices of the fidelities a bias bound makes worth their cost, cheapest first.

    With costs strictly increasing, fidelity ``m`` is useful when its bound is
    below every cheaper fidelity's: one whose bound is not below a cheaper
    one's costs more and tells no more, so it is skipped. The last index kept
    is the cheapest fidelity bounded by 0 (the top, unless a cheaper one is
    as good as the target). Bounds within ``1e-12 + 1e-9 max(bias)`` of each
    other count as equal, and as 0 below that (the rounding of bounds
    computed from means).

    Parameters
    ----------
    bias : array-like of shape (M,)
        Non-negative bias bounds ending in 0, in any order.

    Returns
    -------
    ndarray of int
    """
    b = np.asarray(bias, dtype=float)
    tol = 1e-12 + 1e-9 * float(b.max())
    b = np.where(b <= tol, 0.0, b)
    return np.flatnonzero(b < np.minimum.accumulate(np.r_[np.inf, b[:-1]]) - tol)
