"""Uniform random search at the target fidelity — the floor every method must beat."""

from __future__ import annotations

import numpy as np

from .._validation import check_batch_size
from .continuous import ContinuousPolicy

__all__ = ["RandomSearch"]


class RandomSearch(ContinuousPolicy):
    """I.i.d. uniform points of ``[0, 1]^d``, queried at the target fidelity.

    Parameters
    ----------
    n_dims : int
    costs : array-like, shape (M,)
    capital : float, optional
    batch_size : int, default=1
        Points per ask (they may be evaluated in parallel).
    random_state : int, Generator or None
    """

    def __init__(self, n_dims: int, costs, capital: float | None = None, *,
                 batch_size: int = 1, random_state=None):
        super().__init__(n_dims, costs, capital, random_state)
        self.batch_size = check_batch_size(batch_size)

    def _propose(self, n: int):
        return self.rng_.random((n, self.n_dims)), np.full(n, self.n_fidelities - 1)
