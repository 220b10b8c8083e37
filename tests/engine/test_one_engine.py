"""A script study and an in-process search of the same seeded objective make the same pulls.

Both faces run the engine's :class:`~mftune.engine.search.Search`; they differ
only in how a pull is evaluated (a subprocess reading its configuration from
the environment, or a Python call). The objective's noise is a function of the
configuration, the fidelity and the repeat index (``MFTUNE_REPEAT``), so both
see the same scores, and with fixed costs every decision must agree.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from mftune.cli import main
from mftune.engine.driver import Evaluator
from mftune.engine.search import Search
from mftune.policies.base import Pulls
from mftune.scripts.spacefile import load_spacefile
from mftune.scripts.study import _settings
from mftune.study.outcomes import Outcomes, PullRecord
from mftune.study.store import StudyStore

OBJECTIVE = '''
import hashlib, json, math, os

def score(x, n, repeat):
    h = hashlib.sha256(f"{x!r}|{n}|{repeat}".encode()).digest()
    u1 = (int.from_bytes(h[:8], "big") + 1) / 2.0**64
    u2 = int.from_bytes(h[8:16], "big") / 2.0**64
    noise = math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
    return -(x - 0.3) ** 2 - 0.5 / n + 0.02 * noise
'''

SCRIPT = OBJECTIVE + '''
p = json.loads(os.environ["MFTUNE_PARAMS"])
print("mftune-score:", repr(score(p["x"], int(os.environ["MFTUNE_FIDELITY"]),
                                  int(os.environ["MFTUNE_REPEAT"]))))
'''

SPACE = """
[parameters]
x = { type = "real", low = 0.0, high = 1.0 }
[fidelity]
name = "n"
values = [2, 10]
pass = "env"
costs = [1.0, 5.0]
[calibration]
arms = 3
[study]
path = "s.db"
n_candidates = 5
seed = 3
budget = 1e9   # the rule, not the wall clock, ends both runs
epsilon = 0.05 # a wave of new candidates, then a short certificate (not one among near-ties)
"""


def store_configs(path) -> list[dict]:
    with StudyStore(path) as store:
        return store.configs()


class FunctionEvaluator(Evaluator):
    """The in-process face: the same objective as a Python call."""

    def __init__(self, score, configs, levels, n_splits):
        super().__init__()
        self.score, self.candidates, self.levels = score, configs, levels
        self.metric, self.n_splits, self.phase = "score", n_splits, "search"
        self.records = []
        self.next_repeat = np.zeros((len(levels), len(configs)), dtype=np.int64)

    def evaluate(self, pulls: Pulls) -> Outcomes:
        rewards = []
        for a, f in pulls:
            r = int(self.next_repeat[f, a])
            self.next_repeat[f, a] += 1
            s = self.score(self.candidates[a]["x"], self.levels[f], r)
            rewards.append(s)
            self.records.append(PullRecord(int(a), int(f), r, {"score": s}, 0.0, 0.0,
                                           phase=self.phase))
        return Outcomes(rewards, np.zeros(len(pulls)))

    def add_candidates(self, n):  # a wave appended n configurations to self.candidates
        self.next_repeat = np.hstack([self.next_repeat,
                                      np.zeros((len(self.levels), n), dtype=np.int64)])

    def acknowledge(self):
        pass

    def after_batch(self, pulls, outcomes, policy):
        pass

    def release(self, pulls):
        pass


def test_script_study_and_in_process_search_make_the_same_pulls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("obj.py").write_text(SCRIPT)
    Path("space.toml").write_text(SPACE)
    res = CliRunner().invoke(main, ["tune", "space.toml", "--quiet", "--", sys.executable,
                                    "obj.py"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    with StudyStore("s.db") as store:
        rows = sorted(store.rows(), key=lambda r: (r.kind != "calibration", r.batch, r.pos))
        configs = store.configs(initial=True)  # the waves append the others again
        extra, n_arms = store.meta["spec"], len(store.configs())
    study_pulls = [(r.kind, r.arm, r.fidelity) for r in rows]

    spec = load_spacefile("space.toml")
    namespace: dict = {}
    exec(OBJECTIVE, namespace)  # the script's own objective, called in-process
    ev = FunctionEvaluator(namespace["score"], configs, spec.fidelity["values"],
                           spec.calibration["repeats"])
    settings = _settings(spec, extra)
    assert settings["adaptive"] and n_arms > len(configs)  # the study ran waves
    search = Search(ev, spec.fidelity["values"], seed=spec.study["seed"], space=spec.space,
                    **settings)
    search.setup(np.random.default_rng(spec.study["seed"]))
    reason = search.search()
    in_process = [("calibration" if r.phase == "calibration" else "policy", r.arm, r.fidelity)
                  for r in ev.records]
    assert len(study_pulls) > 20  # a calibration and several rounds, not a trivial run
    assert in_process == study_pulls
    assert ev.candidates == [{"x": c["x"]} for c in store_configs(tmp_path / "s.db")]
    assert reason == "stopping-rule" and "stopping-rule" in res.output
