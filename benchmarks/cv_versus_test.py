"""Does the cross-validated score tell a head-to-head task's leading candidates apart on test?

For each named task and seed, the default ``MFTuner`` runs as
``mftune bench head-to-head`` runs it; then every candidate it evaluated is fitted on the
whole pool at the top fidelity and scored on the held-out rows, as the head-to-head scores
a recommendation. Printed per run: the search's answer (its CV score and test score, and
the test rank of that test score among the candidates that reached the top fidelity), the
candidate with the best test score among them (its CV rank), how many candidates lie within
the search's ε of the CV leader and the spread of their test scores, and Spearman's rank
correlation of CV and test scores over the candidates at the top fidelity.

Run: ``OMP_NUM_THREADS=1 python benchmarks/cv_versus_test.py mlp-letter --seeds 5``
(per seed: the task's budget plus one fit on the pool per candidate).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy import stats

from mftune.benchmarks import head_to_head as h2h


def compare(name: str, seed: int) -> str:
    """One line: the search's answer and its leading candidates, CV against test."""
    task = h2h.TASKS[name]
    X, X_te, y, y_te, _ = h2h._data(task, seed)
    test = h2h._TestScore(task, X, y, X_te, y_te)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tuner = h2h.build_mftuner(task, seed).fit(X, y)
        res = tuner.cv_results_
        top = np.flatnonzero(res["fidelity_reached"] == res["fidelity_reached"].max())
        cv = np.asarray(res["mean_test_score"])[top]
        te = np.array([test(tuner.candidates_[i]) for i in top])
    pick = int(np.flatnonzero(top == tuner.best_index_)[0])
    best = int(np.argmax(te))
    eps = tuner.epsilon_ or 0.0
    near = cv >= cv.max() - eps
    rho = stats.spearmanr(cv, te).statistic if top.size > 2 else np.nan
    rank_pick, rank_best = int((te > te[pick]).sum()) + 1, int((cv > cv[best]).sum()) + 1
    return (f"{name} seed {seed}: {len(tuner.candidates_)} candidates, {top.size} at the top; "
            f"answer CV {cv[pick]:.4f} test {te[pick]:.4f} (test rank {rank_pick}); "
            f"best on test {te[best]:.4f} (CV {cv[best]:.4f}, CV rank {rank_best}); "
            f"{int(near.sum())} within ε = {eps:.4g} of the CV leader, test {te[near].min():.4f}–"
            f"{te[near].max():.4f}; Spearman CV~test {rho:.2f} "
            f"({tuner.stopping_reason_}, {time.perf_counter() - t0:.0f} s)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tasks", nargs="+", choices=sorted(h2h.TASKS))
    ap.add_argument("--seeds", type=int, default=1)
    args = ap.parse_args(argv)
    for name in args.tasks:
        for seed in range(args.seeds):
            print(compare(name, seed), flush=True)


if __name__ == "__main__":
    main()
