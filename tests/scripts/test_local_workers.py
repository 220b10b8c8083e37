"""Local ``mftune worker`` processes sharing one Gaussian-process study file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mftune.study.store import StudyStore

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def mftune(folder, *args) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "mftune", *map(str, args)], cwd=folder,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(*procs) -> None:
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, out + err


def test_two_local_workers_record_the_gp_study_of_one_process(tmp_path):
    # MF-GP-UCB proposes a configuration with every query. Two processes that join one
    # study file replay the same tells, run pulls of the same queries, and the first to
    # record a proposal fixes it for both; with nominal costs (the GP's choice of fidelity
    # reads no timings) the file ends as one process's run to the same cap
    # two fidelities, 1 and 3 epochs: MF-GP-UCB's initial design is 20 queries (15 + 5)
    # of 2 runs each, so the last 24 of the 64 pulls are its Bayesian-optimisation
    # queries, proposed one by one
    shell = (EXAMPLES / "space_shell.toml").read_text()
    levels = "min    = 1\nmax    = 27\nfactor = 3"
    assert levels in shell
    (tmp_path / "space.toml").write_text(
        shell.replace(levels, 'values = [1, 3]\ncosts = "nominal"'))
    # a twentieth of a second per run, so that both workers are running pulls at once
    (tmp_path / "run.sh").write_text(
        f'sleep 0.05\nexec sh "{EXAMPLES / "train_synthetic.sh"}" "$@"\n')
    script = ["sh", "run.sh"]
    gp = ["--algorithm", "mf-gp-ucb", "--quiet"]
    finish(mftune(tmp_path, "tune", "space.toml", *gp, "--study", "one.db", "--max-pulls", 64,
                  "--", *script))
    finish(mftune(tmp_path, "tune", "space.toml", *gp, "--study", "two.db", "--max-pulls", 4,
                  "--", *script))
    workers = [mftune(tmp_path, "worker", "two.db", "--quiet", "--max-pulls", 64)
               for _ in range(2)]
    finish(*workers)
    with StudyStore(tmp_path / "one.db") as one, StudyStore(tmp_path / "two.db") as two:
        assert len(one.configs()) > 3 and one.configs() == two.configs()
        assert len(one.proposals()) > 10 and one.proposals() == two.proposals()
        rows = [sorted((r.batch, r.pos, r.arm, r.fidelity, r.score) for r in s.rows())
                for s in (one, two)]
        assert rows[0] == rows[1]
        assert all(r.status == "done" for r in two.rows())
        # every pull ran once; the first process and both workers ran some
        assert len({r.worker for r in two.rows() if r.kind == "policy"}) == 3
