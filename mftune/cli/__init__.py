"""The ``mftune`` command line (click).

Sub-command modules register themselves on :data:`main` or :data:`bench`;
importing them here is all the wiring there is.
"""

from __future__ import annotations

from . import (  # noqa: F401  (registration imports: each adds commands)
    bench_curves,
    bench_gp,
    bench_h2h,
    bench_iise,
    bench_lower_bound,
    bench_lucb,
    bench_mfgrad,
    bench_mfucb,
    bench_parallel,
    bench_tuner,
    demo,
    serve,
    study_info,
    tune,
)
from ._groups import bench, main

__all__ = ["bench", "main"]
