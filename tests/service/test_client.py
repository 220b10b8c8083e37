"""The HTTP client's transport errors: a server that dies mid-answer is unavailable, not a
crash (a worker then retries for its ``reconnect`` seconds)."""

from __future__ import annotations

import socket
import threading

import pytest

from mftune.client import Client, ServerUnavailable


def _one_cut_reply(listener: socket.socket) -> None:
    """Accept one request and answer it with headers promising 100 bytes, then 10, then close."""
    conn, _ = listener.accept()
    with conn:
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"studies\"")


def test_a_reply_cut_short_is_server_unavailable():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        server = threading.Thread(target=_one_cut_reply, args=(listener,), daemon=True)
        server.start()
        client = Client(f"http://127.0.0.1:{listener.getsockname()[1]}", timeout=10)
        with pytest.raises(ServerUnavailable, match="IncompleteRead"):
            client.studies()
        server.join(timeout=10)


def test_a_closed_port_is_server_unavailable():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    with pytest.raises(ServerUnavailable):
        Client(f"http://127.0.0.1:{port}", timeout=10).health()
