"""``mftune demo``: tune an SVM on scikit-learn's bundled digits data, with a contrast."""

from __future__ import annotations

import time

import click

from ._groups import main


@main.command()
@click.option("--seed", default=0, show_default=True, type=int,
              help="Seed of the candidates, folds and subsets.")
@click.option("--n-candidates", default=24, show_default=True, type=click.IntRange(min=2))
@click.option("--budget", default=15.0, show_default=True, type=click.FloatRange(min=1.0),
              help="Cap on the seconds of fitting of each search.")
@click.option("--contrast/--no-contrast", default=True, show_default=True,
              help="Also run top-fidelity-only elimination and successive halving.")
def demo(seed, n_candidates, budget, contrast):
    """Tune an RBF SVM (C, gamma) on the 8x8 digits with MFTuner, in well under a minute.

    Uses scikit-learn's bundled load_digits (1,797 images, no download): a
    75/25 train/test split, 3-fold CV, training-subset fidelities, IISE-γ
    with bias bounds estimated by a calibration, delta=0.05 and epsilon=0.02
    (accept any configuration within two accuracy points of the best). Prints
    the progress, the result and the cost per fidelity; with --contrast, the
    same candidates searched by successive elimination at the top fidelity
    only (same delta, epsilon and budget) and by successive halving.
    """
    from sklearn.datasets import load_digits
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingGridSearchCV, StratifiedKFold, train_test_split
    from sklearn.svm import SVC

    from ..search.tuner import MFTuner
    from ..space import Real

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, stratify=y,
                                              random_state=seed)
    space = {"C": Real(1e-2, 1e3, log=True), "gamma": Real(1e-4, 1e2, log=True)}
    cv = StratifiedKFold(3, shuffle=True, random_state=seed)
    click.echo(f"mftune demo: RBF SVM on digits ({len(y_tr)} training, {len(y_te)} test images), "
               f"{n_candidates} candidates from C in [1e-2, 1e3], gamma in [1e-4, 1e2] (log)")
    common = dict(n_candidates=n_candidates, cv=cv, delta=0.05, epsilon=0.02, budget=budget,
                  random_state=seed)
    start = time.perf_counter()
    tuner = MFTuner(SVC(), space, verbose=1, **common).fit(X_tr, y_tr)
    wall = time.perf_counter() - start
    res = tuner.cv_results_
    click.echo("")
    n_cal = list(tuner.pulls_["phase"]).count("calibration")
    click.echo(f"MFTuner ({tuner.algorithm_}): stopped by {tuner.stopping_reason_} after "
               f"{tuner.n_pulls_} pulls (+{n_cal} of the calibration), {wall:.1f} s wall, "
               f"{tuner.total_cost_:.1f} s of fitting")
    click.echo(f"  {tuner.guarantee_}")
    click.echo(f"  best params  {tuner.best_params_}")
    rows = res["level_reached"][tuner.best_index_]
    click.echo(f"  CV score     {tuner.best_score_:.4f} (at {rows} training rows)")
    click.echo(f"  test score   {tuner.score(X_te, y_te):.4f}")
    click.echo("  fidelity  rows  pulls  cost (s)  s/pull  eliminated there")
    for m, level in enumerate(tuner.fidelities_):
        pulls = int(res[f"n_pulls_fidelity_{m}"].sum())
        cost = float(res[f"cost_fidelity_{m}"].sum())
        out = int((res["eliminated_fidelity"] == m).sum())
        click.echo(f"  {m:8d} {level:5d} {pulls:6d} {cost:9.2f} {tuner.costs_[m]:7.4f} {out:8d}")
    if not contrast:
        return
    start = time.perf_counter()
    se = MFTuner(SVC(), space, algorithm="se", fidelities=[1.0], **common).fit(X_tr, y_tr)
    wall_se = time.perf_counter() - start
    click.echo(f"Top-fidelity successive elimination, same candidates/delta/epsilon/budget: "
               f"{se.stopping_reason_} after {se.n_pulls_} pulls, {wall_se:.1f} s wall, "
               f"{se.total_cost_:.1f} s of fitting; test score {se.score(X_te, y_te):.4f}")
    grid = [{k: [v] for k, v in c.items()} for c in tuner.candidates_]
    start = time.perf_counter()
    halving = HalvingGridSearchCV(SVC(), grid, factor=3, cv=cv, random_state=seed,
                                  min_resources=int(tuner.fidelities_[0])).fit(X_tr, y_tr)
    wall_h = time.perf_counter() - start
    click.echo(f"HalvingGridSearchCV on the same candidates (no confidence statement): "
               f"{wall_h:.1f} s wall; test score {halving.score(X_te, y_te):.4f}, "
               f"best params {halving.best_params_}")
