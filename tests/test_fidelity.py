"""Fidelity schedules: stratified subsets, minimum sizes, n_samples schedules."""

from __future__ import annotations

import numpy as np
import pytest

from mftune.fidelity import (
    geometric_schedule,
    min_subset_size,
    n_samples_schedule,
    stratified_subset,
)


def test_stratified_subset_keeps_every_class_and_proportions():
    rng = np.random.default_rng(0)
    y = np.r_[np.zeros(900), np.ones(90), np.full(10, 2)].astype(int)
    idx = rng.permutation(1000)[:800]
    sub = stratified_subset(idx, 50, y, random_state=1)
    assert sub.size == 50 and np.unique(sub).size == 50
    assert set(sub) <= set(idx)
    counts = np.bincount(y[sub], minlength=3)
    assert counts.min() >= 1  # the rare class (10 rows) is never dropped
    full = np.bincount(y[idx], minlength=3) / idx.size
    # one reserved row per class plus a largest-remainder share of the rest: each class is
    # within n_classes rows of its proportional share
    assert np.all(np.abs(counts - full * 50) <= 3)


def test_stratified_subset_smallest_size_is_one_per_class():
    y = np.repeat(np.arange(5), 20)
    sub = stratified_subset(np.arange(100), 5, y, random_state=0)
    assert np.array_equal(np.sort(y[sub]), np.arange(5))
    with pytest.raises(ValueError, match="fidelities"):
        stratified_subset(np.arange(100), 4, y, random_state=0)


def test_stratified_subset_is_replayable_and_uniform_without_labels():
    a = stratified_subset(np.arange(500), 40, None, random_state=3)
    b = stratified_subset(np.arange(500), 40, None, random_state=3)
    assert np.array_equal(a, b) and a.size == 40
    assert np.array_equal(stratified_subset(np.arange(10), 99, None), np.arange(10))


def test_min_subset_size_checks_folds():
    y = np.r_[np.zeros(50), np.ones(3)]
    assert min_subset_size(y) == 2
    assert min_subset_size(y, 3) == 2
    with pytest.raises(ValueError, match="cv"):
        min_subset_size(y, 5)


def test_n_samples_schedule_geometric_and_explicit():
    assert n_samples_schedule(10000, min_resources=500, factor=3) == geometric_schedule(
        500, 10000, 3)
    auto = n_samples_schedule(10800, factor=3)
    assert auto[-1] == 10800 and len(auto) == 4 and auto[0] == 400
    assert n_samples_schedule(1000, fidelities=[100, 300]) == [100, 300, 1000]
    assert n_samples_schedule(1000, fidelities=[0.1, 0.5, 1.0]) == [100, 500, 1000]
    # integers are rows (1 too); only floats in (0, 1] are shares of the fold
    assert n_samples_schedule(1000, fidelities=[1, 10, 100]) == [1, 10, 100, 1000]
    # a 1 meant as the whole fold is a row: the error says how each entry was read
    with pytest.raises(ValueError, match=r"read as 0\.2 -> 200 rows, 0\.5 -> 500 rows, 1 -> 1 "):
        n_samples_schedule(1000, fidelities=[0.2, 0.5, 1])
    # the smallest subset must lie below the top (as HalvingRandomSearchCV refuses it)
    with pytest.raises(ValueError, match=r"^min_resources=80 must be below .*\(50\)"):
        n_samples_schedule(50, min_resources=80)


@pytest.mark.parametrize("kwargs", [
    {"fidelities": [300, 100]}, {"fidelities": [-1]}, {"fidelities": [5000]},
])
def test_n_samples_schedule_rejects_bad_fidelities(kwargs):
    with pytest.raises(ValueError, match="fidelities"):
        n_samples_schedule(1000, **kwargs)


def test_n_samples_schedule_respects_minimum():
    with pytest.raises(ValueError, match="one per class"):
        n_samples_schedule(1000, fidelities=[3, 100], n_min=10)
    with pytest.raises(ValueError, match="min_resources"):
        n_samples_schedule(1000, min_resources=2.5)
    assert n_samples_schedule(900, n_min=40, factor=3)[0] >= 40
