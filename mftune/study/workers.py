"""Which worker processes of a study are alive, and the script processes of their pulls."""

from __future__ import annotations

import os
import signal
import socket
import uuid
from collections.abc import Sequence
from pathlib import Path

__all__ = ["new_worker_id"]

_LIVE_TOKENS: set[str] = set()




def new_worker_id() -> str:
    """``host:pid:token``, unique per worker object; registered as alive in this process."""
    wid = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    _LIVE_TOKENS.add(wid)
    return wid


def _worker_alive(worker: str | None) -> bool:
    """Whether the worker that claimed a pull may still be running it."""
    if not worker:
        return False
    if worker in _LIVE_TOKENS:  # registered alive here (a worker object, a server's lease)
        return True
    try:
        host, pid, _ = worker.rsplit(":", 2)
        pid = int(pid)
    except ValueError:
        return False
    if host != socket.gethostname():
        return True  # cannot tell; SQLite studies are meant for one machine
    if pid == os.getpid():
        return worker in _LIVE_TOKENS
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed but unreaped child is a zombie: it runs nothing
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _pull_processes(trials_dir: Path, pull_ids: set[str]) -> dict[str, list[int]]:
    """Live processes (not zombies) of this machine running pulls ``pull_ids`` of a study.

    Read from ``/proc/PID/environ`` (Linux; elsewhere nothing is found): a
    run and its children carry ``MFTUNE_PULL_ID`` and a ``MFTUNE_TRIAL_DIR``
    under the study's ``trials_dir``.
    """
    proc = Path("/proc")
    if not proc.is_dir():
        return {}
    prefix = str(trials_dir) + os.sep
    out: dict[str, list[int]] = {}
    for entry in os.scandir(proc):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        env = dict(item.split(b"=", 1) for item in data.split(b"\0") if b"=" in item)
        pull = env.get(b"MFTUNE_PULL_ID", b"").decode(errors="replace")
        tdir = env.get(b"MFTUNE_TRIAL_DIR", b"").decode(errors="replace")
        if pull in pull_ids and tdir.startswith(prefix):
            out.setdefault(pull, []).append(int(entry.name))
    return out


def _kill_processes(pids: Sequence[int]) -> None:
    """SIGKILL the process groups of ``pids`` (the pid alone if it shares this process's group)."""
    for pid in pids:
        try:
            pgid = os.getpgid(pid)
            if pgid != os.getpgrp():
                os.killpg(pgid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
