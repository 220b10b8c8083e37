"""Kernel density bandwidth, training-subset fidelities (docs/algorithms.md, [RECON] data).

A 1-D mixture 0.5 N(-1, 0.3²) + 0.5 N(1.5, 0.6²) of 3,000 points; the score is
KernelDensity's held-out log-likelihood (summed over the fold's points: each
fidelity scores a whole validation fold, so the sums compare). Fidelity 1 trains on 300
points, fidelity 2 on a whole fold. Run: ``python examples/kde_bandwidth.py``.
"""

import numpy as np
from sklearn.neighbors import KernelDensity

from mftune import MFTuner, Real

rng = np.random.default_rng(0)
n = 3000
X = np.where(rng.random(n) < 0.5, rng.normal(-1.0, 0.3, n), rng.normal(1.5, 0.6, n))[:, None]
tuner = MFTuner(KernelDensity(), {"bandwidth": Real(1e-2, 1.0, log=True)},
                fidelity="n_samples", fidelities=[300], n_candidates=16, cv=5,
                budget=30, random_state=0, verbose=1)
tuner.fit(X)
print("best bandwidth", round(tuner.best_params_["bandwidth"], 4),
      f"held-out log-likelihood per fold {tuner.best_score_:.2f}", tuner.stopping_reason_)
