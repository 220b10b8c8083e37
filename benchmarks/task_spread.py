"""How much tuning matters on a head-to-head task: the spread of its candidates' test scores.

For each named task of :data:`mftune.benchmarks.head_to_head.TASKS` and seed,
the task's ``n_candidates`` configurations (sampled as ``MFTuner`` samples them
for that seed) are each fitted on the whole pool at the top fidelity and
scored on the held-out rows, as the head-to-head scores a recommendation.
Printed: min, quartiles, max and the gap between the two best.

Run: ``OMP_NUM_THREADS=1 python benchmarks/task_spread.py svm-letter mlp-letter``
(``--seed N``; minutes on 2 cores: every candidate is one fit on the pool).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from mftune.benchmarks import head_to_head as h2h


def spread(name: str, seed: int) -> str:
    """One line: the test scores of the task's candidates for ``seed``."""
    task = h2h.TASKS[name]
    X, X_te, y, y_te, source = h2h._data(task, seed)
    test = h2h._TestScore(task, X, y, X_te, y_te)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = np.sort([test(c) for c in h2h._candidates(task, seed)])
    q25, q50, q75 = np.quantile(scores, [0.25, 0.5, 0.75])
    return (f"{name} ({source}, pool {len(X)}, test {len(X_te)}, seed {seed}): "
            f"{len(scores)} candidates, test score min {scores[0]:.4f} q25 {q25:.4f} "
            f"median {q50:.4f} q75 {q75:.4f} max {scores[-1]:.4f}; gap of the two best "
            f"{scores[-1] - scores[-2]:.4f} ({time.perf_counter() - t0:.0f} s)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tasks", nargs="+", choices=sorted(h2h.TASKS))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    for name in args.tasks:
        print(spread(name, args.seed), flush=True)


if __name__ == "__main__":
    main()
