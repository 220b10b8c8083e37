"""Fixtures of the service tests (the helpers are in servers.py)."""

from __future__ import annotations

import importlib.util

import pytest
from servers import Server

if not all(importlib.util.find_spec(m) for m in ("starlette", "uvicorn")):
    # the server needs the serve extra (installed with the test extra, as CI does)
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture
def server(tmp_path):
    """A started server on an empty folder (killed at the end)."""
    srv = Server(tmp_path / "studies")
    srv.folder.mkdir()
    srv.start()
    yield srv
    srv.kill()


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory):
    """One server for the request-checking and dashboard tests (1-second leases)."""
    folder = tmp_path_factory.mktemp("shared") / "studies"
    folder.mkdir()
    srv = Server(folder, lease=1.0)
    srv.start()
    yield srv
    srv.kill()
