"""The budget rule's price of a final wave against what the final wave cost.

A search with waves decides after each wave whether another one and the
certificate after it fit in what is left of its budget
(:meth:`mftune.engine.waves.Waves._next`); the certificate's cost is
``Waves.final_cost``, the cheaper of two prices of the final wave's
top-fidelity rounds: by the radii of successive elimination, from the
survivors' gaps, and by the paired t-tests of the top phase, from the
differences measured so far, each mean lowered by one standard error
(:mod:`mftune.engine.final_wave`). For each seed, the default ``MFTuner``
runs on a head-to-head task exactly as ``mftune bench head-to-head`` runs
it; at every wave's end the script prints both prices (the paired one where
the search took it: a top phase with two rounds, and cheaper than the
radii's; in brackets at the measured means), how the wave ended and, for the
wave that became the final wave, the cost it then spent; at the end, what each
wave cost (the rule takes twice the last wave's cost for the next one).

Run: ``OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/final_wave_price.py svm-letter --seeds 5``
(one task per process; about the task's budget per seed).
"""

from __future__ import annotations

import argparse
import warnings

from mftune.benchmarks import head_to_head as h2h
from mftune.engine import waves


def priced_runs(task_name: str, seeds: int, budget: float | None = None):
    """Yield ``(seed, tuner, ends)``: each wave's end as the budget rule saw it (``budget``:
    MFTuner's instead of the task's)."""
    task, ends = h2h.TASKS[task_name], []
    decide = waves.Waves._next

    def watch(self, log, survivors, inc):
        inner, top = self.inner, self.n_fidelities - 1
        end = {"wave": self.wave_, "survivors": len(survivors), "cost": self.stats.cost.sum(),
               "rounds": int(inner.t_) if inner.fidelity_ == top else 0,
               # the price the search takes, and with the tests' at the measured leads
               "price": self.final_cost(survivors), "plug-in": self.final_cost(survivors, 0.0)}
        inner.top_glr, kept = None, inner.top_glr  # the radii's price alone
        end["radii"] = self.final_cost(survivors)
        inner.top_glr = kept
        end["paired"] = end["price"] < end["radii"]  # the search took the tests' price
        reason = decide(self, log, survivors, inc)
        ends.append({**end, "reason": reason[0], "certified": log["certified"]})
        return reason

    waves.Waves._next = watch
    try:
        for seed in range(seeds):
            X, _, y, _, _ = h2h._data(task, seed)
            tuner = h2h.build_mftuner(task, seed,
                                      tuner_params=None if budget is None else {"budget": budget})
            with warnings.catch_warnings():  # e.g. an MLP's ConvergenceWarning
                warnings.simplefilter("ignore")
                tuner.fit(X, y)
            yield seed, tuner, list(ends)
            ends.clear()
    finally:
        waves.Waves._next = decide


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("task", choices=sorted(h2h.TASKS))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--budget", type=float, default=None,
                    help="MFTuner's cost budget in seconds (default: the task's)")
    args = ap.parse_args(argv)
    budget = h2h.TASKS[args.task].budget if args.budget is None else args.budget
    print(f"{args.task}: budget {budget:g} s; at each wave's end the "
          "final wave's price by the radii / by the paired tests (at the measured leads), s; "
          "then what it cost")
    for seed, tuner, ends in priced_runs(args.task, args.seeds, args.budget):
        for e in ends:
            final = e["reason"] is not None and not e["certified"]
            spent = f"; the final wave cost {tuner.total_cost_ - e['cost']:.1f} s" if final else ""
            paired = f"{e['price']:.1f} ({e['plug-in']:.1f})" if e["paired"] else "–"
            print(f"  seed {seed}, wave {e['wave']}: {e['survivors']} survivors, "
                  f"{e['rounds']} top rounds; price {e['radii']:.1f} / {paired}; "
                  f"{e['reason'] or 'next wave'}{' (certified)' if e['certified'] else ''}"
                  f"{spent}")
        starts = [w["start_cost"] for w in tuner.waves_] + [tuner.total_cost_]
        each = ", ".join(f"{b - a:.1f}" for a, b in zip(starts, starts[1:], strict=False))
        print(f"  seed {seed}: {tuner.stopping_reason_}, {len(tuner.waves_)} wave(s) "
              f"costing {each} s (the last with its final part)")


if __name__ == "__main__":
    main()
