"""Faults with real processes: a worker SIGKILLed mid-pull, the server SIGKILLed mid-study."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from servers import SPEC, Server, finish_workers, start_worker, stored_rows, wait_until

from mftune.client import ApiError, Client


def test_killed_worker_lease_expires_and_its_pull_is_reissued_and_finished(tmp_path):
    srv = Server(tmp_path / "studies", 1.0, "--public")
    srv.folder.mkdir()
    srv.start()
    try:
        srv.client.create("synth", SPEC)
        # --public: the pages need no token, the API still does
        assert "synth" in Client(srv.url, token="").request("GET", "/")
        with pytest.raises(ApiError, match="401"):
            Client(srv.url, token="").studies()
        path = srv.folder / "synth.db"
        slow = start_worker(srv, "synth", OBJECTIVE_SLEEP=120)  # holds its pull for minutes

        def running():
            return [r for r in stored_rows(path) if r["status"] == "running"]

        held = wait_until(running, what="the slow worker's lease")[0]
        os.killpg(slow.pid, signal.SIGKILL)  # the worker and its run, mid-pull
        slow.wait()
        others = [start_worker(srv, "synth", "--workers", "3")]
        finish_workers(others, timeout=120)

        rows = {r["id"]: r for r in stored_rows(path)}
        assert all(r["status"] == "done" for r in rows.values())
        again = rows[held["id"]]
        assert again["attempts"] == 2  # re-issued once after its lease expired ...
        assert again["worker"] != held["worker"]  # ... to another lease, which finished it
        assert all(r["attempts"] == 1 for i, r in rows.items() if i != held["id"])
        status = srv.client.status("synth")
        assert status["status"] == "finished"
        assert status["server"]["expired_leases"] >= 1
    finally:
        srv.kill()


def test_killed_server_restarts_without_losing_or_rerunning_a_finished_pull(tmp_path):
    srv = Server(tmp_path / "studies")
    srv.folder.mkdir()
    srv.start()
    workers = []
    try:
        srv.client.create("synth", SPEC)
        path = srv.folder / "synth.db"
        workers = [start_worker(srv, "synth"), start_worker(srv, "synth", "--workers", "2")]

        def finished():
            done = [r for r in stored_rows(path) if r["status"] == "done"]
            return done if len(done) >= 8 else None

        wait_until(finished, what="8 finished pulls")
        srv.kill()  # SIGKILL mid-study, workers still running
        before = {r["id"]: r for r in stored_rows(path) if r["status"] == "done"}
        assert len(before) >= 8

        srv.start()  # same folder, same port: the workers reconnect
        finish_workers(workers, timeout=150)

        after = {r["id"]: r for r in stored_rows(path)}
        lost = [i for i in before if after[i]["status"] != "done"]
        rerun = [i for i in before if after[i] != before[i]]  # score, times, attempts
        assert lost == [] and rerun == []
        assert all(r["status"] == "done" for r in after.values())
        assert len(after) > len(before)  # the study went on after the restart
        status = srv.client.status("synth")
        assert status["status"] == "finished"
        assert status["server"]["state"] == "finished"
    finally:
        for w in workers:
            if w.poll() is None:
                os.killpg(w.pid, signal.SIGKILL)
                w.wait()
        srv.kill()


def test_a_second_server_on_the_same_study_is_refused(shared_server):
    shared_server.client.create("locked", SPEC)
    out = subprocess.run(
        [sys.executable, "-m", "mftune", "serve", str(shared_server.folder / "locked.db"),
         "--port", "0", "--token", "x"], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "already served by mftune serve pid" in out.stderr
    assert str(shared_server.proc.pid) in out.stderr
