"""The ``mftune`` command line (click).

Sub-command modules register themselves on :data:`main` or :data:`bench`;
importing them here is all the wiring there is.
"""

from __future__ import annotations

# Registration imports (each adds commands to ``main`` or ``bench``).
from . import (
    bench_iise,  # noqa: E402, F401
    bench_lucb,  # noqa: E402, F401
    bench_mfucb,  # noqa: E402, F401
    demo,  # noqa: E402, F401
)
from ._groups import bench, main

__all__ = ["bench", "main"]
