"""What any study file holds, read the same way for script studies and tuner studies.

Both writers (``mftune tune`` through :mod:`mftune.scripts.study`, and
``MFTuner(storage=...)`` through :mod:`mftune.search.storage`) fill the study
record in one shared format, so the readers (``mftune status``, ``report``,
``export``) need no knowledge of who wrote it:

* ``fidelities`` — ``{"name": ..., "values": [...], ...}``;
* ``objective`` — ``{"name": ..., "direction": "maximize" | "minimize", ...}``;
* ``space`` — ``{parameter: description}`` (a list of them for a conditional
  space); the arms hold the configurations;
* ``settings`` — the policy settings once they are known: ``costs`` (list),
  ``sigma``, the bias bound the algorithm needs (``xi`` or ``gamma``),
  ``delta``, ``epsilon``, ``estimated`` (the keys a calibration estimated),
  optionally ``given_in`` (where the others came from);
* ``spec`` — ``calibrate`` (the study starts with a calibration, batch 0),
  ``first_batch`` (index of the first policy batch), ``calibration_pulls``,
  ``error_reward`` (reward told for a failed pull without one; ``None`` for
  the worst seen) and ``command`` (script studies);
* ``state`` — ``last_reason`` (why the last runner stopped) and ``error``;
* the ``updates`` table — the changes a runner made to the policy's bounds
  after a batch (:meth:`mftune.study.store.StudyStore.set_update`).

The policy is rebuilt with :func:`mftune.policies.registry.policy_from_settings` from
``algorithm``, the number of arms, ``settings`` and ``seed``, then the stored
updates are applied in batch order while the stored pulls are replayed.
"""

from __future__ import annotations

import numpy as np

from ..policies.base import Policy
from ..policies.registry import POLICIES, policy_from_settings
from .store import StudyStore

__all__ = ["StudyRecord", "apply_update", "shown_gap", "statement"]


def shown_gap(reason: str, policy, epsilon: float | None, repeats: bool) -> float:
    """How far below the best candidate a search ended for ``reason`` has shown its
    recommendation to be, with probability ``>= 1 − δ``.

    Parameters
    ----------
    reason : str
        As for :func:`statement`.
    policy : Policy
        The search's policy at the end.
    epsilon : float or None
        The search's ε.
    repeats : bool
        Whether some evaluation repeated an earlier one's data split.

    Returns
    -------
    float
        The certificate's ε (0: the best candidate, or a tie); for a search that
        stopped early, ``policy.gap_bound()``; ``nan`` when nothing is shown
        (repeated splits, or a policy without such a bound).
    """
    if reason in ("stopping-rule", "tie"):
        return 0.0 if reason == "tie" else float(epsilon or 0.0)
    if repeats or reason == "repeated-splits":  # not the independent evaluations assumed
        return float("nan")
    return float(getattr(policy, "gap_bound", lambda: np.nan)())


def statement(reason: str, *, delta: float, epsilon: float | None, sigma, bias_mode: str,
              tie: list | None = None, waves: dict | None = None,
              top_test: str | None = None, proposed: bool = False, failed: int = 0,
              gap: float | None = None) -> str:
    """The one guarantee statement of a search (or study) that ended for ``reason``.

    Parameters
    ----------
    reason : str
        ``"stopping-rule"``, ``"tie"``, ``"repeated-splits"`` (the rule's end, but
        with evaluations that repeat a data split: no certificate), or why it stopped
        early (``"budget"``...).
    delta, epsilon : float
        The confidence and the accepted gap (``None`` or 0: the best).
    sigma : array-like
        σ per fidelity in force at the end.
    bias_mode : str
        ``"known"``, ``"estimate"`` or ``"adaptive"`` (how the bias bounds were set).
    tie : list of int, optional
        The candidates that tie exactly (``reason == "tie"``).
    waves : dict, optional
        A search with waves of candidates (:meth:`mftune.engine.waves.Waves.coverage`):
        ``n_candidates`` evaluated, ``n_waves``, and ``finished``, why no wave
        followed (``"surrogate"``, ``"stalled"``, ``"budget"``, ``"max-waves"``,
        ``"exhausted"``). The
        certificate then covers every candidate evaluated [RECON].
    top_test : str, optional
        The top phase's test (``top_glr``); ``"paired-t"`` adds its assumption.
    proposed : bool, default=False
        A Gaussian-process policy, which proposes its configurations and has
        no stopping rule.
    failed : int, default=0
        Failed pulls among those the search was told: each was told a stand-in
        score, a numeric ``error_score`` or else the lowest score seen
        (:func:`~mftune.study.outcomes.stand_in_rewards`), so the certificate
        is about the means with those stand-ins.
    gap : float, optional
        For a search that stopped early: the policy's bound on how far the
        recommendation lies below the best candidate, on the event behind its
        eliminations (:meth:`~mftune.policies.elimination.PhasedElimination.gap_bound`),
        stated with its probability; ``None`` or ``nan``: no statement.
    """
    assumed = _assumptions(sigma, bias_mode, top_test, failed)
    if reason == "stopping-rule" and waves is not None:
        return _waves_statement(delta, epsilon, assumed, waves)
    if reason == "stopping-rule":
        eps = ("the best candidate" if not epsilon
               else f"within epsilon={epsilon:.4g} of the best candidate's score")
        return f"with probability >= {1 - delta:g} the recommended candidate is {eps} ({assumed})"
    if reason == "tie":
        return (f"tie: candidates {tie} score exactly the same at the top fidelity and the "
                "objective is deterministic, so no more pulls can separate them; every other "
                f"candidate was eliminated with probability >= {1 - delta:g}; the first of "
                "them is recommended")
    if reason == "repeated-splits":
        return ("no confidence statement: the stopping rule ended the search, but some "
                "candidates were evaluated more times than the cross-validation splitter "
                "has splits, and it gives the same splits on every repeat (no random_state "
                "to reshuffle), so those evaluations repeat earlier ones instead of being the "
                "independent evaluations the rule assumes; the recommendation is the best "
                "surviving candidate at the highest fidelity reached")
    if proposed:
        return (f"no confidence statement: a Gaussian-process policy has no stopping rule "
                f"(stopped: {reason}); the recommendation is the best configuration evaluated "
                "at the highest fidelity reached")
    if gap is not None and np.isfinite(gap):
        return _shown_statement(reason, delta, epsilon, assumed, waves, gap)
    tail = "" if waves is None else f" ({_evaluated(waves)})"
    return (f"no confidence statement: the search stopped early ({reason}); the "
            "recommendation is the best surviving candidate at the highest fidelity reached"
            + tail)


def _assumptions(sigma, bias_mode: str, top_test: str | None, failed: int = 0) -> str:
    """What a certificate assumes: the noise, the bias bounds, the top phase's test and
    the failed pulls' stand-in scores."""
    text = (f"sub-Gaussian pulls with sigma per fidelity "
            f"{np.round(np.asarray(sigma, float), 4).tolist()}, bias bounds {bias_mode}")
    if top_test == "paired-t":
        text += ("; at the top fidelity paired t-tests, which assume the candidates' "
                 "split-by-split differences Gaussian and independent across splits")
    if failed:
        text += (f"; {failed} failed pull(s) scored as error_score or else the lowest "
                 "score seen, so a candidate's failures count against it")
    return text


def _evaluated(waves: dict) -> str:
    """What a search with waves covers: ``"N candidates evaluated in W wave(s)"``."""
    return f"{waves['n_candidates']} candidates evaluated in {waves['n_waves']} wave(s)"


def _shown_statement(reason: str, delta, epsilon, assumed: str, waves: dict | None,
                     gap: float) -> str:
    """What a search that stopped early has shown: the recommendation within ``gap``."""
    want = f" at epsilon={epsilon:.4g}" if epsilon else ""
    of, split = "the best candidate", ""
    if waves is not None:
        of = f"the best of the {_evaluated(waves)}"
        split = "delta split over the waves; "
    return (f"no certificate{want}: the search stopped early ({reason}); it has shown that "
            f"with probability >= {1 - delta:g} the recommended candidate is within "
            f"{gap:.4g} of {of} ({split}{assumed})")


def _waves_statement(delta, epsilon, assumed: str, waves: dict) -> str:
    """The certificate of a search with waves: the best of every candidate evaluated."""
    eps = f"within epsilon={epsilon:.4g} of " if epsilon else ""
    text = (f"with probability >= {1 - delta:g} the recommended candidate is {eps}the best "
            f"of the {_evaluated(waves)} (delta split over the waves; {assumed}); ")
    gap = f"{epsilon:.4g}" if epsilon else "0"
    finished = waves.get("finished")
    if finished == "surrogate":
        return text + (f"no new candidate predicted to beat it by more than {gap} (the "
                       "surrogate's upper quantile over its acquisition pool: a model's "
                       "judgement, not part of the probability)")
    if finished == "exhausted":
        return text + "no new configuration of the space was left to propose"
    if finished == "stalled":
        return text + (f"the surrogate's proposals of the last waves did not beat it by more "
                       f"than {gap}, so it stopped proposing (configurations not evaluated "
                       "are not covered)")
    if finished == "budget":
        return text + ("it stopped proposing when another wave would not have fitted in the "
                       "budget, so configurations not evaluated are not covered")
    return text + (f"the search stopped proposing after {waves['n_waves']} wave(s) "
                   "(max_waves), so configurations not evaluated are not covered")


def apply_update(policy: Policy, data: dict) -> None:
    """Apply a stored update: ``policy.update_bounds`` and the batch sizing costs.

    ``pull_costs`` (measured seconds per fidelity, which size the batches of
    best-first rounds) is set on the policy; the other keys are the
    arguments of ``update_bounds`` (lists become arrays).
    """
    data = {k: np.asarray(v, dtype=float) for k, v in data.items() if v is not None}
    if "pull_costs" in data:
        policy.pull_costs_ = data.pop("pull_costs")
    if data:
        policy.update_bounds(**data)


class StudyRecord:
    """Read-side view of any study file: metadata, arms, settings and a fresh policy.

    Parameters
    ----------
    store : StudyStore
    """

    def __init__(self, store: StudyStore):
        self.store = store
        self.meta = meta = store.meta
        extra = meta["spec"]
        self.configs = store.configs()
        self.algorithm = meta["algorithm"]
        self.seed = meta["seed"]
        self.direction = meta["direction"]
        self.sign = 1.0 if self.direction == "maximize" else -1.0
        self.objective = meta["objective"].get("name", "score")
        self.fidelity = meta["fidelities"].get("name", "fidelity")
        self.values = list(meta["fidelities"]["values"])
        self.calibrate = bool(extra.get("calibrate", False))
        self.first_batch = int(extra.get("first_batch", int(self.calibrate)))
        self.calibration_pulls = extra.get("calibration_pulls")
        self.error_reward = extra.get("error_reward")
        self.command = extra.get("command")
        self.needs = POLICIES[self.algorithm].needs

    @property
    def n_fidelities(self) -> int:
        return len(self.values)

    @property
    def parameter_names(self) -> list[str]:
        """Parameter names in the order of the space (then any other key of the arms)."""
        space = self.meta["space"]
        subs = space if isinstance(space, list) else [space]
        seen: dict[str, None] = {}
        for sub in subs:
            if isinstance(sub, dict):
                seen.update(dict.fromkeys(sub))
        for cfg in self.configs:
            seen.update(dict.fromkeys(cfg))
        return list(seen)

    def settings(self, cal_rows=None) -> dict | None:
        """The stored policy settings, or ``None`` while they are not known yet.

        ``cal_rows`` is unused here; :class:`mftune.scripts.study.Study` (script
        studies) derives the settings from its calibration rows instead.
        """
        s = self.meta["settings"]
        ready = (s.get("sigma") is not None and isinstance(s.get("costs"), list)
                 and s.get("delta") is not None
                 and all(s.get(n) is not None for n in self.needs))
        return s if ready else None

    @property
    def updates(self) -> dict[int, dict]:
        """Stored policy updates by batch."""
        return self.store.updates()

    def new_policy(self, settings: dict, updates: dict | None = None) -> Policy:
        """A fresh policy with the study's seed and settings (and its initial update)."""
        policy = policy_from_settings(self.algorithm, len(self.configs), settings, self.seed)
        updates = self.updates if updates is None else updates
        for b in sorted(updates):
            if b < self.first_batch:
                apply_update(policy, updates[b])
        return policy
