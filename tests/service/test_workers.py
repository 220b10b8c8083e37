"""A real server, four worker processes over HTTP, and the same study run locally."""

from __future__ import annotations

from servers import SPEC, finish_workers, local_recommendation, start_worker, stored_rows


def test_four_http_workers_finish_every_pull_once_and_match_the_local_run(server, tmp_path):
    created = server.client.create("synth", SPEC)
    assert created["state"] == "running"
    workers = [start_worker(server, "synth") for _ in range(4)]
    outputs = finish_workers(workers, timeout=120)

    status = server.client.status("synth")
    assert status["status"] == "finished", status
    assert status["server"]["state"] == "finished"
    rows = stored_rows(server.folder / "synth.db")
    # every pull finished, exactly once: one attempt each, one tell each, none late
    assert rows and all(r["status"] == "done" for r in rows)
    assert all(r["attempts"] == 1 for r in rows)
    assert status["server"]["tells"] == len(rows)
    assert status["server"]["late_tells"] == 0
    assert status["server"]["expired_leases"] == 0
    # the work was shared between the workers, and their counts add up to the rows
    ran = [int(o.rsplit("worker: ", 1)[1].split()[0]) for o in outputs]
    assert sum(n > 0 for n in ran) >= 2 and sum(ran) == len(rows), outputs
    # the study's waves proposed candidates beyond its 6 first ones, and the HTTP workers
    # ran them (each pull carries its configuration)
    assert max(r["arm"] for r in rows) >= 6

    # the same study run locally with the same seed: same pulls, same recommendation
    local_best, local_pulls = local_recommendation(tmp_path)
    assert [(r["arm"], r["fidelity"]) for r in rows] == local_pulls
    assert status["best"]["arm"] == local_best

    # export gives the same rows as the store, as JSON and CSV
    exported = server.client.export("synth", "json")
    assert [p["id"] for p in exported["pulls"]] == [r["id"] for r in rows]
    csv_text = server.client.export("synth", "csv")
    assert csv_text.splitlines()[0].startswith("id,batch,pos,kind,arm,x,")
    assert len(csv_text.strip().splitlines()) == len(rows) + 1


def test_http_workers_run_a_gp_study_on_the_points_its_policy_proposes(server, tmp_path):
    # MF-GP-UCB proposes every configuration after the first draws; the server records each
    # proposal and leases its pulls with their configuration, so workers anywhere run them
    import urllib.request

    from servers import TOKEN

    spec = SPEC.replace('algorithm    = "iise"', 'algorithm    = "mf-gp-ucb"\nmax_pulls = 16')
    assert server.client.create("gp", spec)["state"] == "running"
    workers = [start_worker(server, "gp") for _ in range(2)]
    finish_workers(workers, timeout=120)
    rows = stored_rows(server.folder / "gp.db")
    assert len(rows) >= 16 and all(r["status"] == "done" for r in rows)
    status = server.client.status("gp")
    n_first = 4  # the calibration's draws ([calibration] arms, default 4)
    assert max(r["arm"] for r in rows) >= n_first and status["best"]["score"] is not None
    assert status["best"]["arm"] in {r["arm"] for r in rows}
    request = urllib.request.Request(f"{server.url}/studies/gp",
                                     headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=20) as page:
        html = page.read().decode()
    # the page says what a GP study is (no eliminations, no certificate), not "alive"
    assert "mf-gp-ucb proposes configurations until its budget or pull cap" in html
    assert "configurations evaluated" in html and "configurations still alive" not in html
    # the candidates table: the arms that ran, and the first draws, which no pull ran (the
    # study knows sigma and its bounds: no calibration)
    assert "<td class='l'>evaluated</td>" in html
    assert html.count("<td class='l'>proposed, not run</td>") >= n_first
