"""The package's layering (docs/architecture.md): no upward import, no cycle, no long file.

Every ``import`` statement of ``mftune/`` is read with :mod:`ast` (function-level
imports included: a lazy import is still a dependency), so this test is the
command that checks the architecture: ``pytest tests/test_layout.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mftune"

#: Layer of each unit; a module may import its own unit and lower layers only.
#: Units of one layer (search and scripts; benchmarks and service) may not import each other.
LAYERS = {
    "mftune.space": 0, "mftune.fidelity": 0, "mftune.radii": 0, "mftune._validation": 0,
    "mftune.client": 0,
    "mftune.policies": 1,
    "mftune.study": 2,
    "mftune.engine": 3,
    "mftune.search": 4, "mftune.scripts": 4,
    "mftune.benchmarks": 5, "mftune.service": 5,
    "mftune.cli": 6,
    "mftune": 7, "mftune.__main__": 7,
}
MAX_LINES = 600


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def unit(module: str) -> str:
    """The layer unit a module belongs to (its subpackage, or itself at the top)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def imports(path: Path) -> set[str]:
    """The ``mftune`` modules ``path`` imports, resolved to module names."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("mftune"):
                continue
            for alias in node.names:  # ``from . import x`` may name a submodule
                sub = f"{target}.{alias.name}"
                found.add(sub if MODULES.get(sub) else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("mftune"))
    found.discard(name)
    return found


FILES = sorted(PACKAGE.rglob("*.py"))
MODULES = {module_name(p): p for p in FILES}
GRAPH = {module_name(p): imports(p) for p in FILES}


def test_every_module_has_a_layer():
    assert all(unit(m) in LAYERS for m in MODULES), sorted(
        m for m in MODULES if unit(m) not in LAYERS)


def test_no_upward_or_sideways_import():
    bad = []
    for mod, targets in GRAPH.items():
        for t in targets:
            a, b = unit(mod), unit(t)
            if a != b and LAYERS[b] >= LAYERS[a]:
                bad.append(f"{mod} -> {t}")
    assert not bad, "imports against the layering:\n" + "\n".join(sorted(bad))


def test_no_import_cycle():
    # Tarjan-free check: depth-first search with colours, reporting one cycle
    colour, stack, cycles = {}, [], []

    def visit(m):
        colour[m] = 1
        stack.append(m)
        for t in sorted(GRAPH.get(m, ())):
            if t not in GRAPH:
                continue
            if colour.get(t) == 1:
                cycles.append(stack[stack.index(t):] + [t])
            elif t not in colour:
                visit(t)
        stack.pop()
        colour[m] = 2

    for m in sorted(GRAPH):
        if m not in colour:
            visit(m)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_file_over_the_limit(path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(PACKAGE)} has {n} lines (limit {MAX_LINES})"
