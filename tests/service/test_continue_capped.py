"""A served study stopped by its pull cap goes on with a larger one (``POST .../resume``)."""

from __future__ import annotations

import pytest
from servers import OBJECTIVE, SPEC, fingerprint, start_worker, stored_rows, wait_until

from mftune.client import ApiError
from mftune.study.store import StudyStore

#: The test study capped at 8 pulls (a fixed list of candidates: ~22 pulls without the cap).
CAPPED = SPEC.replace("workers      = 4", "workers      = 4\nmax_pulls    = 8\nadaptive = false")


def run_worker(server, name: str) -> None:
    worker = start_worker(server, name)
    out = worker.communicate(timeout=120)[0]
    assert worker.returncode == 0, out


def engine(server, name: str, state: str) -> dict:
    """The server's view of the study once its engine is in ``state``."""
    return wait_until(lambda: (v := server.client.status(name)["server"])["state"] == state
                      and v, what=f"study {name} {state}")


def refused(client, name: str, body: dict) -> ApiError:
    with pytest.raises(ApiError) as exc:
        client.request("POST", f"/api/studies/{name}/resume", body)
    return exc.value


def local_pulls(tmp_path, spec: str) -> list[tuple[int, int]]:
    """(arm, fidelity) of every pull, in batch order, of ``spec`` run by mftune tune's path."""
    from mftune.scripts.spacefile import parse_spacefile
    from mftune.scripts.study import create_study, run_study

    folder = tmp_path / "local"
    folder.mkdir()
    create_study(parse_spacefile(spec), OBJECTIVE, folder / "local.db", cwd=folder).close()
    assert run_study(folder / "local.db", verbose=0).reason == "stopping-rule"
    return ordered(folder / "local.db")


def ordered(path) -> list[tuple[int, int]]:
    rows = sorted(stored_rows(path), key=lambda r: (r["batch"], r["pos"]))
    return [(r["arm"], r["fidelity"]) for r in rows]


def test_a_capped_study_resumes_with_a_larger_cap_and_ends_as_if_never_capped(server,
                                                                              tmp_path):
    c = server.client
    c.create("capped", CAPPED)
    run_worker(server, "capped")  # it exits when the study stops at its cap
    view = engine(server, "capped", "stopped")
    assert view["reason"] == "max-pulls" and view["limits"] is None
    assert len(stored_rows(server.folder / "capped.db")) == 8
    # refused, nothing written: the cap it stopped on missing, or not above what was used
    with StudyStore(server.folder / "capped.db") as store:
        spent = store.spent()  # the measured seconds of its 8 pulls: a budget of that is used up
    before = fingerprint(server.folder)
    for body, field, status in [({}, "max_pulls", 400), ({"budget": 1e6}, "max_pulls", 400),
                                ({"max_pulls": 8}, "max_pulls", 400),
                                ({"max_pulls": 100, "budget": spent}, "budget", 400),
                                ({"max_pulls": 0}, "max_pulls", 400),
                                ({"max_pulls": 100, "cap": 1}, "cap", 400)]:
        err = refused(c, "capped", body)
        assert err.status == status and err.message.startswith(f"{field}: "), err.message
    assert "must be > 8 (its search's pulls so far" in refused(c, "capped",
                                                               {"max_pulls": 8}).message
    assert fingerprint(server.folder) == before
    view = c.resume("capped", max_pulls=1000)
    assert view["state"] == "running" and view["limits"] == {"max_pulls": 1000}
    server.kill()  # the raised cap is the study's: a restarted server goes on with it
    server.start()
    assert c.status("capped")["server"]["limits"] == {"max_pulls": 1000}
    run_worker(server, "capped")
    view = engine(server, "capped", "finished")
    assert view["reason"] == "stopping-rule"
    err = refused(c, "capped", {"max_pulls": 2000})
    assert err.status == 409 and "is finished (stopping-rule)" in err.message
    # the pulls of the same study run at once with the larger cap (exact replay)
    served = ordered(server.folder / "capped.db")
    assert len(served) > 8
    assert served == local_pulls(tmp_path, CAPPED.replace("max_pulls    = 8",
                                                          "max_pulls    = 1000"))


def test_only_a_stopped_study_resumes(shared_server):
    c = shared_server.client
    c.create("going", SPEC)
    wait_until(lambda: c.status("going")["server"]["batch"] is not None, what="a first batch")
    before = fingerprint(shared_server.folder)
    err = refused(c, "going", {"max_pulls": 100})
    assert err.status == 409 and err.message.startswith("study: study 'going' is running")
    assert "only a study stopped by budget, max-pulls, all-failed" in err.message
    assert refused(c, "nope", {}).status == 404
    assert fingerprint(shared_server.folder) == before


def test_a_study_stopped_by_failed_runs_resumes_and_runs_them_again(shared_server):
    c = shared_server.client
    c.create("broken", SPEC)  # its workers fail: a missing data file, say
    failed = set()
    while (pull := c.ask("broken", "w", wait=30)) is not None:
        c.tell("broken", pull["pull_id"], status="failed", error="no data.csv", seconds=0.1,
               lease=pull["lease"])
        failed.add(pull["pull_id"])
    view = engine(shared_server, "broken", "stopped")
    assert view["reason"] == "all-failed" and len(failed) == 4  # the first batch, told
    view = c.resume("broken")  # fixed: no cap to raise, the failed runs run again
    assert view["state"] == "running" and view["limits"] is None
    pull = c.ask("broken", "w", wait=30)
    assert pull["pull_id"] in failed and pull["attempt"] == 2

