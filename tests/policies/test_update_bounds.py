"""PhasedElimination.update_bounds: new costs, bias bounds and per-fidelity σ² mid-run."""

from __future__ import annotations

import numpy as np
import pytest

from mftune.policies.iise import IISE, IISEGamma, SuccessiveElimination, iise_thresholds
from mftune.radii import iise_radius


def test_update_recomputes_thresholds_and_widths():
    p = IISE(10, [1.0, 10.0, 100.0], [0.2, 0.1, 0.0], delta=0.05, variance_proxy=0.01)
    p.update_bounds(costs=[1.0, 4.0, 100.0], xi=[0.4, 0.1, 0.0])
    assert np.allclose(p.thresholds, iise_thresholds([1.0, 4.0, 100.0], [0.4, 0.1, 0.0], 4.0))
    assert np.allclose(p.widths, [0.8, 0.2, 0.0]) and np.allclose(p.xi, [0.4, 0.1, 0.0])
    g = IISEGamma(10, [1.0, 10.0], [0.2, 0.0], delta=0.05, variance_proxy=0.01)
    g.update_bounds(xi=[0.3, 0.0])
    assert np.allclose(g.widths, [0.3, 0.0]) and np.allclose(g.gamma, [0.3, 0.0])


def test_update_with_same_values_changes_nothing():
    a = IISE(5, [1.0, 10.0], [0.2, 0.0], delta=0.05, variance_proxy=0.01)
    b = IISE(5, [1.0, 10.0], [0.2, 0.0], delta=0.05, variance_proxy=0.01)
    b.update_bounds(costs=[1.0, 10.0], xi=[0.2, 0.0], variance_proxy=0.01)
    rng = np.random.default_rng(0)
    while not a.done:
        pa, pb = a.ask(), b.ask()
        assert np.array_equal(pa.arms, pb.arms) and np.array_equal(pa.fidelities, pb.fidelities)
        r = rng.normal(np.linspace(0, 0.5, 5)[pa.arms], 0.1)
        a.tell(pa, r)
        b.tell(pb, r)
    assert b.done and a.recommend() == b.recommend()


def test_per_fidelity_variance_sets_the_radius_of_each_phase():
    p = IISE(4, [1.0, 10.0], [0.2, 0.0], delta=0.05, variance_proxy=1.0)
    p.update_bounds(variance_proxy=[0.04, 0.01])
    assert p.radius(np.array([7]))[0] == pytest.approx(iise_radius(7, p.delta_prime, 0.04))
    p.phase_ = 1
    assert p.radius(np.array([7]))[0] == pytest.approx(iise_radius(7, p.delta_prime, 0.01))
    with pytest.raises(ValueError, match="variance_proxy"):
        p.update_bounds(variance_proxy=[0.1])


def test_invalid_updates_are_refused():
    p = IISE(4, [1.0, 10.0], [0.2, 0.0])
    with pytest.raises(ValueError, match="costs"):
        p.update_bounds(costs=[10.0, 1.0])
    with pytest.raises(ValueError, match="xi"):
        p.update_bounds(xi=[0.0, 0.2])
    with pytest.raises(ValueError, match="xi"):
        SuccessiveElimination(4, [1.0, 10.0]).update_bounds(xi=[0.1, 0.0])
