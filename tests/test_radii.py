"""Properties of the confidence radii (mftune.radii)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mftune.radii import (
    hoeffding_radius,
    iise_phase_length,
    iise_radius,
    lucb_radius,
    lucb_radius_scale,
)

deltas = st.floats(1e-9, 0.3)


def test_iise_radius_formula_and_zero():
    assert iise_radius(0, 0.1) == math.inf
    expected = math.sqrt(2 * 0.25 * math.log(400 / 0.1) / 10)
    assert iise_radius(10, 0.1, 0.25) == pytest.approx(expected)


@given(delta=deltas, sigma2=st.floats(0.01, 10))
@settings(max_examples=50, deadline=None)
def test_iise_radius_decreasing_in_t(delta, sigma2):
    t = np.arange(1, 5000)
    b = iise_radius(t, delta, sigma2)
    assert np.all(np.diff(b) < 0)


@given(t=st.integers(1, 10**7), d1=deltas, d2=deltas)
@settings(max_examples=50, deadline=None)
def test_iise_radius_grows_as_delta_shrinks(t, d1, d2):
    lo, hi = sorted((d1, d2))
    assert iise_radius(t, lo) >= iise_radius(t, hi)


@given(t=st.integers(1, 10**6), s=st.floats(0.01, 10), delta=deltas)
@settings(max_examples=50, deadline=None)
def test_iise_radius_scales_with_sigma(t, s, delta):
    assert iise_radius(t, delta, s * s) == pytest.approx(s * iise_radius(t, delta, 1.0))


@given(threshold=st.floats(1e-3, 5.0), delta=deltas)
@settings(max_examples=50, deadline=None)
def test_phase_length_is_first_round_under_threshold(threshold, delta):
    t = iise_phase_length(threshold, delta)
    assert 4 * iise_radius(t, delta) <= threshold
    if t > 1:
        assert 4 * iise_radius(t - 1, delta) > threshold


def test_phase_length_is_infinite_beyond_int64_rounds():
    # a threshold no round below 2**62 reaches (4 B(t) ~ 4/sqrt(t) > 1e-12): never switch
    assert iise_phase_length(1e-12, 0.01) == np.inf
    assert iise_phase_length(0.0, 0.01) == np.inf


def test_phase_length_matches_yahtzee_options():
    # The authors' pre-computed MFE phase lengths for Yahtzee (docs/algorithms.md):
    # delta = 0.001 / (K M), K = 13, M = 8, sigma^2 = 0.25, threshold c * xi_m.
    xi = [0.2807707989244515, 0.19580234696554968, 0.1355356949020115]
    options = {(0, 0.1): 392735, (1, 0.1): 839238, (2, 0.1): 1818882,
               (0, 0.01): 49072362, (1, 0.01): 104039384, (2, 0.01): 223804999,
               (0, 0.005): 208015126, (1, 0.005): 440238518, (2, 0.005): 945418664}
    for (m, c), expected in options.items():
        assert iise_phase_length(c * xi[m], 0.001 / (13 * 8), 0.25) == expected


def test_lucb_radius():
    assert lucb_radius(0, 5, 0.1, 5, 3) == math.inf
    expected = math.sqrt(math.log(4 * 5 * 3 * 7**4 / 0.1) / 4)
    assert lucb_radius(4, 7, 0.1, 5, 3) == pytest.approx(expected)
    n = np.arange(1, 100)
    assert np.all(np.diff(lucb_radius(n, 50, 0.1, 5, 3)) < 0)
    assert lucb_radius(10, 100, 0.1, 5, 3) > lucb_radius(10, 10, 0.1, 5, 3)


def test_lucb_radius_scale_same_bits_in_any_shape():
    # The LUCB simulator evaluates sqrt(log(L t^4 / δ)) on (runs, rounds) blocks and the
    # policy on one t at a time; the block stepping is exact only if both give the same
    # bits (numpy's SIMD log/pow must not depend on the position in the array) and the
    # scale never decreases in t (its bound on the other arms' UCBs relies on it).
    t = np.arange(1, 210_001, dtype=np.int64)
    block = lucb_radius_scale(t.reshape(-1, 7)[:, ::-1], 0.05, 100.0)[:, ::-1].ravel()
    single = np.array([lucb_radius_scale(np.array([v]), 0.05, 100.0)[0] for v in t[::97]])
    np.testing.assert_array_equal(block[::97], single)
    np.testing.assert_array_equal(block, lucb_radius_scale(t, 0.05, 100.0))
    assert np.all(np.diff(block) >= 0)


def test_hoeffding_radius_covers_bernoulli_means():
    # Fixed-n Hoeffding: P(|mean - p| >= r) <= delta. With 4000 seeded
    # experiments at delta = 0.1, the miss count is Binomial(4000, <= 0.1);
    # 480 is above its 0.999 quantile (about 462), so a correct radius passes.
    rng = np.random.default_rng(0)
    n, p, delta = 50, 0.3, 0.1
    means = (rng.random((4000, n)) < p).mean(axis=1)
    misses = np.sum(np.abs(means - p) >= hoeffding_radius(n, delta))
    assert misses <= 480
    assert hoeffding_radius(0, 0.1) == math.inf
