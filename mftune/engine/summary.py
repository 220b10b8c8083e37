"""What a study file says: progress per fidelity, the best so far, the timeline, a CSV.

Everything here only reads the study (a read-only replay of the complete
batches into a fresh policy, with the runner's stored updates of its bounds
and, for a search with waves, the recorded end of each wave), so ``mftune
status`` can run while workers are busy. It reads the shared
study record (:mod:`mftune.study.record`), so script studies (``mftune
tune``) and tuner studies (``MFTuner(storage=...)``) are summarised alike.
"""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..policies.adapters import evidence_means
from ..policies.registry import POINT_ALGORITHMS, context_from_settings
from ..study.record import StudyRecord, apply_update, statement
from ..study.replay import batch_rewards, replay
from ..study.store import FINISHED, StudyStore
from .waves import make_waves

__all__ = ["export_csv", "export_rows", "failure_cause", "study_summary", "write_csv"]


def _best(policy, sign: float) -> dict:
    """The recommendation and its mean at the highest fidelity it has results at (the
    calibration's evidence counted, as the anytime recommendation counts it)."""
    arm = int(policy.recommend())
    counts, sums = policy.stats.counts[:, arm], policy.stats.sums[:, arm]
    evidence = getattr(policy, "evidence_", None)
    if evidence is not None:
        counts, sums = counts + evidence.counts[:, arm], sums + evidence.sums[:, arm]
    with_data = np.flatnonzero(counts > 0)
    if with_data.size == 0:
        return {"arm": arm, "score": None, "fidelity": None, "n": 0}
    m = int(with_data[-1])
    return {"arm": arm, "score": float(sign * sums[m] / counts[m]), "fidelity": m,
            "n": int(counts[m])}


class _Initial:
    """The evaluator a replayed search with waves reads: the study's first candidates."""

    def __init__(self, candidates: list):
        self.candidates = candidates

    def add_candidates(self, n: int) -> None:
        """Nothing to grow: the replay evaluates nothing."""


def _waves(study: StudyRecord, settings: dict, updates: dict, cal_rows, cal_rewards,
           waves: dict, initial: list):
    """The search with waves of a study, to replay [RECON]: its first candidates, the
    calibration's results (which answer wave 1's pulls, as in the search; ``cal_rewards``
    are those the search told, stand-ins for failed pulls included) and each wave's end as
    the study recorded it (no surrogate runs, no space is needed)."""
    extra = study.meta["spec"]
    n = len(initial)
    ctx = replace(context_from_settings(study.algorithm, n, settings, study.seed),
                  evaluator=_Initial(initial), space=None)
    policy = make_waves(study.algorithm, ctx, int(extra["wave_size"]))

    def journal(wave: int, decide) -> tuple:
        data = waves.get(wave)
        if data is None:  # the search stopped between the wave's end and its record
            return "unrecorded", []
        first = data["first_arm"]
        return data["reason"], study.configs[first:first + data["n_new"]]

    policy.journal = journal
    if cal_rows:
        policy.add_evidence([r.arm for r in cal_rows], [r.fidelity for r in cal_rows],
                            cal_rewards)
    for b in sorted(updates):
        if b < study.first_batch:
            apply_update(policy, updates[b])
    return policy


def _proposed(out: dict, study: StudyRecord, by_batch: dict, cal_rows, cal_rewards,
              worst: dict, cost: float) -> dict:
    """The rest of :func:`study_summary` for a Gaussian-process policy, read without the GP
    [RECON]: every pull of an arm is one query at one fidelity, and the calibration's pulls
    are evidence the GP was told first; the recommendation is the complete query with the
    best mean at the highest fidelity any complete query reached, before the first one the
    calibrated candidate so chosen (as
    :meth:`~mftune.policies.continuous.ContinuousPolicy.recommend`); nothing is
    eliminated and there is no stopping rule. ``by_batch``: the policy's rows by batch;
    ``cal_rewards``, ``worst`` and ``cost``: the calibration's rewards as told, the failed-pull
    rule's state after them, and its cost."""
    k, n_fid = len(study.configs), study.n_fidelities
    wanted = np.bincount([r.arm for rows in by_batch.values() for r in rows], minlength=k)
    sums, told, fid = np.zeros(k), np.zeros(k), np.full(k, -1)
    run = np.zeros(k, dtype=bool)  # the calibration's draws ran too
    run[[r.arm for r in cal_rows if r.finished]] = True
    # the calibration is evidence the GP was told first (PointArms.add_evidence): one mean
    # per (candidate, fidelity), in that order; its best answers until a query is complete
    ev = evidence_means([r.arm for r in cal_rows], [r.fidelity for r in cal_rows],
                        cal_rewards, n_fid)  # candidates, fidelities, means, pulls

    def best_of(arms, fids, means, n) -> dict:
        top = fids.max()
        i = int(np.flatnonzero(fids == top)[np.argmax(means[fids == top])])
        return {"arm": int(arms[i]), "score": float(study.sign * means[i]),
                "fidelity": int(top), "n": int(n[i])}

    best = best_of(*ev) if ev[0].size else {"arm": 0, "score": None, "fidelity": None, "n": 0}
    for b in sorted(by_batch):
        done = [r for r in by_batch[b] if r.finished]
        if done:
            arms = np.array([r.arm for r in done])
            np.add.at(sums, arms, batch_rewards(done, worst, study.error_reward))
            np.add.at(told, arms, 1)
            fid[arms] = [r.fidelity for r in done]
            run[arms] = True
            cost += float(sum(r.cost or 0.0 for r in done))
        q = np.flatnonzero((told > 0) & (told == wanted))  # the complete queries
        if q.size:
            best = best_of(q, fid[q], sums[q] / told[q], told[q])
        out["timeline"].append({"batch": b, "fidelity": int(by_batch[b][0].fidelity),
                                "cost": cost, "survivors": int(run.sum()),
                                "best_arm": best["arm"], "best_score": best["score"]})
    out["arms"] = [{"arm": a, "active": True, "eliminated_at": None, "run": bool(run[a])}
                   for a in range(k)]
    best["config"] = study.configs[best["arm"]]
    reason = study.meta["state"].get("last_reason")
    text = (f"running: {int(run.sum())} configurations evaluated so far; the "
            f"recommendation is the best so far ({study.algorithm} has no stopping rule)"
            if reason in (None, "interrupted")
            else statement(reason, delta=out["settings"]["delta"], epsilon=None, sigma=[0.0],
                           bias_mode="known", proposed=True))
    out.update(status="running", alive=k, evaluated=int(run.sum()), best=best,
               statement=text)
    return out


def study_summary(path) -> dict:
    """Summarise a study file.

    Returns
    -------
    dict
        ``study`` (algorithm, direction, objective, fidelity, command, created),
        ``status`` (``"calibrating"``, ``"running"`` or ``"finished"``),
        ``fidelities`` (one dict per fidelity: value, pulls finished/failed/
        running/pending, cost, arms that reached it, arms eliminated there),
        ``pulls``, ``failed``, ``cost``, ``calibration``, ``settings``,
        ``best`` (arm, config, score, fidelity, n), ``statement``, and
        ``timeline`` (one entry per told batch: cumulative cost, fidelity,
        survivors, best score) and ``failures`` (``count``, ``last``: the
        cause of the latest failed pull, ``causes``: the most frequent causes
        with their counts), ``evaluated`` (a Gaussian-process study: the
        configurations evaluated; its ``survivors`` in the timeline count the
        same), ``waves`` (a search with waves: each ended wave's
        ``reason`` no candidates followed, or ``None``, and the ``new`` ones it
        added) and ``arms`` (per arm: ``active``, and the fidelity index it was
        ``eliminated_at``; in a Gaussian-process study also whether it was
        ``run``: the policy may propose points a cap never lets run) once the
        settings are known.
    """
    with StudyStore(path, readonly=True) as store:
        study = StudyRecord(store)
        rows = store.rows()
        updates = study.updates
        waves, initial = store.waves(), store.configs(initial=True)
    meta = study.meta
    k, n_fid = len(study.configs), study.n_fidelities
    values = study.values
    cal_rows = [r for r in rows if r.kind == "calibration"]
    pol_rows = [r for r in rows if r.kind == "policy"]
    state = meta["state"]
    out = {
        "study": {"path": str(path), "algorithm": study.algorithm,
                  "direction": meta["direction"], "objective": study.objective,
                  "fidelity": study.fidelity, "values": values,
                  "n_candidates": k, "seed": study.seed, "command": study.command,
                  "created": meta["created"], "last_reason": state.get("last_reason")},
        "pulls": sum(r.finished for r in rows),
        "failed": sum(r.status in ("failed", "timed-out") for r in rows),
        "running": sum(r.status == "running" for r in rows),
        "cost": float(sum(r.cost or 0.0 for r in rows if r.finished)),
        "calibration": None, "settings": None, "best": None, "timeline": [],
        "failures": _failures(rows),
        "waves": [{"wave": w, "reason": d["reason"], "new": d["n_new"]}
                  for w, d in sorted(waves.items())],
    }
    if study.calibrate:
        out["calibration"] = {"pulls": sum(r.finished for r in cal_rows),
                              "planned": study.calibration_pulls or len(cal_rows),
                              "cost": float(sum(r.cost or 0.0 for r in cal_rows if r.finished))}
    settings = study.settings(cal_rows)
    fid_table = []
    for m in range(n_fid):
        at = [r for r in rows if r.fidelity == m]
        fid_table.append({
            "fidelity": m, "value": values[m],
            "pulls": sum(r.finished for r in at),
            "failed": sum(r.status in ("failed", "timed-out") for r in at),
            "running": sum(r.status == "running" for r in at),
            "pending": sum(r.status == "pending" for r in at),
            "cost": float(sum(r.cost or 0.0 for r in at if r.finished)),
            "arms": len({r.arm for r in at if r.finished}),  # the calibration's too
            "eliminated": 0,
        })
    out["fidelities"] = fid_table
    if settings is None:
        failed = state.get("last_reason") == "calibration-failed"
        out["status"] = "calibration-failed" if failed else "calibrating"
        if state.get("last_reason") and state.get("error"):  # why the last runner stopped
            out["error"] = state["error"]
        return out
    out["settings"] = settings
    cost = float(sum(r.cost or 0.0 for r in cal_rows if r.finished))
    by_batch: dict[int, list] = {}
    for r in pol_rows:
        by_batch.setdefault(r.batch, []).append(r)
    # the failed-pull rule's "lowest reward seen" starts with the calibration, as the
    # search's evaluator does
    worst: dict = {}
    cal_rewards = batch_rewards(cal_rows, worst, study.error_reward) if cal_rows else []
    if study.algorithm in POINT_ALGORITHMS:
        return _proposed(out, study, by_batch, cal_rows, cal_rewards, worst, cost)
    policy = (_waves(study, settings, updates, cal_rows, cal_rewards, waves, initial)
              if meta["spec"].get("adaptive")
              else study.new_policy(settings, updates))
    in_force = dict(settings)
    bound = study.needs[0] if study.needs else None
    b = study.first_batch
    while b in by_batch and not policy.done:
        rows_b = by_batch[b]
        state = replay(policy, rows_b, first_batch=b, error_reward=study.error_reward,
                       worst=worst)
        cut = state.batch == b
        if cut:  # incomplete batch: it stays outstanding, unless a cap cut it short
            if state.pulls is None or not all(r.finished for r in rows_b):
                break
            # every stored row finished, fewer than asked: the runner (the tuner's
            # driver) cut the batch to its budget and told these; it stopped there or,
            # its costs overestimated, asked the next batch; so does this replay
            n = len(rows_b)
            policy.tell(state.pulls[:n], batch_rewards(rows_b, worst, study.error_reward),
                        [r.cost or 0.0 for r in rows_b])
            policy.cancel(state.pulls[n:])
        if b in updates:  # the runner changed the policy's bounds after this batch
            apply_update(policy, updates[b])
            _in_force(in_force, updates[b], bound)
        cost += float(sum(r.cost or 0.0 for r in by_batch[b]))
        best = _best(policy, study.sign)
        out["timeline"].append({"batch": b, "fidelity": int(by_batch[b][0].fidelity),
                                "cost": cost, "survivors": int(policy.active.sum()),
                                "best_arm": best["arm"], "best_score": best["score"]})
        if cut and b + 1 not in by_batch:
            break
        b = b + 1 if cut else state.batch
    for m in range(n_fid):
        fid_table[m]["eliminated"] = int(np.sum(policy.eliminated_fidelity == m))
    out["arms"] = [{"arm": a, "active": bool(policy.active[a]),
                    "eliminated_at": None if policy.active[a] else int(
                        policy.eliminated_fidelity[a])} for a in range(k)]
    alive = int(policy.active.sum())
    last = meta["state"].get("last_reason")
    reason = "stopping-rule" if policy.done and last != "repeated-splits" else last
    best = _best(policy, study.sign)
    best["config"] = study.configs[best["arm"]]
    if reason in (None, "interrupted"):
        text = (f"not certified yet: {alive} of {k} configurations remain; the "
                "recommendation is the empirical best so far")
    else:
        text = statement(reason, delta=in_force["delta"], epsilon=in_force.get("epsilon"),
                         sigma=np.atleast_1d(in_force["sigma"]),
                         bias_mode=in_force.get("bias_mode", "known"),
                         tie=meta["state"].get("tie"), top_test=in_force.get("top_glr"),
                         waves=policy.coverage() if hasattr(policy, "coverage") else None,
                         failed=out["failed"], gap=meta["state"].get("gap"))
    out.update(status="finished" if reason in ("stopping-rule", "tie", "repeated-splits")
               else "running",
               alive=alive, best=best, statement=text)
    return out


def failure_cause(error: str | None) -> str:
    """The cause of a failed pull: the first line of its stored error text."""
    lines = (error or "").strip().splitlines()
    return lines[0] if lines else "no error text"


def _failures(rows) -> dict:
    """Failed pulls: how many, the latest cause, and the causes by count (most first)."""
    failed = [r for r in rows if r.status in ("failed", "timed-out")]
    if not failed:
        return {"count": 0, "last": None, "causes": []}
    last = max(failed, key=lambda r: (r.ended or 0.0, r.id))
    counts: dict[str, int] = {}
    for r in failed:
        cause = failure_cause(r.error)
        counts[cause] = counts.get(cause, 0) + 1
    causes = sorted(counts.items(), key=lambda kv: -kv[1])
    return {"count": len(failed), "last": failure_cause(last.error),
            "causes": [{"cause": c, "count": n} for c, n in causes[:5]]}


def _in_force(settings: dict, update: dict, bound: str | None) -> None:
    """Track the bounds a stored update put in force (for the confidence statement)."""
    if update.get("variance_proxy") is not None:
        settings["sigma"] = np.sqrt(np.asarray(update["variance_proxy"], float)).tolist()
    if bound is not None and update.get("xi") is not None:
        settings[bound] = update["xi"]
    if update.get("costs") is not None:
        settings["costs"] = update["costs"]


def export_rows(path) -> tuple[list[str], list[list]]:
    """The header and one row per pull (with the arm's parameters) that an export holds.

    Read by ``mftune export`` (CSV) and by the tuning server's export (CSV or
    JSON), so both give the same facts.
    """
    with StudyStore(path, readonly=True) as store:
        study = StudyRecord(store)
        rows = store.rows()
    names = study.parameter_names
    values = study.values
    header = ["id", "batch", "pos", "kind", "arm", *names, "fidelity", "fidelity_value",
              "status", "score", "cost", "attempts", "started", "ended", "worker", "error"]
    out = []
    for r in rows:
        cfg = study.configs[r.arm]
        out.append([r.id, r.batch, r.pos, r.kind, r.arm, *(cfg.get(n) for n in names),
                    r.fidelity, values[r.fidelity], r.status, r.score, r.cost, r.attempts,
                    r.started, r.ended, r.worker,
                    (r.error or "")[-300:] if r.status in FINISHED else ""])
    return header, out


def export_csv(path, csv_path) -> int:
    """Write one CSV row per pull (with the arm's parameters); return the row count."""
    header, rows = export_rows(path)
    with Path(csv_path).open("w", newline="", encoding="utf-8") as fh:
        write_csv(fh, header, rows)
    return len(rows)


def write_csv(fh, header: list[str], rows: list[list]) -> None:
    """Write :func:`export_rows` output as CSV (missing score and cost as empty cells)."""
    w = csv.writer(fh)
    w.writerow(header)
    score, cost = header.index("score"), header.index("cost")
    for r in rows:
        r = list(r)
        for i in (score, cost):
            r[i] = "" if r[i] is None else r[i]
        w.writerow(r)
