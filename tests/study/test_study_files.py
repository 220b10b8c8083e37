"""Study files that behave: every written study reads back, read-only studies, bad paths, format."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from mftune import MFTuner, Real
from mftune.cli import main
from mftune.study import store as store_module
from mftune.study.store import FORMAT_VERSION, StudyFileError, StudyStore

SCRIPT = """
import math, os, sys
opts = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--"))
x, n = float(opts["x"]), float(os.environ["MFTUNE_FIDELITY"])
print(f"mftune-score: {1 - (x - 0.3) ** 2 + 0.05 * math.sin(7 * x) / n}")
"""

SPACE = """
[parameters]
x = { type = "real", low = 0.0, high = 1.0 }
[fidelity]
name = "n"
values = [1, 3, 9]
xi = [0.1, 0.03, 0]
[objective]
sigma = 0.01
[study]
path = "s.db"
n_candidates = 6
epsilon = 0.05
seed = 1
"""


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def data():
    return make_classification(300, 6, n_informative=4, random_state=0)


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def script_study(folder: Path) -> Path:
    (folder / "train.py").write_text(SCRIPT)
    (folder / "space.toml").write_text(SPACE)
    res = invoke("tune", folder / "space.toml", "--study", folder / "s.db", "--quiet", "--",
                 sys.executable, folder / "train.py")
    assert res.exit_code == 0, res.output
    return folder / "s.db"


def deny_writes(monkeypatch, *paths):
    """Make ``paths`` read-only for this process, root included (root ignores the mode bits).

    The mode bits are set for real; as root, ``os.access`` is also made to say
    what it says to any other user, so the code takes the read-only path.
    """
    for p in paths:
        p.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
                | (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH if p.is_dir() else 0))
    if os.geteuid() == 0:
        denied = {str(p.resolve()) for p in paths}
        real = os.access

        def access(path, mode, *a, **kw):
            if mode & os.W_OK and str(Path(path).resolve()) in denied:
                return False
            return real(path, mode, *a, **kw)

        monkeypatch.setattr(store_module.os, "access", access)


def restore(*paths):
    for p in paths:
        p.chmod(0o755 if p.is_dir() else 0o644)


# -- 1. every study MFTuner or the CLI writes reads back ---------------------------------------
@pytest.mark.parametrize("kw", [
    {},
    {"costs": "levels"},
    {"costs": [1.0, 2.0, 4.0]},
    {"sigma": 0.05, "costs": "levels"},
    {"bias": [0.2, 0.05, 0.0], "costs": "levels"},
    {"algorithm": "lucb-c", "max_pulls": 60},
], ids=["measured", "levels", "list", "sigma", "bias", "lucb-c"])
def test_status_report_export_read_every_tuner_study(data, tmp_path, kw):
    # costs "levels" or a list: the tuner sizes its best-first chunks with the measured
    # seconds (not the level ratios), which the replay of status must do as well
    X, y = data
    path = tmp_path / "t.db"
    base = dict(estimator=LogisticRegression(solver="liblinear"),
                space={"C": Real(1e-4, 1e2, log=True)}, n_candidates=8, cv=3,
                fidelities=[40, 90, 200], random_state=0, storage=path, max_pulls=150)
    t = MFTuner(**{**base, **kw}).fit(X, y)
    res = invoke("status", path, "--json")
    assert res.exit_code == 0, res.output
    s = json.loads(res.output)
    assert s["status"] == ("finished" if t.stopping_reason_ == "stopping-rule" else "running")
    assert s["best"]["arm"] == t.best_index_
    assert s["alive"] == int(t.policy_.active.sum())
    assert s["pulls"] == len(t.pulls_["candidate"])
    assert invoke("report", path).exit_code == 0
    res = invoke("export", path, "--csv", tmp_path / "p.csv")
    assert res.exit_code == 0, res.output


def test_status_reads_a_cli_study(in_tmp):
    path = script_study(in_tmp)
    s = json.loads(invoke("status", path, "--json").output)
    assert s["status"] == "finished" and s["pulls"] > 0
    assert invoke("report", path).exit_code == 0


# -- 1b. a read-only study is read, and nothing is written ------------------------------------
@pytest.mark.parametrize("where", ["file", "folder"])
def test_read_only_study_is_read_without_writing(in_tmp, monkeypatch, where):
    folder = in_tmp / "ro"
    folder.mkdir()
    path = script_study(folder)
    before = sorted(os.listdir(folder))
    content = path.read_bytes()
    assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()
    targets = [path] if where == "file" else [path, folder]
    deny_writes(monkeypatch, *targets)
    out = in_tmp / "p.csv"
    try:
        res = invoke("status", path)
        assert res.exit_code == 0, res.output
        assert "finished" in res.output
        assert invoke("report", path).exit_code == 0
        res = invoke("export", path, "--csv", out)
        assert res.exit_code == 0, res.output
        # a writer refuses it by name, before doing anything
        res = invoke("resume", path)
        assert res.exit_code == 1 and "read-only" in res.output and str(path) in res.output
        assert sorted(os.listdir(folder)) == before and path.read_bytes() == content
    finally:
        restore(*targets)
    assert len(out.read_text().splitlines()) > 1


# -- 1c. paths a study cannot be created at: one line, nothing created --------------------------
def one_line_error(res, *words):
    assert res.exit_code in (1, 2), res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert "Traceback" not in res.output
    err = [ln for ln in res.output.splitlines() if ln.startswith("Error")]
    assert len(err) == 1, res.output
    for w in words:
        assert w in err[0], err[0]


def test_tune_in_a_read_only_folder_says_so(in_tmp, monkeypatch):
    folder = in_tmp / "ro"
    folder.mkdir()
    (in_tmp / "space.toml").write_text(SPACE)
    monkeypatch.chdir(folder)
    deny_writes(monkeypatch, folder)
    try:
        res = invoke("tune", in_tmp / "space.toml", "--", sys.executable, "-c", "pass")
        one_line_error(res, "s.db", "not writable")
        assert os.listdir(folder) == []
    finally:
        restore(folder)


def test_tune_refuses_a_file_that_is_not_sqlite(in_tmp):
    (in_tmp / "space.toml").write_text(SPACE)
    Path("notes.txt").write_text("my notes\n")
    res = invoke("tune", "space.toml", "--study", "notes.txt", "--", "true")
    one_line_error(res, "notes.txt", "not an SQLite file")
    assert Path("notes.txt").read_text() == "my notes\n"
    assert sorted(os.listdir(in_tmp)) == ["notes.txt", "space.toml"]
    res = invoke("status", "notes.txt")
    one_line_error(res, "notes.txt", "not an SQLite file")


def test_tune_with_a_missing_folder_creates_nothing(in_tmp):
    (in_tmp / "space.toml").write_text(SPACE)
    res = invoke("tune", "space.toml", "--study", "nodir/sub/s.db", "--", "true")
    one_line_error(res, "nodir/sub/s.db", "does not exist")
    assert sorted(os.listdir(in_tmp)) == ["space.toml"]


def test_tuner_storage_in_a_missing_folder_names_storage(data, tmp_path):
    X, y = data
    missing = tmp_path / "missing" / "dir" / "x.db"
    t = MFTuner(LogisticRegression(solver="liblinear"), {"C": Real(1e-3, 1e2, log=True)},
                n_candidates=4, cv=2, max_pulls=4, random_state=0, storage=missing)
    with pytest.raises(ValueError, match=r"storage=.*x\.db.*does not exist") as info:
        t.fit(X, y)
    assert "\n" not in str(info.value)
    assert not (tmp_path / "missing").exists()


def test_create_leaves_nothing_when_it_fails(tmp_path):
    path = tmp_path / "s.db"
    with pytest.raises(ValueError):  # NaN is not JSON: fails inside the transaction
        StudyStore.create(path, space={}, fidelities={"values": [1]}, objective={},
                          algorithm="se", settings={}, seed=0, configs=[{"x": float("nan")}])
    assert os.listdir(tmp_path) == []


# -- 1d. one format version, other formats refused by name --------------------------------------
@pytest.mark.parametrize("version", [FORMAT_VERSION - 1, FORMAT_VERSION + 1])
def test_other_format_versions_are_refused_by_name(in_tmp, version):
    path = script_study(in_tmp)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE study SET format_version = ?", (version,))
    conn.close()
    msg = f"{path}: study format {version}, this mftune reads format {FORMAT_VERSION}"
    with pytest.raises(StudyFileError) as info:
        StudyStore(path)
    assert str(info.value) == msg
    for args in (["status", path], ["resume", path], ["export", path, "--csv", "x.csv"]):
        res = invoke(*args)
        one_line_error(res, msg)
    assert not Path("x.csv").exists()

