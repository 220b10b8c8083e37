"""Shared fixtures: the IISE authors' reference instances (read by path, never copied)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
