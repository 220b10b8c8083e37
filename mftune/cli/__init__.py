"""The ``mftune`` command line (click).

Sub-command modules register themselves on :data:`main` or :data:`bench`;
the groups import each module when its command is first used
(:class:`~mftune.cli._groups.LazyGroup`).
"""

from __future__ import annotations

from ._groups import bench, main

__all__ = ["bench", "main"]
