"""The ``algorithm=`` registry of :class:`mftune.MFTuner`, and the ``"auto"`` rule.

Each entry maps a name to a factory building a policy from a
:class:`PolicyContext` (the tuner's candidates, fidelities, measured costs,
σ, bias bounds, δ, ε and seed). Adding a policy is one :func:`register` call::

    register("lucb-a", lambda ctx: LUCBExplore(ctx.n_arms, ctx.costs, ctx.xi, ...),
             bias="xi", description="LUCB-EXPLORE-A (Wang et al. 2023)")

LUCB (``lucb-a``, ``lucb-b``, ``lucb-c``) runs through
:class:`~mftune.policies.adapters.ScoreLUCB` (scores rescaled by the measured σ),
and the Gaussian-process policies (``mf-gp-ucb``, ``gp-ucb``) through
:class:`~mftune.policies.adapters.PointArms`, which turns every proposed point of
the unit cube into a new candidate; the GP policies have no stopping rule, so
they need ``budget`` or ``max_pulls``.

The ``"auto"`` rule (:func:`choose_algorithm`)
----------------------------------------------
1. One fidelity: ``"se"`` (nothing to trade).
2. Several fidelities and bounds estimated from a calibration (the default):
   ``"iise-gamma"``. Lower fidelities of a tuning problem shift every
   candidate's score in the same direction (less data or fewer iterations
   hurt all of them), so the spread of the biases γ is much smaller than
   twice the largest bias ξ, and IISE-γ's elimination margin ``γ_m`` is
   narrower than IISE's ``2ξ_m``. Measured on the calibrations of
   ``mftune demo`` and ``mftune bench tuner-vs-halving``: see docs/tuner.md.
3. Several fidelities and user-given ξ: ``"iise"`` (its bounds are the ones given).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from .adapters import PointArms, ScoreLUCB
from .direct_search import DirectSearch
from .ei import ExpectedImprovement
from .gp_ucb import GPUCB
from .iise import IISE, IISEGamma, SuccessiveElimination
from .mf_gp_ucb import MFGPUCB
from .mf_grad import GRAD, MFGRAD
from .mf_naive import MFNaive
from .random_search import RandomSearch

__all__ = [
    "FUTILITY_ALGORITHMS", "PLANNED", "POINT_ALGORITHMS", "POINT_POLICIES", "POLICIES",
    "REGISTRY", "PolicyContext",
    "PolicyEntry", "check_params", "choose_algorithm", "context_from_settings", "make_policy",
    "policy_from_settings", "register",
]


@dataclass
class PolicyContext:
    """What a policy factory may use.

    Attributes
    ----------
    n_arms : int
    costs : ndarray of shape (M,)
        Running estimates of the seconds per pull at each fidelity.
    xi, gamma : ndarray of shape (M,) or None
        Bias bounds (None when the mode provides none).
    variance_proxy : float
        σ² of the rewards.
    delta : float
    epsilon : float or None
    random_state : int or None
    points : ndarray of shape (n_arms, d) or None
        Unit-cube encodings of the candidates (for the GP policies).
    space : Space
    mu_tilde : tuple of float or None
        ``(µ̃1, µ̃2)`` for EXPLORE-A/B, from the calibration.
    evaluator : CVEvaluator or None
        The tuner's evaluator (the GP adapters append candidates to it).
    sigmas : ndarray of shape (M,) or None
        Per-fidelity σ of one pull's score.
    batch_size : int
        Parallel workers the batch is run on (the tuner's effective
        ``n_jobs``); factories of policies with a batch rule pass it on as
        their ``batch_size`` (round-based policies ignore it).
    futility_switch : bool
        IISE / IISE-γ leave a fidelity once no surviving candidate can be
        eliminated there (:mod:`mftune.policies.elimination`). The tuner sets
        it (its bounds are estimated, hence wide); studies of the command
        line keep the papers' switch rule.
    cost_balance : float or None
        IISE / IISE-γ also leave a fidelity once it has cost this many rounds
        of the next one (:mod:`mftune.policies.elimination`); the tuner sets
        :data:`TUNER_COST_BALANCE`, the command line ``None`` (the papers' rule).
    best_first : bool
        IISE / IISE-γ hand a round out ``batch_size`` pulls at a time, best
        candidates first, and recommend from the round in progress
        (:mod:`mftune.policies.elimination`); the tuner sets it, the command
        line does not (the papers' rounds).
    chunk_cost : float or None
        With ``best_first``, the seconds of pulls each worker gets per batch
        (:data:`TUNER_CHUNK_SECONDS` in the tuner).
    confidence : str
        The radius of the phased eliminations (``"iise"``: the paper's;
        ``"mixture"``: anytime-valid, :data:`TUNER_CONFIDENCE` in the tuner).
    curve_check : ndarray of shape (M,) or None
        The late-bloomer guard of IISE / IISE-γ (steps left to the top per
        fidelity; :mod:`mftune.policies.elimination`); the tuner sets it.
    top_share : float or None
        Share of δ the top fidelity's phase gets (:data:`TUNER_TOP_SHARE`
        in the tuner; ``None``: the paper's ``δ/(K M)`` everywhere).
    top_glr : str or None
        The threshold of the GLR test that may also end the top phase of the
        phased eliminations (:data:`~mftune.policies.top_glr.TOP_GLR`;
        ``None``: no test, the tuner's default and the papers').
    params : dict
        The tuner's ``algorithm_params``: options of the policy the tuner does
        not set itself (checked against :attr:`Entry.options`).
    """

    n_arms: int
    costs: np.ndarray
    xi: np.ndarray | None
    gamma: np.ndarray | None
    variance_proxy: float
    delta: float
    epsilon: float | None
    random_state: int | None
    points: np.ndarray | None = None
    space: object = None
    mu_tilde: tuple | None = None
    evaluator: object = None
    sigmas: np.ndarray | None = None
    batch_size: int = 1
    futility_switch: bool = False
    cost_balance: float | None = None
    best_first: bool = False
    chunk_cost: float | None = None
    confidence: str = "iise"
    top_share: float | None = None
    curve_check: np.ndarray | None = None
    top_glr: str | None = None
    params: dict = field(default_factory=dict)


@dataclass
class Entry:
    """A registered algorithm: its factory, the bias bound it uses, a description.

    ``batched``: the policy has a batch rule and its factory passes
    ``ctx.batch_size`` on, so the batch size decides the pulls (a stored
    study records it). ``options``: the policy's keyword arguments a user may
    set through the tuner's ``algorithm_params`` (the factory passes
    ``ctx.params`` on).
    """

    factory: Callable[[PolicyContext], object]
    bias: str | None  # "xi", "gamma" or None
    description: str
    batched: bool = False
    options: tuple[str, ...] = ()


REGISTRY: dict[str, Entry] = {}
#: The unit-cube policies by the names ``maximize(method=...)`` and the GP
#: benchmarks use; ``mf-gp-ucb`` and ``gp-ucb`` are in :data:`REGISTRY` too, for
#: searches over candidates (through :class:`~mftune.policies.adapters.PointArms`).
POINT_POLICIES: dict[str, type] = {
    "mf-gp-ucb": MFGPUCB,
    "gp-ucb": GPUCB,
    "ei": ExpectedImprovement,
    "direct": DirectSearch,
    "mf-naive": MFNaive,
    "random": RandomSearch,
}
# Names accepted by the issue that wait for their policy to land (none left).
PLANNED: tuple[str, ...] = ()
#: Algorithms that propose new configurations (points of the unit cube) instead of
#: choosing among sampled candidates; they have no stopping rule.
POINT_ALGORITHMS = ("mf-gp-ucb", "gp-ucb")


def register(name: str, factory, *, bias: str | None, description: str,
             batched: bool = False, options: tuple[str, ...] = ()) -> None:
    """Add (or replace) an algorithm of the registry."""
    if bias not in (None, "xi", "gamma"):
        raise ValueError(f"bias must be None, 'xi' or 'gamma'; got {bias!r}")
    REGISTRY[name] = Entry(factory, bias, description, bool(batched), tuple(options))


def check_params(name: str, params) -> dict:
    """Validate ``algorithm_params`` for the algorithm ``name``; return them as a dict."""
    allowed = check_algorithm(name).options
    if params is None:
        return {}
    if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
        raise ValueError(f"algorithm_params must be a dict of keyword arguments or None; "
                         f"got {params!r}")
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(f"algorithm_params: {unknown} not accepted by algorithm={name!r}; "
                         f"allowed: {list(allowed) or 'none'}")
    return dict(params)


register("se", lambda c: SuccessiveElimination(
    c.n_arms, c.costs, delta=c.delta, variance_proxy=c.variance_proxy, epsilon=c.epsilon,
    random_state=c.random_state, **{"top_glr": c.top_glr, **c.params}), bias=None,
    options=("confidence", "top_glr"),
    description="successive elimination at the top fidelity only (Poiani et al. 2022)")
def _iise(cls, bound: str):
    """Factory of IISE / IISE-γ (``bound``: the context's ``"xi"`` or ``"gamma"``)."""
    def factory(c: PolicyContext):
        # algorithm_params may override the tuner's switches
        return cls(c.n_arms, c.costs, getattr(c, bound), delta=c.delta,
                   variance_proxy=c.variance_proxy, epsilon=c.epsilon,
                   random_state=c.random_state,
                   batch_size=c.batch_size,
                   **{"futility_switch": c.futility_switch, "cost_balance": c.cost_balance,
                      "best_first": c.best_first, "chunk_cost": c.chunk_cost,
                      "confidence": c.confidence, "top_share": c.top_share,
                      "curve_check": c.curve_check, "top_glr": c.top_glr, **c.params})
    return factory


_SWITCHES = ("futility_switch", "cost_balance", "best_first", "chunk_cost", "confidence",
             "top_share", "curve_check", "top_glr")
register("iise", _iise(IISE, "xi"), bias="xi", options=_SWITCHES,
         description="IISE with bias bounds ξ (Poiani et al. 2022, Alg. 1)")
register("iise-gamma", _iise(IISEGamma, "gamma"), bias="gamma", options=_SWITCHES,
         description="IISE-γ with bounds γ on the bias variation (Poiani et al. 2022, Sec. 5)")

#: Algorithms that take the futility switch and the cost balance in the tuner.
FUTILITY_ALGORITHMS = ("iise", "iise-gamma")
#: The tuner's ``cost_balance`` of IISE / IISE-γ (``None``: Eq. 8 and the futility
#: switch alone); docs/tuner.md has the measurements behind it.
TUNER_COST_BALANCE: float | None = 1.0
#: The cost balance of the exploring waves of a search with waves: a cheaper fidelity
#: screens a wave's candidates in one round (unless the next fidelity costs over 20
#: times more), so the survivors reach the top fidelity, where the answer is made,
#: soon (docs/algorithms.md, "Cost balance"; ``mftune bench head-to-head``).
TUNER_WAVE_COST_BALANCE: float = 0.05
#: Seconds of pulls each worker gets per batch of the tuner's best-first rounds: the
#: answer follows an expensive round pull by pull, while cheap rounds still go out
#: in batches large enough to keep joblib's workers busy (docs/parallel.md).
TUNER_CHUNK_SECONDS: float = 1.0
#: The tuner's confidence radius and the share of δ of its top-fidelity phase: the
#: anytime-valid mixture radius needs about half the samples of the union bound, and
#: the top fidelity, where the contenders are separated, gets half of δ
#: (docs/algorithms.md, "Stopping that pays for itself"; ``mftune bench curves``).
TUNER_CONFIDENCE = "mixture"
TUNER_TOP_SHARE: float | None = 0.5
#: The tuner's test in the top phase: paired t-tests on the candidates' split-by-split
#: differences, which need no σ and see through the noise every candidate shares on a
#: split (docs/algorithms.md, "GLR stopping in the top phase"; docs/benchmarks.md).
TUNER_TOP_GLR: str | None = "paired-t"


def tuner_switches(name: str, waves: bool = False) -> dict:
    """The phase switches the tuner gives algorithm ``name`` (empty: the papers' rule).

    The keys are :class:`PolicyContext` fields; a tuner study's signature
    records them too (a study written with other switches does not resume).

    Parameters
    ----------
    name : str
        A registry name.
    waves : bool, default=False
        The search runs ``name`` in waves of candidates
        (:mod:`mftune.engine.waves`): its cost balance is
        :data:`TUNER_WAVE_COST_BALANCE`, else :data:`TUNER_COST_BALANCE`.

    Returns
    -------
    dict
    """
    if name not in FUTILITY_ALGORITHMS:
        return {}
    switches = {"futility_switch": True, "best_first": True,
                "chunk_cost": TUNER_CHUNK_SECONDS, "confidence": TUNER_CONFIDENCE,
                "top_share": TUNER_TOP_SHARE, "top_glr": TUNER_TOP_GLR}
    balance = TUNER_WAVE_COST_BALANCE if waves else TUNER_COST_BALANCE
    if balance is not None:
        switches["cost_balance"] = balance
    return switches


def _lucb(procedure: str):
    def factory(c: PolicyContext):
        return ScoreLUCB(c.n_arms, c.costs, c.xi, float(np.sqrt(c.variance_proxy)),
                         delta=c.delta, procedure=procedure, epsilon=c.epsilon or 0.0,
                         mu_tilde=c.mu_tilde if procedure in ("A", "B") else None,
                         random_state=c.random_state, batch_size=c.batch_size, **c.params)
    return factory


for _p in ("A", "B", "C"):
    register(f"lucb-{_p.lower()}", _lucb(_p), bias="xi", batched=True,
             options=("initial_sweep",),
             description=f"LUCB with EXPLORE-{_p} (Wang et al. 2023), scores rescaled by sigma")


def _grad(cls):
    def factory(c: PolicyContext):
        return cls(c.n_arms, c.costs, c.xi, delta=c.delta, variance_proxy=c.variance_proxy,
                   random_state=c.random_state, batch_size=c.batch_size, **c.params)
    return factory


_GRAD_OPTIONS = ("learning_rate", "threshold", "statistic", "gradient")
register("mf-grad", _grad(MFGRAD), bias="xi", batched=True, options=_GRAD_OPTIONS,
         description="MF-GRAD: gradient ascent towards the cost lower bound, GLR stopping "
                     "(Poiani et al. 2024)")
register("grad", _grad(GRAD), bias="xi", batched=True, options=_GRAD_OPTIONS,
         description="GRAD (Menard 2019) at the top fidelity, GLR stopping, as run by "
                     "Poiani et al. 2024")

def _gp(multi: bool):
    def factory(c: PolicyContext):
        ev = c.evaluator
        d = c.space.n_dims
        noise = float(np.max(c.sigmas) ** 2 / ev.n_splits) if c.sigmas is not None else None
        # one query is n_splits pulls: enough queries per batch to fill batch_size workers
        queries = -(-int(c.batch_size) // ev.n_splits)
        if multi:
            if len(c.costs) < 2:
                raise ValueError("algorithm='mf-gp-ucb' needs at least 2 fidelities; "
                                 "use 'gp-ucb' for one")
            inner = MFGPUCB(d, c.costs, noise_variance=noise, batch_size=queries,
                            random_state=c.random_state, **c.params)
        else:
            inner = GPUCB(d, c.costs, noise_variance=noise, batch_size=queries,
                          random_state=c.random_state, **c.params)
        return PointArms(inner, c.space, ev.candidates, ev.n_splits, ev.add_candidates)
    return factory


_GP_OPTIONS = ("kernel", "ard", "beta", "refit_every", "acq_method", "n_starts", "init_method",
               "prior_mean", "noise_ratio")
register("mf-gp-ucb", _gp(True), bias=None, batched=True,
         options=(*_GP_OPTIONS, "adapt_gamma", "gamma_factor", "gamma_rule"),
         description="MF-GP-UCB (Kandasamy et al. 2016) over the unit-cube encoding")
register("gp-ucb", _gp(False), bias=None, batched=True,
         options=(*_GP_OPTIONS, "n_init"),
         description="GP-UCB at the top fidelity (Srinivas et al. 2010) over the unit cube")


def available() -> list[str]:
    """Names accepted by ``algorithm=`` right now."""
    return ["auto", *REGISTRY]


def check_algorithm(name: str) -> Entry:
    """Return the entry of ``name`` or raise a ValueError listing the available ones."""
    if name in REGISTRY:
        return REGISTRY[name]
    if name in PLANNED:
        raise ValueError(
            f"algorithm={name!r} is not available in this build (its policy has not landed "
            f"yet); available algorithms: {available()}"
        )
    raise ValueError(f"algorithm must be one of {available()} or a policy object; got {name!r}")


def choose_algorithm(n_fidelities: int, bias_mode: str) -> tuple[str, str]:
    """The ``"auto"`` rule: return ``(name, reason)`` (see module docstring)."""
    if n_fidelities == 1:
        return "se", "a single fidelity: successive elimination at that fidelity"
    if bias_mode == "known":
        return "iise", f"{n_fidelities} fidelities with user-given bias bounds xi: IISE"
    if "iise-gamma" in REGISTRY:
        return "iise-gamma", (
            f"{n_fidelities} fidelities with {bias_mode} bounds: IISE-gamma, whose elimination "
            "margin is the measured spread of the biases (gamma), narrower than IISE's 2*xi "
            "when lower fidelities shift all candidates alike")
    return "iise", f"{n_fidelities} fidelities: IISE"


def make_policy(name: str, ctx: PolicyContext):
    """Build the policy ``name`` from ``ctx``."""
    return check_algorithm(name).factory(ctx)


@dataclass(frozen=True)
class PolicyEntry:
    """What a study needs to know of an algorithm.

    Attributes
    ----------
    needs : tuple of str
        Bias bounds the policy needs (``"xi"`` or ``"gamma"``), estimated by
        the calibration when the space file does not give them.
    description : str
    """

    needs: tuple[str, ...]
    description: str


class _Entries(Mapping):
    """Read-only view of :data:`REGISTRY` as :class:`PolicyEntry`."""

    def __getitem__(self, name: str) -> PolicyEntry:
        entry = REGISTRY[name]
        return PolicyEntry(() if entry.bias is None else (entry.bias,), entry.description)

    def __iter__(self):
        return iter(REGISTRY)

    def __len__(self) -> int:
        return len(REGISTRY)


POLICIES: Mapping[str, PolicyEntry] = _Entries()


def policy_from_settings(name: str, n_arms: int, settings: dict, random_state=None):
    """Build the policy ``name`` for ``n_arms`` arms from JSON settings
    (:func:`context_from_settings`, then :func:`make_policy`)."""
    return make_policy(name, context_from_settings(name, n_arms, settings, random_state))


def context_from_settings(name: str, n_arms: int, settings: dict,
                          random_state=None) -> PolicyContext:
    """The context of policy ``name`` for ``n_arms`` arms from JSON settings.

    Parameters
    ----------
    name : str
        A key of :data:`POLICIES`.
    n_arms : int
    settings : dict
        ``costs`` (list, strictly increasing), ``sigma`` (noise scale; the
        policies get ``σ²``), ``delta``, ``epsilon`` (or None), the bounds
        listed in the entry's ``needs`` and ``batch_size`` (default 1: the
        pulls a batch-rule policy asks at once; stored with the study so a
        resume asks the same batches) and ``futility_switch`` (default False:
        IISE / IISE-γ with the papers' switch rule; MFTuner's studies store True),
        ``cost_balance`` (default None, the papers' rule; MFTuner's studies
        store theirs), ``best_first`` (default False, the papers' rounds;
        MFTuner's studies store True) and its ``chunk_cost``, ``confidence``
        (default ``"iise"``), ``top_share`` and ``curve_check`` (default None:
        the papers' radius, δ split and elimination rule), ``top_glr``
        (default None: no GLR test in the top phase) and
        ``algorithm_params`` (MFTuner's, when given).
    random_state : int or None

    Returns
    -------
    PolicyContext
    """
    if name not in REGISTRY:
        raise ValueError(f"algorithm must be one of {', '.join(sorted(POLICIES))}; got {name!r}")

    def arr(key):
        value = settings.get(key)
        return None if value is None else np.asarray(value, dtype=float)

    return PolicyContext(
        n_arms=int(n_arms), costs=arr("costs"), xi=arr("xi"), gamma=arr("gamma"),
        variance_proxy=float(settings["sigma"]) ** 2, delta=float(settings["delta"]),
        epsilon=settings.get("epsilon"), random_state=random_state,
        batch_size=int(settings.get("batch_size", 1)),
        futility_switch=bool(settings.get("futility_switch", False)),
        cost_balance=settings.get("cost_balance"),
        best_first=bool(settings.get("best_first", False)),
        chunk_cost=settings.get("chunk_cost"),
        confidence=settings.get("confidence") or "iise",
        top_share=settings.get("top_share"), curve_check=arr("curve_check"),
        top_glr=settings.get("top_glr"),
        params=dict(settings.get("algorithm_params") or {}),
    )
