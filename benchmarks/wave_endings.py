"""How the default search with waves ends on a cheap simulated objective, by cost budget.

The objective is the narrow bump on a broad hill of tests/search/test_waves.py
(top 0.7 on the bump, 0.5 on the hill; 4 fidelities ``max_iter`` 1/3/9/27,
16 initial candidates, 3-fold CV, noise 0.01). Pulls cost a nominal
``0.01 s × max_iter / 27`` instead of the measured seconds, so a cost budget
ends a search at the same pull on every machine. For each budget and seed the
default ``MFTuner`` (waves, ``epsilon="auto"``) runs; printed per budget: the
runs that ended with their certificate (``stopping_reason_ ==
"stopping-rule"``), why the waves stopped proposing (``Waves.finished_``;
"never" when the budget ended the search inside an exploring wave), and the
median objective value of the recommendation.

Run: ``PYTHONPATH=. python benchmarks/wave_endings.py`` (about 10 s on one core).
"""

from __future__ import annotations

import collections
import sys

import numpy as np

from mftune import MFTuner, Real
from mftune.benchmarks.bump import Bump, nominal_costs, objective
from mftune.search import evaluation


def main(budgets=(1.0, 2.0, 4.0), seeds=10) -> None:
    evaluation.CVEvaluator.evaluate = nominal_costs(evaluation.CVEvaluator.evaluate)
    X, y = np.random.default_rng(0).random((60, 2)), np.zeros(60)
    space = {"x1": Real(0, 1), "x2": Real(0, 1)}
    for budget in budgets:
        ends, values = collections.Counter(), []
        certified = 0
        for seed in range(seeds):
            t = MFTuner(Bump(), space, fidelity="max_iter", fidelities=[1, 3, 9, 27],
                        n_candidates=16, cv=3, costs="levels", refit=False, budget=budget,
                        random_state=seed).fit(X, y)
            certified += t.stopping_reason_ == "stopping-rule"
            ends[t.policy_.finished_ or "never (the budget ended a wave)"] += 1
            values.append(float(objective(t.best_params_["x1"], t.best_params_["x2"])))
        print(f"budget {budget:g} s: {certified}/{seeds} runs end with the certificate; "
              f"waves stopped proposing: {dict(ends)}; median value {np.median(values):.4f}",
              flush=True)


if __name__ == "__main__":
    main(seeds=int(sys.argv[1]) if len(sys.argv) > 1 else 10)
