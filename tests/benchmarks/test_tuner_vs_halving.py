"""``mftune bench tuner-vs-halving``: MFTuner and halving over the very same candidates."""

from __future__ import annotations

import dataclasses

from mftune.benchmarks.tuner_vs_halving import TASKS, run_task


def test_both_methods_search_the_same_candidates_and_report_rows():
    # a shrunk svm-magic-2k (4 candidates, 2 s of fitting): the run completes (MFTuner's
    # default waves would search other candidates than the list halving gets)
    task = dataclasses.replace(TASKS["svm-magic-2k"], n_candidates=4, budget=2.0)
    lines: list[str] = []
    rows = run_task(task, 0, log=lines.append)
    source = rows[0].data
    assert {r.method for r in rows} >= {"MFTuner", "Halving"}
    assert lines[0] == f"  seed 0 data: {source}"  # first, as the head-to-head names it
