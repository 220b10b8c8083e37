"""The study store: one SQLite file per study, written so that nothing finished is lost.

Tables (JSON text columns, never pickle):

* ``study`` — one row: format version, creation time, the space, the
  fidelities, the objective and direction, the algorithm and its settings,
  the seed, the command (CLI studies) and a small ``state`` document.
* ``arms`` — one row per candidate configuration (JSON).
* ``pulls`` — one row per pull: its place in the study's canonical order
  (``batch``, ``pos``), ``kind`` (``policy`` or ``calibration``), arm,
  fidelity, status (``pending``/``running``/``done``/``failed``/``timed-out``),
  score (the user's direction), reward (what the policy is told), cost,
  start and end times, attempts, worker id, error text and ``info`` (the
  evaluator's details of the pull as JSON: every metric's score, fit and
  score seconds, CV split... — what an in-process runner needs to rebuild its
  records on resume).
* ``updates`` — one row per told batch after which the runner changed the
  policy's bounds (the tuner's measured costs, grown bias bounds, pooled
  σ²): the keyword arguments of ``policy.update_bounds`` as JSON, so any
  reader replays the policy exactly (batch ``first_batch - 1``: applied right
  after the policy was built).
* ``waves`` — how each wave of a search with waves ended (why no candidates
  followed, or the new ones' unit-cube points; their configurations go to
  ``arms``), recorded once, so a resume and every worker decide alike.
* ``proposals`` — the points a Gaussian-process policy asked (unit cube and
  fidelity, keyed by the policy's query index; their configurations go to
  ``arms``), recorded once for the same reason.
* ``workers`` — the processes that have joined the study.

The study row stores the file's format version (:data:`FORMAT_VERSION`); a
file of any other format is refused by name (:class:`StudyFileError`), as are
a file that is not a study, a missing folder and a folder or file this process
cannot write when it has to write. A read-only study (file or folder) is read
through a read-only connection (``StudyStore(path, readonly=True)``: ``mftune
status``, ``report`` and ``export``), which writes nothing.

Crash safety
------------
The file is opened in WAL mode with ``synchronous=FULL``; every change is one
transaction (``BEGIN IMMEDIATE``), so a crash at any instant leaves either
the state before or after it. A pull's row is written *before* it runs
(``pending``, then ``running`` with the worker id when claimed) and updated
when it ends; on resume, rows left ``running`` by a worker that no longer
exists are put back to ``pending`` and run again — they are the only pulls
that run twice, and they had not finished. A script left running by a killed
worker is killed before its pull is put back (:meth:`StudyStore.release_stale`),
so a pull never runs twice at once.

Exact replay lives in :mod:`mftune.study.replay` , the
driver-side recorder in :mod:`mftune.study.recording`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import numpy as np

from ..policies.base import Pulls
from .files import _connect_readonly, _not_a_study, _writable
from .jsonio import dumps, json_safe
from .schema import ADDED, SCHEMA
from .workers import (
    _kill_processes,
    _pull_processes,
    _worker_alive,
    new_worker_id,
)

__all__ = [
    "FINISHED", "FORMAT_VERSION", "PullRow", "StudyFileError", "StudyStore", "new_worker_id",
    "remove_study_files",
]

FORMAT_VERSION = 2
FINISHED = ("done", "failed", "timed-out")
STATUSES = ("pending", "running", *FINISHED)

class StudyFileError(ValueError):
    """A study file that cannot be used as asked; the message names the path and the cause."""


@dataclass(frozen=True)
class PullRow:
    """One stored pull (see the module docstring for the columns)."""

    id: int
    batch: int
    pos: int
    kind: str
    arm: int
    fidelity: int
    status: str
    score: float | None
    reward: float | None
    cost: float | None
    attempts: int
    created: float
    started: float | None
    ended: float | None
    worker: str | None
    error: str | None
    info: dict | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


_COLUMNS = ", ".join(PullRow.__dataclass_fields__)


class StudyStore:
    """A study file (SQLite, WAL): metadata, arms and one row per pull.

    Open an existing study with ``StudyStore(path)``; create one with
    :meth:`create`. Use one object per thread (SQLite connections are not
    shared across threads).

    Parameters
    ----------
    path : str or Path
        The study file.
    timeout : float, default=60
        Seconds to wait for another process's write lock.
    """

    def __init__(self, path: str | os.PathLike, timeout: float = 60.0, *,
                 readonly: bool = False):
        self.path = Path(path)
        self.readonly = bool(readonly)
        if not self.exists(self.path):
            raise FileNotFoundError(f"{self.path}: no study there ({_not_a_study(self.path)}; "
                                    "create one with mftune tune)")
        if readonly:
            self._conn = _connect_readonly(self.path, timeout)
        elif not _writable(self.path):
            raise StudyFileError(f"{self.path}: cannot write the study (read-only file or "
                                 "folder); mftune status, report and export can read it")
        else:
            self._conn = self._connect(self.path, timeout)
        version = self._conn.execute("SELECT format_version FROM study").fetchone()[0]
        if version != FORMAT_VERSION:
            self._conn.close()
            raise StudyFileError(f"{self.path}: study format {version}, this mftune reads "
                                 f"format {FORMAT_VERSION}")
        if not readonly:
            self._conn.executescript(ADDED)  # a file written before these were recorded

    @staticmethod
    def _connect(path: Path, timeout: float) -> sqlite3.Connection:
        conn = sqlite3.connect(path, timeout=timeout, isolation_level=None,
                               check_same_thread=True)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    @staticmethod
    def exists(path: str | os.PathLike) -> bool:
        """Whether ``path`` holds a study (a file with a committed study row); writes nothing."""
        path = Path(path)
        if not path.is_file():
            return False
        try:
            conn = _connect_readonly(path)
            try:
                return conn.execute("SELECT COUNT(*) FROM study").fetchone()[0] == 1
            finally:
                conn.close()
        except sqlite3.Error:
            return False

    @staticmethod
    def missing_reason(path: str | os.PathLike) -> str:
        """Why ``path`` holds no study: "no such file", "not an SQLite file", ..."""
        return _not_a_study(Path(path))

    @staticmethod
    def check_new(path: str | os.PathLike) -> None:
        """Raise :class:`StudyFileError` if a study cannot be created at ``path``.

        The folder must exist and be writable; a file already there must be
        empty or an SQLite file without tables (a study there raises
        ``FileExistsError``). Nothing is created.
        """
        path = Path(path)
        if StudyStore.exists(path):
            raise FileExistsError(f"{path}: a study exists there; resume it with "
                                  f"'mftune resume {path}' or choose another path")
        parent = path.parent if str(path.parent) else Path(".")
        if not parent.is_dir():
            raise StudyFileError(f"{path}: cannot create the study: folder {parent} does not "
                                 "exist")
        if not _writable(path):
            what = f"file {path}" if path.exists() and os.access(parent, os.W_OK) \
                else f"folder {parent}"
            raise StudyFileError(f"{path}: cannot create the study: {what} is not writable")
        if path.exists():
            if not path.is_file():
                raise StudyFileError(f"{path}: cannot create the study: not a file")
            if path.stat().st_size:
                why = _not_a_study(path)
                if why == "an SQLite file that holds no mftune study":
                    try:
                        conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro",
                                               uri=True)
                        try:
                            empty = conn.execute("SELECT COUNT(*) FROM sqlite_master"
                                                 ).fetchone()[0] == 0
                        finally:
                            conn.close()
                    except sqlite3.Error:
                        empty = False
                    if empty:
                        return
                raise StudyFileError(f"{path}: cannot create the study: the file is {why}; "
                                     "choose another path")

    @classmethod
    def create(cls, path: str | os.PathLike, *, space, fidelities, objective: dict,
               algorithm: str, settings: dict, seed, configs: Sequence[dict],
               spec: dict | None = None, timeout: float = 60.0) -> StudyStore:
        """Create a study file in one transaction (nothing is left if it fails).

        Parameters
        ----------
        path : str or Path
            Must not hold a study already.
        space : JSON-able
            The search space description.
        fidelities : JSON-able
            The fidelity description (name, values, ...).
        objective : dict
            ``name`` and ``direction`` (``"maximize"`` or ``"minimize"``).
        algorithm : str
            Registered policy name.
        settings : dict
            Policy settings (JSON); may be completed later (calibration).
        seed : int or None
        configs : sequence of dict
            One configuration per arm.
        spec : dict, optional
            Anything else the runner needs to resume (command, timeouts...).
        """
        path = Path(path)
        direction = objective.get("direction", "maximize")
        if direction not in ("maximize", "minimize"):
            raise ValueError(f"objective direction must be 'maximize' or 'minimize'; "
                             f"got {direction!r}")
        cls.check_new(path)
        new = not path.exists()
        try:
            conn = cls._connect(path, timeout)
        except sqlite3.Error as exc:
            if new:
                remove_study_files(path)
            raise StudyFileError(f"{path}: cannot create the study: {exc}") from None
        try:
            conn.execute("BEGIN IMMEDIATE")
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("DELETE FROM pulls")
            conn.execute("DELETE FROM arms")
            conn.execute(
                "INSERT INTO study VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (FORMAT_VERSION, time.time(), dumps(space), dumps(fidelities),
                 dumps(objective), direction, algorithm, dumps(settings),
                 None if seed is None else int(seed), dumps(spec or {}), dumps({})),
            )
            conn.executemany("INSERT INTO arms VALUES (?, ?)",
                             [(i, dumps(c)) for i, c in enumerate(configs)])
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.close()
            if new:  # nothing is left of a study that could not be created
                remove_study_files(path)
            raise
        conn.close()
        return cls(path, timeout)

    # -- metadata -------------------------------------------------------------
    @property
    def meta(self) -> dict:
        """The study row, JSON columns decoded."""
        cur = self._conn.execute("SELECT * FROM study")
        row = dict(zip([d[0] for d in cur.description], cur.fetchone(), strict=True))
        for key in ("space", "fidelities", "objective", "settings", "spec", "state"):
            row[key] = json.loads(row[key])
        return row

    def configs(self, initial: bool = False) -> list[dict]:
        """The arms' configurations, by arm index (``initial``: only the candidates the
        study was created with, not those its waves or proposals appended)."""
        added = [*self.waves().values(), *self.proposals().values()] if initial else []
        first = min((d["first_arm"] for d in added if d.get("n_new")), default=None)
        return [json.loads(c) for (c,) in self._conn.execute(
            "SELECT config FROM arms WHERE ? IS NULL OR arm < ? ORDER BY arm", (first, first))]

    def update_settings(self, settings: dict) -> None:
        """Replace the policy settings (e.g. once the calibration has estimated them)."""
        self._conn.execute("UPDATE study SET settings = ?", (dumps(settings),))

    def update_state(self, **entries) -> None:
        """Merge entries into the study's ``state`` document (its own transaction)."""
        with self.transaction():
            state = json.loads(self._conn.execute("SELECT state FROM study").fetchone()[0])
            state.update(entries)
            self._conn.execute("UPDATE study SET state = ?", (dumps(state),))

    # -- transactions ---------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[StudyStore]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on error); re-entrant."""
        if self._conn.in_transaction:
            yield self
            return
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    # -- pulls ----------------------------------------------------------------
    def rows(self, min_batch: int | None = None, kind: str | None = None,
             batch: int | None = None) -> list[PullRow]:
        """Stored pulls in canonical order (batch, pos), optionally filtered."""
        sql, args = f"SELECT {_COLUMNS} FROM pulls WHERE 1=1", []
        if min_batch is not None:
            sql += " AND batch >= ?"
            args.append(int(min_batch))
        if batch is not None:
            sql += " AND batch = ?"
            args.append(int(batch))
        if kind is not None:
            sql += " AND kind = ?"
            args.append(kind)
        return [PullRow(*r[:-1], None if r[-1] is None else json.loads(r[-1]))
                for r in self._conn.execute(sql + " ORDER BY batch, pos", args)]

    def insert_batch(self, batch: int, pulls: Pulls, *, kind: str = "policy", first_pos: int = 0,
                     status: str = "pending", worker: str | None = None,
                     if_absent: bool = False) -> list[int]:
        """Insert rows for ``pulls`` as batch ``batch`` (positions from ``first_pos``).

        With ``if_absent``, positions already stored are left alone (two
        workers replaying the same study ask the same batch) and the ids of
        the rows actually inserted are returned.
        """
        now = time.time()
        running = status == "running"
        verb = "INSERT OR IGNORE" if if_absent else "INSERT"
        ids = []
        with self.transaction():
            for i, (arm, fid) in enumerate(pulls):
                cur = self._conn.execute(
                    f"{verb} INTO pulls (batch, pos, kind, arm, fidelity, status, attempts, "
                    "created, started, worker) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (int(batch), first_pos + i, kind, int(arm), int(fid), status,
                     int(running), now, now if running else None, worker))
                if cur.rowcount:
                    ids.append(cur.lastrowid)
        return ids

    def claim(self, ids: Sequence[int], worker: str, attempt: bool = True) -> list[int]:
        """Mark pending rows as running by ``worker``; return the ids actually claimed.

        ``attempt=False``: not a new attempt (a late result of the last one claims it back).
        """
        claimed = []
        now = time.time()
        with self.transaction():
            for i in ids:
                cur = self._conn.execute(
                    "UPDATE pulls SET status = 'running', worker = ?, started = ?, "
                    "attempts = attempts + ?, ended = NULL, error = NULL "
                    "WHERE id = ? AND status = 'pending'", (worker, now, int(attempt), int(i)))
                if cur.rowcount:
                    claimed.append(int(i))
        return claimed

    def finish(self, row_id: int, *, status: str, score: float | None, reward: float | None,
               cost: float, error: str | None = None, worker: str | None = None,
               info: dict | None = None) -> bool:
        """Record the end of a pull; ignored (returns False) if ``worker`` lost the claim.

        ``info`` (JSON; non-finite numbers are stored as ``null``) holds the
        evaluator's details of the pull.
        """
        if status not in FINISHED:
            raise ValueError(f"status must be one of {', '.join(FINISHED)}; got {status!r}")
        sql = ("UPDATE pulls SET status = ?, score = ?, reward = ?, cost = ?, ended = ?, "
               "error = ?, info = ? WHERE id = ? AND status = 'running'")
        args = [status, _finite(score), _finite(reward), float(cost), time.time(), error,
                None if info is None else dumps(json_safe(info)), int(row_id)]
        if worker is not None:
            sql += " AND worker = ?"
            args.append(worker)
        with self.transaction():
            return bool(self._conn.execute(sql, args).rowcount)

    def release_stale(self) -> int:
        """Put back to ``pending`` the running pulls of workers that no longer exist.

        A pull is released only once its worker is dead *and* its script is
        gone: processes of the pull still alive on this machine (a script's
        children that outlived a SIGKILLed worker; found by the
        ``MFTUNE_PULL_ID`` and ``MFTUNE_TRIAL_DIR`` of their environment) are
        killed first, and the pull stays ``running`` while any remains. So a
        resumed study never runs a pull twice at once.
        """
        with self.transaction():
            rows = self._conn.execute(
                "SELECT id, worker FROM pulls WHERE status = 'running'").fetchall()
        stale = [(i, w) for i, w in rows if not _worker_alive(w)]
        if stale:
            left = self._orphans_left([i for i, _ in stale])
            stale = [(i, w) for i, w in stale if i not in left]
        with self.transaction():  # unless another worker released and claimed it meanwhile
            return sum(self._conn.execute(
                "UPDATE pulls SET status = 'pending', worker = NULL WHERE id = ? "
                "AND status = 'running' AND worker IS ?", (i, w)).rowcount for i, w in stale)

    def _orphans_left(self, ids: Sequence[int], wait: float = 2.0) -> set[int]:
        """Kill the processes left by pulls ``ids`` of a script study; the ids some still run."""
        trials = self.meta["spec"].get("trials_dir")
        if not trials:
            return set()
        trials_dir = (self.path.parent / trials).resolve()
        found = _pull_processes(trials_dir, {str(i) for i in ids})
        deadline = time.monotonic() + wait
        while found:
            for pids in found.values():
                _kill_processes(pids)
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
            found = _pull_processes(trials_dir, {str(i) for i in ids})
        return {int(i) for i in found}

    def retry_failed(self) -> int:
        """Put the failed (or timed-out) pulls of the study's last batch back to ``pending``.

        Only when the last run stopped ``all-failed`` (a broken script), which the
        retry clears in its transaction, so only the first process to resume
        retries. No decision was read off that batch: its failed pulls run again,
        the update recorded after it is cleared and the study still replays
        exactly. Earlier batches' failures stay. Returns the pulls put back.
        """
        with self.transaction():
            if self.meta["state"].get("last_reason") != "all-failed":
                return 0
            self.update_state(last_reason=None, error=None)
            (last,) = self._conn.execute("SELECT MAX(batch) FROM pulls").fetchone()
            n = self._conn.execute(
                "UPDATE pulls SET status = 'pending', worker = NULL, score = NULL, "
                "reward = NULL, cost = NULL, started = NULL, ended = NULL, error = NULL, "
                "info = NULL WHERE batch = ? AND status IN ('failed', 'timed-out')",
                (last,)).rowcount
            if n:
                self._conn.execute("DELETE FROM updates WHERE batch >= ?", (last,))
        return n

    def release_worker(self, worker: str) -> int:
        """Put back to ``pending`` the running pulls of ``worker`` (it stops, e.g. on Ctrl+C)."""
        with self.transaction():
            return self._conn.execute(
                "UPDATE pulls SET status = 'pending', worker = NULL WHERE status = 'running' "
                "AND worker = ?", (worker,)).rowcount

    def register_worker(self, worker: str) -> None:
        """Record (or refresh) a worker joining the study."""
        host, pid, _ = worker.rsplit(":", 2)
        now = time.time()
        with self.transaction():
            self._conn.execute(
                "INSERT INTO workers VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE "
                "SET seen = excluded.seen", (worker, host, int(pid), now, now))

    def n_started(self) -> int:
        """Pulls that have been claimed at least once (running or finished)."""
        (n,) = self._conn.execute(
            "SELECT COUNT(*) FROM pulls WHERE status != 'pending'").fetchone()
        return int(n)

    # -- policy updates -------------------------------------------------------
    def set_update(self, batch: int, data: dict) -> None:
        """Store the ``policy.update_bounds`` arguments applied after told batch ``batch``.

        ``data`` maps argument names to arrays (JSON lists) or ``None``;
        rewriting the update of a batch (a resumed run recomputes it) replaces it.
        """
        data = {k: v for k, v in data.items() if v is not None}
        with self.transaction():
            self._conn.execute("INSERT OR REPLACE INTO updates VALUES (?, ?)",
                               (int(batch), dumps(json_safe(data))))

    def updates(self) -> dict[int, dict]:
        """Stored policy updates by batch (see :meth:`set_update`)."""
        return {int(b): json.loads(d) for b, d in self._conn.execute(
            "SELECT batch, data FROM updates ORDER BY batch")}

    # -- waves ----------------------------------------------------------------
    def end_wave(self, wave: int, reason: str | None, points, configs: Sequence[dict]) -> dict:
        """Record how exploring wave ``wave`` ended, unless a process recorded it first.

        ``reason``: why no new candidates follow, else ``None`` and the new
        candidates' unit-cube ``points`` and ``configs`` (appended to the arms).
        Returns the record as stored (``reason``, ``points``, ``first_arm``,
        ``n_new``): this decision, or the one stored before it.
        """
        return self._add_arms("waves", wave, {"reason": reason, "points": points}, configs)

    def propose(self, query: int, points, fidelities, configs: Sequence[dict]) -> dict:
        """Record the points a Gaussian-process policy asked from its query ``query`` on,
        unless a process recorded them first.

        ``points`` (unit cube, one row per query), their ``fidelities`` and
        ``configs`` (appended to the arms). Returns the record as stored
        (``points``, ``fidelities``, ``first_arm``, ``n_new``).
        """
        return self._add_arms("proposals", query, {"points": points,
                                                   "fidelities": fidelities}, configs)

    def _add_arms(self, table: str, key: int, data: dict, configs: Sequence[dict]) -> dict:
        """The record ``key`` of ``table`` (``waves``, ``proposals``): the one stored, or
        ``data`` with its ``configs`` appended to the arms, in one transaction."""
        column = {"waves": "wave", "proposals": "query"}[table]
        with self.transaction():
            row = self._conn.execute(f"SELECT data FROM {table} WHERE {column} = ?",
                                     (int(key),)).fetchone()
            if row is not None:
                return json.loads(row[0])
            (first,) = self._conn.execute("SELECT COALESCE(MAX(arm) + 1, 0) FROM arms"
                                          ).fetchone()
            data = {k: (v if v is None or isinstance(v, str) else json_safe(np.asarray(v)))
                    for k, v in data.items()}
            data.update(first_arm=int(first), n_new=len(configs))
            self._conn.executemany("INSERT INTO arms VALUES (?, ?)",
                                   [(first + i, dumps(c)) for i, c in enumerate(configs)])
            self._conn.execute(f"INSERT INTO {table} VALUES (?, ?)", (int(key), dumps(data)))
        return data

    def waves(self) -> dict[int, dict]:
        """The ended waves' records by wave (see :meth:`end_wave`)."""
        return self._records("waves")

    def proposals(self) -> dict[int, dict]:
        """The proposed points' records by first query (see :meth:`propose`)."""
        return self._records("proposals")

    def _records(self, table: str) -> dict[int, dict]:
        try:
            rows = self._conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
        except sqlite3.OperationalError:  # a read-only file written before they were stored
            return {}
        return {int(k): json.loads(d) for k, d in rows}

    def spent(self) -> float:
        """Summed cost of the finished pulls (calibration included)."""
        (cost,) = self._conn.execute(
            "SELECT COALESCE(SUM(cost), 0) FROM pulls WHERE status IN "
            "('done', 'failed', 'timed-out')").fetchone()
        return float(cost)

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> StudyStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"StudyStore({str(self.path)!r})"


def remove_study_files(path: Path) -> None:
    """Delete a study file and its SQLite side files (``-wal``, ``-shm``, ``-journal``)."""
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        p.unlink(missing_ok=True)


def _finite(x):
    return None if x is None or not np.isfinite(x) else float(x)
