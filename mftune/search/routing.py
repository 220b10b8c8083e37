"""Metadata routing of ``MFTuner.fit``, as scikit-learn's searches route it.

With ``sklearn.set_config(enable_metadata_routing=True)`` the keyword
arguments of ``fit`` go where they are requested: the estimator's ``fit``,
each scorer's ``score`` (sliced to each pull's validation rows) and the
splitter's ``split`` (``groups``); metadata nothing requested raises
scikit-learn's error. Without routing every keyword goes to the estimator's
``fit`` and ``groups`` to the splitter.
"""

from __future__ import annotations

import sklearn
from sklearn.model_selection import check_cv
from sklearn.utils.metadata_routing import MetadataRouter, MethodMapping, process_routing

from .params import build_scorers

__all__ = ["metadata_router", "route_fit_params"]


def metadata_router(tuner) -> MetadataRouter:
    """Where ``tuner.fit`` sends metadata: estimator ``fit``, every scorer, splitter ``split``.

    Parameters
    ----------
    tuner : MFTuner

    Returns
    -------
    MetadataRouter
    """
    router = MetadataRouter(owner=type(tuner).__name__)
    router.add(estimator=tuner.estimator,
               method_mapping=MethodMapping().add(caller="fit", callee="fit"))
    for name, scorer in build_scorers(tuner)[0].items():
        router.add(**{f"scorer_{name}": scorer},
                   method_mapping=MethodMapping().add(caller="fit", callee="score"))
    router.add(splitter=check_cv(tuner.cv),
               method_mapping=MethodMapping().add(caller="fit", callee="split"))
    return router


def route_fit_params(tuner, groups, params: dict) -> tuple[dict, dict, object]:
    """``(fit params, {scorer name: score params}, groups)`` of a ``fit`` call.

    Parameters
    ----------
    tuner : MFTuner
    groups : array-like or None
        The ``groups`` argument of ``fit``.
    params : dict
        Its other keyword arguments.

    Returns
    -------
    tuple
    """
    if not sklearn.get_config().get("enable_metadata_routing", False):
        return params, {}, groups
    given = dict(params) if groups is None else {**params, "groups": groups}
    routed = process_routing(tuner, "fit", **given)
    score = {k.removeprefix("scorer_"): dict(v.score) for k, v in routed.items()
             if k.startswith("scorer_") and v.score}
    return dict(routed.estimator.fit), score, routed.splitter.split.get("groups")
