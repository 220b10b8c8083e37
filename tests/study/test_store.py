"""The SQLite study store: schema, claims, crash consistency and exact replay."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from mftune import IISE, Pulls
from mftune.engine.driver import Evaluator, Outcome, Outcomes, run
from mftune.study.recording import RecordingEvaluator
from mftune.study.replay import StudyMismatchError, replay
from mftune.study.store import FORMAT_VERSION, StudyStore
from mftune.study.workers import _LIVE_TOKENS, new_worker_id

THETA = np.array([[0.2, 0.5, 0.45, 0.1, 0.6, 0.3],
                  [0.3, 0.55, 0.5, 0.2, 0.62, 0.35],
                  [0.35, 0.6, 0.55, 0.25, 0.7, 0.4]])
COSTS = [1.0, 3.0, 9.0]
XI = [0.2, 0.1, 0.0]


def make_store(path, n_arms=6):
    return StudyStore.create(path, space={"x": {"type": "real", "low": 0, "high": 1}},
                             fidelities={"name": "n", "values": [1, 3, 9]},
                             objective={"name": "acc", "direction": "maximize"},
                             algorithm="iise", settings={"delta": 0.1}, seed=3,
                             configs=[{"x": i / 10} for i in range(n_arms)])


class KeyedEvaluator(Evaluator):
    """Reward = θ + N(0, σ²) noise keyed on (arm, fidelity, repeat): replay-proof.

    The noise of the r-th pull of (arm, fidelity) is the same whatever the
    process or call pattern, as it would be for a script seeded by MFTUNE_SEED.
    """

    def __init__(self, counts=None, sigma=0.05):
        super().__init__()
        self.counts = dict(counts or {})
        self.sigma = sigma
        self.calls = 0

    def evaluate_one(self, arm, fidelity, point=None):
        key = (arm, fidelity)
        r = self.counts.get(key, 0)
        self.counts[key] = r + 1
        self.calls += 1
        noise = np.random.default_rng([arm, fidelity, r]).normal(0, self.sigma)
        return Outcome(THETA[fidelity, arm] + noise, float(COSTS[fidelity]))


def counts_from(store):
    counts = {}
    for r in store.rows():
        if r.finished:
            counts[(r.arm, r.fidelity)] = counts.get((r.arm, r.fidelity), 0) + 1
    return counts


def test_create_writes_metadata_and_arms_as_json(tmp_path):
    store = make_store(tmp_path / "s.db")
    meta = store.meta
    assert meta["format_version"] == FORMAT_VERSION and meta["seed"] == 3
    assert meta["objective"] == {"name": "acc", "direction": "maximize"}
    assert store.configs()[4] == {"x": 0.4}
    conn = sqlite3.connect(tmp_path / "s.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # JSON text columns, never pickled blobs
    raw = conn.execute("SELECT space, settings FROM study").fetchone()
    assert json.loads(raw[0])["x"]["type"] == "real" and json.loads(raw[1]) == {"delta": 0.1}
    with pytest.raises(FileExistsError, match="resume"):
        make_store(tmp_path / "s.db")


def test_create_rejects_bad_direction_and_leaves_no_study(tmp_path):
    with pytest.raises(ValueError, match="direction"):
        StudyStore.create(tmp_path / "b.db", space={}, fidelities={}, algorithm="iise",
                          objective={"direction": "up"}, settings={}, seed=0, configs=[{}])
    assert not StudyStore.exists(tmp_path / "b.db")


def test_failed_create_rolls_back(tmp_path):
    with pytest.raises(ValueError):  # NaN is not JSON: the transaction must roll back
        StudyStore.create(tmp_path / "c.db", space={}, fidelities={}, algorithm="iise",
                          objective={"direction": "maximize"}, settings={"s": float("nan")},
                          seed=0, configs=[{}])
    assert not StudyStore.exists(tmp_path / "c.db")
    make_store(tmp_path / "c.db")  # the half-made file is reusable
    assert StudyStore.exists(tmp_path / "c.db")


def test_claim_is_exclusive_and_finish_checks_the_claim(tmp_path):
    store = make_store(tmp_path / "s.db")
    other = StudyStore(tmp_path / "s.db")
    ids = store.insert_batch(0, Pulls([0, 1, 2], [0, 0, 0]))
    w1, w2 = new_worker_id(), new_worker_id()
    assert store.claim(ids[:2], w1) == ids[:2]
    assert other.claim(ids, w2) == ids[2:]  # only the unclaimed one
    assert not other.finish(ids[0], status="done", score=1.0, reward=1.0, cost=1.0, worker=w2)
    assert store.finish(ids[0], status="done", score=1.0, reward=1.0, cost=1.0, worker=w1)
    assert not store.finish(ids[0], status="done", score=2.0, reward=2.0, cost=1.0, worker=w1)
    rows = {r.id: r for r in store.rows()}
    assert rows[ids[0]].score == 1.0 and rows[ids[0]].attempts == 1
    assert [rows[i].status for i in ids] == ["done", "running", "running"]
    # duplicate inserts of the same batch are ignored with if_absent
    assert store.insert_batch(0, Pulls([0, 1, 2], [0, 0, 0]), if_absent=True) == []
    with pytest.raises(sqlite3.IntegrityError):
        store.insert_batch(0, Pulls([0], [0]))


def test_release_stale_only_resets_dead_workers(tmp_path):
    store = make_store(tmp_path / "s.db")
    ids = store.insert_batch(0, Pulls([0, 1, 2], [0, 0, 0]))
    alive, dead = new_worker_id(), new_worker_id()
    store.claim(ids[:1], alive)
    store.claim(ids[1:2], dead)
    store.claim(ids[2:], "otherhost:1:abc")  # another machine: cannot tell, keep it
    _LIVE_TOKENS.discard(dead)
    assert store.release_stale() == 1
    status = {r.id: (r.status, r.worker) for r in store.rows()}
    assert status[ids[0]] == ("running", alive)
    assert status[ids[1]] == ("pending", None)
    assert status[ids[2]][0] == "running"
    assert store.claim([ids[1]], alive) == [ids[1]]
    assert next(r for r in store.rows() if r.id == ids[1]).attempts == 2


def new_policy():
    return IISE(THETA.shape[1], COSTS, XI, delta=0.1, variance_proxy=0.0025)


def test_replay_tells_complete_batches_and_stops_at_incomplete(tmp_path):
    store = make_store(tmp_path / "s.db")
    rec = RecordingEvaluator(store, KeyedEvaluator())
    full = new_policy()
    res = run(full, rec, max_pulls=20)
    assert res.n_pulls == 20
    rows = store.rows()
    assert len(rows) == 20 and all(r.status == "done" for r in rows)
    fresh = new_policy()
    state = replay(fresh, rows)
    # batches are whole rounds of 6 arms: 3 complete, the 4th trimmed to 2 pulls
    assert state.batch == 3 and len(state.rows) == 2 and len(state.missing) == len(
        state.pulls) - 2
    np.testing.assert_array_equal(fresh.stats.counts,
                                  full.stats.counts - _last_batch_counts(rows, full))
    tampered = [r if r.batch == 0 else r.__class__(**{**r.__dict__, "arm": 5 - r.arm})
                for r in rows]
    with pytest.raises(StudyMismatchError):
        replay(new_policy(), tampered)


def _last_batch_counts(rows, policy):
    out = np.zeros_like(policy.stats.counts)
    for r in rows:
        if r.batch == 3:
            out[r.fidelity, r.arm] += 1
    return out


def test_resume_through_the_driver_equals_an_uninterrupted_run(tmp_path):
    # uninterrupted
    ref_store = make_store(tmp_path / "ref.db")
    ref_policy = new_policy()
    ref = run(ref_policy, RecordingEvaluator(ref_store, KeyedEvaluator()))
    assert ref.completed
    ref_rows = [(r.batch, r.pos, r.arm, r.fidelity, r.score) for r in ref_store.rows()]
    # interrupted twice: a pull cap, then a "crash" with a batch left running
    store = make_store(tmp_path / "s.db")
    run(new_policy(), RecordingEvaluator(store, KeyedEvaluator()), max_pulls=25)
    p2 = new_policy()
    rec2 = RecordingEvaluator(store, KeyedEvaluator(counts_from(store)))
    rec2.resume(p2)
    pulls = p2.ask()
    store.insert_batch(rec2.next_batch, pulls, status="running", worker=rec2.worker)
    _LIVE_TOKENS.discard(rec2.worker)  # the worker dies with its batch running
    p3 = new_policy()
    inner = KeyedEvaluator(counts_from(store))
    rec3 = RecordingEvaluator(store, inner)
    rec3.resume(p3)
    res = run(p3, rec3)
    assert res.completed and p3.recommend() == ref_policy.recommend()
    rows = [(r.batch, r.pos, r.arm, r.fidelity, r.score) for r in store.rows()]
    assert rows == ref_rows  # the same pulls, in the same order, with the same scores
    # every pull ran exactly once except the batch that was running at the crash
    assert inner.calls + 25 <= len(ref_rows) + len(pulls)


class ReportingEvaluator(KeyedEvaluator):
    """Reports each pull as it finishes; Ctrl+C instead of the pull numbered ``stop``."""

    def __init__(self, counts=None, stop=None):
        super().__init__(counts)
        self.stop = stop

    def evaluate(self, pulls):
        outcomes = []
        for pos, (arm, fidelity) in enumerate(pulls):
            if self.calls + 1 == self.stop:
                raise KeyboardInterrupt
            outcomes.append(self.evaluate_one(int(arm), int(fidelity)))
            self.report(pos, int(arm), int(fidelity), outcomes[-1])
        return Outcomes.from_list(outcomes)


def test_calibration_rows_are_finished_as_their_pulls_are_reported(tmp_path):
    cal = Pulls(np.repeat([0, 2, 4], 2), np.tile([0, 2], 3))
    ref = ReportingEvaluator().evaluate(cal).rewards
    store = make_store(tmp_path / "s.db")
    seen, ran = [], []
    for stop in (3, 2, None):  # Ctrl+C in the 3rd pull, then in the 2nd of the rest, then none
        inner = ReportingEvaluator(counts_from(store), stop)
        rec = RecordingEvaluator(store, inner, first_batch=1)
        try:
            out = rec.evaluate(cal, kind="calibration")
        except KeyboardInterrupt:
            rec.release()  # as the tuner does on its way out
        seen.append([r.status for r in store.rows()])
        ran.append(inner.calls)
    assert seen == [["done"] * 2 + ["pending"] * 4, ["done"] * 3 + ["pending"] * 3,
                    ["done"] * 6]
    assert ran == [2, 1, 3] and rec.n_replayed == 3  # no finished pull ran twice
    np.testing.assert_allclose(out.rewards, ref)
    np.testing.assert_allclose([r.score for r in store.rows()], ref)
    # a policy batch is still finished as a whole (the policy is told it as a whole)
    rec = RecordingEvaluator(store, ReportingEvaluator(counts_from(store), 3), first_batch=1)
    with pytest.raises(KeyboardInterrupt):
        rec.evaluate(Pulls(np.arange(6), np.zeros(6, dtype=np.int64)))
    rec.release()
    assert [r.status for r in store.rows(kind="policy")] == ["pending"] * 6


def test_recorded_batches_replay_into_a_fresh_policy(tmp_path):
    store = make_store(tmp_path / "s.db")
    ref = new_policy()
    res = run(ref, RecordingEvaluator(store, KeyedEvaluator()), max_pulls=30)
    assert res.n_pulls == 30 == len(store.rows())
    fresh = new_policy()
    state = replay(fresh, store.rows(kind="policy"))
    # 5 whole rounds of 6 arms were recorded; the policy asks the 6th round next
    assert state.batch == 5 and state.pulls is None
    np.testing.assert_array_equal(fresh.stats.counts, ref.stats.counts)
    np.testing.assert_array_equal(fresh.active, ref.active)


def test_driver_run_on_a_stored_study_replays_it_and_runs_only_the_rest(tmp_path):
    ref_store = make_store(tmp_path / "ref.db")
    ref_policy = new_policy()
    run(ref_policy, RecordingEvaluator(ref_store, KeyedEvaluator()))
    ref_rows = [(r.batch, r.pos, r.arm, r.fidelity, r.score) for r in ref_store.rows()]
    store = make_store(tmp_path / "s.db")
    run(new_policy(), RecordingEvaluator(store, KeyedEvaluator()), max_pulls=25)  # cut round
    inner = KeyedEvaluator(counts_from(store))
    rec = RecordingEvaluator(store, inner)
    policy = new_policy()
    res = run(policy, rec)  # no resume(): the recorder answers stored batches itself
    assert res.completed and policy.recommend() == ref_policy.recommend()
    assert [(r.batch, r.pos, r.arm, r.fidelity, r.score) for r in store.rows()] == ref_rows
    assert inner.calls == len(ref_rows) - 25 and rec.n_replayed == 25
    # a policy asking something else is refused
    with pytest.raises(StudyMismatchError):
        run(IISE(THETA.shape[1], [1.0, 2.0, 9.0], [0.3, 0.1, 0.0], delta=0.1,
                 variance_proxy=0.0025), RecordingEvaluator(store, KeyedEvaluator()))


def test_release_worker_and_updates(tmp_path):
    path = tmp_path / "s.db"
    store = make_store(path)
    ids = store.insert_batch(0, Pulls([0, 1], [0, 0]), status="running", worker="w:1:a")
    store.insert_batch(1, Pulls([2], [0]), status="running", worker="w:2:b")
    assert store.release_worker("w:1:a") == 2
    assert [r.status for r in store.rows()] == ["pending", "pending", "running"]
    assert store.claim(ids, new_worker_id()) == ids
    store.set_update(-1, {"variance_proxy": np.array([0.1, 0.2]), "xi": None})
    store.set_update(3, {"costs": [1.0, 2.0]})
    store.set_update(3, {"costs": [1.0, 3.0]})
    assert store.updates() == {-1: {"variance_proxy": [0.1, 0.2]}, 3: {"costs": [1.0, 3.0]}}
    assert store.finish(ids[0], status="done", score=0.5, reward=0.5, cost=1.0,
                        info={"scores": {"a": float("nan"), "b": 0.5}})
    assert store.rows()[0].info == {"scores": {"a": None, "b": 0.5}}
    store.close()



def test_retry_failed_puts_back_the_failed_pulls_of_the_last_batch_only(tmp_path):
    store = make_store(tmp_path / "s.db")
    w = new_worker_id()
    for batch, statuses in enumerate([("failed", "done"), ("failed", "timed-out", "done")]):
        ids = store.insert_batch(batch, Pulls([0, 1, 2][:len(statuses)], [0] * len(statuses)),
                                 status="running", worker=w)
        for i, st in zip(ids, statuses, strict=True):
            store.finish(i, status=st, score=None, reward=None, cost=1.0, error="boom",
                         worker=w)
        store.set_update(batch, {"costs": [1.0, float(batch)]})
    store.set_update(-1, {"variance_proxy": [0.1]})
    assert store.retry_failed() == 0  # only a study whose last run stopped all-failed
    store.update_state(last_reason="all-failed", error="boom")
    assert store.retry_failed() == 2
    rows = [(r.batch, r.status, r.error, r.cost, r.attempts) for r in store.rows()]
    assert rows == [(0, "failed", "boom", 1.0, 1), (0, "done", "boom", 1.0, 1),
                    (1, "pending", None, None, 1), (1, "pending", None, None, 1),
                    (1, "done", "boom", 1.0, 1)]
    # the update recorded after the retried batch was read off its failures: it goes too
    assert store.updates() == {-1: {"variance_proxy": [0.1]}, 0: {"costs": [1.0, 0.0]}}
    assert store.meta["state"]["last_reason"] is None
    # a second worker resuming at once: the first's re-run (failed again here) and the
    # update it recorded after the batch stay
    first = [r.id for r in store.rows(batch=1) if r.status == "pending"]
    assert store.claim(first, w) == first
    for i in first:
        store.finish(i, status="failed", score=None, reward=None, cost=2.0, error="again",
                     worker=w)
    store.set_update(1, {"costs": [1.0, 5.0]})
    with StudyStore(tmp_path / "s.db") as second:
        assert second.retry_failed() == 0
    assert [(r.status, r.error) for r in store.rows(batch=1)][:2] == [("failed", "again")] * 2
    assert store.updates()[1] == {"costs": [1.0, 5.0]}
    store.close()


# -- how the waves of a search with waves ended ------------------------------------------


def test_the_first_process_to_end_a_wave_records_it_and_later_ones_read_it(tmp_path):
    path = tmp_path / "s.db"
    with make_store(path, n_arms=3) as first, StudyStore(path) as second:
        points = np.array([[0.25], [0.75]])
        mine = first.end_wave(1, None, points, [{"x": 0.25}, {"x": 0.75}])
        assert mine == {"reason": None, "points": [[0.25], [0.75]], "first_arm": 3, "n_new": 2}
        # a second process (another decision: its budget ended the waves) gets the first's
        assert second.end_wave(1, "budget", [], []) == mine
        assert second.end_wave(2, "budget", [], [])["reason"] == "budget"
        assert first.waves() == {1: mine, 2: second.waves()[2]}
        assert [c["x"] for c in first.configs()] == [0.0, 0.1, 0.2, 0.25, 0.75]
        assert [c["x"] for c in first.configs(initial=True)] == [0.0, 0.1, 0.2]


def test_the_first_process_to_record_a_gp_proposal_wins(tmp_path):
    path = tmp_path / "s.db"
    with make_store(path, n_arms=3) as first, StudyStore(path) as second:
        mine = first.propose(0, [[0.5]], [1], [{"x": 0.5}])
        assert mine == {"points": [[0.5]], "fidelities": [1], "first_arm": 3, "n_new": 1}
        # another worker's GP asked (nearly) the same query: it gets the recorded one
        assert second.propose(0, [[0.5000001]], [0], [{"x": 0.5000001}]) == mine
        second.propose(1, [[0.125], [0.875]], [0, 0], [{"x": 0.125}, {"x": 0.875}])
        assert sorted(first.proposals()) == [0, 1] and first.proposals()[1]["first_arm"] == 4
        assert [c["x"] for c in first.configs()] == [0.0, 0.1, 0.2, 0.5, 0.125, 0.875]
        assert [c["x"] for c in first.configs(initial=True)] == [0.0, 0.1, 0.2]


def test_a_file_written_before_waves_were_recorded_reads_as_having_none(tmp_path):
    path = tmp_path / "old.db"
    make_store(path, n_arms=3).close()
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE waves")  # the layout before the tables existed
        conn.execute("DROP TABLE proposals")
    conn.close()
    with StudyStore(path, readonly=True) as store:  # read-only: nothing is created
        assert store.waves() == {} and store.proposals() == {}
        assert len(store.configs(initial=True)) == 3
    with StudyStore(path) as store:  # a writer adds the table and can record waves
        assert store.end_wave(1, "surrogate", [], [])["reason"] == "surrogate"
        assert store.propose(0, [[0.5]], [0], [{"x": 0.5}])["first_arm"] == 3


class ChunkEvaluator(KeyedEvaluator):
    """A shared worker's evaluator (``assign``/``run_rows``) whose chunk of runs is
    interrupted by Ctrl+C after ``finish_first`` of them have ended."""

    def __init__(self, finish_first):
        super().__init__()
        self.finish_first = finish_first

    def assign(self, pulls):
        return np.zeros(len(pulls), dtype=np.int64)

    def run_rows(self, rows, repeats):
        from mftune.scripts.runner import ScriptResult

        for i, (arm, fidelity, _, _, _) in enumerate(rows):
            if i == self.finish_first:
                raise KeyboardInterrupt  # the rest of the chunk was still running
            yield ScriptResult(float(THETA[fidelity, arm]), 1.0, "done")


def test_a_shared_worker_keeps_the_runs_of_its_chunk_that_ended_before_ctrl_c(tmp_path):
    # a worker with 4 slots claims 4 runs at once; Ctrl+C after 3 have ended keeps
    # those 3 (each is finished as it ends, not with the whole chunk) and puts the
    # fourth back for any worker
    store = make_store(tmp_path / "s.db")
    rec = RecordingEvaluator(store, ChunkEvaluator(finish_first=3), shared=True, slots=4)
    with pytest.raises(KeyboardInterrupt):
        rec.evaluate(Pulls([0, 1, 2, 3, 4], [0, 0, 0, 0, 0]))
    rec.close()
    rows = StudyStore(tmp_path / "s.db").rows()
    assert [r.status for r in rows] == ["done"] * 3 + ["pending"] * 2
    assert [r.score for r in rows[:3]] == THETA[0, :3].tolist()
