"""``MFTuner(storage=...)``: write a search to a study file, and resume it from there.

The tuner writes the same SQLite study as ``mftune tune`` (:mod:`mftune.study.store`),
so ``mftune status/report/export`` read it. What goes into the study record:

* ``space`` — the search space as text (one ``repr`` per dimension);
  ``arms`` — the sampled candidates as JSON;
* ``fidelities`` — ``{"name": fidelity, "values": levels}``; ``objective`` —
  the optimised metric, ``"maximize"`` (scikit-learn scores are
  higher-is-better); ``algorithm`` and ``seed`` (the integer drawn from
  ``random_state``, which seeds candidates, subsets, folds and the policy);
* ``settings`` — the policy's settings in the shared format of
  :mod:`mftune.study.record` (costs, σ, the bias bound, δ, ε, what was
  estimated), written once the calibration has set them; the tuner's later
  changes to the policy (measured costs, grown bias bounds, pooled σ²) are
  stored per batch with :meth:`~mftune.study.store.StudyStore.set_update`;
* ``spec`` — ``calibrate``, ``first_batch``, ``calibration_pulls`` (shared
  with script studies) and ``tuner``: a description of everything else that
  decides the pulls (estimator and its parameters, scoring, cv, the data's
  shape and hash, bias mode, costs, δ, ε…). A second ``fit`` on the same
  file resumes only if these, the candidates, the fidelities, the algorithm
  and the seed are the same; otherwise it raises a ``ValueError`` naming
  ``storage`` and the keys that differ.

Pulls are written by :class:`~mftune.study.recording.RecordingEvaluator` (one row
per pull, the CV details in its ``info``); on resume it answers the stored
pulls from the file and runs only the unfinished ones. Nothing is pickled.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

import joblib
import numpy as np
from sklearn.utils.validation import _num_samples

from ..engine.calibration import SettingRefused
from ..study.jsonio import dumps
from ..study.recording import RecordingEvaluator, StudyBusyError
from ..study.replay import StudyMismatchError
from ..study.store import StudyStore, remove_study_files

__all__ = [
    "close_recorder", "describe", "open_recorder", "storage_errors", "stored_seed",
    "stored_waves", "study_signature",
]

# Arguments that change what is pulled or how results are read: a stored study
# written with other values cannot be resumed. (budget, max_pulls, timeout,
# verbose and refit may change between fits; n_jobs too, except for algorithms
# with a batch rule, see study_signature.)
_SIGNATURE_PARAMS = ("fidelity", "fidelities", "min_resources", "factor", "algorithm",
                     "n_candidates", "grid_points", "bias", "n_calibration", "sigma", "costs",
                     "delta", "epsilon", "error_score", "scoring", "cv")


def describe(value):
    """A JSON description of ``value`` that is stable across processes.

    Estimators become their class and parameters, callables their qualified
    name, arrays lists, non-finite floats strings; anything else its
    ``repr`` without memory addresses.
    """
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else repr(float(value))
    if isinstance(value, np.generic):
        return describe(value.item())
    if isinstance(value, np.ndarray):
        return describe(value.tolist())
    if isinstance(value, dict):
        return {str(k): describe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [describe(v) for v in value]
    if hasattr(value, "get_params") and not isinstance(value, type):
        return {"class": _qualname(type(value)),
                "params": describe(value.get_params(deep=False))}
    if callable(value):
        return _qualname(value)
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))


def _qualname(obj) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


def study_signature(tuner, X, y, groups) -> dict:
    """What, besides candidates, fidelities, algorithm and seed, must match to resume.

    For an algorithm with a batch rule (LUCB, the GP policies), and for IISE /
    IISE-γ with best-first rounds (the tuner's default), the batch size (the
    effective ``n_jobs``) decides the batches, so it is part of the signature;
    whole-round algorithms resume with any ``n_jobs``.
    """
    from ..policies.registry import REGISTRY, tuner_switches

    data = {"n_samples": int(_num_samples(X)), "hash": joblib.hash((X, y, groups))}
    sig = {"estimator": describe(tuner.estimator), "data": data}
    sig.update({k: describe(getattr(tuner, k)) for k in _SIGNATURE_PARAMS})
    entry = REGISTRY.get(tuner.algorithm_) if isinstance(tuner.algorithm, str) else None
    switches = (tuner_switches(tuner.algorithm_, waves=tuner.adaptive_)
                if entry is not None else {})
    best_first = (tuner.algorithm_params or {}).get("best_first", switches.get("best_first"))
    if entry is not None and (entry.batched or best_first):
        sig["batch_size"] = tuner._batch_size()  # best-first rounds are asked in batches too
    sig.update(switches)
    sig["validation"] = tuner.validation_
    sig["algorithm_params"] = describe(tuner.algorithm_params or {})
    if tuner.adaptive_:  # (a fixed list's study records no waves)
        sig["waves"] = {"wave_size": tuner._wave_size}
    return sig


def _norm(value):
    return json.loads(dumps(value))


def stored_waves(path) -> bool | None:
    """Whether the study at ``path`` runs waves of candidates (``None`` when there is none)."""
    if not StudyStore.exists(path):
        return None
    with StudyStore(path, readonly=True) as store:
        return bool(store.meta["spec"].get("adaptive", False))


def stored_seed(path) -> int | None:
    """The seed of the study at ``path`` (``None`` when there is none)."""
    if not StudyStore.exists(path):
        return None
    with StudyStore(path, readonly=True) as store:
        return store.meta["seed"]


def _objective_name(tuner, metric: str) -> str:
    if tuner.multimetric_:
        return metric
    return tuner.scoring if isinstance(tuner.scoring, str) else "score"


def open_recorder(tuner, evaluator, *, candidates, levels, seed, space, calibrate: bool,
                  calibration_pulls: int, signature: dict) -> RecordingEvaluator:
    """Create the study file of ``tuner.storage``, or open it and check it matches.

    Returns
    -------
    RecordingEvaluator
        Wrapping ``evaluator``; policy batches are numbered from 1 when the
        search starts with a calibration (batch 0).

    Raises
    ------
    ValueError
        Naming ``storage``: the file is not a study, or holds a different one.
    """
    path = Path(os.fspath(tuner.storage))
    record = {
        "space": space.describe(),
        "fidelities": {"name": tuner.fidelity, "values": list(levels)},
        "objective": {"name": _objective_name(tuner, evaluator.metric),
                      "direction": "maximize"},
        "algorithm": tuner.algorithm_,
        "seed": int(seed),
        "configs": list(candidates),
        "spec": {"source": "MFTuner", "command": None, "calibrate": bool(calibrate),
                 "first_batch": int(calibrate), "calibration_pulls": int(calibration_pulls),
                 "error_reward": None, "tuner": signature, "adaptive": bool(tuner.adaptive_),
                 "wave_size": tuner._wave_size},
    }
    tuner._created_storage = not StudyStore.exists(path)
    try:
        if tuner._created_storage:
            store = StudyStore.create(path, settings={}, **record)
        else:
            store = StudyStore(path)
            try:
                _check_same(store, record, tuner.storage, tuner.random_state)
            except BaseException:
                store.close()
                raise
    except (OSError, ValueError, FileExistsError) as exc:
        if str(exc).startswith("storage="):
            raise
        raise ValueError(f"storage={str(tuner.storage)!r}: {exc}") from None
    except Exception as exc:  # sqlite3.DatabaseError: not a study file
        raise ValueError(f"storage={str(tuner.storage)!r} is not a usable study file: "
                         f"{exc}") from None
    return RecordingEvaluator(store, evaluator, first_batch=int(calibrate))


def _check_same(store: StudyStore, record: dict, storage, random_state) -> None:
    meta = store.meta
    differ = [key for key in ("fidelities", "algorithm") if _norm(record[key]) != meta[key]]
    if record["seed"] != meta["seed"]:
        differ.append("random_state")
    if _norm(record["configs"]) != store.configs(initial=True):
        differ.append("candidates")
    stored = meta["spec"].get("tuner")
    if stored is None:
        raise ValueError(f"storage={str(storage)!r} holds a study that MFTuner did not write "
                         "(a script study of mftune tune?); choose another storage path")
    new = _norm(record["spec"]["tuner"])
    differ += [k if k != "batch_size" else  # the argument that sets it
               f"n_jobs (batches of {stored.get(k)} pulls stored, {new.get(k)} now)"
               for k in sorted(set(new) | set(stored)) if new.get(k) != stored.get(k)]
    if differ:
        hint = (" (random_state is a RandomState: give an integer to resume)"
                if "random_state" in differ and isinstance(random_state, np.random.RandomState)
                else "")
        raise ValueError(
            f"storage={str(storage)!r} holds a different study: {', '.join(differ)} "
            f"differ{hint}. Resume it with the same settings and data, or choose another "
            "storage path")


@contextmanager
def storage_errors(tuner):
    """Name ``storage`` in mismatch errors; leave the study file consistent on any exit."""
    try:
        yield
    except SettingRefused as exc:  # read off the calibration, after the file was written
        close_recorder(tuner)
        if tuner.storage is None:  # no file: the message stands as it is
            raise
        where = f"storage={str(tuner.storage)!r}"
        if tuner.__dict__.pop("_created_storage", False):
            remove_study_files(Path(os.fspath(tuner.storage)))
            raise SettingRefused(f"{exc} (the new study file {where} was removed)") from None
        raise SettingRefused(f"{where}: {exc}; the study there was written with this setting: "
                             "choose another storage path for a new one") from None
    except (StudyMismatchError, StudyBusyError) as exc:
        raise ValueError(f"storage={str(tuner.storage)!r}: {exc}") from None
    except sqlite3.IntegrityError as exc:
        if "UNIQUE" not in str(exc):  # not a race: a row the file cannot hold (say which)
            raise ValueError(f"storage={str(tuner.storage)!r}: the study file refused a "
                             f"row ({exc})") from None
        raise ValueError(f"storage={str(tuner.storage)!r}: another process is writing "
                         "this study; run one search per study file at a time") from None
    finally:
        close_recorder(tuner)


def close_recorder(tuner) -> None:
    """Release the tuner's running pulls, note why it stopped, and close its study file."""
    rec = tuner.__dict__.pop("_recorder", None)
    if getattr(tuner, "_engine", None) is not None:
        tuner._engine.recorder = None
    if rec is None:
        return
    tuner.n_replayed_ = rec.n_replayed
    try:
        rec.release()
        reason = tuner.__dict__.get("_stop_reason")
        if reason is not None:
            rec.store.update_state(last_reason=reason, updated=time.time(),
                                   last_worker=rec.worker)
    finally:
        rec.close()
