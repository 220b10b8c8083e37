"""``mftune bench serve``: how many asks and tells a real server answers, and its cost per pull.

A benchmark script, not a test: it starts ``mftune serve`` (uvicorn) in a
subprocess on a free port of 127.0.0.1, creates one study per measurement
(64 candidates, rounds of 64 pulls, noise so large that nothing is
eliminated, capped at ``pulls`` pulls), and runs ``n`` client threads
(:class:`mftune.client.Client`, one HTTP connection per request) that ask,
tell a synthetic score at once, and ask again. It prints, per number of
clients, pulls per second (each one ask and one tell), the mean wall-clock
milliseconds a pull costs one client (ask + tell round trips, HTTP
included), and the server's own overhead per pull: the time its ask and
tell handlers took per told pull (the study's ``ms_per_tell``, SQLite
commits included; empty asks count too).
"""

from __future__ import annotations

import os
import random
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time

from ..client import Client, ServerUnavailable

__all__ = ["bench_serve"]

SPEC = """
[parameters]
x = {{ type = "real", low = 0.0, high = 1.0 }}

[fidelity]
name   = "steps"
values = [1, 2]
costs  = [1, 2]
xi     = [0.5, 0.0]

[objective]
sigma = 10.0

[study]
algorithm    = "iise"
n_candidates = 64
workers      = 64
max_pulls    = {pulls}
seed         = 0
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _measure(client: Client, name: str, n_clients: int) -> tuple[int, float, int]:
    """Run ``n_clients`` client threads on study ``name`` until it stops."""
    counts, waits = [0] * n_clients, [0] * n_clients

    def loop(i: int) -> None:
        c = Client(client.url, client.token)
        rng = random.Random(i)
        while True:
            out = c.ask_once(name, f"bench-{i}")
            pull = out["pull"]
            if pull is None:
                if out["state"] != "running":
                    return
                waits[i] += 1
                time.sleep(0.002)
                continue
            c.tell(name, pull["pull_id"], score=rng.random(), seconds=0.01,
                   lease=pull["lease"])
            counts[i] += 1

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(n_clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts), time.perf_counter() - start, sum(waits)


def bench_serve(clients, pulls: int = 600, echo=print) -> list[dict]:
    """Measure a real server with each number of concurrent ``clients``; print and return rows."""
    token = secrets.token_urlsafe(12)
    port = _free_port()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, MFTUNE_TOKEN=token, OMP_NUM_THREADS="1")
        proc = subprocess.Popen([sys.executable, "-m", "mftune", "serve", tmp, "--port",
                                 str(port)], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            client = Client(f"http://127.0.0.1:{port}", token)
            deadline = time.monotonic() + 60
            while True:
                try:
                    client.health()
                    break
                except ServerUnavailable:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError("mftune serve did not start") from None
                    time.sleep(0.1)
            echo(f"mftune bench serve: uvicorn on 127.0.0.1, {os.cpu_count()} cores, "
                 f"{pulls} pulls per row (ask + tell each), clients in threads")
            echo(f"{'clients':>7}  {'pulls/s':>8}  {'requests/s':>10}  {'ms/pull/client':>14}"
                 f"  {'server ms/pull':>14}  {'empty asks':>10}")
            for n in clients:
                name = f"bench-{n}"
                client.create(name, SPEC.format(pulls=pulls))
                done, wall, waits = _measure(client, name, n)
                inside = client.status(name)["server"]["ms_per_tell"]
                row = {"clients": n, "pulls": done, "seconds": wall, "server_ms": inside,
                       "pulls_per_s": done / wall, "requests_per_s": (2 * done + waits) / wall,
                       "ms_per_pull": 1000 * wall * n / max(done, 1), "empty_asks": waits}
                rows.append(row)
                echo(f"{n:>7}  {row['pulls_per_s']:>8.1f}  {row['requests_per_s']:>10.1f}  "
                     f"{row['ms_per_pull']:>14.2f}  {inside:>14.2f}  {waits:>10}")
            one = next((r for r in rows if r["clients"] == 1), None)
            if one is not None:
                echo(f"server overhead per pull: {one['server_ms']:.2f} ms inside the server "
                     f"(ask + tell handlers, SQLite commits included); "
                     f"{one['ms_per_pull']:.2f} ms per pull seen by 1 client (HTTP round "
                     "trips included)")
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return rows
