"""The ``mftune`` command line (click).

Sub-command modules register themselves on :data:`main` or :data:`bench`;
importing them here is all the wiring there is.
"""

from __future__ import annotations

from ._groups import bench, main

# Registration imports (each adds commands to ``main`` or ``bench``).
from . import bench_iise  # noqa: E402, F401
from . import bench_lucb  # noqa: E402, F401
from . import bench_mfucb  # noqa: E402, F401
from . import demo  # noqa: E402, F401

__all__ = ["bench", "main"]
