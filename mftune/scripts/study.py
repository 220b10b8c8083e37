"""Script studies: create one from a space file, and run it (one or several workers).

How work is shared
------------------
A study is the canonical sequence of batches a policy asks (IISE: one round
of every surviving arm; the calibration is batch 0 when it runs). Every
worker process keeps its own copy of the policy, rebuilt by replaying the
study's complete batches (same seed ⇒ same asks). The worker then inserts the
current batch's rows if they are not stored yet (``INSERT OR IGNORE``: every
worker asks the same batch), and claims pending rows of it, one per free slot,
in a ``BEGIN IMMEDIATE`` transaction (``UPDATE … WHERE status = 'pending'``):
a pull is claimed by exactly one worker. Workers with nothing to claim wait
until the batch is complete; then every worker tells its policy the whole
batch, in stored order, and moves on. So a round is split among the workers,
the decisions are those of a single uninterrupted run, and a pull left
``running`` by a dead worker is put back to ``pending`` and run again (it had
not finished).

Where the runs happen
---------------------
A worker keeps up to ``workers`` runs in flight: in a thread pool (each run
is a child process of the worker), or, with ``scheduler=ADDRESS`` (``mftune
tune|resume|worker --scheduler``), on the workers of a dask cluster
(:mod:`mftune.scripts.cluster`), by default as many as the cluster has threads.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..engine.script_calibration import calibration_plan, estimate_settings, needs_calibration
from ..policies.base import Policy
from ..policies.registry import POLICIES
from ..study.record import StudyRecord
from ..study.replay import StudyMismatchError, batch_rewards, replay
from ..study.store import _LIVE_TOKENS, StudyStore, new_worker_id
from .runner import ScriptEvaluator
from .spacefile import StudySpec

__all__ = ["Study", "StudyRunner", "create_study"]


def create_study(spec: StudySpec, command: list[str], path=None, *, cwd=None) -> StudyStore:
    """Create the study file of a script study (validated spec, command, sampled arms).

    Parameters
    ----------
    spec : StudySpec
        The validated space file (with any command-line overrides applied).
    command : list of str
        The command to run (no shell).
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
    if not command:
        raise ValueError("command must not be empty: mftune tune SPACE_FILE -- COMMAND [ARGS]")
    fid = spec.fidelity
    costs = fid["costs"]
    if costs == "nominal":
        costs = [float(v) for v in fid["values"]]
    # batch_size: the batch a batch-rule policy asks, fixed here so that every worker
    # and every resume asks the same batches (round-based policies ignore it)
    known = {"costs": costs, "sigma": spec.objective.get("sigma"), "xi": fid.get("xi"),
             "gamma": fid.get("gamma"), "delta": st["delta"], "epsilon": st["epsilon"],
             "batch_size": int(st["workers"])}
    needs = POLICIES[st["algorithm"]].needs
    calibrate = needs_calibration(needs, known)
    configs = spec.space.sample(st["n_candidates"], random_state=st["seed"])
    cal = spec.calibration
    es = st.get("error_score")
    extra = {"spec": spec.to_dict(), "command": list(command),
             "cwd": str(Path(cwd or os.getcwd()).resolve()),
             "trials_dir": f"{path.stem}.trials", "calibrate": calibrate, "known": known,
             "first_batch": int(calibrate),
             "calibration_pulls": len(calibration_plan(
                 st["n_candidates"], len(fid["values"]), cal["arms"], cal["repeats"],
                 st["seed"])) if calibrate else 0,
             "error_reward": None if es is None else (
                 1.0 if spec.objective["direction"] == "maximize" else -1.0) * es}
    return StudyStore.create(path, space=spec.parameters, fidelities=fid,
                             objective=spec.objective, algorithm=st["algorithm"],
                             settings=known, seed=st["seed"], configs=configs, spec=extra)


class Study(StudyRecord):
    """Read-side view of a script study: its spec, arms, settings and a replayed policy.

    Parameters
    ----------
    store : StudyStore
    """

    def __init__(self, store: StudyStore):
        super().__init__(store)
        extra = self.meta["spec"]
        if "spec" not in extra:
            who = extra.get("source", "another program")
            raise ValueError(f"{store.path}: this study was written by {who}, not mftune tune; "
                             "mftune status/report/export read it, and it resumes where it "
                             "was written (MFTuner: fit again with the same storage=)")
        self.spec = StudySpec.from_dict(extra["spec"])
        self.cwd = extra["cwd"]
        # absolute: the runs may start on dask workers with another working directory
        self.trials_dir = (store.path.parent / extra["trials_dir"]).resolve()
        es = self.spec.study.get("error_score")
        self.error_reward = None if es is None else self.sign * es

    def calibration_plan(self):
        """The calibration pulls (batch 0)."""
        cal = self.spec.calibration
        return calibration_plan(len(self.configs), self.n_fidelities, cal["arms"],
                                cal["repeats"], self.seed)

    def settings(self, cal_rows=None) -> dict | None:
        """Policy settings, derived from the calibration rows; ``None`` while it is incomplete.

        Raises ``ValueError`` when the calibration cannot estimate them.
        """
        known = dict(self.meta["spec"]["known"])
        if not self.calibrate:
            return known
        rows = self.store.rows(kind="calibration") if cal_rows is None else cal_rows
        plan = self.calibration_plan()
        if len(rows) < len(plan) or not all(r.finished for r in rows):
            return None
        return estimate_settings(
            [r.arm for r in rows], [r.fidelity for r in rows],
            [np.nan if r.reward is None else r.reward for r in rows],
            [r.cost or 0.0 for r in rows], [r.status for r in rows],
            self.n_fidelities, known, self.needs)

    def evaluator(self, timeout=None) -> ScriptEvaluator:
        """The script evaluator of this study (``timeout`` overrides the stored one)."""
        st, fid = self.spec.study, self.spec.fidelity
        return ScriptEvaluator(
            self.command, self.configs, fid["name"], fid["values"], self.trials_dir,
            pass_mode=st["pass"], fidelity_pass=fid["pass"],
            timeout=timeout if timeout is not None else st["timeout"],
            direction=self.meta["direction"], error_score=st["error_score"], seed=self.seed,
            cwd=self.cwd)

    def pull_seed(self, row) -> int:
        """``MFTUNE_SEED`` of a pull: study seed, kind, arm, fidelity and repeat index."""
        n = self.store.repeat_index(row)
        ss = np.random.SeedSequence([int(self.seed or 0), int(row.kind == "calibration"),
                                     row.arm, row.fidelity, n])
        return int(ss.generate_state(1)[0] % 2**31)


@dataclass
class RunOutcome:
    """How a :meth:`StudyRunner.run` ended (the study's state is in the store)."""

    reason: str
    pulls_run: int
    error: str | None = None
    events: list = field(default_factory=list)


class StudyRunner:
    """One worker of a script study: replay, claim, run, record, until the study ends.

    Parameters
    ----------
    path : str or Path
        The study file.
    workers : int, optional
        Runs in flight at once (default: the space file's ``workers``; with
        ``scheduler``, the cluster's threads).
    budget : float, optional
        Stop claiming once the study's summed cost reaches it (seconds).
    max_pulls : int, optional
        Stop claiming once the study holds this many started pulls.
    timeout : float, optional
        Per-run timeout overriding the space file's.
    on_event : callable, optional
        Called with a dict after every finished pull (``type="pull"``), told
        batch (``"batch"``) and the calibration (``"calibrated"``).
    poll : float, default=0.1
        Seconds between checks while waiting on other workers.
    scheduler : str, optional
        Address (or scheduler file) of a dask scheduler: the runs start on the
        cluster's workers instead of this process (:mod:`mftune.scripts.cluster`).
    """

    def __init__(self, path, *, workers=None, budget=None, max_pulls=None, timeout=None,
                 on_event: Callable[[dict], None] | None = None, poll: float = 0.1,
                 scheduler: str | None = None):
        self.store = StudyStore(path)
        self.study = Study(self.store)
        st = self.study.spec.study
        self.scheduler = scheduler
        self.workers = int(workers or st["workers"])
        self._dask = None
        if scheduler is not None:  # connect now: a wrong address fails before any work
            from .cluster import DaskPool

            try:
                self._dask = DaskPool(scheduler)
            except ValueError:
                self.store.close()
                raise
            if workers is None:
                self.workers = max(self._dask.n_slots, 1)
        self.budget = budget if budget is not None else st["budget"]
        self.max_pulls = max_pulls if max_pulls is not None else st["max_pulls"]
        self.timeout = timeout
        self.on_event = on_event or (lambda e: None)
        self.poll = poll
        self.policy: Policy | None = None
        self.settings: dict | None = None
        self.current = None
        self.next_batch = self.study.first_batch
        self.worst: dict = {}
        self.end_reason: str | None = None
        self.error: str | None = None

    # -- advancing the shared sequence ----------------------------------------
    def _calibration_rows(self):
        rows = self.store.rows(kind="calibration")
        if not rows:
            self.store.insert_batch(0, self.study.calibration_plan(), kind="calibration",
                                    if_absent=True)
            rows = self.store.rows(kind="calibration")
        return rows

    def _advance(self):
        """Rows of the batch to work on, or ``None`` when the study has ended."""
        if self.policy is None:
            if self.study.calibrate:
                rows = self._calibration_rows()
                try:
                    settings = self.study.settings(rows)
                except ValueError as exc:
                    self.end_reason, self.error = "calibration-failed", str(exc)
                    return None
                if settings is None:
                    return rows
                if self.store.meta["settings"] != settings:
                    with self.store.transaction():
                        self.store.update_settings(settings)
                self.on_event({"type": "calibrated", "settings": settings})
            else:
                settings = self.study.settings()
            self.settings = settings
            self.policy = self.study.new_policy(settings)
            self._any_success = any(r.status == "done" for r in self.store.rows(kind="policy"))
        policy = self.policy
        while True:
            if policy.done:
                self.end_reason = "stopping-rule"
                return None
            if self.current is None:
                rows = self.store.rows(min_batch=self.next_batch, kind="policy")
                state = replay(policy, rows, first_batch=self.next_batch,
                               error_reward=self.study.error_reward, worst=self.worst)
                self.next_batch = state.batch
                if policy.done:
                    continue
                if state.pulls is None:
                    pulls = policy.ask()
                    if len(pulls) == 0:
                        self.end_reason = "stalled"
                        return None
                    self.store.insert_batch(state.batch, pulls, if_absent=True)
                else:
                    pulls = state.pulls
                    if len(state.missing):
                        self.store.insert_batch(state.batch, state.missing,
                                                first_pos=len(state.rows), if_absent=True)
                self.current = pulls
            rows = self.store.rows(batch=self.next_batch, kind="policy")
            if (len(rows) != len(self.current)
                    or [r.arm for r in rows] != self.current.arms.tolist()
                    or [r.fidelity for r in rows] != self.current.fidelities.tolist()):
                raise StudyMismatchError(f"batch {self.next_batch}: stored pulls differ from "
                                         "the policy's (another seed, algorithm or version?)")
            if not all(r.finished for r in rows):
                return rows
            rewards = batch_rewards(rows, self.worst, self.study.error_reward)
            policy.tell(self.current, rewards, [r.cost or 0.0 for r in rows])
            self.current = None
            self.next_batch += 1
            if self._all_failing(rows):
                return None
            self.on_event({"type": "batch", "batch": self.next_batch - 1,
                           "fidelity": int(rows[0].fidelity), "pulls": len(rows),
                           "survivors": int(policy.active.sum())})

    def _all_failing(self, rows) -> bool:
        """Stop a study whose runs all fail: the first round, or three rounds in a row."""
        if any(r.status == "done" for r in rows):
            self._any_success, self._failed_rounds = True, 0
            return False
        self._failed_rounds = getattr(self, "_failed_rounds", 0) + 1
        if self._failed_rounds >= (3 if self._any_success else 1):
            self.end_reason = "all-failed"
            self.error = (f"every run of the last {self._failed_rounds} round(s) failed; "
                          f"last error: {rows[-1].error}")
            return True
        return False

    def _limit_reached(self) -> str | None:
        if self.budget is not None and self.store.spent() >= self.budget:
            return "budget"
        if self.max_pulls is not None:
            if self.store.n_started() >= self.max_pulls:
                return "max-pulls"
        return None

    # -- the worker loop -------------------------------------------------------
    def _pool(self):
        """Where the runs happen: a thread pool here, or the dask cluster."""
        return self._dask or ThreadPoolExecutor(max_workers=self.workers)

    def run(self) -> RunOutcome:
        """Work on the study until it ends, a limit is reached, or Ctrl+C.

        Returns
        -------
        RunOutcome
            ``reason`` is ``"stopping-rule"``, ``"budget"``, ``"max-pulls"``,
            ``"interrupted"``, ``"stalled"``, ``"calibration-failed"`` or
            ``"all-failed"`` (every run of the first round, or of three rounds in
            a row, failed).
        """
        store, study = self.store, self.study
        pool = self._pool()
        wid = new_worker_id()
        store.register_worker(wid)
        store.release_stale()
        evaluator = study.evaluator(self.timeout)
        running: dict = {}
        n_run = 0
        reason = None
        idle_since = None
        try:
            while True:
                for fut in [f for f in running if f.done()]:
                    row = running.pop(fut)
                    res = fut.result()
                    reward = None if res.score is None else study.sign * res.score
                    store.finish(row.id, status=res.status, score=res.score, reward=reward,
                                 cost=res.cost, error=res.error, worker=wid)
                    n_run += 1
                    self.on_event({"type": "pull", "id": row.id, "kind": row.kind,
                                   "arm": row.arm, "fidelity": row.fidelity,
                                   "status": res.status, "score": res.score,
                                   "cost": res.cost, "error": res.error})
                rows = self._advance()
                limit = None if rows is None else self._limit_reached()
                if rows is None or limit:
                    if not running:
                        reason = limit or self.end_reason
                        break
                    wait(running, timeout=self.poll, return_when=FIRST_COMPLETED)
                    continue
                pending = [r for r in rows if r.status == "pending"]
                free = self.workers - len(running)
                if free > 0 and pending:
                    claimed = set(store.claim([r.id for r in pending[:free]], wid))
                    for r in pending[:free]:
                        if r.id in claimed:
                            fut = pool.submit(evaluator.run_pull, r.arm, r.fidelity,
                                              pull_id=r.id, attempt=r.attempts + 1,
                                              pull_seed=study.pull_seed(r))
                            running[fut] = r
                    if claimed:
                        idle_since = None
                        continue
                if running:
                    wait(running, timeout=self.poll, return_when=FIRST_COMPLETED)
                else:  # the batch's other pulls run in other workers
                    now = time.monotonic()
                    idle_since = idle_since or now
                    if now - idle_since > 1.0:
                        store.release_stale()
                        idle_since = now
                    time.sleep(self.poll)
        except KeyboardInterrupt:
            evaluator.kill_all()
            reason = "interrupted"
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            _LIVE_TOKENS.discard(wid)
            if reason == "interrupted":
                store.release_stale()
        store.update_state(last_reason=reason, last_worker=wid, updated=time.time(),
                           error=self.error)
        return RunOutcome(reason, n_run, self.error)

    def close(self) -> None:
        """Close the study file (and the connection to the dask scheduler)."""
        self.store.close()
        if self._dask is not None:
            self._dask.close()
