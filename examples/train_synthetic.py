"""A stand-in training script for ``mftune tune`` (fast, noisy, multi-fidelity).

    mftune tune examples/space_python.toml -- python examples/train_synthetic.py

It takes its configuration as ``--lr=… --width=… --activation=… --epochs=…``
(appended by mftune), "trains" for ``epochs`` epochs — a synthetic validation
accuracy whose bias shrinks as epochs grow — and reports it with
:func:`mftune.report`. The noise is seeded from ``MFTUNE_SEED`` (set by mftune
per run), so a study is reproducible and a resumed study is exact. It keeps a
small checkpoint in ``MFTUNE_TRIAL_DIR`` (the configuration's own directory)
and starts from it when a later fidelity runs, as a real script would.
"""

import argparse
import json
import math
import os
import random
from pathlib import Path

from mftune import report

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, required=True)
parser.add_argument("--width", type=int, required=True)
parser.add_argument("--activation", choices=["relu", "tanh"], required=True)
parser.add_argument("--epochs", type=int, required=True)
args = parser.parse_args()

rng = random.Random(int(os.environ.get("MFTUNE_SEED", "0")))
checkpoint = Path(os.environ.get("MFTUNE_TRIAL_DIR", ".")) / "checkpoint.json"
start_epoch = json.loads(checkpoint.read_text())["epochs"] if checkpoint.exists() else 0

# The "true" accuracy after many epochs: best near lr = 1e-2, width = 64, relu.
target = (0.92 - 0.06 * (math.log10(args.lr) + 2.0) ** 2
          - 0.01 * (math.log2(args.width) - 6.0) ** 2
          + (0.01 if args.activation == "relu" else 0.0))
# Few epochs under-train: the bias shrinks like 1/epochs and is larger for small lr.
bias = 0.25 / args.epochs * (1.0 + 0.3 * abs(math.log10(args.lr) + 2.0))
accuracy = target - bias + rng.gauss(0.0, 0.01)

checkpoint.write_text(json.dumps({"epochs": max(start_epoch, args.epochs)}))
report(accuracy)
