"""Simulated tuning problems shaped like real learning curves.

Each candidate's score at training share ``s`` (``s = 4^{m-M+1}`` at
fidelity ``m``: costs grow ×4 per fidelity) follows a power law
``µ_i(s) = µ_i − A_i (s^{-c_i} − 1) / (s_0^{-c_i} − 1)``, so ``A_i`` is its
bias at the cheapest fidelity and 0 at the top. The leading candidates'
top scores are ``gap`` apart (``0.002 ≤ gap ≤ 0.04``), the rest are spread
below; the biases ``A_i`` span ``bias_spread`` (0.01 to 0.3) and the noise
``σ`` is 0.005 to 0.05. Three kinds:

``"hard"``
    the curves' exponents and biases are drawn independently of the top
    scores, so the cheaper fidelities scramble the leaders;
``"ranked"``
    every candidate follows one curve shape with nearly one bias (they
    differ by a tenth of the smallest gap), so every fidelity ranks the
    candidates as the top does;
``"trap"``
    every candidate is flat (``A_i`` of 0.005 to 0.02) but the best, a late
    bloomer (``A`` of 0.25 to 0.35, still climbing at the fidelity below the
    top, where it trails: the leaders' gaps are at most 0.02), with little
    noise (0.005 to 0.015): a calibration of a few candidates likely sees
    only flat curves and underestimates the bias spread.

:func:`run_search` runs one instance through the tuner's engine
(:class:`~mftune.engine.search.Search`, with its defaults or any settings)
on a :class:`CurveEvaluator`, which draws Gaussian scores and charges the
fidelity's cost; ``mftune bench curves`` compares the default with
top-fidelity successive elimination (SE) at the same δ and ε.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

from ..engine.driver import Evaluator, parallel_map
from ..engine.search import Search
from ..policies.base import Pulls
from ..study.outcomes import Outcomes, PullRecord

__all__ = ["CURVE_KINDS", "METHODS", "CurveEvaluator", "CurveInstance", "compare",
           "curve_instance", "run_search", "summarise"]

CURVE_KINDS = ("hard", "ranked", "trap")


@dataclass
class CurveInstance:
    """A simulated tuning problem: ``means[m, i]`` of candidate ``i`` at fidelity ``m``.

    Attributes
    ----------
    means : ndarray of shape (M, K)
    sigma : float
        Noise of one evaluation (every fidelity).
    costs : ndarray of shape (M,)
        Seconds of one evaluation per fidelity (×4 per fidelity, 1 at the top).
    kind : str
    """

    means: np.ndarray
    sigma: float
    costs: np.ndarray
    kind: str

    @property
    def best(self) -> int:
        return int(np.argmax(self.means[-1]))

    def correct(self, arm: int, epsilon: float) -> bool:
        """Whether ``arm`` is within ``epsilon`` of the best at the top fidelity."""
        top = self.means[-1]
        return bool(top[arm] >= top.max() - max(epsilon, 0.0) - 1e-12)


def curve_instance(rng, kind: str = "hard", n_arms: int = 16,
                   n_fidelities: int = 5) -> CurveInstance:
    """Draw one instance of ``kind`` (see the module docstring).

    Parameters
    ----------
    rng : int or numpy Generator
    kind : {"hard", "ranked", "trap"}
    n_arms : int, default=16
    n_fidelities : int, default=5

    Returns
    -------
    CurveInstance
    """
    if kind not in CURVE_KINDS:
        raise ValueError(f"kind must be one of {CURVE_KINDS}; got {kind!r}")
    rng = np.random.default_rng(rng)
    k, m = int(n_arms), int(n_fidelities)
    n_lead = min(4, k)
    gaps = rng.uniform(0.002, 0.02 if kind == "trap" else 0.04, n_lead - 1)
    lead = 0.9 - np.r_[0.0, np.cumsum(gaps)]
    rest = lead[-1] - rng.uniform(0.02, 0.25, k - n_lead)
    top = np.r_[lead, rest]
    spread = rng.uniform(0.01, 0.3)
    share = 4.0 ** (np.arange(m) - (m - 1))  # training share of each fidelity
    if kind == "hard":
        amp = rng.uniform(0.01, spread, k)
        expo = rng.uniform(0.2, 1.5, k)
    elif kind == "ranked":  # one curve shape; the biases differ by a tenth of a gap
        amp = rng.uniform(0.01, spread) + rng.uniform(0.0, 0.1, k) * gaps.min()
        expo = np.full(k, rng.uniform(0.2, 1.5))
    else:  # flat curves, and a best that is still climbing below the top
        amp = rng.uniform(0.005, 0.02, k)
        expo = rng.uniform(1.0, 1.5, k)
        amp[0], expo[0] = rng.uniform(0.25, 0.35), 0.3
    curve = (share[:, None] ** -expo - 1.0) / (share[0] ** -expo - 1.0)
    means = top[None, :] - amp[None, :] * curve
    order = rng.permutation(k)
    noise = rng.uniform(0.005, 0.015) if kind == "trap" else rng.uniform(0.005, 0.05)
    return CurveInstance(means[:, order], float(noise),
                         4.0 ** (np.arange(m) - (m - 1)), kind)


class CurveEvaluator(Evaluator):
    """The engine's evaluator on a :class:`CurveInstance`: Gaussian scores, fixed costs.

    Parameters
    ----------
    instance : CurveInstance
    rng : int or numpy Generator
    n_splits : int, default=5
        Repeats of a pull (as CV folds): split ``j`` of a candidate at two
        fidelities shares its noise draw's sign convention only by chance,
        as independent repeats do.
    """

    metric = "score"

    def __init__(self, instance: CurveInstance, rng, n_splits: int = 5):
        super().__init__(n_jobs=None)
        self.instance = instance
        self.rng = np.random.default_rng(rng)
        self.n_splits = int(n_splits)
        self.candidates = [{"arm": i} for i in range(instance.means.shape[1])]
        self.records: list[PullRecord] = []
        self.phase = "search"

    def evaluate(self, pulls: Pulls) -> Outcomes:
        inst = self.instance
        arms, fids = pulls.arms, pulls.fidelities
        scores = inst.means[fids, arms] + inst.sigma * self.rng.standard_normal(len(pulls))
        costs = inst.costs[fids]
        self.records.extend(
            PullRecord(int(a), int(f), 0, {self.metric: float(s)}, float(c), 0.0,
                       phase=self.phase)
            for a, f, s, c in zip(arms, fids, scores, costs, strict=True))
        return Outcomes(scores, costs)

    def acknowledge(self) -> None:
        pass

    def after_batch(self, *args) -> bool:
        return False

    def release(self, pulls) -> None:
        pass


def run_search(instance: CurveInstance, seed: int, **settings) -> dict:
    """Run the tuner's engine once on ``instance``; return cost, correctness and reason.

    Parameters
    ----------
    instance : CurveInstance
    seed : int
        Seeds the engine and the noise.
    **settings
        :data:`mftune.engine.search.SETTINGS` keys (the tuner's defaults otherwise).

    Returns
    -------
    dict
        ``cost`` (seconds, calibration included), ``pulls``, ``top_pulls``,
        ``arm`` (the recommendation), ``correct`` (within the run's ε of the
        best), ``certified`` (ended by the stopping rule or a tie),
        ``reason``.
    """
    ev = CurveEvaluator(instance, seed)
    levels = [float(s) for s in 4.0 ** (np.arange(instance.means.shape[0]) + 1)]
    search = Search(ev, levels, seed=seed, stream=io.StringIO(), **settings)
    search.setup(np.random.default_rng(seed))
    reason = search.search()
    arm = int(search.policy_.recommend())
    cost = float(sum(r.cost for r in ev.records))
    top = len(levels) - 1
    eps = float(search.epsilon_ or 0.0)
    return {"cost": cost, "pulls": len(ev.records),
            "top_pulls": sum(r.fidelity == top for r in ev.records), "arm": arm,
            "correct": instance.correct(arm, eps), "certified": reason in ("stopping-rule", "tie"),
            "reason": reason, "epsilon": eps}


#: What ``mftune bench curves`` runs on every instance: the tuner's defaults (with the
#: paired t-tests in the top phase), the same search without a top-phase test
#: (``no-top-test``) or with the paired t-tests named (``default-paired-t``), with the
#: paper's radius, δ split, no late-bloomer guard and no test (``paper-rules``), with a
#: GLR test instead (``default-glr``: the proven paired-mixture threshold;
#: ``default-glr-practical``: MF-GRAD's practical threshold, unproven), and top-fidelity
#: SE with the paper's radius and with the default's anytime radius.
METHODS = {
    "default": {},
    "no-top-test": {"algorithm_params": {"top_glr": None}},
    "default-glr": {"algorithm_params": {"top_glr": "paired-mixture"}},
    "default-glr-practical": {"algorithm_params": {"top_glr": "practical"}},
    "default-paired-t": {"algorithm_params": {"top_glr": "paired-t"}},
    "paper-rules": {"algorithm_params": {"confidence": "iise", "top_share": None,
                                         "curve_check": None, "top_glr": None}},
    "se": {"algorithm": "se"},
    "se-mixture": {"algorithm": "se", "algorithm_params": {"confidence": "mixture"}},
}


def _one(kind: str, run: int, seed: int, n_arms: int, methods: tuple, settings: dict) -> dict:
    inst = curve_instance((seed, run), kind, n_arms=n_arms)
    out = {"kind": kind, "run": run, "sigma": inst.sigma}
    for name in methods:
        res = run_search(inst, seed + run, **settings, **METHODS[name])
        out[name] = res
    return out


def compare(kinds=CURVE_KINDS, runs: int = 20, *, delta: float = 0.05,
            epsilon: float | str = 0.005, n_arms: int = 16, seed: int = 0,
            methods=("default", "se", "se-mixture"), max_pulls: int = 200_000,
            n_jobs: int | None = 1) -> list[dict]:
    """Run every method of :data:`METHODS` on ``runs`` instances of each kind.

    Every method gets the same instance, δ and ε (and estimates σ, the
    bias bounds and the costs itself, as the tuner does).

    Parameters
    ----------
    kinds : sequence of str
    runs : int
    delta : float
    epsilon : float or "auto"
    n_arms : int
    seed : int
    methods : sequence of str
        Keys of :data:`METHODS`.
    max_pulls : int
        Cap per run (a capped run counts as uncertified).
    n_jobs : int or None
        joblib workers over the runs.

    Returns
    -------
    list of dict
        One per (kind, run): the instance's σ and each method's
        :func:`run_search` result.
    """
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        raise ValueError(f"methods must be among {sorted(METHODS)}; got {unknown}")
    bad = sorted(set(kinds) - set(CURVE_KINDS))
    if bad:
        raise ValueError(f"kinds must be among {list(CURVE_KINDS)}; got {bad}")
    settings = {"delta": float(delta), "epsilon": epsilon, "max_pulls": int(max_pulls)}
    args = [(k, r, int(seed), int(n_arms), tuple(methods), settings)
            for k in kinds for r in range(int(runs))]
    return parallel_map(_one, args, n_jobs)


def summarise(rows: list[dict], reference: str = "se") -> list[dict]:
    """Per kind and method: median cost ratio to ``reference``, wrong and certified runs.

    The ratio is taken run by run (same instance, same δ and ε) and its
    median reported with the share of runs at or below 1.
    """
    out = []
    for kind in dict.fromkeys(r["kind"] for r in rows):
        sub = [r for r in rows if r["kind"] == kind]
        for name in (m for m in METHODS if m in sub[0]):
            ratio = np.array([r[name]["cost"] / r[reference]["cost"] for r in sub])
            out.append({
                "kind": kind, "method": name, "runs": len(sub),
                "median_cost": float(np.median([r[name]["cost"] for r in sub])),
                "median_ratio": float(np.median(ratio)),
                "ratio_q25": float(np.quantile(ratio, 0.25)),
                "ratio_q75": float(np.quantile(ratio, 0.75)),
                "at_most_reference": int(np.sum(ratio <= 1.0)),
                "wrong": int(sum(not r[name]["correct"] for r in sub)),
                "certified": int(sum(r[name]["certified"] for r in sub)),
                "median_top_pulls": float(np.median([r[name]["top_pulls"] for r in sub])),
            })
    return out
