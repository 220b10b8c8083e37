"""Decision overhead of the GP policies: seconds per ask/tell with ~200 observations.

The policy is brought to ``n_obs`` observations by its initial design (for
MF-GP-UCB ``n_init = (n_obs - n_top, n_top)``: the low-fidelity points and
the first ``n_top`` of them again at the next fidelity), then ``n_steps``
further iterations are timed. ``ask`` includes the acquisition maximisation;
``tell`` the posterior refresh (and, every ``refit_every`` iterations, the
marginal-likelihood refit, reported separately).
"""

from __future__ import annotations

import time

import numpy as np

from ..policies.gp_ucb import GPUCB
from ..policies.mf_gp_ucb import MFGPUCB
from .mf_functions import get_mf_function

__all__ = ["measure_overhead"]


def measure_overhead(function: str = "borehole", n_obs: int = 200, n_top: int = 50,
                     n_steps: int = 20, seed: int = 0) -> dict:
    """Median/quantile step times of MF-GP-UCB and GP-UCB at ``n_obs`` observations."""
    from threadpoolctl import threadpool_limits

    fn = get_mf_function(function)
    rng = np.random.default_rng(seed)
    out = {"function": function, "n_dims": fn.n_dims, "n_obs": n_obs}
    policies = {
        "mf-gp-ucb": MFGPUCB(fn.n_dims, fn.costs, n_init=(n_obs - n_top, n_top),
                             random_state=seed),
        "gp-ucb": GPUCB(fn.n_dims, fn.costs, n_init=n_obs, random_state=seed),
    }
    with threadpool_limits(limits=1, user_api="blas"):
        for name, pol in policies.items():
            pulls = pol.ask()
            pol.tell(pulls, [fn.evaluate(p, f, rng)[0] for p, f in
                             zip(pulls.points, pulls.fidelities.tolist(), strict=True)])
            asks, tells, steps = [], [], []
            for _ in range(n_steps):
                t0 = time.perf_counter()
                pulls = pol.ask()
                t1 = time.perf_counter()
                y = [fn.evaluate(p, f, rng)[0] for p, f in
                     zip(pulls.points, pulls.fidelities.tolist(), strict=True)]
                t2 = time.perf_counter()
                pol.tell(pulls, y)
                t3 = time.perf_counter()
                asks.append(t1 - t0)
                tells.append(t3 - t2)
                steps.append(t1 - t0 + t3 - t2)
            steps = np.array(steps)
            out[name] = {"median_step": float(np.median(steps)),
                         "q10_step": float(np.quantile(steps, 0.1)),
                         "q90_step": float(np.quantile(steps, 0.9)),
                         "max_step": float(steps.max()),
                         "median_ask": float(np.median(asks)),
                         "median_tell": float(np.median(tells)),
                         "n_obs_end": int(np.sum(pol.status_ == 1))}
    return out
