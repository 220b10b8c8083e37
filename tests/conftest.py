"""Shared fixtures: the IISE authors' reference instances (read by path, never copied)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# One OpenMP thread per process, set before scikit-learn loads its OpenMP runtime:
# HistGradientBoosting's OpenMP threads spin-wait, and on a machine whose other core is
# busy a two-thread fit of a few hundred rows was measured ~60x slower (0.6 s -> >40 s),
# which turned the continuation tests into apparent hangs. Users keep their own setting.
os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path | None:
    """``$MFTUNE_SHARED_DATA`` or ``../shared/data`` beside the repository."""
    env = os.environ.get("MFTUNE_SHARED_DATA")
    for cand in ([Path(env)] if env else []) + [ROOT.parent / "shared" / "data"]:
        if (cand / "iise_yahtzee.json").exists():
            return cand
    return None


@pytest.fixture(scope="session")
def data_dir() -> Path:
    d = shared_data_dir()
    if d is None:
        pytest.skip("reference instances not found (set MFTUNE_SHARED_DATA)")
    return d
