"""Opening study files: read-only access that writes nothing, and why a file is no study."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

__all__: list[str] = []


def _writable(path: Path) -> bool:
    """Whether this process may write ``path`` (if it exists) and create files beside it."""
    parent = path.parent if str(path.parent) else Path(".")
    return (os.access(parent, os.W_OK | os.X_OK)
            and (not path.exists() or os.access(path, os.W_OK)))


def _connect_readonly(path: Path, timeout: float = 60.0) -> sqlite3.Connection:
    """A connection that does not write ``path``, checked to read its ``study`` table.

    A writable study is opened as usual with ``PRAGMA query_only`` (so its
    WAL files are cleaned up as after any reader). A read-only one (file or
    folder) is opened ``mode=ro`` when its WAL index exists (a writer is or
    was there: the index lets the reader see the latest commits), else
    ``immutable=1``, which creates nothing beside it -- a ``-shm`` created by
    a reader of a read-only file would itself be read-only and block the
    owner's next write.
    """
    if _writable(path):
        conn = sqlite3.connect(path, timeout=timeout, isolation_level=None,
                               check_same_thread=True)
        tries = [conn]
    else:
        uri = f"file:{quote(str(path.resolve()))}"
        queries = (["?mode=ro"] if Path(f"{path}-shm").exists() else []) + ["?immutable=1"]
        tries = (sqlite3.connect(uri + q, uri=True, timeout=timeout, isolation_level=None,
                                 check_same_thread=True) for q in queries)
    error: sqlite3.Error | None = None
    for conn in tries:
        try:
            conn.execute("PRAGMA query_only = ON")
            conn.execute("SELECT format_version FROM study").fetchone()
            return conn
        except sqlite3.Error as exc:
            conn.close()
            error = exc
    raise error if error is not None else sqlite3.OperationalError(f"cannot open {path}")


def _not_a_study(path: Path) -> str:
    """Why ``path`` holds no study (for the error messages)."""
    if not path.exists():
        return "no such file"
    if not path.is_file():
        return "not a file"
    try:
        with path.open("rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        return f"cannot read it ({exc.strerror or exc})"
    if head and head != b"SQLite format 3\x00":
        return "not an SQLite file"
    if not head:
        return "an empty file"
    return "an SQLite file that holds no mftune study"
