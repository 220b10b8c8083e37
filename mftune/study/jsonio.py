"""Strict JSON for study files: numpy values as plain numbers, no NaN."""

from __future__ import annotations

import json

import numpy as np

__all__ = ["dumps", "json_safe"]


def dumps(value) -> str:
    """``value`` as strict JSON text (numpy scalars and arrays as numbers and lists; any other
    object as its ``repr``)."""
    return json.dumps(value, allow_nan=False, default=_default)


def _default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return repr(value)


def json_safe(value):
    """``value`` with non-finite floats replaced by ``None`` (strict JSON has no NaN)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, (float, np.floating)) and not np.isfinite(value):
        return None
    if isinstance(value, np.generic):
        return value.item()
    return value
