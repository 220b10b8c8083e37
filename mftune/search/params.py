"""Argument checks and scorers of :class:`mftune.MFTuner` (kept apart from the search)."""

from __future__ import annotations

import numbers
import os

import numpy as np
from sklearn.metrics import check_scoring

from .._validation import check_n_jobs
from ..policies import registry as algorithms
from .continuation import check_option

__all__ = ["build_scorers", "check_params"]

_BIAS_MODES = ("estimate", "adaptive")


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and np.isfinite(v)


def check_params(self) -> None:  # noqa: C901 - one flat list of checks
    """Check every constructor argument of ``MFTuner`` (``self``), naming the bad one."""
    if not hasattr(self.estimator, "fit"):
        raise ValueError(f"estimator must have a fit method; got {self.estimator!r}")
    if not isinstance(self.fidelity, str):
        raise ValueError(f"fidelity must be 'n_samples' or the name of an estimator "
                         f"parameter; got {self.fidelity!r}")
    if self.fidelities is not None and (isinstance(self.fidelities, str)
                                        or not hasattr(self.fidelities, "__len__")):
        raise ValueError(f"fidelities must be a sequence; got {self.fidelities!r}")
    if self.fidelities is not None and any(
            isinstance(v, numbers.Real) and not np.isfinite(v) for v in self.fidelities):
        raise ValueError(f"fidelities must be finite; got {list(self.fidelities)!r}")
    if self.fidelity != "n_samples":
        valid = self.estimator.get_params(deep=True)
        if self.fidelity not in valid:
            raise ValueError(f"fidelity: {self.fidelity!r} is neither 'n_samples' nor a "
                             f"parameter of the estimator; valid: {sorted(valid)}")
        if self.fidelities is None or len(self.fidelities) < 1:
            raise ValueError(f"fidelities: give the values of {self.fidelity!r} to "
                             "evaluate at (increasing, the last is the target)")
    if self.min_resources != "auto" and not (_is_int(self.min_resources)
                                              and self.min_resources >= 1):
        raise ValueError(f"min_resources must be 'auto' or an integer >= 1; "
                         f"got {self.min_resources!r}")
    if not _is_real(self.factor) or self.factor <= 1:
        raise ValueError(f"factor must be a number > 1; got {self.factor!r}")
    if self.validation not in ("auto", "full", "proportional"):
        raise ValueError(f"validation must be 'auto', 'proportional' or 'full'; "
                         f"got {self.validation!r}")
    check_option(self.continuation)
    if isinstance(self.algorithm, str):
        if self.algorithm != "auto":
            algorithms.check_algorithm(self.algorithm)  # algorithm_params: once it is chosen
        if (self.algorithm in algorithms.POINT_ALGORITHMS and self.budget is None
                and self.max_pulls is None):
            raise ValueError(f"algorithm={self.algorithm!r} proposes configurations until it is "
                             "stopped: give budget (seconds) or max_pulls")
    elif not all(hasattr(self.algorithm, a) for a in ("ask", "tell", "recommend")):
        raise ValueError(f"algorithm must be one of {algorithms.available()} or a policy "
                         f"object with ask/tell/recommend; got {self.algorithm!r}")
    if not (self.n_candidates == "grid" or (_is_int(self.n_candidates)
                                             and self.n_candidates >= 2)):
        raise ValueError(f"n_candidates must be an integer >= 2 or 'grid'; "
                         f"got {self.n_candidates!r}")
    if not (self.adaptive == "auto" or self.adaptive is True or self.adaptive is False):
        raise ValueError(f"adaptive must be 'auto', True or False; got {self.adaptive!r}")
    if not (self.wave_size == "auto" or (_is_int(self.wave_size) and self.wave_size >= 1)):
        raise ValueError(f"wave_size must be 'auto' or an integer >= 1; got {self.wave_size!r}")
    if not _is_int(self.grid_points) or self.grid_points < 2:
        raise ValueError(f"grid_points must be an integer >= 2; got {self.grid_points!r}")
    if isinstance(self.bias, str):
        if self.bias not in _BIAS_MODES:
            raise ValueError(f"bias must be 'adaptive', 'estimate' or a sequence of "
                             f"bounds; got {self.bias!r}")
    elif not hasattr(self.bias, "__len__"):
        raise ValueError(f"bias must be 'adaptive', 'estimate' or a sequence of bounds; "
                         f"got {self.bias!r}")
    if not _is_int(self.n_calibration) or self.n_calibration < 1:
        raise ValueError(f"n_calibration must be an integer >= 1; "
                         f"got {self.n_calibration!r}")
    if not isinstance(self.costs, str):
        c = np.asarray(self.costs, dtype=float) if hasattr(self.costs, "__len__") else None
        if c is None or c.ndim != 1 or np.any(~np.isfinite(c)) or np.any(c <= 0) \
                or np.any(np.diff(c) <= 0):
            raise ValueError(f"costs must be 'measured', 'levels' or strictly increasing "
                             f"positive numbers, one per fidelity; got {self.costs!r}")
    elif self.costs not in ("measured", "levels"):
        raise ValueError(f"costs must be 'measured', 'levels' or strictly increasing "
                         f"positive numbers, one per fidelity; got {self.costs!r}")
    if self.sigma is not None and not (_is_real(self.sigma) and self.sigma > 0):
        raise ValueError(f"sigma must be None or a number > 0; got {self.sigma!r}")
    if not _is_real(self.delta) or not 0 < self.delta < 1:
        raise ValueError(f"delta must be a number in (0, 1); got {self.delta!r}")
    if not (self.epsilon is None or self.epsilon == "auto"
            or (_is_real(self.epsilon) and self.epsilon > 0)):
        raise ValueError(f"epsilon must be None, 'auto' or a number > 0; "
                         f"got {self.epsilon!r}")
    if self.budget is not None and not (_is_real(self.budget) and self.budget > 0):
        raise ValueError(f"budget must be None or a number > 0; got {self.budget!r}")
    if self.max_pulls is not None and not (_is_int(self.max_pulls) and self.max_pulls >= 1):
        raise ValueError(f"max_pulls must be None or an integer >= 1; "
                         f"got {self.max_pulls!r}")
    if self.timeout is not None and not (_is_real(self.timeout) and self.timeout > 0):
        raise ValueError(f"timeout must be None or a number > 0; got {self.timeout!r}")
    if not (self.refit is True or self.refit is False or isinstance(self.refit, str)):
        raise ValueError(f"refit must be True, False or a metric name; got {self.refit!r}")
    if not (self.error_score == "raise" or (isinstance(self.error_score, numbers.Real)
                                             and not isinstance(self.error_score, bool))):
        raise ValueError(f"error_score must be 'raise' or a number; "
                         f"got {self.error_score!r}")
    check_n_jobs(self.n_jobs)
    if not (self.random_state is None or _is_int(self.random_state)
            or isinstance(self.random_state, np.random.RandomState)):
        raise ValueError(f"random_state must be None, an integer or a RandomState; "
                         f"got {self.random_state!r}")
    if not _is_int(self.verbose) or self.verbose < 0:
        raise ValueError(f"verbose must be an integer >= 0; got {self.verbose!r}")
    if self.storage is not None:
        if not isinstance(self.storage, (str, os.PathLike)) or not os.fspath(self.storage):
            raise ValueError(f"storage must be None or the path of a SQLite study file; "
                             f"got {self.storage!r}")
        if os.path.isdir(self.storage):
            raise ValueError(f"storage must be a file path, not a directory; "
                             f"got {self.storage!r}")
        if not isinstance(self.algorithm, str):
            raise ValueError("storage needs the algorithm given by name (a stored study is "
                             "resumed by rebuilding its policy); got a policy object")

def build_scorers(self):
    """``({name: scorer}, optimised metric name, multimetric?)``."""
    s = self.scoring
    if s is None or isinstance(s, str) or callable(s):
        try:
            return {"score": check_scoring(self.estimator, s)}, "score", False
        except (TypeError, ValueError) as exc:
            raise ValueError(f"scoring: {exc}") from exc
    if isinstance(s, (list, tuple, set)):
        s = {name: name for name in s}
    if not isinstance(s, dict) or not s:
        raise ValueError(f"scoring must be a string, a callable, a list or a dict; got {s!r}")
    try:
        scorers = {name: check_scoring(self.estimator, sc) for name, sc in s.items()}
    except (TypeError, ValueError) as exc:
        raise ValueError(f"scoring: {exc}") from exc
    if not isinstance(self.refit, str) or self.refit not in scorers:
        raise ValueError(f"refit must name the metric to optimise when scoring has several "
                         f"({sorted(scorers)}); got refit={self.refit!r}")
    return scorers, self.refit, True
