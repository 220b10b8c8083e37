"""One server per study file: an exclusive lock file next to the study.

``study.db`` served by ``mftune serve`` holds ``study.db.serve-lock`` locked
(``fcntl.flock``, exclusive) for the server's lifetime; the file names the
holder's pid and host. The kernel drops the lock when the process dies, even
by SIGKILL, so a restarted server takes the study back at once, while a
second live server is refused with the holder's name.
"""

from __future__ import annotations

import fcntl
import os
import socket
import time
from pathlib import Path

__all__ = ["StudyLock", "StudyServedElsewhere"]


class StudyServedElsewhere(RuntimeError):
    """Another live server holds the study."""


class StudyLock:
    """Hold ``<study>.serve-lock`` exclusively, or raise :class:`StudyServedElsewhere`.

    Parameters
    ----------
    study : str or Path
        The study file.
    """

    def __init__(self, study):
        self.path = Path(f"{study}.serve-lock")
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise StudyServedElsewhere(
                f"{study}: already served by {holder} (lock file {self.path}); stop that "
                "server first, or point workers at it") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"mftune serve pid {os.getpid()} on host {socket.gethostname()} since "
                      f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode(), 0)
        self._fd: int | None = fd

    def release(self) -> None:
        """Drop the lock (the file stays; an unlocked file means nothing)."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
