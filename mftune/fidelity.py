"""Fidelity schedules: the resource levels a tuner evaluates at."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["geometric_schedule", "level_is_number", "min_subset_size", "n_samples_schedule",
           "stratified_subset"]


def level_is_number(value) -> bool:
    """Whether a fidelity level is a real number (its cost prior is then its ratio)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


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


def min_subset_size(y, n_splits: int | None = None) -> int:
    """Smallest training subset for which every class appears once in every fold.

    Training subsets are drawn inside a cross-validation training fold, so a
    subset needs at least one row of each class (``n_classes``) — and each
    class must have at least ``n_splits`` rows overall, or some training fold
    misses it whatever the subset size.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    n_splits : int, optional
        Number of cross-validation folds (checked against the rarest class).

    Returns
    -------
    int
        ``n_classes``.
    """
    y = np.asarray(y)
    if y.ndim > 1:
        y = np.unique(y.reshape(y.shape[0], -1), axis=0, return_inverse=True)[1].reshape(-1)
    classes, counts = np.unique(y, return_counts=True)
    if n_splits is not None and counts.min() < n_splits:
        rare = classes[np.argmin(counts)]
        raise ValueError(
            f"cv: class {rare!r} has {counts.min()} rows, fewer than the {n_splits} folds; "
            "every fold needs one row of each class — use fewer folds"
        )
    return int(classes.size)


def stratified_subset(indices, size: int, y=None, random_state=None) -> np.ndarray:
    """A random subset of ``indices`` of ``size`` rows, stratified by ``y``.

    With labels, every class present in ``indices`` keeps at least one row and
    the remaining rows are shared in proportion to the class counts (largest
    remainders first), so a subset is never missing a class of its fold.

    Parameters
    ----------
    indices : array-like of int
        Rows to choose from (a training fold).
    size : int
        Subset size; ``size >= len(indices)`` returns all of ``indices``.
    y : array-like, optional
        Labels of all rows (indexed by ``indices``); ``None`` draws uniformly.
    random_state : int, Generator or None

    Returns
    -------
    ndarray of int
        The chosen rows, sorted.
    """
    indices = np.asarray(indices)
    size = int(size)
    if size >= indices.size:
        return np.sort(indices)
    rng = np.random.default_rng(random_state)
    if y is None:
        return np.sort(rng.choice(indices, size, replace=False))
    labels = np.asarray(y)[indices]
    if labels.ndim > 1:  # multi-output targets: stratify on whole rows
        labels = labels.reshape(labels.shape[0], -1)
        _, labels = np.unique(labels, axis=0, return_inverse=True)
        labels = labels.reshape(-1)
    classes, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    if size < classes.size:
        raise ValueError(
            f"fidelities: a training subset of {size} rows cannot hold one row of each of the "
            f"{classes.size} classes; use subsets of at least {classes.size} rows"
        )
    extra = size - classes.size
    share = (counts - 1) / max(counts.sum() - classes.size, 1) * extra
    take = np.floor(share).astype(np.int64)
    short = extra - take.sum()
    if short > 0:
        order = np.argsort(-(share - take), kind="stable")
        take[order[:short]] += 1
    take = np.minimum(take + 1, counts)
    chosen = [
        rng.choice(indices[inverse == c], take[c], replace=False) for c in range(classes.size)
    ]
    return np.sort(np.concatenate(chosen))


def n_samples_schedule(
    n_max: int,
    *,
    fidelities=None,
    min_resources="auto",
    factor: float = 3,
    n_min: int = 1,
    max_levels: int = 4,
) -> list[int]:
    """Training-subset sizes for ``fidelity="n_samples"``.

    Parameters
    ----------
    n_max : int
        Rows of the smallest training fold (the top fidelity uses the whole fold).
    fidelities : sequence of int or float, optional
        Explicit sizes; floats in ``(0, 1]`` are fractions of ``n_max``. The
        top level is always the whole training fold (a last entry below
        ``n_max`` is followed by ``n_max``).
    min_resources : int or "auto", default="auto"
        Smallest size of a geometric schedule (:func:`geometric_schedule`);
        ``"auto"`` keeps at most ``max_levels`` levels:
        ``max(n_min, n_max / factor**(max_levels - 1))``.
    factor : float, default=3
    n_min : int, default=1
        Smallest admissible size (one row per class, :func:`min_subset_size`).
    max_levels : int, default=4

    Returns
    -------
    list of int
        Strictly increasing sizes ending at ``n_max``.
    """
    if fidelities is not None:
        vals = np.asarray(fidelities, dtype=float).reshape(-1)
        if vals.size == 0 or not np.all(np.isfinite(vals)) or np.any(vals <= 0):
            raise ValueError(f"fidelities must be positive sizes or fractions; got {fidelities!r}")
        # a fraction is a float in (0, 1]; an integer (1 included) is a number of rows
        share = np.array([isinstance(v, (float, np.floating)) for v in
                          np.asarray(fidelities, dtype=object).reshape(-1)]) & (vals <= 1.0)
        sizes = np.where(share, np.round(vals * n_max), np.round(vals)).astype(np.int64)
        if np.any(np.diff(sizes) <= 0):
            read = ", ".join(f"{v!r} -> {n} rows" for v, n in zip(
                np.asarray(fidelities, dtype=object).reshape(-1).tolist(), sizes.tolist(),
                strict=True))
            raise ValueError(f"fidelities must be strictly increasing sizes; got {fidelities!r}, "
                             f"read as {read} (floats in (0, 1] are shares of the "
                             f"{n_max}-row fold, integers and larger floats are rows)")
        if sizes[-1] > n_max:
            raise ValueError(
                f"fidelities: {int(sizes[-1])} rows exceed the smallest training fold ({n_max})"
            )
        levels = sizes.tolist()
        if levels[-1] < n_max:
            levels.append(int(n_max))
    else:
        if min_resources == "auto":
            min_resources = max(n_min, int(np.ceil(n_max / factor ** (max_levels - 1))))
        elif isinstance(min_resources, bool) or not isinstance(min_resources, numbers.Integral):
            raise ValueError(f"min_resources must be a positive integer or 'auto'; "
                             f"got {min_resources!r}")
        elif min_resources >= n_max:
            raise ValueError(f"min_resources={min_resources} must be below the rows of the "
                             f"smallest training fold ({n_max}), the top fidelity")
        if min_resources >= n_max:
            return [int(n_max)]
        levels = geometric_schedule(min_resources, n_max, factor)
    if levels[0] < n_min:
        raise ValueError(
            f"fidelities: the smallest training subset ({levels[0]} rows) must hold at least "
            f"{n_min} rows (one per class per fold)"
        )
    return [int(v) for v in levels]
