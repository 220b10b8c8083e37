"""How far a head-to-head run that ended on its budget was from its certificate.

For each seed, the default ``MFTuner`` runs on a head-to-head task exactly as
``mftune bench head-to-head`` runs it (same data, split, folds and budget).
A run that ends on the budget in its top phase was waiting for the paired
t-tests there (:mod:`mftune.policies.top_glr`): the leader is certified when,
for every other survivor ``b``, the differences ``d`` of their split-by-split
top-fidelity scores give ``√n (d̄ + ε) / s_d >= q``. For each survivor the
script takes ``d̄`` and ``s_d`` as measured (a parked survivor, whose test
has passed, needs none) and finds the rounds ``n`` its test would need,
under three quantiles ``q``:

* ``search``: the search's own, a union over the ``K − 1`` comparisons and
  over the rounds (``paired_t_quantile``);
* ``fixed``: a fixed-sample paired t-test, the union over the comparisons
  only, which any test that estimates the spread from the rounds pays at
  least once (it is not anytime-valid; a lower estimate);
* ``known``: a z-test with ``s_d`` known (the normal quantile at the same
  level), a floor no test that estimates ``s_d`` reaches.

Printed per run: how it stopped, the top phase's rounds ``t`` and survivors,
the binding survivor's ``d̄`` and ``s_d``, the rounds each quantile needs,
and the top-fidelity seconds beyond ``t`` they would cost at the run's mean
cost of a top-fidelity pull (each survivor pulled until its own test passes,
the leader until the last: as ``Waves.final_cost`` prices rounds). A run not
in its top phase prints the fidelity it ended at, its survivors and what one
round of them at the top fidelity would cost (``costs_``).

Run: ``OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/certificate_reach.py mlp-letter --seeds 5``
(one task per process; about the task's budget per seed).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from scipy import stats

from mftune.benchmarks import head_to_head as h2h
from mftune.policies.top_glr import paired_differences, paired_t_quantile, paired_t_rounds

#: Rounds within which the needed rounds are looked for.
MAX_ROUNDS = 10_000


def rounds_needed(lead, spread, epsilon: float, quantile) -> np.ndarray:
    """The first ``n >= 2`` with ``√n (lead + ε) / spread >= quantile(n)`` per survivor
    (``inf`` when none within :data:`MAX_ROUNDS`)."""
    return paired_t_rounds(np.asarray(lead, dtype=float) + epsilon, spread, quantile,
                           MAX_ROUNDS)


def reach(tuner) -> dict:
    """What the run's top phase had and what its certificate would still need."""
    pol = getattr(tuner.policy_, "inner", tuner.policy_)  # the last wave's, with waves
    fidelity = int(getattr(pol, "fidelity_", -1))
    out = {"reason": tuner.stopping_reason_, "fidelity": fidelity,
           "alive": int(np.sum(pol.active)), "top_cost": float(np.asarray(tuner.costs_)[-1])}
    in_top = getattr(pol, "top_glr", None) == "paired-t" and fidelity == pol.phases[-1]
    if not in_top or pol.t_ < 2:
        return out
    t, arms = int(pol.t_), np.flatnonzero(pol.active)
    own = int(np.flatnonzero(arms == pol.recommend())[0])
    n = np.minimum(pol.stats.counts[fidelity, arms], t)  # a parked survivor's own splits
    lead, spread = paired_differences(pol.top_rewards_[arms, :t], own, n)
    waiting = (arms != arms[own]) & ~pol.parked_[arms]  # a parked survivor's test passed
    lead, spread = lead[waiting], spread[waiting]
    level = pol.glr_delta() / (pol.n_arms - 1)
    eps = float(pol.epsilon or 0.0)
    quantiles = {
        "search": lambda n: paired_t_quantile(n, pol.glr_delta(), pol.n_arms),
        "fixed": lambda n: stats.t.isf(level, n - 1),
        "known": lambda n: stats.norm.isf(level),
    }
    top = tuner.pulls_["fidelity"] == fidelity
    per_pull = float(np.mean(np.asarray(tuner.pulls_["cost"])[top]))
    out.update(rounds=t, survivors=int(arms.size), epsilon=eps)
    need = {name: rounds_needed(lead, spread, eps, q) for name, q in quantiles.items()}
    for name, rounds in need.items():
        more = np.append(np.maximum(rounds - t, 0.0), 0.0)
        out[name] = float(np.max(more)) + t
        out[name + "_s"] = float((more.sum() + more.max()) * per_pull)
    bind = int(np.argmax(np.append(need["search"], -np.inf)))
    out.update(lead=float(np.append(lead, np.nan)[bind]),
               spread=float(np.append(spread, np.nan)[bind]))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("task", choices=sorted(h2h.TASKS))
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args(argv)
    task = h2h.TASKS[args.task]
    print(f"{args.task}: budget {task.budget:g} s; rounds needed at the measured lead and "
          "spread of the binding survivor (search / fixed / known quantile)")
    for seed in range(args.seeds):
        X, _, y, _, _ = h2h._data(task, seed)
        tuner = h2h.build_mftuner(task, seed)
        with warnings.catch_warnings():  # e.g. an MLP's ConvergenceWarning
            warnings.simplefilter("ignore")
            tuner.fit(X, y)
        r = reach(tuner)
        line = f"  seed {seed}: {r['reason']}"
        if "rounds" not in r:
            print(f"{line}, ended at fidelity {r['fidelity']} with {r['alive']} survivors "
                  f"(no paired rounds at the top; one round there costs about "
                  f"{r['alive'] * r['top_cost']:.0f} s)")
            continue
        print(f"{line}, {r['rounds']} top rounds, {r['survivors']} survivors, "
              f"lead {r['lead']:+.4f} spread {r['spread']:.4f} (epsilon {r['epsilon']:g}); "
              "rounds " + " / ".join(f"{r[k]:g}" for k in ("search", "fixed", "known"))
              + "; seconds beyond " + " / ".join(f"{r[k + '_s']:.0f}"
                                                for k in ("search", "fixed", "known")))


if __name__ == "__main__":
    main()
