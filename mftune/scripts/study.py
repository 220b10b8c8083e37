"""Script studies: create one from a space file, and run it through the engine.

A script study is a :class:`~mftune.engine.search.Search` whose evaluator runs
the user's command (:class:`~mftune.scripts.runner.ScriptEvaluator`) and whose
every batch goes through the study file
(:class:`~mftune.study.recording.RecordingEvaluator`, shared): the
calibration, the algorithm and its ``auto`` rule, the between-round updates,
the failed-pull rule, the budget and the statement are those of
``MFTuner``, with waves of candidates proposed by a surrogate by default.
Several processes (``mftune worker``) can work on one study: each replays
the stored batches (same seed, same decisions; the first to end a wave
records what follows it), and they share each new batch by claiming its
pending rows.
"""

from __future__ import annotations

import os
import shutil
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from joblib import parallel_config

from ..engine.calibration import SettingRefused
from ..engine.candidates import draw_candidates, resolve_adaptive, resolve_wave_size
from ..engine.search import Search
from ..policies.registry import POINT_ALGORITHMS
from ..study.recording import RecordingEvaluator
from ..study.store import StudyStore
from ..study.workers import _LIVE_TOKENS
from .runner import ScriptEvaluator
from .spacefile import StudySpec

__all__ = ["DEFAULT_BUDGET", "StudyOutcome", "create_study", "run_study", "study_command"]

#: A script study given neither ``budget`` nor ``max_pulls`` stops after the cost of
#: this many top-fidelity runs of every candidate (stated when it starts).
DEFAULT_BUDGET = 10


def _settings(spec: StudySpec, extra: dict | None = None) -> dict:
    """The engine settings a space file sets (``mftune.engine.search.SETTINGS``), and with
    ``extra`` (a study's stored ``spec`` record) its waves of candidates."""
    st, fid, obj = spec.study, spec.fidelity, spec.objective
    costs = fid["costs"]
    if costs == "nominal":
        costs = [float(v) for v in fid["values"]]
    bias = fid.get("xi") if fid.get("xi") is not None else fid.get("gamma")
    algorithm = st["algorithm"]
    if algorithm == "auto" and fid.get("gamma") is not None and fid.get("xi") is None:
        algorithm = "iise-gamma"  # the bounds given are γ
    return {"algorithm": algorithm, "bias": "adaptive" if bias is None else list(bias),
            "n_calibration": int(spec.calibration["arms"]), "sigma": obj.get("sigma"),
            "costs": costs, "delta": float(st["delta"]),
            "epsilon": "auto" if st["epsilon"] is None else float(st["epsilon"]),
            "budget": st["budget"], "max_pulls": st["max_pulls"],
            "batch_size": int(st["workers"]),
            # a study written before waves ran (no "adaptive") keeps its fixed list
            **({"adaptive": True, "wave_size": int(extra["wave_size"])}
               if extra and extra.get("adaptive") else {})}


def create_study(spec: StudySpec, command: list[str] | None, path=None, *,
                 cwd=None) -> StudyStore:
    """Create the study file of a script study (validated spec, command, sampled arms).

    Parameters
    ----------
    spec : StudySpec
        The validated space file (with any command-line overrides applied).
    command : list of str or None
        The command to run (no shell); ``None``: a served study, whose pulls
        the workers of ``mftune serve`` run with their own command.
    path : str or Path, optional
        Study file; default ``spec.study["path"]``.
    cwd : str, optional
        Working directory of the runs; default the current directory.

    Returns
    -------
    StudyStore
    """
    st = spec.study
    path = Path(path or st["path"])
    if command is not None and not command:
        raise ValueError("command must not be empty: mftune tune SPACE_FILE -- COMMAND [ARGS]")
    if command and shutil.which(command[0]) is None \
            and shutil.which(str(Path(cwd or ".") / command[0])) is None:
        raise ValueError(f"command not found: {command[0]} (not on PATH, nor an executable "
                         "file); nothing was written")
    # waves of candidates proposed by a surrogate (as MFTuner's adaptive="auto"), their
    # first wave space-filling; or a fixed list of random draws
    adaptive, _ = resolve_adaptive(st.get("adaptive", "auto"), space=spec.space,
                                   algorithm=st["algorithm"], n_candidates=st["n_candidates"])
    if st["algorithm"] in POINT_ALGORITHMS:  # the calibration's draws; the GP proposes the rest
        if st["budget"] is None and st["max_pulls"] is None:
            raise ValueError(f"study.budget: algorithm {st['algorithm']!r} proposes "
                             "configurations until it is stopped: give study.budget (seconds; "
                             "--budget) or study.max_pulls (--max-pulls)")
        if spec.space.is_conditional:
            raise ValueError(f"algorithm {st['algorithm']!r} needs an unconditional space "
                             "(one [parameters] table): it searches the unit-cube encoding")
        configs = spec.space.sample(max(int(spec.calibration["arms"]), 2),
                                    random_state=st["seed"])
    else:
        configs = draw_candidates(spec.space, st["n_candidates"],
                                  np.random.default_rng(st["seed"]), adaptive)
        if len(configs) < 2:
            raise ValueError(f"parameters: the space holds {len(configs)} distinct "
                             "configuration; a search needs at least 2 (give a range or "
                             "more choices)")
    settings = _settings(spec)
    if adaptive:  # the calibration then covers the cheaper half of the fidelities
        settings.update(adaptive=True, wave_size=resolve_wave_size("auto", len(configs)))
    probe = Search(_Shape(configs, spec.calibration["repeats"]), spec.fidelity["values"],
                   seed=st["seed"], **settings)
    n_cal = probe.calibration_pulls(len(configs), spec.calibration["repeats"])
    es = st.get("error_score")
    extra = {"source": "mftune tune" if command is not None else "mftune serve",
             "spec": spec.to_dict(), "command": list(command or []),
             "cwd": str(Path(cwd or os.getcwd()).resolve()),
             "trials_dir": f"{path.stem}.trials", "calibrate": n_cal > 0,
             "first_batch": int(n_cal > 0), "calibration_pulls": n_cal,
             "adaptive": adaptive, "wave_size": settings.get("wave_size"),
             "error_reward": None if es is None else (
                 1.0 if spec.objective["direction"] == "maximize" else -1.0) * es}
    return StudyStore.create(path, space=spec.parameters, fidelities=spec.fidelity,
                             objective=spec.objective, algorithm=probe.algorithm_,
                             settings={"batch_size": settings["batch_size"]},
                             seed=st["seed"], configs=configs, spec=extra)


@dataclass
class _Shape:
    """What :class:`Search` reads of an evaluator before it runs (for :func:`create_study`)."""

    candidates: list
    n_splits: int


def study_command(store: StudyStore) -> tuple[list[str], str]:
    """The command a study runs and its working directory (a study file is code)."""
    extra = store.meta["spec"]
    if not extra.get("command"):
        who = extra.get("source", "another program")
        where = ("serve it again (mftune serve PATH); a served study stopped by its budget "
                 "or pull cap goes on with a larger one: POST /api/studies/NAME/resume"
                 if who == "mftune serve"
                 else "fit again with the same storage=" if who == "MFTuner"
                 else "resume it where it was written")
        raise ValueError(f"{store.path}: this study was written by {who}, not mftune tune; "
                         f"mftune status/report/export read it; to continue it, {where}")
    return list(extra["command"]), extra["cwd"]


@dataclass
class StudyOutcome:
    """How a run of a script study ended (the study's state is in its file)."""

    reason: str
    statement: str
    pulls_run: int
    error: str | None = None


def run_study(path, *, workers=None, budget=None, max_pulls=None, timeout=None,
              scheduler=None, verbose: int = 1, stream=None, poll: float = 0.1,
              on_batch=None) -> StudyOutcome:
    """Work on the script study in ``path`` until it ends, a limit is reached, or Ctrl+C.

    Parameters
    ----------
    path : str or Path
        The study file.
    workers : int, optional
        Runs in flight at once in this process (default: the space file's
        ``workers``; with ``scheduler``, the cluster's threads).
    budget : float, optional
        Stop once the study's summed cost reaches it (seconds; default the
        space file's, else :data:`DEFAULT_BUDGET` top-fidelity runs of every
        candidate).
    max_pulls : int, optional
        Stop once the study holds this many pulls.
    timeout : float, optional
        Per-run timeout overriding the space file's.
    scheduler : str, optional
        Address (or scheduler file) of a dask scheduler: the runs start on the
        cluster's workers through joblib's dask backend (:mod:`mftune.scripts.cluster`).
    verbose : int, default=1
        Progress lines (0: none).
    stream : file, optional
        Where progress lines go.
    poll : float, default=0.1
        Seconds between looks at the pulls other workers run.
    on_batch : callable, optional
        Serve the study instead of running it (:mod:`mftune.service`): this
        process runs no pull, it stores each batch, calls
        ``on_batch(kind, rows, repeats)`` and waits for the rows to finish
        (see :class:`~mftune.study.recording.RecordingEvaluator`).

    Returns
    -------
    StudyOutcome
    """
    store = StudyStore(path)
    extra = store.meta["spec"]
    # a last run stopped by its failed runs (a broken script?), from which nothing was
    # decided (the calibration, or the last batch): they run again, so a study resumed
    # after a fix goes on (the first process to resume does it)
    store.retry_failed()
    try:
        command, cwd = study_command(store)
    except ValueError:
        if on_batch is None:
            store.close()
            raise
        command, cwd = ["(run by the workers)"], None  # served: never run here
    spec = StudySpec.from_dict(extra["spec"])
    st, fid = spec.study, spec.fidelity
    settings = _settings(spec, extra)
    settings.update({k: v for k, v in (("budget", budget), ("max_pulls", max_pulls))
                     if v is not None})
    if settings["budget"] is None and settings["max_pulls"] is None:
        settings["default_budget"] = DEFAULT_BUDGET
    client = None
    if scheduler is not None:  # connect now: a wrong address fails before any work
        from .cluster import connect, n_threads

        try:
            client = connect(scheduler)
        except ValueError:
            store.close()
            raise
        slots = int(workers or max(n_threads(client), 1))
    else:
        slots = int(workers or st["workers"])
    sign = 1.0 if spec.objective["direction"] == "maximize" else -1.0
    evaluator = ScriptEvaluator(
        command, store.configs(initial=True), fid["name"], fid["values"],
        (store.path.parent / extra["trials_dir"]).resolve(), pass_mode=st["pass"],
        fidelity_pass=fid["pass"], timeout=timeout if timeout is not None else st["timeout"],
        direction=spec.objective["direction"], error_score=st["error_score"], seed=st["seed"],
        cwd=cwd, n_splits=spec.calibration["repeats"], n_jobs=slots)
    recorder = RecordingEvaluator(store, evaluator, sign, int(extra["first_batch"]),
                                  shared=True, slots=0 if on_batch else slots, poll=poll,
                                  on_batch=on_batch)
    search = Search(evaluator, fid["values"], seed=st["seed"], space=spec.space,
                    recorder=recorder, stream=stream, verbose=verbose, **settings)
    reason, error = "interrupted", None
    backend = parallel_config(backend="dask") if client is not None else nullcontext()
    try:
        with backend:
            search.setup(np.random.default_rng(st["seed"]))
            reason = search.search()
        error = search.failure_
    except KeyboardInterrupt:
        evaluator.kill_all()
    except SettingRefused as exc:  # the calibration ran, and a setting cannot go on from it
        reason = "setting-refused"
        error = (f"{exc}. The calibration's runs are kept in the study file (mftune export); "
                 "a new study with a valid setting runs them again")
    except ValueError as exc:  # every calibration run failed, or nothing to estimate from
        reason, error = "all-failed", str(exc)
    finally:
        if client is not None:
            client.close()
        n_run = recorder.n_evaluated
        _LIVE_TOKENS.discard(recorder.worker)
        try:
            store.update_state(last_reason=reason, last_worker=recorder.worker,
                               updated=time.time(), error=error)
        finally:
            recorder.close()
    statement = search.statement(reason) if hasattr(search, "policy_") else (error or "")
    return StudyOutcome(reason, statement, n_run, error)
