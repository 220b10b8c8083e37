"""Helpers of the service tests: ``mftune serve`` in a subprocess on a free port, workers."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from mftune.client import Client, ServerUnavailable

HERE = Path(__file__).resolve().parent
OBJECTIVE = [sys.executable, str(HERE / "objective.py")]
TOKEN = "test-token-0123456789"

#: The synthetic study of the tests (a space file's tables; stops by its rule, after about
#: 100 pulls in waves).
SPEC = """
[parameters]
x = { type = "real", low = 0.0, high = 1.0 }

[fidelity]
name   = "steps"
values = [1, 4]
costs  = [1, 4]
xi     = [0.3, 0.0]

[objective]
name      = "score"
direction = "maximize"
sigma     = 0.01

[study]
algorithm    = "iise"
delta        = 0.05
epsilon      = 0.03
n_candidates = 6
seed         = 3
workers      = 4
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env(**extra) -> dict:
    out = dict(os.environ, OMP_NUM_THREADS="1", MFTUNE_TOKEN=TOKEN)
    out.update({k: str(v) for k, v in extra.items()})
    return out


class Server:
    """``mftune serve FOLDER`` on 127.0.0.1 (start, SIGKILL, restart on the same port)."""

    def __init__(self, folder: Path, lease: float = 30.0, *options: str):
        self.folder, self.lease, self.port = Path(folder), lease, free_port()
        self.options = list(options)
        self.url = f"http://127.0.0.1:{self.port}"
        self.client = Client(self.url, TOKEN, timeout=20)
        self.proc: subprocess.Popen | None = None

    def start(self) -> Server:
        self.log = open(self.folder / f"server-{time.monotonic_ns()}.log", "w")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mftune", "serve", str(self.folder), "--port",
             str(self.port), "--lease", str(self.lease), *self.options],
            env=env(), stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                self.client.health()
                return self
            except ServerUnavailable:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("server did not start: " + self.read_log()) from None
                time.sleep(0.1)

    def read_log(self) -> str:
        self.log.flush()
        return "".join(p.read_text() for p in sorted(self.folder.glob("server-*.log")))

    def kill(self) -> None:
        """SIGKILL the server and reap it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self.log.close()


def start_worker(server: Server, study: str, *options: str, **kw) -> subprocess.Popen:
    """``mftune worker --server URL --study NAME [OPTIONS] -- python objective.py``
    in a subprocess (keywords: extra environment variables)."""
    return subprocess.Popen(
        [sys.executable, "-m", "mftune", "worker", "--server", server.url, "--study", study,
         "--reconnect", "60", *options, "--", *OBJECTIVE],
        env=env(**kw), cwd=server.folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True)


def finish_workers(workers: list[subprocess.Popen], timeout: float) -> list[str]:
    """Wait for every worker; their outputs. A worker that failed fails the test with its
    exit code and the end of its own output (not a list pytest would cut short)."""
    outputs = [w.communicate(timeout=timeout)[0] for w in workers]
    failed = [f"worker {i}: exit code {w.returncode}; its output ends:\n{out[-3000:]}"
              for i, (w, out) in enumerate(zip(workers, outputs, strict=True)) if w.returncode]
    if failed:
        raise AssertionError("\n\n".join(failed))
    return outputs


def wait_until(predicate, timeout: float = 60.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        got = predicate()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def stored_rows(path: Path) -> list[dict]:
    """Every pull row of a study file, read through a read-only connection."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        cur = conn.execute("SELECT * FROM pulls ORDER BY id")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    finally:
        conn.close()


def fingerprint(folder: Path) -> str:
    """Everything the server could have written: the files and every row of every study."""
    files = sorted(p.name for p in folder.iterdir() if not p.name.startswith("server-"))
    rows = {p.name: stored_rows(p) for p in sorted(folder.glob("*.db"))}
    return json.dumps([files, rows], sort_keys=True, default=str)


def local_recommendation(tmp_path: Path) -> tuple[int, list]:
    """The same study run locally (``mftune tune``'s path): its recommended arm and pulls."""
    from mftune.engine.summary import study_summary
    from mftune.scripts.spacefile import parse_spacefile
    from mftune.scripts.study import create_study, run_study

    folder = tmp_path / "local"
    folder.mkdir()
    path = folder / "local.db"
    create_study(parse_spacefile(SPEC), OBJECTIVE, path, cwd=folder).close()
    outcome = run_study(path, verbose=0)
    assert outcome.reason == "stopping-rule", outcome
    rows = stored_rows(path)
    return study_summary(path)["best"]["arm"], [(r["arm"], r["fidelity"]) for r in rows]
