"""``mftune worker --server URL -- COMMAND``: run a served study's pulls on any machine.

The worker asks the server for a pull, runs the command for it exactly as
``mftune tune`` would (:class:`~mftune.scripts.runner.ScriptEvaluator`: the
same arguments, environment, ``MFTUNE_SEED``, timeout and score parsing),
sends heartbeats while it runs, and tells the result. The command is the one
given on the worker's own command line: the server never sends anything to
run. While the server is unreachable (a restart) the worker keeps retrying
for ``reconnect`` seconds; a result it could not deliver is delivered then.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from pathlib import Path

from ..client import ApiError, Client, ServerUnavailable
from ..scripts.runner import ScriptEvaluator

__all__ = ["HttpWorker"]


class HttpWorker:
    """A worker process of a served study.

    Parameters
    ----------
    client : Client
    study : str
        The study's name on the server.
    command : list of str
        The command to run per pull (no shell).
    timeout : float, optional
        Per-run timeout (default: the study's).
    reconnect : float, default=120
        Seconds to keep retrying while the server cannot be reached.
    trials_dir : str or Path, optional
        Parent of the per-configuration working directories (default
        ``./mftune-worker.trials/<study>``).
    name : str, optional
        This worker's name in the study's rows (default ``host:pid``).
    stream : file, optional
        Where one line per pull goes (``None``: stderr; quiet with ``verbose=0``).
    """

    def __init__(self, client: Client, study: str, command, *, timeout: float | None = None,
                 reconnect: float = 120.0, trials_dir=None, name: str | None = None,
                 verbose: int = 1, stream=None):
        self.client, self.study, self.command = client, study, list(command)
        self.timeout, self.reconnect = timeout, float(reconnect)
        self.trials_dir = Path(trials_dir or Path.cwd() / "mftune-worker.trials" / study)
        self.name = name or f"{socket.gethostname()}:{os.getpid()}"
        self.verbose, self.stream = int(verbose), stream or sys.stderr
        self.n_run = self.n_told = 0
        self.slots = 1
        self._count = threading.Lock()

    def _retry(self, call, *args, **kw):
        """``call(*args, **kw)``, retried while the server is unreachable."""
        deadline = time.monotonic() + self.reconnect
        while True:
            try:
                return call(*args, **kw)
            except ServerUnavailable:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.25)

    def _say(self, text: str) -> None:
        if self.verbose:
            print(f"[{self.name}] {text}", file=self.stream, flush=True)

    def evaluator(self) -> ScriptEvaluator:
        """The script runner of this study (what ``mftune tune`` would build)."""
        d = self._retry(self.client.study, self.study)
        st, fid = d["study"], d["fidelity"]
        return ScriptEvaluator(
            self.command, d["configs"], fid["name"], fid["values"], self.trials_dir,
            pass_mode=st.get("pass", "auto"), fidelity_pass=fid.get("pass", "arg"),
            timeout=self.timeout if self.timeout is not None else st.get("timeout"),
            direction=d["objective"].get("direction", "maximize"), seed=d["seed"] or 0)

    def run(self, max_pulls: int | None = None, slots: int = 1) -> int:
        """Work until the study ends (or ``max_pulls`` pulls); return the pulls run.

        Parameters
        ----------
        max_pulls : int, optional
            Stop after asking for this many pulls.
        slots : int, default=1
            Pulls run at once (each in its own thread, asking for the next one
            when it ends).
        """
        evaluator = self.evaluator()
        self.slots = max(int(slots), 1)
        taken, lock = [0], threading.Lock()

        def loop() -> None:
            while True:
                with lock:
                    if max_pulls is not None and taken[0] >= max_pulls:
                        return
                    taken[0] += 1
                pull = self._retry(self.client.ask, self.study, self.name)
                if pull is None:
                    return
                self.run_one(evaluator, pull)

        if self.slots == 1:
            loop()
        else:
            threads = [threading.Thread(target=loop, daemon=True) for _ in range(self.slots)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        return self.n_run

    def run_one(self, evaluator: ScriptEvaluator, pull: dict) -> None:
        """Run one leased pull with heartbeats, then tell its result."""
        pid, lease = pull["pull_id"], pull["lease"]
        stop = threading.Event()
        finished_elsewhere = threading.Event()

        def beat():
            while not stop.wait(max(pull["lease_seconds"] / 3.0, 0.05)):
                try:
                    self.client.heartbeat(self.study, pid, lease)
                except ApiError as exc:
                    if "already finished" in exc.message:
                        finished_elsewhere.set()
                        if self.slots == 1:  # (with several slots, the others run too)
                            evaluator.kill_all()
                        return
                except ServerUnavailable:
                    continue

        beater = threading.Thread(target=beat, daemon=True)
        beater.start()
        try:
            res = evaluator.run_pull(pull["arm"], pull["fidelity"]["index"], pull_id=pid,
                                     attempt=pull["attempt"], repeat=pull["repeat"],
                                     config=pull["config"])
        finally:
            stop.set()
            beater.join()
        with self._count:
            self.n_run += 1
        if finished_elsewhere.is_set():
            self._say(f"pull {pid}: finished by another worker; result dropped")
            return
        try:
            out = self._retry(self.client.tell, self.study, pid, score=res.score,
                              seconds=res.cost, lease=lease, status=res.status,
                              error=res.error[:4000] if res.error else None)
            with self._count:
                self.n_told += 1
            late = " (late, kept)" if out.get("late") else ""
            self._say(f"pull {pid}: arm {pull['arm']} at {pull['fidelity']['value']}: "
                      f"{res.status} {'' if res.score is None else res.score}{late}")
        except ApiError as exc:
            self._say(f"pull {pid}: not recorded: {exc.message}")
