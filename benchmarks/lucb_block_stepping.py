"""Block stepping of the LUCB batch simulator: seconds per Table-2 trial, and exactness.

Runs the same Table-2 trials (Wang et al. 2023, Figure 1b; seed 0, δ = 0.1,
µ̃1 = 0.95, µ̃2 = 0.75) round by round (``lookahead=1``) and with block
stepping (the default ``lookahead``), checks that counts, answers and costs
are identical, and prints the CPU seconds of each. ``lookahead=1`` goes
through the same speculative code with blocks of one round, so it is slower
per round than a plain loop would be; the README quotes the comparison with
the previous round-by-round simulator as well.

Run: ``PYTHONPATH=. nice -n 19 python benchmarks/lucb_block_stepping.py [--runs 1]
[--procedures A,B] [--max-pulls N]`` (a full trial round by round takes minutes).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mftune.benchmarks.lucb_instances import MU1_TILDE, MU2_TILDE, wang_table2
from mftune.benchmarks.lucb_sim import simulate_lucb_batch


def main(runs: int = 1, procedures=("A", "B"), max_pulls: int = 10**8) -> None:
    env = wang_table2()
    print(f"{'procedure':>9} {'runs':>4} {'rounds (max)':>12} {'lookahead=1 s':>13} "
          f"{'blocks s':>9} {'speed-up':>8} identical")
    for proc in procedures:
        out = {}
        for look in (1, 64):
            start = time.process_time()
            out[look] = simulate_lucb_batch(env, runs, 0, procedure=proc, delta=0.1,
                                            mu1_tilde=MU1_TILDE, mu2_tilde=MU2_TILDE,
                                            max_pulls=max_pulls, lookahead=look)
            out[look].seconds = time.process_time() - start
        a, b = out[1], out[64]
        same = all(np.array_equal(getattr(a, f), getattr(b, f))
                   for f in ("pulls", "recommendation", "n_rounds", "stopped", "cost"))
        print(f"{proc:>9} {runs:>4} {a.n_rounds.max():>12} {a.seconds:>13.1f} {b.seconds:>9.1f} "
              f"{a.seconds / b.seconds:>7.1f}x {same}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--procedures", default="A,B")
    parser.add_argument("--max-pulls", type=int, default=10**8)
    args = parser.parse_args()
    main(args.runs, tuple(args.procedures.split(",")), args.max_pulls)
