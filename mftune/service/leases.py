"""Leases: which remote worker holds which pull, and until when.

A pull handed out by ``ask`` is claimed in the study store like any worker's
claim: its row turns ``running`` with the worker id ``lease:<token>`` (and
its ``attempts`` and ``started`` columns grow), so the store itself is the
persisted lease table. The deadline lives here: a lease not extended by a
heartbeat (or closed by a tell) before it passes expires, and the pull goes
back to ``pending`` for the next ``ask`` — it is re-issued once per expiry.

A server restarted after a crash adopts the leases its rows still hold with
a fresh deadline, so a worker that kept running during the outage can still
heartbeat and tell; a lease nobody extends expires as usual.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field

from ..study.workers import _LIVE_TOKENS

__all__ = ["LEASE_PREFIX", "Lease", "LeaseTable"]

#: Worker id of a leased row: ``lease:<token>``.
LEASE_PREFIX = "lease:"


@dataclass
class Lease:
    """One pull handed to one worker.

    Attributes
    ----------
    token : str
        The lease id the worker quotes in heartbeats and tells.
    pull_id : int
        The store's row id.
    deadline : float
        Epoch seconds after which the lease expires.
    holder : str
        The name the worker gave (for display only).
    """

    token: str
    pull_id: int
    deadline: float
    holder: str = ""
    issued: float = field(default_factory=time.time)

    @property
    def worker(self) -> str:
        """The worker id written in the pull's row."""
        return LEASE_PREFIX + self.token


class LeaseTable:
    """The live leases of one study (deadlines; the claims themselves are in the store).

    Parameters
    ----------
    seconds : float
        Lease length: a worker must heartbeat or tell within it.
    """

    def __init__(self, seconds: float):
        self.seconds = float(seconds)
        self.by_token: dict[str, Lease] = {}
        self.issued: dict[str, int] = {}  # every lease handed out or adopted: its pull
        self.n_expired = 0

    def new(self, pull_id: int, holder: str = "") -> Lease:
        """A fresh lease on ``pull_id`` (registered alive, so no one releases its row)."""
        lease = Lease(secrets.token_hex(8), int(pull_id), time.time() + self.seconds,
                      holder[:80])
        self.by_token[lease.token] = lease
        self.issued[lease.token] = lease.pull_id
        _LIVE_TOKENS.add(lease.worker)
        return lease

    def adopt(self, worker: str, pull_id: int) -> Lease | None:
        """Take back, with a fresh deadline, a lease a previous server wrote in a row."""
        if not (worker or "").startswith(LEASE_PREFIX):
            return None
        lease = Lease(worker[len(LEASE_PREFIX):], int(pull_id), time.time() + self.seconds)
        self.by_token[lease.token] = lease
        self.issued[lease.token] = lease.pull_id
        _LIVE_TOKENS.add(lease.worker)
        return lease

    def was_issued(self, token: str, pull_id: int) -> bool:
        """Whether ``token`` was a lease on ``pull_id`` (live, expired or closed)."""
        return self.issued.get(token) == int(pull_id)

    def get(self, token: str) -> Lease | None:
        """The live lease ``token``, if any."""
        return self.by_token.get(token)

    def extend(self, lease: Lease) -> float:
        """Push the deadline ``seconds`` from now; return it."""
        lease.deadline = time.time() + self.seconds
        return lease.deadline

    def drop(self, lease: Lease) -> None:
        """Forget a lease (its pull finished, or it expired)."""
        self.by_token.pop(lease.token, None)
        _LIVE_TOKENS.discard(lease.worker)

    def drop_pull(self, pull_id: int) -> None:
        """Forget every lease on ``pull_id``."""
        for lease in [x for x in self.by_token.values() if x.pull_id == pull_id]:
            self.drop(lease)

    def expired(self, now: float | None = None) -> list[Lease]:
        """The leases past their deadline (still in the table)."""
        now = time.time() if now is None else now
        return [x for x in self.by_token.values() if x.deadline < now]

    def __len__(self) -> int:
        return len(self.by_token)
