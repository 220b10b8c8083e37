"""How much tuning matters on a head-to-head task, and where the search's answer lies.

For each named task of :data:`mftune.benchmarks.head_to_head.TASKS` and seed,
the task's ``n_candidates`` configurations (sampled as ``MFTuner`` samples them
for that seed) are each fitted on the whole pool at the top fidelity and
scored on the held-out rows, as the head-to-head scores a recommendation.
Printed: min, quartiles, max and the gap between the two best.

With ``--answer`` the default ``MFTuner`` runs instead, as ``mftune bench
head-to-head`` runs it, and every candidate it evaluated at the top fidelity
is scored on test the same way. Printed per run: the answer's CV and test
scores and the test rank of the latter, the best candidate on test and its
CV rank, how many candidates lie within the search's ε of the CV leader and
the spread of their test scores, and Spearman's rank correlation of CV and
test scores.

With ``--first N`` the first ``N`` trials of Optuna's TPE for the seed (its
start-up trials, drawn at random by ``TPESampler(seed=seed)`` as the
head-to-head seeds it) are scored on test the same way, each with its position
in every range of the space (0 the low end, 1 the high end, on the range's
scale): the head-to-head's early TPE answers are these configurations.

Run: ``OMP_NUM_THREADS=1 python benchmarks/task_spread.py svm-letter mlp-letter``
(``--seed N`` the first seed, ``--seeds K`` how many; minutes on 2 cores: every
candidate is one fit on the pool, and ``--answer`` adds the task's budget per run).
"""

from __future__ import annotations

import argparse
import time
import warnings
from functools import partial

import numpy as np
from scipy import stats

from mftune.benchmarks import head_to_head as h2h


def _load(name: str, seed: int):
    """The task, its pool, the test scorer of a configuration and a description of the data."""
    task = h2h.TASKS[name]
    X, X_te, y, y_te, source = h2h._data(task, seed)
    about = f"{source}, pool {len(X)}, test {len(X_te)}"
    return task, X, y, h2h._TestScore(task, X, y, X_te, y_te), about


def spread(name: str, seed: int) -> str:
    """One line: the test scores of the task's candidates for ``seed``."""
    task, _, _, test, about = _load(name, seed)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = np.sort([test(c) for c in h2h._candidates(task, seed)])
    q25, q50, q75 = np.quantile(scores, [0.25, 0.5, 0.75])
    return (f"{name} ({about}, seed {seed}): "
            f"{len(scores)} candidates, test score min {scores[0]:.4f} q25 {q25:.4f} "
            f"median {q50:.4f} q75 {q75:.4f} max {scores[-1]:.4f}; gap of the two best "
            f"{scores[-1] - scores[-2]:.4f} ({time.perf_counter() - t0:.0f} s)")


def answer(name: str, seed: int) -> str:
    """One line: the default search's answer among the candidates it evaluated at the top
    fidelity, cross-validated against test scores."""
    task, X, y, test, _ = _load(name, seed)
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


def first_trials(name: str, seed: int, n: int) -> str:
    """One line: TPE's first ``n`` trials for ``seed``, their place in the space and test score."""
    import optuna  # the peer benchmark's optional dependency (``mftune[bench]``)

    from mftune.benchmarks.peers import _optuna_params

    task, _, _, test, _ = _load(name, seed)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=seed))
    parts = []
    for _ in range(n):
        trial = study.ask()
        params = _optuna_params(trial, task.space)
        study.tell(trial, 0.0)  # start-up trials are drawn at random: the value is not read
        place = ",".join(f"{float(dim.to_unit([params[key]])[0]):.2f}"
                         for key, dim in task.space.items())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parts.append(f"({place}) test {test(params):.4f}")
    trials = f"first {n} trials" if n > 1 else "first trial"
    return f"{name} seed {seed}: TPE's {trials} at " + "; ".join(parts)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tasks", nargs="+", choices=sorted(h2h.TASKS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--answer", action="store_true")
    ap.add_argument("--first", type=int, default=0, metavar="N")
    args = ap.parse_args(argv)
    if args.answer:
        line = answer
    elif args.first:
        line = partial(first_trials, n=args.first)
    else:
        line = spread
    for name in args.tasks:
        for seed in range(args.seed, args.seed + args.seeds):
            print(line(name, seed), flush=True)


if __name__ == "__main__":
    main()
