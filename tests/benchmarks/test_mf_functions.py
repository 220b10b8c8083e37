"""The multi-fidelity test functions: maxima, vectorisation, fidelities, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import qmc

from mftune.benchmarks.mf_functions import MF_FUNCTIONS, bad_currin, currin, get_mf_function

NAMES = ["currin", "park", "borehole", "hartmann3", "hartmann6"]
PUBLISHED = {"currin": 13.7986850, "park": 25.5872304, "borehole": 309.523221,
             "hartmann3": 3.86278, "hartmann6": 3.322368}
SHAPES = {"currin": (2, 2), "park": (4, 2), "borehole": (8, 2), "hartmann3": (3, 3),
          "hartmann6": (6, 4)}


@pytest.mark.parametrize("name", NAMES)
def test_value_at_maximiser_is_the_maximum(name):
    fn = get_mf_function(name)
    assert fn(fn.x_opt)[0] == pytest.approx(fn.f_opt, rel=1e-7)
    # the published maxima (docs/algorithms.md) agree to 0.02 %
    assert fn.f_opt == pytest.approx(PUBLISHED[name], rel=2e-4)
    # no point of a 2^14 Sobol sample beats it
    pts = qmc.Sobol(fn.n_dims, seed=1).random(2**14)
    assert fn(pts).max() <= fn.f_opt + 1e-9


@pytest.mark.parametrize("name", NAMES)
def test_shapes_costs_and_vectorisation(name):
    fn = get_mf_function(name)
    assert (fn.n_dims, fn.n_fidelities) == SHAPES[name]
    np.testing.assert_allclose(fn.costs, 10.0 ** np.arange(fn.n_fidelities))
    X = np.random.default_rng(0).random((7, fn.n_dims))
    for m in range(fn.n_fidelities):
        rowwise = [fn(x, m)[0] for x in X]
        np.testing.assert_allclose(fn(X, m), rowwise)
    # lower fidelities approximate the target but are not equal to it
    lo, hi = fn(X, 0), fn(X)
    assert not np.allclose(lo, hi)
    assert np.corrcoef(lo, hi)[0, 1] > 0.9


def test_bad_currin_lower_fidelity_is_negated():
    X = np.random.default_rng(1).random((20, 2))
    np.testing.assert_allclose(bad_currin()(X, 0), -currin()(X, 1))
    assert "bad-currin" in MF_FUNCTIONS


def test_noise_is_seeded_and_centred():
    fn = get_mf_function("hartmann3", noise_std=0.1)
    X = np.full((2000, 3), 0.5)
    a = fn.evaluate(X, 2, np.random.default_rng(3))
    b = fn.evaluate(X, 2, np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    # mean within 5 standard errors (0.1/sqrt(2000)) of the noiseless value
    assert abs(a.mean() - fn(X[:1])[0]) < 5 * 0.1 / np.sqrt(2000)
    assert a.std() == pytest.approx(0.1, rel=0.1)


@pytest.mark.parametrize("bad", [np.zeros((3, 3)), np.full((1, 2), 1.5), np.full((1, 2), np.nan)])
def test_bad_points_raise(bad):
    with pytest.raises(ValueError, match="X must"):
        currin()(bad, 0)


@pytest.mark.parametrize("fid", [-1, 2, 0.5])
def test_bad_fidelity_raises(fid):
    with pytest.raises(ValueError, match="fidelity must be an integer in 0..1"):
        currin()(np.zeros((1, 2)), fid)


def test_unknown_name_and_negative_noise_raise():
    with pytest.raises(ValueError, match="name must be one of"):
        get_mf_function("rosenbrock")
    with pytest.raises(ValueError, match="noise_std"):
        currin().with_noise(-1.0)


@pytest.mark.parametrize("name, scale", [("hartmann3", 1.0), ("hartmann6", 0.1)])
def test_hartmann_lower_fidelities_shift_alpha_by_scaled_delta(name, scale):
    # α^(m) = α + (M - m)·scale·δ (1-based m) [code: getMFHart3Fn.m, getMFHartFn.m]
    from mftune.benchmarks import mf_functions as mff

    fn = get_mf_function(name)
    A, P = (mff._H3_A, mff._H3_P) if name == "hartmann3" else (mff._H6_A, mff._H6_P)
    X = np.random.default_rng(0).random((50, fn.n_dims))
    bumps_delta = mff._hartmann(X, mff._H_DELTA, A, P)
    M = fn.n_fidelities
    for m in range(M):
        np.testing.assert_allclose(fn(X, m) - fn(X), (M - 1 - m) * scale * bumps_delta,
                                   atol=1e-12)
    other = getattr(mff, name)(delta_scale=2 * scale)
    np.testing.assert_allclose(other(X, 0) - other(X), (M - 1) * 2 * scale * bumps_delta,
                               atol=1e-12)
