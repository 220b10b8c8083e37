"""Search spaces: dimensions, candidate sampling, grids and the unit-cube encoding.

A space is a dict ``{name: dimension}`` (or a list of such dicts for
conditional spaces, as in scikit-learn's ``ParameterSampler``). A dimension
is one of :class:`Real`, :class:`Integer`, :class:`Categorical`, a plain list
(taken as categorical choices) or a scipy.stats frozen distribution (sampled
with ``rvs``, as ``RandomizedSearchCV`` does).

The finite-arm policies need a candidate set (:meth:`Space.sample`,
:meth:`Space.grid`); the Gaussian-process policies work in the unit cube
(:meth:`Space.to_unit`, :meth:`Space.from_unit`): reals and integers map
linearly (or in log space when ``log=True``); a categorical dimension takes
one coordinate split into equal bins, one per choice.
"""

from __future__ import annotations

import copy
import itertools
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["Categorical", "Dimension", "Distribution", "Integer", "Real", "Space", "as_dimension"]


class Dimension:
    """Base class of one hyper-parameter's domain."""

    name: str = ""

    def sample(self, n: int, rng: np.random.Generator) -> list:
        """Draw ``n`` values."""
        raise NotImplementedError

    def to_unit(self, values: Sequence) -> np.ndarray:
        """Map values to ``[0, 1]``."""
        raise NotImplementedError

    def from_unit(self, u: np.ndarray) -> list:
        """Map unit-interval coordinates back to values."""
        raise NotImplementedError

    def grid(self, n_points: int) -> list:
        """``n_points`` representative values (all choices for categoricals)."""
        return self.from_unit(np.linspace(0.0, 1.0, max(int(n_points), 1)))

    def values(self) -> Sequence | None:
        """Every value of a finite domain (a sequence; a ``range`` for integers), else
        ``None``."""
        return None

    def contains(self, value) -> bool:
        """Whether ``value`` belongs to the domain."""
        raise NotImplementedError

    def validate(self, name: str = "") -> None:
        """Raise ``ValueError`` naming the parameter if the domain is invalid."""

    def _validate_now(self, name: str) -> None:
        # An unnamed invalid dimension (``Real(10, 1)`` written inside a dict) is
        # reported by Space / as_dimension, which know the parameter's name.
        try:
            self.validate(name)
        except ValueError:
            if name:
                raise


def _check_bounds(low, high, log, name, kind):
    for label, v in (("low", low), ("high", high)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise ValueError(f"{name or kind}: {label} must be a finite number; got {v!r}")
    if low > high:
        raise ValueError(f"{name or kind}: low must be <= high; got low={low!r}, high={high!r}")
    if log and low <= 0:
        raise ValueError(f"{name or kind}: log=True needs low > 0; got low={low!r}")


def _floats_within(values, low, high, label: str, integers: bool = False) -> np.ndarray:
    """``values`` as floats once each is a number in ``[low, high]`` (an integer with
    ``integers``); else ``ValueError`` naming the parameter and the range."""
    kind = "integers" if integers else "numbers"
    given = np.asarray(values)
    if given.dtype.kind not in "biuf":  # numpy would read "0.5" as a number
        objects = np.asarray(values, dtype=object).reshape(-1)
        other = [v for v in objects if not isinstance(v, numbers.Real)]
        if other:
            raise ValueError(f"{label}: got {other[0]!r}; values must be {kind} in "
                             f"[{low!r}, {high!r}]")
    x = given.astype(float)
    bad = ~((x >= low) & (x <= high))  # nan is outside too
    if integers:
        bad |= x != np.rint(x)
    if np.any(bad):
        value = np.asarray(values, dtype=object).reshape(-1)[int(np.argmax(bad.reshape(-1)))]
        raise ValueError(f"{label}: got {value!r}; values must be {kind} in "
                         f"[{low!r}, {high!r}]")
    return x


class Real(Dimension):
    """A real interval ``[low, high]``, optionally log-scaled.

    Parameters
    ----------
    low, high : float
        Bounds, ``low <= high`` (``low > 0`` when ``log``).
    log : bool, default=False
        Sample and encode uniformly in ``log(value)``.
    name : str, optional
        Filled in by :class:`Space`; used in error messages.
    """

    def __init__(self, low: float, high: float, log: bool = False, name: str = ""):
        self.low, self.high, self.log, self.name = low, high, bool(log), name
        self._validate_now(name)

    def validate(self, name: str = "") -> None:
        """Check the bounds, naming the parameter in the error (run by :class:`Space`)."""
        _check_bounds(self.low, self.high, self.log, name or self.name, "Real")
        self.low, self.high = float(self.low), float(self.high)

    def _warp(self, x):
        return np.log(x) if self.log else np.asarray(x, dtype=float)

    def _unwarp(self, z):
        return np.exp(z) if self.log else z

    def to_unit(self, values):
        """Map values in ``[low, high]`` to ``[0, 1]``; others raise ``ValueError``."""
        lo, hi = self._warp(self.low), self._warp(self.high)
        x = self._warp(_floats_within(values, self.low, self.high, self.name or "Real"))
        return np.zeros_like(x) if hi == lo else (x - lo) / (hi - lo)

    def from_unit(self, u):
        lo, hi = self._warp(self.low), self._warp(self.high)
        z = lo + np.clip(np.asarray(u, dtype=float), 0.0, 1.0) * (hi - lo)
        return np.clip(self._unwarp(z), self.low, self.high).tolist()

    def sample(self, n, rng):
        return self.from_unit(rng.random(int(n)))

    def contains(self, value):
        return isinstance(value, numbers.Real) and self.low <= value <= self.high

    def values(self):
        return [self.low] if self.low == self.high else None

    def __repr__(self):
        return f"Real({self.low!r}, {self.high!r}, log={self.log})"


class Integer(Dimension):
    """Integers in ``[low, high]`` (both included), optionally log-scaled."""

    def __init__(self, low: int, high: int, log: bool = False, name: str = ""):
        self.low, self.high, self.log, self.name = low, high, bool(log), name
        self._validate_now(name)

    def validate(self, name: str = "") -> None:
        """Check the bounds, naming the parameter in the error (run by :class:`Space`)."""
        name = name or self.name
        low, high, log = self.low, self.high, self.log
        _check_bounds(low, high, log, name, "Integer")
        if int(low) != low or int(high) != high:
            raise ValueError(f"{name or 'Integer'}: low and high must be integers; "
                             f"got {low!r}, {high!r}")
        if max(abs(int(low)), abs(int(high))) > 2**53:
            raise ValueError(f"{name or 'Integer'}: low and high must lie within ±2**53 "
                             f"(= {2**53}; values are encoded as floats); got {low!r}, {high!r}")
        self.low, self.high = int(low), int(high)
        # Encode over [low - 0.5, high + 0.5] so every integer owns an equal share.
        self._real = Real(self.low - 0.5 if not log else max(self.low - 0.5, self.low / 2),
                          self.high + 0.5, log=log)

    def to_unit(self, values):
        """Map integers in ``[low, high]`` to ``[0, 1]``; others raise ``ValueError``."""
        return self._real.to_unit(_floats_within(values, self.low, self.high,
                                                 self.name or "Integer", integers=True))

    def from_unit(self, u):
        vals = np.rint(np.asarray(self._real.from_unit(u), dtype=float))
        return np.clip(vals, self.low, self.high).astype(int).tolist()

    def sample(self, n, rng):
        return self.from_unit(rng.random(int(n)))

    def grid(self, n_points):
        span = self.high - self.low + 1
        if span <= n_points:
            return list(range(self.low, self.high + 1))
        return sorted(set(super().grid(n_points)))

    def contains(self, value):
        return isinstance(value, numbers.Integral) and self.low <= value <= self.high

    def values(self):
        return range(self.low, self.high + 1)  # not materialised: the range may be huge

    def __repr__(self):
        return f"Integer({self.low!r}, {self.high!r}, log={self.log})"


class Categorical(Dimension):
    """A finite set of choices (any Python values)."""

    def __init__(self, choices: Sequence, name: str = ""):
        if isinstance(choices, str | bytes):  # list("abc") would be three choices
            raise ValueError(f"{name or 'Categorical'}: choices must be a list of values, not "
                             f"a string; got {choices!r} (write [{choices!r}] for one choice)")
        self.choices, self.name = list(choices), name
        self._validate_now(name)

    def validate(self, name: str = "") -> None:
        """Check there is at least one choice, each once, naming the parameter (run by
        :class:`Space`)."""
        label = name or self.name or "Categorical"
        if not self.choices:
            raise ValueError(f"{label}: choices must not be empty")
        for i, c in enumerate(self.choices):
            if self._index(c) != i:  # the encoding would give a repeated value a larger share
                raise ValueError(f"{label}: choices must be distinct; {c!r} is given twice")

    def _index(self, value) -> int:
        for i, c in enumerate(self.choices):
            if c is value or (type(c) is type(value) and c == value):
                return i
        raise ValueError(f"{self.name or 'Categorical'}: got {value!r}; values must be one of "
                         f"the choices {self.choices}")

    def to_unit(self, values):
        """Map choices to the centres of their bins; other values raise ``ValueError``."""
        n = len(self.choices)
        return (np.array([self._index(v) for v in values], dtype=float) + 0.5) / n

    def from_unit(self, u):
        n = len(self.choices)
        idx = np.clip(np.floor(np.asarray(u, dtype=float) * n), 0, n - 1).astype(int)
        return [self.choices[i] for i in idx]

    def sample(self, n, rng):
        return [self.choices[i] for i in rng.integers(len(self.choices), size=int(n))]

    def grid(self, n_points):
        return list(self.choices)

    def values(self):
        return list(self.choices)

    def contains(self, value):
        try:
            self._index(value)
        except ValueError:
            return False
        return True

    def __repr__(self):
        return f"Categorical({self.choices!r})"


class Distribution(Dimension):
    """A scipy.stats frozen distribution, sampled with ``rvs`` (as RandomizedSearchCV).

    The unit-cube encoding uses the distribution's CDF and quantile function,
    so it is available for continuous distributions only.
    """

    def __init__(self, dist, name: str = ""):
        if not hasattr(dist, "rvs"):
            raise ValueError(f"{name or 'Distribution'}: needs an object with an rvs method")
        self.dist, self.name = dist, name

    @property
    def _discrete(self) -> bool:
        return not hasattr(self.dist, "pdf")

    def sample(self, n, rng):
        return np.atleast_1d(self.dist.rvs(size=int(n), random_state=rng)).tolist()

    def to_unit(self, values):
        """The CDF at values within the support; others raise ``ValueError``."""
        support = getattr(self.dist, "support", None)  # scipy's; any rvs object is taken
        low, high = (float(b) for b in support()) if support else (-np.inf, np.inf)
        x = _floats_within(values, low, high, self.name or "Distribution")
        return np.asarray(self.dist.cdf(x), dtype=float)

    def from_unit(self, u):
        eps = 1e-9
        vals = np.asarray(self.dist.ppf(np.clip(np.asarray(u, dtype=float), eps, 1 - eps)))
        return vals.astype(int).tolist() if self._discrete else vals.tolist()

    def grid(self, n_points):
        qs = (np.arange(max(int(n_points), 1)) + 0.5) / max(int(n_points), 1)
        return self.from_unit(qs)

    def contains(self, value):
        return bool(self.dist.pdf(value) > 0) if not self._discrete else True

    def values(self):
        if not self._discrete:
            return None
        low, high = self.dist.support()
        return range(int(low), int(high) + 1) if np.isfinite(high - low) else None

    def __repr__(self):
        return f"Distribution({self.dist.dist.name})"


def as_dimension(spec: Any, name: str = "") -> Dimension:
    """Turn a user specification into a :class:`Dimension`.

    Accepts a dimension, a list/tuple of choices, or a scipy.stats frozen
    distribution (anything with ``rvs``).
    """
    if isinstance(spec, Dimension):
        spec = copy.copy(spec)  # never mutate the user's object (a scikit-learn parameter)
        if not spec.name:
            spec.name = name
        spec.validate(name or spec.name)
        return spec
    if hasattr(spec, "rvs"):
        return Distribution(spec, name)
    if isinstance(spec, (list, tuple, np.ndarray)):
        return Categorical(list(spec), name)
    raise ValueError(
        f"parameter {name!r}: expected Real, Integer, Categorical, a list of choices or a "
        f"scipy.stats distribution; got {spec!r}"
    )


def _key(config: Mapping) -> tuple:
    """A hashable identity of a configuration (its names and the values' ``repr``)."""
    return tuple(sorted((k, repr(v)) for k, v in config.items()))


class Space:
    """A search space: a dict of dimensions, or a list of dicts (conditional).

    Parameters
    ----------
    spec : dict or list of dict
        ``{name: dimension}``; names may use scikit-learn's ``step__param``
        form for pipelines.

    Examples
    --------
    >>> space = Space({"C": Real(1e-1, 1e5, log=True), "kernel": ["rbf", "poly"]})
    >>> len(space.sample(4, random_state=0))
    4
    """

    def __init__(self, spec: Mapping | Sequence[Mapping]):
        if isinstance(spec, Space):
            spec = spec.spec
        if not isinstance(spec, Iterable) or isinstance(spec, (str, bytes)):  # a dict is one
            raise ValueError(f"space must be a dict or a list of dicts; got {spec!r}")
        subspaces = [spec] if isinstance(spec, Mapping) else list(spec)
        if not subspaces:
            raise ValueError("space must be a non-empty dict or list of dicts")
        self.subspaces: list[dict[str, Dimension]] = []
        for sub in subspaces:
            if not isinstance(sub, Mapping) or not sub:
                raise ValueError(f"space entries must be non-empty dicts; got {sub!r}")
            self.subspaces.append({str(k): as_dimension(v, str(k)) for k, v in sub.items()})
        self.spec = spec

    @property
    def names(self) -> list[str]:
        """All parameter names, in first-seen order."""
        seen: dict[str, None] = {}
        for sub in self.subspaces:
            seen.update(dict.fromkeys(sub))
        return list(seen)

    @property
    def is_conditional(self) -> bool:
        return len(self.subspaces) > 1

    def sample(self, n: int, random_state=None) -> list[dict]:
        """Draw ``n`` distinct configurations (each subspace chosen uniformly for lists).

        A draw that repeats an earlier configuration is drawn again (as
        ``RandomizedSearchCV`` samples without replacement); a finite space
        of at most ``n`` configurations gives each of them once, in a random
        order, so the list may be shorter than ``n``.
        """
        if int(n) != n or n < 1:
            raise ValueError(f"n_candidates must be a positive integer; got {n!r}")
        rng = np.random.default_rng(random_state)
        every = self._every(int(n))
        if every is not None:
            return [every[i] for i in rng.permutation(len(every))]
        out = self._draw(int(n), rng)
        for _ in range(64):
            seen: set = set()
            again = []  # positions repeating an earlier configuration
            for i, cfg in enumerate(out):
                key = _key(cfg)
                if key in seen:
                    again.append(i)
                seen.add(key)
            if not again:
                return out
            for i, cfg in zip(again, self._draw(len(again), rng), strict=True):
                out[i] = cfg
        return list({_key(cfg): cfg for cfg in out}.values())

    def _every(self, limit: int) -> list[dict] | None:
        """Every configuration when the space is finite with at most ``limit``, else None."""
        out: dict = {}
        for sub in self.subspaces:
            names = sorted(sub)
            axes = [sub[k].values() for k in names]
            if any(a is None for a in axes) or math.prod(len(a) for a in axes) > limit:
                return None
            for combo in itertools.product(*axes):
                cfg = dict(zip(names, combo, strict=True))
                out.setdefault(_key(cfg), cfg)
        return list(out.values()) if len(out) <= limit else None

    def _draw(self, n: int, rng: np.random.Generator) -> list[dict]:
        which = rng.integers(len(self.subspaces), size=int(n))
        out: list[dict] = [{} for _ in range(int(n))]
        for s, sub in enumerate(self.subspaces):
            rows = np.flatnonzero(which == s)
            if rows.size == 0:
                continue
            for name, dim in sorted(sub.items()):
                for r, v in zip(rows, dim.sample(rows.size, rng), strict=True):
                    out[r][name] = v
        return [{k: cfg[k] for k in sorted(cfg)} for cfg in out]

    def grid(self, n_points: int = 5) -> list[dict]:
        """The full grid: every categorical choice and ``n_points`` values per numeric dimension."""
        if isinstance(n_points, bool) or not isinstance(n_points, numbers.Integral) \
                or n_points < 1:  # (space sits beside _validation: no import of it)
            raise ValueError(f"n_points must be an integer >= 1; got {n_points!r}")
        out = []
        for sub in self.subspaces:
            names = sorted(sub)
            axes = [sub[k].grid(n_points) for k in names]
            out.extend(dict(zip(names, combo, strict=True)) for combo in itertools.product(*axes))
        return out

    # -- unit-cube encoding (single, unconditional spaces) ---------------------
    def _single(self) -> dict[str, Dimension]:
        if self.is_conditional:
            raise ValueError("the unit-cube encoding needs a single dict space, not a list")
        return self.subspaces[0]

    @property
    def n_dims(self) -> int:
        """Width of the unit-cube encoding."""
        return len(self._single())

    def centre(self) -> dict:
        """The configuration at the middle of every dimension's encoding.

        The log-midpoint of a log-scaled range, the midpoint of a linear one,
        the median of a distribution, the middle of a list of choices: the
        value ConfigSpace takes as a numeric hyperparameter's default. A float
        is given to 12 significant digits where that stays in its domain
        (``Real(1e-1, 1e3, log=True)`` has centre ``10.0``, not the
        ``9.999999999999998`` that ``exp`` of the mean logarithm gives).
        """
        dims = self._single()
        out = self.from_unit(np.full(self.n_dims, 0.5))[0]
        for name, value in out.items():
            if isinstance(value, float) and dims[name].contains(short := float(f"{value:.12g}")):
                out[name] = short
        return out

    def to_unit(self, configs: Sequence[Mapping]) -> np.ndarray:
        """Encode configurations as rows of ``[0, 1]^d`` (names in sorted order).

        A value outside its dimension (beyond a range or a distribution's
        support, not an integer of an :class:`Integer`, not one of the
        choices) raises ``ValueError`` naming the parameter and its range.
        """
        dims = self._single()
        names = sorted(dims)
        cols = [dims[k].to_unit([c[k] for c in configs]) for k in names]
        return np.column_stack(cols) if cols else np.empty((len(configs), 0))

    def from_unit(self, points: np.ndarray) -> list[dict]:
        """Decode rows of ``[0, 1]^d`` into configurations."""
        dims = self._single()
        names = sorted(dims)
        pts = np.atleast_2d(np.asarray(points, dtype=float))
        if pts.shape[1] != len(names):
            raise ValueError(f"points must have {len(names)} columns; got {pts.shape[1]}")
        cols = [dims[k].from_unit(pts[:, j]) for j, k in enumerate(names)]
        return [dict(zip(names, row, strict=True)) for row in zip(*cols, strict=True)]

    def describe(self) -> dict | list:
        """The space as JSON-able text: ``{name: repr(dimension)}`` (a list for conditional)."""
        out = [{k: repr(d) for k, d in sub.items()} for sub in self.subspaces]
        return out if self.is_conditional else out[0]

    def check_names(self, valid: set[str] | Sequence[str], what: str = "the estimator") -> None:
        """Raise ``ValueError`` for parameter names not in ``valid``."""
        valid = set(valid)
        unknown = [n for n in self.names if n not in valid]
        if unknown:
            raise ValueError(
                f"unknown parameter(s) {unknown} for {what}; valid names are {sorted(valid)}"
            )

    def __repr__(self):
        return f"Space({self.subspaces if self.is_conditional else self.subspaces[0]!r})"
