"""A synthetic training script for the service tests (standard library only).

Score ``1 - 4 (x - 0.7)^2 - 0.3 / steps`` plus noise seeded by ``MFTUNE_SEED``;
with ``OBJECTIVE_SLEEP`` set it sleeps that long first (a pull to kill mid-run).
"""

import json
import os
import random
import time

params = json.loads(os.environ["MFTUNE_PARAMS"])
steps = float(os.environ["MFTUNE_FIDELITY"])
time.sleep(float(os.environ.get("OBJECTIVE_SLEEP", "0")))
rng = random.Random(int(os.environ["MFTUNE_SEED"]))
score = 1.0 - 4.0 * (params["x"] - 0.7) ** 2 - 0.3 / steps + rng.gauss(0.0, 0.01)
print(f"mftune-score: {score}")
