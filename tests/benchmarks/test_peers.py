"""Head-to-head peers and report: held scores, SMAC (or its clean skip), the new tasks."""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn.model_selection import KFold, StratifiedKFold

from mftune.benchmarks import head_to_head as h2h
from mftune.benchmarks.head_to_head import (
    HELD_AT,
    TASKS,
    format_table,
    held_scores,
    report_json,
    run_task,
    summarize,
)
from mftune.benchmarks.peers import FoldScorer, require
from mftune.benchmarks.tuner_vs_halving import Row, tuner_options


def test_held_scores_read_the_recommendation_at_each_share_of_the_budget():
    score = {"a": 0.70, "b": 0.85, "c": 0.90}.get
    test = lambda p: score(p["x"])  # noqa: E731
    trace = [(1.0, {"x": "a"}), (3.0, {"x": "b"}), (7.0, {"x": "c"})]
    assert HELD_AT == (0.25, 0.5, 1.0)
    # budget 8 s: held at 2 s -> a (1 s), at 4 s -> b (3 s), at 8 s -> c (7 s)
    assert held_scores(trace, test, 8.0) == (0.70, 0.85, 0.90)
    # budget 2 s: nothing at 0.5 s, a at 1 s and at 2 s
    held = held_scores(trace, test, 2.0)
    assert np.isnan(held[0]) and held[1:] == (0.70, 0.70)
    # budget 12 s: at 3 s the recommendation made at exactly 3 s counts (b), at 6 s it is
    # still b (c comes at 7 s), at 12 s c
    assert held_scores(trace, test, 12.0) == (0.85, 0.85, 0.90)


def test_summary_counts_a_seed_without_a_recommendation_as_the_lowest_score():
    nan = np.nan
    held = [(0.90, 0.90, 0.92), (nan, nan, 0.91), (0.80, nan, 0.95)]
    ttt = [5.0, np.inf, 2.0]
    rows = [Row("t", s, "SMAC", 10.0, ttt[s], h[-1], 0.9, "", h) for s, h in enumerate(held)]
    (s,) = summarize(rows)
    assert s["seeds"] == 3 and s["reached"] == 2
    assert s["time_to_target"] == {"median": 5.0, "min": 2.0, "max": np.inf}
    # 25 %: {0.90, none, 0.80} -> none < 0.80 < 0.90, median 0.80, 2 seeds had one
    # 50 %: {0.90, none, none} -> the median seed had nothing: none, 1 seed had one
    # 100 %: {0.92, 0.91, 0.95} -> 0.92
    assert s["test_held"]["25%"] == 0.80 and s["held_seeds"]["25%"] == 2
    assert np.isnan(s["test_held"]["50%"]) and s["held_seeds"]["50%"] == 1
    assert s["test_held"]["100%"] == 0.92 and s["held_seeds"]["100%"] == 3
    table = format_table(rows)
    assert "0.8000 2/3" in table and "none 1/3" in table and "0.9200 3/3" in table
    assert "2/3" in table.splitlines()[1]  # seeds on target
    out = report_json(rows)
    assert out["held_at"] == [0.25, 0.5, 1.0]
    assert out["summary"][0]["test_held"] == {"25%": 0.80, "50%": None, "100%": 0.92}
    assert out["summary"][0]["time_to_target"]["max"] is None  # never reached: null
    assert out["rows"][1]["test_held"]["25%"] is None


def test_smac_rows_are_skipped_when_smac_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "smac", None)  # `import smac` raises ImportError
    with pytest.raises(ImportError, match=r"SMAC needs the optional package 'smac'.*bench"):
        require("smac", "SMAC")
    lines = []
    assert run_task(replace(TASKS["kde"], budget=0.5), 0, methods=("SMAC",),
                    log=lines.append) == []
    assert lines == ["  seed 0 data: synthetic mixture",
                     "  SMAC: skipped (SMAC needs the optional package 'smac', which is not "
                     "installed: pip install 'mftune[bench]')"]


def test_smac_run_returns_a_recommendation_history():
    pytest.importorskip("smac")
    from mftune.benchmarks.peers import run_smac

    task = replace(TASKS["kde"], budget=0.25)  # SMAC's random initial design only
    X, _, y, _, _ = h2h._data(task, 0)
    X = X[:600]
    scorer = FoldScorer(task, list(KFold(3, shuffle=True, random_state=0).split(X)), X, None, 0)
    wall, best, trace, detail = run_smac(task, 0, scorer)
    times = [t for t, _ in trace]
    assert trace and times == sorted(times) and times[-1] <= wall
    assert set(best) == {"bandwidth"} and 1e-2 <= best["bandwidth"] <= 1.0
    assert best == trace[-1][1]
    assert "trials" in detail


@pytest.mark.parametrize("module", ["optuna", "smac"])
def test_the_references_with_centre_evaluate_the_centre_early(module, monkeypatch):
    pytest.importorskip(module)
    from mftune.benchmarks import peers
    from mftune.space import Space

    task = replace(TASKS["kde"], budget=0.25)
    X, _, y, _, _ = h2h._data(task, 0)
    X = X[:600]
    scorer = FoldScorer(task, list(KFold(3, shuffle=True, random_state=0).split(X)), X, None, 0)
    asked = []
    monkeypatch.setattr(FoldScorer, "__call__", lambda self, params, level: asked.append(
        params) or -abs(np.log10(params["bandwidth"]) + 1.0))
    run = peers.run_smac if module == "smac" else (
        lambda t, s, sc, centre_first: peers.run_optuna(t, s, sc, False, centre_first))
    centre = Space(task.space).centre()["bandwidth"]
    run(task, 0, scorer, centre_first=True)
    got = [p["bandwidth"] for p in asked]
    # Optuna runs it as its first trial; SMAC within its first bracket (12 trials here)
    assert np.isclose(got[0], centre) if module == "optuna" else np.isclose(got[:12], centre).any()
    asked.clear()
    run(task, 0, scorer, centre_first=False)
    assert not np.isclose([p["bandwidth"] for p in asked], centre).any()


def _small(name: str, n: int = 600):
    task = TASKS[name]
    X, _, y, _, _ = h2h._data(task, 0)
    X, y = X[:n], y[:n]
    cv = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    return task, X, y, cv


def test_svm_letter_scores_at_two_training_sizes():
    task, X, y, cv = _small("svm-letter")
    assert task.fidelity == "n_samples" and not task.warm_start
    scorer = FoldScorer(task, cv, X, y, seed=0)
    params = {"svc__C": 10.0, "svc__gamma": 0.05}
    low, high = scorer(params, 100), scorer(params, scorer.top)
    assert 0.0 < low <= 1.0 and 0.0 < high <= 1.0
    assert scorer.top == min(len(tr) for tr, _ in cv) == 400


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_mlp_letter_continues_its_fold_models_across_levels():
    task, X, y, cv = _small("mlp-letter")
    assert task.warm_start and tuner_options(task) == {"continuation": "warm_start"}
    scorer = FoldScorer(task, cv, X, y, seed=0)
    assert scorer.spec.mode == "warm_start" and scorer.spec.increment  # max_iter b - a
    params = {"mlpclassifier__learning_rate_init": 0.01, "mlpclassifier__alpha": 1e-4,
              "mlpclassifier__batch_size": 64}
    low = scorer(params, 3)
    assert scorer.n_continued == 0 and len(scorer.kept) == 1
    high = scorer(params, 9)
    assert scorer.n_continued == len(cv)  # every fold's model continued from 3 epochs
    assert 0.0 < low <= 1.0 and 0.0 < high <= 1.0
    (kept,) = scorer.kept.values()
    assert [lvl for lvl, _ in kept] == [9, 9, 9]
    assert all(est[-1].n_iter_ <= 6 for _, est in kept)  # the warm fit ran 9 - 3 epochs


def test_head_to_head_cli_names_the_methods_option(monkeypatch):
    from mftune.cli import main

    res = CliRunner().invoke(main, ["bench", "head-to-head", "--methods", "smac,nope"])
    assert res.exit_code == 2
    assert "--methods" in res.output and "nope not allowed" in res.output
    assert "SMAC" in res.output
    seen = []
    monkeypatch.setattr(h2h, "run_task", lambda task, seed, meths, *a, **k: seen.append(
        (task.budget, meths)) or [])
    res = CliRunner().invoke(main, ["bench", "head-to-head", "--tasks", "kde", "--seeds", "1",
                                    "--methods", "smac,mftuner", "--budget", "2.5"])
    assert res.exit_code == 0, res.output
    assert seen == [(2.5, ["SMAC", "MFTuner"])] and TASKS["kde"].budget == 20.0
    res = CliRunner().invoke(main, ["bench", "head-to-head", "--budget", "0"])
    assert res.exit_code == 2 and "--budget" in res.output


def test_hgb_letter_continued_rungs_score_as_direct_fits():
    # HistGradientBoosting's max_iter continues exactly: a Hyperband rung continued from
    # the rung below scores what a fit from scratch at that level scores.
    task, X, y, cv = _small("hgb-letter", n=400)
    params = {"learning_rate": 0.1, "max_leaf_nodes": 4, "min_samples_leaf": 10,
              "l2_regularization": 0.1}
    levels = task.levels[:2]  # 8 then 24 iterations (of 72)
    climbing = FoldScorer(task, cv, X, y, seed=0)
    assert climbing.spec.exact
    continued = [climbing(params, level) for level in levels]
    assert climbing.n_continued == len(cv)
    direct = FoldScorer(task, cv, X, y, seed=0)
    direct.spec = None  # every fit from scratch
    assert continued == [direct(params, level) for level in levels]
