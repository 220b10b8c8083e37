"""The candidates a search starts from, and whether it adapts them in waves.

:func:`initial_design` draws wave 1 (space-filling); :func:`resolve_adaptive`
and :func:`resolve_wave_size` turn ``MFTuner``'s ``adaptive`` and
``wave_size`` into what a search runs (:mod:`mftune.engine.waves`).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import qmc

from .waves import WAVE_ALGORITHMS

__all__ = ["draw_candidates", "initial_design", "resolve_adaptive", "resolve_wave_size"]


def initial_design(space, n: int, rng) -> list[dict]:
    """Wave 1: ``n`` space-filling candidates (scrambled Sobol, random when conditional).

    The design point nearest the centre of the space (:meth:`Space.centre`)
    moves to the centre: search spaces are usually drawn around a value
    known to be sensible, and the calibration starts there, so that value is
    the first answer. Points that decode to a configuration already drawn
    (integer or categorical dimensions) are replaced by random draws until
    ``n`` distinct configurations are found (fewer if the space has fewer).

    Parameters
    ----------
    space : Space
    n : int
    rng : numpy.random.Generator

    Returns
    -------
    list of dict
    """
    if space.is_conditional:
        return space.sample(n, rng)
    sobol = qmc.Sobol(space.n_dims, scramble=True, seed=rng)
    with warnings.catch_warnings():  # n need not be a power of 2 here
        warnings.simplefilter("ignore", UserWarning)
        units = sobol.random(int(n))
    def canonical(u):  # the encoding of the configuration each point decodes to
        return space.to_unit(space.from_unit(u))

    def first_of_each(u):
        return np.sort(np.unique(np.round(u, 9), axis=0, return_index=True)[1])

    units = canonical(units)
    middle = space.centre()
    centre = space.to_unit([middle])[0]
    units[np.argmin(np.linalg.norm(units - centre, axis=1))] = centre
    for _ in range(8):
        keep = first_of_each(units)
        if keep.size == len(units):
            break
        fresh = rng.random((len(units) - keep.size, space.n_dims))
        units = canonical(np.vstack([units[keep], fresh]))
    units = units[first_of_each(units)]
    configs = space.from_unit(units)
    for i in np.flatnonzero(np.abs(units - centre).max(axis=1) < 1e-12):  # as centre() gives it
        configs[i] = dict(middle)
    return configs


def draw_candidates(space, n: int, rng: np.random.Generator, adaptive: bool) -> list[dict]:
    """The first candidates of a search: :func:`initial_design` with waves, else
    :meth:`Space.sample <mftune.space.Space.sample>` (a fixed list); both distinct.

    Warns (``UserWarning``, as ``RandomizedSearchCV`` does) when the space gave
    fewer than ``n`` distinct configurations: each is then evaluated once.
    """
    out = initial_design(space, n, rng) if adaptive else space.sample(n, rng)
    if len(out) < n:
        warnings.warn(f"the space gave {len(out)} distinct configurations, fewer than "
                      f"n_candidates={n}: each of them is a candidate once",
                      UserWarning, stacklevel=4)
    return out


def resolve_adaptive(adaptive, *, space, algorithm, n_candidates) -> tuple[bool, str]:
    """Whether a search runs waves, and why (``adaptive`` of :class:`~mftune.MFTuner`).

    ``"auto"``: waves when the candidates are sampled from an unconditional
    space and the algorithm is an elimination one (:data:`WAVE_ALGORITHMS`, or
    ``"auto"``); a fixed list otherwise. A study file records how each wave
    ended, so a resumed search (or another worker) takes the same decisions.
    ``True``: waves, or a ``ValueError`` saying what prevents them.
    ``False``: a fixed list.

    Parameters
    ----------
    adaptive : {"auto", True, False}
    space : Space
    algorithm : str or policy
        The tuner's ``algorithm``.
    n_candidates : int or "grid"

    Returns
    -------
    waves : bool
    why : str
        The reason, for the progress line.
    """
    if not (adaptive == "auto" or adaptive is True or adaptive is False):
        raise ValueError(f"adaptive must be 'auto', True or False; got {adaptive!r}")
    if adaptive is False:
        return False, "adaptive=False"
    why = None
    if not isinstance(algorithm, str):
        why = "a policy object as algorithm"
    elif algorithm != "auto" and algorithm not in WAVE_ALGORITHMS:
        why = f"algorithm={algorithm!r} (waves run {list(WAVE_ALGORITHMS)} or 'auto')"
    elif isinstance(n_candidates, str):
        why = f"n_candidates={n_candidates!r} (a fixed grid)"
    elif space.is_conditional:
        why = "a conditional space (the surrogate needs the unit-cube encoding of one dict)"
    if why is None:
        return True, "waves of candidates proposed by a surrogate"
    if adaptive is True:
        raise ValueError(f"adaptive=True is not available with {why}; use adaptive='auto' "
                         "or False")
    return False, f"a fixed candidate list: {why}"


def resolve_wave_size(wave_size, n_candidates) -> int:
    """New candidates per wave: ``wave_size``, or half of ``n_candidates`` for ``"auto"``.

    Parameters
    ----------
    wave_size : int or "auto"
    n_candidates : int
        The first wave's size.

    Returns
    -------
    int
    """
    if wave_size == "auto":
        return max(2, int(n_candidates) // 2)
    if isinstance(wave_size, bool) or not isinstance(wave_size, (int, np.integer)) \
            or wave_size < 1:
        raise ValueError(f"wave_size must be 'auto' or an integer >= 1; got {wave_size!r}")
    return int(wave_size)
