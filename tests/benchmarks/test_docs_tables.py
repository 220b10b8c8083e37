"""The documented lower-bound table is the code's: a few cheap cells run again and compared.

docs/benchmarks.md prints the table of ``mftune bench lower-bound --runs 100 --delta 0.01``
(seed 0, the default pull cap, learning rate and sub-gradient). A change that moves any
policy's decisions (a tie-break, a radius, a step of MF-GRAD) changes some of its figures,
and the whole table must then be run again. These cells, one per policy on the instances
that need no ``--instance-dir``, each well under a second of CPU except MF-GRAD's (about
two seconds), are run here with the table's settings; the printed columns (mean cost, its
95 % half-width, the bound, the ratio, wrong answers, capped runs) must match the
documented row character for character. Wall and CPU seconds are not compared.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mftune.benchmarks.lower_bound import instance_bound, load_family, run_cells
from mftune.cli.bench_lower_bound import format_family

DOCS = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
HEADER = ("Cost against the lower bound C*(µ)·log(1/(2.4δ)) — delta=0.01, 100 runs, seed 0, "
          "pull cap 1000000 (LUCB, GRAD, MF-GRAD), GRAD/MF-GRAD learning rate 0.25, "
          "MF-GRAD gradient code")

#: (family, instance, policy): every policy once, on its cheapest documented cells.
CELLS = [
    ("wang", "wang-table3-case1", "SE"),
    ("mfucb", "K5-M2-bernoulli-s0", "IISE"),
    ("wang", "wang-table1", "IISE-gamma"),
    ("mfucb", "K5-M2-bernoulli-s0", "MFE"),
    ("mfucb", "K5-M2-bernoulli-s0", "LUCB-A"),
    ("mfucb", "K5-M3-gaussian-s0", "LUCB-B"),
    ("mfucb", "K5-M2-bernoulli-s0", "LUCB-C"),
    ("mfucb", "K5-M3-gaussian-s0", "GRAD"),
    ("mfucb", "K5-M2-bernoulli-s0", "MF-GRAD"),
]


def documented_rows() -> dict[tuple[str, str], list[str]]:
    """``{(instance, policy label): printed columns}`` of the documented table."""
    lines = DOCS.read_text(encoding="utf-8").splitlines()
    start = lines.index(HEADER)
    rows, instance = {}, None
    for line in lines[start + 1:]:
        if line.startswith("```"):
            break
        if ": K=" in line and not line.startswith(" "):
            instance = line.split(":")[0]
        elif line.startswith("  ") and not line.strip().startswith("policy"):
            cols = line.split()
            rows[instance, cols[0]] = cols[1:7]
    return rows


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, str], list[str]]:
    return documented_rows()


def test_the_documented_table_has_its_header_and_every_checked_cell(rows):
    assert len(rows) >= 9 * 10  # nine policies, over ten instances
    assert ("K5-M2-bernoulli-s0", "MF-GRAD") in rows and ("wang-table1", "IISE-γ") in rows


@pytest.mark.parametrize("family,instance,policy", CELLS)
def test_documented_cell_is_what_the_code_prints(rows, family, instance, policy):
    inst = next(i for i in load_family(family, seed=0)[0] if i.name == instance)
    bounds = {instance: instance_bound(inst.env)}
    # the table's own settings: run_cells' defaults (seed 0, pull cap, learning rate, gradient)
    cells = run_cells([inst], [policy], delta=0.01, n_runs=100, bounds=bounds)
    printed = format_family(family, [inst], bounds, cells).splitlines()[-1].split()
    assert rows[instance, printed[0]] == printed[1:7], (
        f"{instance} {policy}: the code prints {printed[1:7]}; docs/benchmarks.md has another "
        "row. Run the whole table again (the command above it) and replace it.")
