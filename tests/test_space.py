"""Search spaces: sampling, encoding round trip, validation naming the parameter."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from mftune.space import Categorical, Integer, Real, Space


def test_sampling_respects_domains_and_is_replayable():
    space = Space({"C": Real(1e-2, 1e2, log=True), "k": Integer(1, 9),
                   "kernel": ["rbf", "poly"], "a": stats.uniform(0, 2)})
    a = space.sample(200, random_state=0)
    assert a == space.sample(200, random_state=0)
    assert a != space.sample(200, random_state=1)
    C = np.array([c["C"] for c in a])
    assert C.min() >= 1e-2 and C.max() <= 1e2
    # log-uniform: about half the draws below the geometric midpoint 1 (binomial 200, 0.5:
    # 4 standard deviations ~ 28)
    assert abs((C < 1).sum() - 100) < 28
    assert {c["kernel"] for c in a} == {"rbf", "poly"}
    assert all(1 <= c["k"] <= 9 and isinstance(c["k"], int) for c in a)
    assert all(0 <= c["a"] <= 2 for c in a)


def _keys(configs):
    return {tuple(sorted(c.items())) for c in configs}


def test_sampling_gives_distinct_configurations_and_every_one_of_a_small_space():
    # as RandomizedSearchCV samples without replacement: a repeat is drawn again
    space = Space({"k": Integer(1, 5), "w": ["uniform", "distance"]})  # 10 configurations
    a = space.sample(8, random_state=0)
    assert len(a) == len(_keys(a)) == 8 and a == space.sample(8, random_state=0)
    # at most n configurations in all: each once (the list is shorter), in a seeded order
    for n in (10, 25):
        every = space.sample(n, random_state=1)
        assert len(every) == len(_keys(every)) == 10
    assert space.sample(10, random_state=1) != space.sample(10, random_state=2)
    cond = Space([{"kernel": ["linear"], "C": [1, 10]},
                  {"kernel": ["rbf"], "C": [1, 10], "gamma": [0.1, 1]}])
    assert len(_keys(cond.sample(8, random_state=0))) == 6
    big = Space([{"kernel": ["linear"], "C": Integer(1, 3)}, {"kernel": ["rbf"], "C": [1, 2]}])
    assert len(_keys(big.sample(4, random_state=0))) == 4  # 5 in all: sampled, distinct
    # a discrete distribution with a finite support, and a one-point range
    tiny = Space({"n": stats.randint(1, 4), "x": Real(0.5, 0.5)})
    assert sorted(c["n"] for c in tiny.sample(6, random_state=0)) == [1, 2, 3]


def test_unit_encoding_round_trip():
    space = Space({"C": Real(1e-3, 1e3, log=True), "n": Integer(2, 50),
                   "kernel": Categorical(["a", "b", "c"])})
    cfgs = space.sample(50, random_state=2)
    u = space.to_unit(cfgs)
    assert u.shape == (50, 3) and np.all((u >= 0) & (u <= 1))
    back = space.from_unit(u)
    for c, b in zip(cfgs, back, strict=True):
        assert b["kernel"] == c["kernel"] and b["n"] == c["n"]
        assert np.isclose(b["C"], c["C"], rtol=1e-9)


def test_the_centre_is_the_middle_of_each_encoding():
    space = Space({"C": Real(1e-3, 1e3, log=True), "x": Real(-1, 3), "n": Integer(2, 50),
                   "kernel": Categorical(["a", "b", "c"]), "a": stats.norm(5, 2)})
    c = space.centre()
    assert c["C"] == pytest.approx(1.0) and c["x"] == pytest.approx(1.0)
    assert c["n"] == 26 and c["kernel"] == "b" and c["a"] == pytest.approx(5.0)
    with pytest.raises(ValueError, match="single dict space"):
        Space([{"a": Real(0, 1)}, {"b": Real(0, 1)}]).centre()


def test_the_centre_is_given_in_short_decimals_inside_its_domain():
    # exp of the mean logarithm gives 9.999999999999998 and 0.10000000000000006 here
    space = Space({"C": Real(1e-1, 1e3, log=True), "gamma": Real(1e-4, 1e2, log=True)})
    assert space.centre() == {"C": 10.0, "gamma": 0.1}
    # a value that 12 digits would move out of its one-point range is kept as it is
    v = 0.12345678901234567
    assert Space({"x": Real(v, v)}).centre() == {"x": v}


def test_conditional_space_and_grid():
    space = Space([{"kernel": ["linear"], "C": Real(1, 10)},
                   {"kernel": ["rbf"], "C": Real(1, 10), "gamma": Real(0.1, 1)}])
    cfgs = space.sample(100, random_state=0)
    assert all(("gamma" in c) == (c["kernel"] == "rbf") for c in cfgs)
    assert len(space.grid(3)) == 3 + 9
    with pytest.raises(ValueError, match="unit-cube"):
        space.to_unit(cfgs)


@pytest.mark.parametrize("make, name", [
    (lambda: Space({"C": Real(10, 1)}), "C"),
    (lambda: Space({"C": Real(0, 1, log=True)}), "C"),
    (lambda: Space({"depth": Integer(5, 2)}), "depth"),
    (lambda: Space({"kernel": Categorical([])}), "kernel"),
    (lambda: Space({"kernel": []}), "kernel"),
    (lambda: Space({"alpha": "not-a-space"}), "alpha"),
])
def test_invalid_dimensions_name_the_parameter(make, name):
    with pytest.raises(ValueError, match=name):
        make()


@pytest.mark.parametrize("spec", [5, "C", None, 1.5])
def test_a_space_that_is_not_a_dict_or_list_of_dicts_is_refused_by_name(spec):
    with pytest.raises(ValueError, match=r"space must be a dict or a list of dicts; got"):
        Space(spec)


def test_check_names_lists_unknown():
    space = Space({"svc__C": Real(1, 2), "svc__bogus": [1, 2]})
    with pytest.raises(ValueError, match="svc__bogus"):
        space.check_names({"svc__C", "svc__gamma"})


def test_integer_bounds_beyond_float_precision_are_refused_by_name():
    # values are encoded as floats: past 2**53 sampling could not be exact (2**64 came
    # back negative through an int64 overflow)
    with pytest.raises(ValueError, match=r"seed: low and high must lie within ±2\*\*53"):
        Space({"seed": Integer(0, 2**64)})
    draws = Space({"seed": Integer(0, 2**53)}).sample(20, 0)
    assert all(0 <= d["seed"] <= 2**53 and isinstance(d["seed"], int) for d in draws)
    assert len({d["seed"] for d in draws}) == 20


def test_categorical_choices_are_a_list_of_distinct_values_and_grids_have_points():
    with pytest.raises(ValueError, match="not a string"):
        Categorical("abc")  # list("abc") would be three choices
    with pytest.raises(ValueError, match="kernel: choices must be distinct; 'x' is given twice"):
        Space({"kernel": Categorical(["x", "x", "y"])})
    # values of different types are different choices (1, 1.0 and True), as is nan
    space = Space({"c": Categorical([1, 1.0, True, float("nan")])})
    assert len(space.sample(4, 0)) == 4
    with pytest.raises(ValueError, match="n_points must be an integer >= 1; got 0"):
        Space({"a": Real(0.0, 1.0)}).grid(0)


@pytest.mark.parametrize("name, value, match", [
    ("x", 5.0, r"x: got 5\.0; values must be numbers in \[0\.0, 1\.0\]"),
    ("x", -1e-9, r"x: got -1e-09; values must be numbers in \[0\.0, 1\.0\]"),
    ("x", float("nan"), r"x: got nan; values must be numbers in \[0\.0, 1\.0\]"),
    ("x", "0.5", r"x: got '0\.5'; values must be numbers in \[0\.0, 1\.0\]"),
    ("x", None, r"x: got None; values must be numbers in \[0\.0, 1\.0\]"),
    ("C", 1e4, r"C: got 10000\.0; values must be numbers in \[0\.001, 1000\.0\]"),
    ("C", 0.0, r"C: got 0\.0; values must be numbers in \[0\.001, 1000\.0\]"),
    ("n", 51, r"n: got 51; values must be integers in \[2, 50\]"),
    ("n", 1, r"n: got 1; values must be integers in \[2, 50\]"),
    ("n", 2.5, r"n: got 2\.5; values must be integers in \[2, 50\]"),
    ("kernel", "d", r"kernel: got 'd'; values must be one of the choices \['a', 'b', 'c'\]"),
    ("u", 2.5, r"u: got 2\.5; values must be numbers in \[0\.0, 2\.0\]"),
])
def test_to_unit_refuses_values_outside_a_dimension_by_name(name, value, match):
    # a value outside its dimension used to be encoded anyway: Real(0, 1) took 5.0 to
    # 5.0, an Integer 51 past its range, a log range 0 to -inf
    space = Space({"x": Real(0.0, 1.0), "C": Real(1e-3, 1e3, log=True), "n": Integer(2, 50),
                   "kernel": Categorical(["a", "b", "c"]), "u": stats.uniform(0, 2)})
    inside = {"x": 1.0, "C": 1e-3, "n": 50, "kernel": "c", "u": 0.0}  # the bounds are in
    u = space.to_unit([inside, {**inside, "n": 7.0}])  # an integral float is an integer
    # columns in sorted order: C, kernel, n, u, x
    np.testing.assert_allclose(u[:, [0, 3, 4]], [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    assert u[1, 2] == pytest.approx((7 - 1.5) / 49)
    with pytest.raises(ValueError, match=match):
        space.to_unit([inside, {**inside, name: value}])
    # the dimensions alone too (unnamed: their kind)
    with pytest.raises(ValueError, match=r"Real: got 3\.0; values must be numbers"):
        Real(0.0, 1.0).to_unit([0.5, 3.0])
    with pytest.raises(ValueError, match=r"Integer: got 11; values must be integers"):
        Integer(0, 10).to_unit(11)
