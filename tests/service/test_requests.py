"""Bad requests are refused with a 4xx naming the field, and write nothing; leases and tells."""

from __future__ import annotations

import http.client
import json
import sqlite3
import time
import tomllib

import pytest
from servers import SPEC, TOKEN, fingerprint

GOOD = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def study(shared_server):
    """A study with one finished pull (id ``done``) and pending ones (``pending``)."""
    c = shared_server.client
    c.create("checks", SPEC)
    pull = c.ask("checks", "setup", wait=30)
    c.tell("checks", pull["pull_id"], score=0.5, seconds=1.0, lease=pull["lease"])
    rows = c.export("checks")["pulls"]
    pending = next(r["id"] for r in rows if r["status"] == "pending")
    return {"server": shared_server, "done": pull["pull_id"], "pending": pending}


def send(server, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    try:
        conn.request(method, path, body=body, headers=GOOD if headers is None else headers)
        resp = conn.getresponse()
        return resp.status, resp.read().decode(errors="replace")
    finally:
        conn.close()


TELL = "/api/studies/checks/tell"
ASK = "/api/studies/checks/ask"
BEAT = "/api/studies/checks/heartbeat"
RESUME = "/api/studies/checks/resume"


def tell_body(**kw):
    return {"pull_id": "PENDING", "score": 0.5, "seconds": 1.0, **kw}


# (case id, method, path, body, headers, expected status, field named in the message)
CASES = [
    ("no token", "GET", "/api/studies", None, {}, 401, "token"),
    ("wrong token", "GET", "/api/studies", None, {"Authorization": "Bearer nope"}, 403,
     "token"),
    ("no token on tell", "POST", TELL, tell_body(), {"Content-Type": "application/json"}, 401,
     "token"),
    ("wrong token on ask", "POST", ASK, {}, {"Authorization": "Bearer x",
                                             "Content-Type": "application/json"}, 403, "token"),
    ("malformed JSON", "POST", TELL, '{"pull_id": 1, "score":', None, 400, "body"),
    ("not UTF-8", "POST", TELL, b"\xff\xfe\x00", None, 400, "body"),
    ("oversize body", "POST", TELL, '{"pad": "' + "x" * (2 << 20) + '"}', None, 413, "body"),
    ("body not an object", "POST", TELL, [1, 2], None, 400, "body"),
    ("wrong content type", "POST", TELL, "pull_id=1",
     {**GOOD, "Content-Type": "application/x-www-form-urlencoded"}, 415, "content-type"),
    ("unknown study ask", "POST", "/api/studies/nope/ask", {}, None, 404, "study"),
    ("unknown study tell", "POST", "/api/studies/nope/tell", tell_body(), None, 404, "study"),
    ("unknown study status", "GET", "/api/studies/nope/status", None, None, 404, "study"),
    ("unknown pull id", "POST", TELL, tell_body(pull_id=987654), None, 404, "pull_id"),
    ("finished pull id (duplicate tell)", "POST", TELL, tell_body(pull_id="DONE"), None, 409,
     "pull_id"),
    ("pull id a string", "POST", TELL, tell_body(pull_id="7"), None, 400, "pull_id"),
    ("pull id negative", "POST", TELL, tell_body(pull_id=-3), None, 400, "pull_id"),
    ("pull id a float", "POST", TELL, tell_body(pull_id=1.5), None, 400, "pull_id"),
    ("pull id a boolean", "POST", TELL, tell_body(pull_id=True), None, 400, "pull_id"),
    ("score a string", "POST", TELL, tell_body(score="0.9"), None, 400, "score"),
    ("score NaN", "POST", TELL, '{"pull_id": PENDING, "score": NaN, "seconds": 1}', None, 400,
     "body"),
    ("score Infinity", "POST", TELL, '{"pull_id": PENDING, "score": Infinity, "seconds": 1}',
     None, 400, "body"),
    ("score overflows to inf", "POST", TELL, '{"pull_id": PENDING, "score": 1e999, '
     '"seconds": 1}', None, 400, "score"),
    ("score missing", "POST", TELL, {"pull_id": "PENDING", "seconds": 1.0}, None, 400,
     "score"),
    ("negative seconds", "POST", TELL, tell_body(seconds=-1.0), None, 400, "seconds"),
    ("seconds missing", "POST", TELL, {"pull_id": "PENDING", "score": 0.5}, None, 400,
     "seconds"),
    ("unknown status", "POST", TELL, tell_body(status="crashed"), None, 400, "status"),
    ("failed with a score", "POST", TELL, tell_body(status="failed", error="x"), None, 400,
     "score"),
    ("failed without error", "POST", TELL, {"pull_id": "PENDING", "seconds": 1.0,
                                            "status": "failed"}, None, 400, "error"),
    ("unknown field", "POST", TELL, tell_body(colour="red"), None, 400, "colour"),
    ("lease not a string", "POST", TELL, tell_body(lease=5), None, 400, "lease"),
    ("tell without lease", "POST", TELL, tell_body(), None, 400, "lease"),
    ("tell with a lease never issued", "POST", TELL, tell_body(lease="abc"), None, 403,
     "lease"),
    ("heartbeat without lease", "POST", BEAT, {"pull_id": "PENDING"}, None, 400, "lease"),
    ("heartbeat with a foreign lease", "POST", BEAT, {"pull_id": "PENDING", "lease": "abc"},
     None, 409, "lease"),
    ("ask with a non-string worker", "POST", ASK, {"worker": 3}, None, 400, "worker"),
    ("export format", "GET", "/api/studies/checks/export?format=xml", None, None, 400,
     "format"),
    ("create: bad name", "POST", "/api/studies?name=../etc", SPEC,
     {**GOOD, "Content-Type": "application/toml"}, 400, "name"),
    ("create: no name", "POST", "/api/studies", SPEC,
     {**GOOD, "Content-Type": "application/toml"}, 400, "name"),
    ("create: existing name", "POST", "/api/studies?name=checks", SPEC,
     {**GOOD, "Content-Type": "application/toml"}, 409, "name"),
    ("create: malformed TOML", "POST", "/api/studies?name=new1", "[parameters\nx=",
     {**GOOD, "Content-Type": "application/toml"}, 400, "invalid TOML"),
    ("create: delta out of range", "POST", "/api/studies?name=new2",
     SPEC.replace("delta        = 0.05", "delta = 2.0"),
     {**GOOD, "Content-Type": "application/toml"}, 400, "study.delta"),
    ("create: JSON with a wrong type", "POST", "/api/studies?name=new3",
     {"parameters": {"x": {"type": "real", "low": "a", "high": 1}},
      "fidelity": {"name": "steps", "values": [1, 4]}}, None, 400, "x.low"),
    ("create: JSON section not a table", "POST", "/api/studies?name=new4",
     {"parameters": [1], "fidelity": {"name": "steps", "values": [1, 4]}}, None, 400,
     "parameters"),
    ("resume: budget a string", "POST", RESUME, {"budget": "1e3"}, None, 400, "budget"),
    ("resume: max_pulls a float", "POST", RESUME, {"max_pulls": 2.5}, None, 400, "max_pulls"),
    ("resume: unknown field", "POST", RESUME, {"n_trials": 50}, None, 400, "n_trials"),
    ("resume: a running study", "POST", RESUME, {"max_pulls": 500}, None, 409, "study"),
    ("unknown path", "GET", "/api/nothing-here", None, None, 404, "path"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_bad_request_gets_a_4xx_naming_the_field_and_writes_nothing(study, case):
    _, method, path, body, headers, status, field = case
    server = study["server"]
    if isinstance(body, dict):
        body = {k: study[v.lower()] if v in ("PENDING", "DONE") else v for k, v in body.items()}
    elif isinstance(body, str):
        body = body.replace("PENDING", str(study["pending"]))
    before = fingerprint(server.folder)
    got, text = send(server, method, path, body, headers)
    assert got == status, text
    assert field in json.loads(text)["error"], text
    assert not json.loads(text)["error"].startswith("spec: spec"), text  # named once
    assert fingerprint(server.folder) == before


def test_there_are_at_least_25_cases():
    assert len(CASES) >= 25


def test_health_needs_no_token_and_the_api_describes_itself(study):
    server = study["server"]
    got, text = send(server, "GET", "/api/health", headers={})
    assert got == 200 and json.loads(text)["ok"] is True
    got, text = send(server, "GET", "/api/openapi.json")
    assert got == 200 and "/api/studies/{name}/tell" in json.loads(text)["paths"]
    got, _ = send(server, "GET", "/", headers={})
    assert got == 401  # the dashboard is not public unless --public


def test_an_expired_lease_is_reissued_once_and_its_late_result_is_kept(shared_server):
    c = shared_server.client
    c.create("leases", tomllib.loads(SPEC))  # the space file's tables, as JSON
    first = c.ask("leases", "slow", wait=30)
    time.sleep(1.3)  # the 1-second lease lapses without a heartbeat
    second = c.ask("leases", "fast", wait=30)
    assert second["pull_id"] == first["pull_id"]  # the same pull, re-issued
    assert second["attempt"] == 2 and second["lease"] != first["lease"]
    third = c.ask("leases", "other", wait=30)
    assert third["pull_id"] != first["pull_id"]  # re-issued once, not handed out again

    late = c.tell("leases", first["pull_id"], score=0.25, seconds=2.0, lease=first["lease"])
    assert late == {"recorded": True, "late": True}  # the late result is kept
    got, text = send(shared_server, "POST", "/api/studies/leases/tell",
                     {"pull_id": first["pull_id"], "score": 0.9, "seconds": 1.0,
                      "lease": second["lease"]})
    assert got == 409 and "already finished" in text  # recorded once: the first result
    got, text = send(shared_server, "POST", "/api/studies/leases/heartbeat",
                     {"pull_id": first["pull_id"], "lease": second["lease"]})
    assert got == 409 and "already finished" in text  # so its runner can stop
    row = next(p for p in c.export("leases")["pulls"] if p["id"] == first["pull_id"])
    assert row["score"] == 0.25 and row["status"] == "done" and row["attempts"] == 2

    beat = c.heartbeat("leases", third["pull_id"], third["lease"])
    assert beat["deadline"] > third["deadline"] - 1e-6
    failed = c.tell("leases", third["pull_id"], status="failed", error="CUDA out of memory",
                    seconds=0.5, lease=third["lease"])
    assert failed == {"recorded": True, "late": False}
    status = c.status("leases")
    assert status["failures"]["last"] == "CUDA out of memory"
    got, text = send(shared_server, "POST", "/api/studies/leases/ask", b"",
                     {"Authorization": f"Bearer {TOKEN}"})  # an empty ask is {}
    assert got == 200 and json.loads(text)["state"] == "running"


def test_reading_a_study_writes_nothing(study):
    """Status, export, the study list and the dashboard read through read-only connections."""
    server = study["server"]
    before = fingerprint(server.folder)
    for path in ("/api/studies", "/api/studies/checks", "/api/studies/checks/status",
                 "/api/studies/checks/export?format=csv", "/", "/studies/checks"):
        got, text = send(server, "GET", path)
        assert got == 200, text
    assert fingerprint(server.folder) == before


def test_a_long_read_of_the_study_does_not_block_its_writes(shared_server):
    """What the dashboard relies on: a reader holding a snapshot never stops a tell."""
    c = shared_server.client
    c.create("readers", SPEC)
    pull = c.ask("readers", "w", wait=30)
    reader = sqlite3.connect(f"file:{shared_server.folder / 'readers.db'}?mode=ro", uri=True,
                             isolation_level=None)
    try:
        reader.execute("BEGIN")  # a read transaction left open, as a slow page would
        seen = reader.execute("SELECT COUNT(*) FROM pulls WHERE status = 'done'").fetchone()
        assert c.tell("readers", pull["pull_id"], score=0.3, seconds=1.0,
                      lease=pull["lease"])["recorded"]
        got, text = send(shared_server, "GET", "/studies/readers")
        assert got == 200 and ">1</b> pulls finished" in text  # pages see the new pull
        assert reader.execute("SELECT COUNT(*) FROM pulls WHERE status = 'done'"
                              ).fetchone() == seen  # while the old snapshot stays intact
    finally:
        reader.close()


def test_a_study_named_with_the_file_suffix_is_the_study_of_that_file(shared_server):
    # ?name=x.db is the study x in x.db (not x.db.db)
    made = shared_server.client.create("suffixed.db", SPEC)
    assert made["name"] == "suffixed" and (shared_server.folder / "suffixed.db").exists()
    assert not (shared_server.folder / "suffixed.db.db").exists()


def test_a_lapsed_pull_told_late_before_it_is_reissued_keeps_its_one_attempt(shared_server):
    c = shared_server.client
    c.create("lapsed", tomllib.loads(SPEC))
    first = c.ask("lapsed", "slow", wait=30)
    time.sleep(1.3)  # the 1-second lease lapses; no one asks again before the result comes
    assert c.tell("lapsed", first["pull_id"], score=0.5, seconds=2.0,
                  lease=first["lease"]) == {"recorded": True, "late": True}
    row = next(p for p in c.export("lapsed")["pulls"] if p["id"] == first["pull_id"])
    assert row["status"] == "done" and row["attempts"] == 1
