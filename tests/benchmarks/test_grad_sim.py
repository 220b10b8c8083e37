"""The vectorised MF-GRAD/GRAD simulator makes the ask/tell policy's decisions, and the
authors'-repository IISE variant matches its re-runs."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from mftune.benchmarks.bandits import BernoulliBandit, GaussianBandit, load_instance
from mftune.benchmarks.grad_sim import simulate_grad_batch
from mftune.benchmarks.lower_bound import make_grad
from mftune.benchmarks.mfgrad_paper import simulate_iise_code
from mftune.benchmarks.simulate import simulate_runs


def _same(env, factory, n_runs, cap):
    ref = simulate_runs(env, {"p": factory}, n_runs, seed=3, max_pulls=cap)
    got, _ = simulate_grad_batch(env, factory(env), n_runs, seed=3, max_pulls=cap)
    for a, b in zip(ref, got, strict=True):
        assert a.pulls_per_fidelity == b.pulls_per_fidelity
        assert (a.recommendation, a.stopping_reason) == (b.recommendation, b.stopping_reason)
        assert b.cost == pytest.approx(a.cost, rel=1e-12)
    return got


@pytest.mark.parametrize("kind,lr,gradient", [("MF-GRAD", None, "code"), ("MF-GRAD", 0.25, "code"),
                                              ("GRAD", 0.25, "code"), ("MF-GRAD", 0.25, "glr")])
def test_batch_equals_policy_on_5x2(data_dir, kind, lr, gradient):
    env = load_instance(data_dir / "mfgrad_5x2.json")
    got = _same(env, partial(make_grad, kind=kind, delta=0.1, learning_rate=lr,
                             gradient=gradient), 3, 20_000)
    assert all(r.stopping_reason == "stopping-rule" for r in got)


@pytest.mark.parametrize("kind", ["GRAD", "MF-GRAD"])
def test_make_grad_hands_its_options_to_both_kinds(data_dir, kind):
    env = load_instance(data_dir / "mfgrad_5x2.json")
    pol = make_grad(env, kind, 0.01, learning_rate=0.25, gradient="glr")
    assert (pol.learning_rate, pol.gradient, pol.delta) == (0.25, "glr", 0.01)
    assert make_grad(env, kind).learning_rate is None  # the theory rate


def test_batch_equals_policy_with_the_top_test():
    # three arms whose top means are far apart, two fidelities whose cheap means are
    # nearly useless (ξ large): runs stop on the top test, sooner than without it
    env = GaussianBandit(np.array([[0.5, 0.5, 0.5], [0.3, 0.6, 0.45]]), [0.5, 1.0],
                         sigma=0.2, xi=[0.4, 0.0])
    top = _same(env, partial(make_grad, kind="MF-GRAD-top", delta=0.05, learning_rate=0.25),
                4, 50_000)
    plain, _ = simulate_grad_batch(env, make_grad(env, "MF-GRAD", 0.05, learning_rate=0.25),
                                   4, seed=3)
    assert all(r.stopping_reason == "stopping-rule" and r.correct for r in top + plain)
    assert sum(r.cost for r in top) < sum(r.cost for r in plain)


def test_batch_equals_policy_with_cap_and_bernoulli():
    env = BernoulliBandit(np.array([[0.3, 0.5, 0.45], [0.35, 0.6, 0.5]]), [1.0, 4.0],
                          xi=[0.1, 0.0])
    got = _same(env, partial(make_grad, kind="MF-GRAD", delta=0.05), 3, 60)
    assert all(r.stopping_reason == "max-pulls" and sum(r.pulls_per_fidelity) == 60
               for r in got)


def test_batch_snapshots_and_fresh_policy(data_dir):
    env = load_instance(data_dir / "mfgrad_5x2.json")
    pol = make_grad(env, "MF-GRAD", 0.01)
    pol.stopping = False
    recs, snaps = simulate_grad_batch(env, pol, 2, max_pulls=300, snapshots=(100, 300))
    assert [s.sum(axis=(1, 2)).tolist() for s in (snaps[100], snaps[300])] == [[100, 100],
                                                                               [300, 300]]
    assert all(r.stopping_reason == "max-pulls" for r in recs)
    used = make_grad(env, "MF-GRAD", 0.01)
    used.tell(used.ask(), [0.5])
    with pytest.raises(ValueError, match="fresh"):
        simulate_grad_batch(env, used, 1)


def test_iise_code_matches_the_reference_runs(data_dir):
    # Reference: the authors' IISE on 4x5, 224 ± 9 (100 runs, MFGRAD.md §5). 300 runs here:
    # the sd of one run's cost is about 45 (measured), so ± 3 sd of the mean is ± 8;
    # with the reference's own ± 9 the two must agree within 20.
    env = load_instance(data_dir / "mfgrad_4x5.json")
    recs = simulate_iise_code(env, 0.01, 300, seed=0)
    cost = np.array([r.cost for r in recs])
    assert abs(cost.mean() - 224) < 20
    assert all(r.correct for r in recs)
