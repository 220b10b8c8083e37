"""The shell example study with waves of candidates and with a fixed list, seed by seed.

Runs ``mftune tune examples/space_shell.toml -- sh examples/train_synthetic.sh``
with ``adaptive`` as given (the default, waves) and ``adaptive = false`` (12
random candidates) for seeds 0..N-1, in a temporary folder, and prints per
mode how each study ended, its pulls, its summed cost (measured seconds) and
the recommended configuration's noise-free loss at the top fidelity (the
script's own formula; the best possible is 0.0148).

Run: ``python benchmarks/shell_waves.py --seeds 10`` (about three minutes).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPACE = ROOT / "examples" / "space_shell.toml"
SCRIPT = ROOT / "examples" / "train_synthetic.sh"


def true_loss(config: dict, epochs: int = 27) -> float:
    """The example script's loss without its noise (examples/train_synthetic.sh)."""
    x, y = config["x"], config["y"]
    return (x - 0.3) ** 2 + (y + 0.2) ** 2 + 0.4 / epochs * (1 + 0.5 * x * x)


def run(folder: Path, seed: int, adaptive: bool) -> dict:
    """One study; its ``mftune status --json`` summary."""
    name = f"{'waves' if adaptive else 'fixed'}-{seed}"
    text = re.sub(r"(?m)^path\s*=.*$", f'path = "{name}.db"', SPACE.read_text())
    text = re.sub(r"(?m)^seed\s*=.*$", f"seed = {seed}", text)
    if not adaptive:
        text = text.replace("[study]", "[study]\nadaptive = false", 1)
    (folder / f"{name}.toml").write_text(text)
    mftune = [sys.executable, "-m", "mftune"]
    subprocess.run([*mftune, "tune", f"{name}.toml", "--quiet", "--", "sh", str(SCRIPT)],
                   cwd=folder, check=True, capture_output=True)
    out = subprocess.run([*mftune, "status", f"{name}.db", "--json"], cwd=folder, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for adaptive in (True, False):
            rows = [run(Path(tmp), seed, adaptive) for seed in range(args.seeds)]
            losses = [true_loss(r["best"]["config"]) for r in rows]
            print(f"{'waves' if adaptive else 'fixed list'}: "
                  f"finished {sum(r['status'] == 'finished' for r in rows)}/{len(rows)}, "
                  f"candidates {min(r['study']['n_candidates'] for r in rows)}-"
                  f"{max(r['study']['n_candidates'] for r in rows)}, "
                  f"median pulls {statistics.median(r['pulls'] for r in rows):g}, "
                  f"median cost {statistics.median(r['cost'] for r in rows):.1f} s, "
                  f"true loss median {statistics.median(losses):.4f} "
                  f"[{min(losses):.4f}-{max(losses):.4f}]")


if __name__ == "__main__":
    main()
