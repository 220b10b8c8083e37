"""A small client of the tuning server (``mftune serve``), for notebooks and training loops.

Standard library only (:mod:`urllib`), so it runs wherever Python does::

    from mftune.client import Client

    client = Client("http://127.0.0.1:8765", token="...")    # or MFTUNE_TOKEN
    while (pull := client.ask("svm")) is not None:
        score = train(pull["config"], pull["fidelity"]["value"])
        client.tell("svm", pull["pull_id"], score=score, seconds=12.5,
                    lease=pull["lease"])

:meth:`Client.ask` waits while the study's current round is handed out to
other workers and returns ``None`` once the study has ended. The HTTP API it
speaks is documented in ``docs/service.md``; any language can speak it.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

__all__ = ["ApiError", "Client", "ServerUnavailable"]


class ApiError(RuntimeError):
    """The server refused a request (a 4xx or 5xx answer); ``status`` and ``message``."""

    def __init__(self, status: int, message: str):
        super().__init__(f"HTTP {status}: {message}")
        self.status, self.message = int(status), message


class ServerUnavailable(ConnectionError):
    """The server could not be reached (not started, restarting, or the network)."""


class Client:
    """Talk to one tuning server.

    Parameters
    ----------
    url : str
        The server's address, e.g. ``"http://127.0.0.1:8765"``.
    token : str, optional
        The server's token (default: the ``MFTUNE_TOKEN`` environment variable).
    timeout : float, default=30
        Seconds to wait for one answer.
    """

    def __init__(self, url: str, token: str | None = None, *, timeout: float = 30.0):
        self.url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get("MFTUNE_TOKEN")
        self.timeout = float(timeout)

    # -- transport ----------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
                content_type: str = "application/json", query: dict | None = None) -> Any:
        """Send one request; return the decoded JSON answer (or text for non-JSON answers).

        Raises
        ------
        ApiError
            The server answered with an error status.
        ServerUnavailable
            No answer (connection refused or reset, timeout).
        """
        url = self.url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = raw
        if body is not None:
            data = json.dumps(body, allow_nan=False).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                text = resp.read().decode()
                kind = resp.headers.get("Content-Type", "")
        except urllib.error.HTTPError as exc:
            text = exc.read().decode(errors="replace")
            try:
                message = json.loads(text).get("error", text)
            except (ValueError, AttributeError):
                message = text
            raise ApiError(exc.code, message) from None
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError,
                http.client.HTTPException) as exc:
            # HTTPException: a reply cut short (IncompleteRead) by a server killed mid-answer
            raise ServerUnavailable(f"{self.url}: {getattr(exc, 'reason', exc)}") from None
        return json.loads(text) if kind.startswith("application/json") else text

    # -- the API ------------------------------------------------------------------
    def health(self) -> dict:
        """``GET /api/health`` (no token needed)."""
        return self.request("GET", "/api/health")

    def studies(self) -> list[dict]:
        """The studies the server holds."""
        return self.request("GET", "/api/studies")["studies"]

    def study(self, name: str) -> dict:
        """One study's description (space, fidelity, objective, settings)."""
        return self.request("GET", f"/api/studies/{_q(name)}")

    def create(self, name: str, spec: dict | str) -> dict:
        """Create a study from a space file's content: a dict (JSON) or TOML text."""
        if isinstance(spec, str):
            return self.request("POST", "/api/studies", raw=spec.encode(),
                                content_type="application/toml", query={"name": name})
        return self.request("POST", "/api/studies", spec, query={"name": name})

    def ask_once(self, name: str, worker: str = "") -> dict:
        """One ``ask``: ``{"pull": {...} or None, "state": ..., "retry_after": s}``."""
        return self.request("POST", f"/api/studies/{_q(name)}/ask", {"worker": worker})

    def ask(self, name: str, worker: str = "", *, wait: float | None = None) -> dict | None:
        """The next pull to run (a lease), waiting while none is free; ``None`` once it ended.

        Parameters
        ----------
        name : str
            The study.
        worker : str
            A name for this worker, shown in the study's rows.
        wait : float, optional
            Give up (return ``None``) after this many seconds without a pull.
        """
        start = time.monotonic()
        while True:
            out = self.ask_once(name, worker)
            if out["pull"] is not None:
                return out["pull"]
            if out["state"] != "running":
                return None
            if wait is not None and time.monotonic() - start > wait:
                return None
            time.sleep(float(out.get("retry_after", 0.2)))

    def tell(self, name: str, pull_id: int, *, lease: str, seconds: float,
             score: float | None = None, status: str = "done",
             error: str | None = None) -> dict:
        """Report a pull: its ``score``, or ``status="failed"`` with ``error``, and ``seconds``,
        with the ``lease`` it was handed out with."""
        body: dict[str, Any] = {"pull_id": pull_id, "seconds": seconds, "status": status,
                                "lease": lease}
        if score is not None:
            body["score"] = score
        if error is not None:
            body["error"] = error
        return self.request("POST", f"/api/studies/{_q(name)}/tell", body)

    def heartbeat(self, name: str, pull_id: int, lease: str) -> dict:
        """Extend a lease (call it well within ``lease_seconds``)."""
        return self.request("POST", f"/api/studies/{_q(name)}/heartbeat",
                            {"pull_id": pull_id, "lease": lease})

    def resume(self, name: str, *, budget: float | None = None,
               max_pulls: int | None = None) -> dict:
        """Continue a study stopped by its budget or pull cap (or by failed runs), as
        ``mftune resume --budget/--max-pulls`` does; returns the server's view of it.

        Parameters
        ----------
        name : str
            The study.
        budget : float, optional
            The new summed cost cap in seconds (larger than the cost so far).
        max_pulls : int, optional
            The new cap on the search's pulls (larger than its pulls so far).
        """
        body = {k: v for k, v in (("budget", budget), ("max_pulls", max_pulls))
                if v is not None}
        return self.request("POST", f"/api/studies/{_q(name)}/resume", body)

    def status(self, name: str) -> dict:
        """What ``mftune status --json`` says of the study, plus the server's view."""
        return self.request("GET", f"/api/studies/{_q(name)}/status")

    def export(self, name: str, fmt: str = "json") -> Any:
        """Every pull of the study: ``fmt="json"`` (a dict) or ``"csv"`` (text)."""
        return self.request("GET", f"/api/studies/{_q(name)}/export", query={"format": fmt})


def _q(name: str) -> str:
    return urllib.parse.quote(name, safe="")
