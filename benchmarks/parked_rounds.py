"""The top phase's paired t-tests round by round: the leader, and the survivors they park.

For each seed, the default ``MFTuner`` runs on a head-to-head task exactly as
``mftune bench head-to-head`` runs it; after every round of a top phase with
paired t-tests (two rounds at the least) the script prints the leader
(``new`` when it is not the arm the parked survivors were tested against),
the survivors, how many are parked, how many were parked before the round
and are pulled again (a new leader whose test does not place them within ε
on their splits), and the pulls so far (:mod:`mftune.policies.top_glr`).

Run: ``OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/parked_rounds.py svm-magic-2k --seeds 1``
(one task per process; about the task's budget per seed).
"""

from __future__ import annotations

import argparse
import warnings

from mftune.benchmarks import head_to_head as h2h
from mftune.policies.top_glr import TopGLR


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("task", choices=sorted(h2h.TASKS))
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args(argv)
    stops = TopGLR._paired_t_stops

    def watch(self, arms, means):
        before, leader = self.parked_ & self.active, self.park_leader_
        stop = stops(self, arms, means)
        if self.t_ >= 2:
            new = " (new)" if 0 <= leader != self.park_leader_ else ""
            parked = self.parked_ & self.active
            print(f"  round {self.t_:3d}  leader {self.park_leader_:3d}{new:6s}  survivors "
                  f"{int(self.active.sum()):3d}  parked {int(parked.sum()):3d}"
                  f"  pulled again {int((before & ~parked & self.active).sum()):3d}"
                  f"  pulls {int(self.stats.counts.sum())}")
        return stop

    TopGLR._paired_t_stops = watch
    task = h2h.TASKS[args.task]
    try:
        for seed in range(args.seeds):
            print(f"{args.task} seed {seed}")
            X, _, y, _, _ = h2h._data(task, seed)
            tuner = h2h.build_mftuner(task, seed)
            with warnings.catch_warnings():  # e.g. an MLP's ConvergenceWarning
                warnings.simplefilter("ignore")
                tuner.fit(X, y)
            print(f"  {tuner.stopping_reason_} after {tuner.total_cost_:.1f} s, "
                  f"{tuner.n_pulls_} pulls, {len(tuner.waves_)} wave(s)")
    finally:
        TopGLR._paired_t_stops = stops


if __name__ == "__main__":
    main()
