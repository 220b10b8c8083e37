"""Measurements behind MFTuner's ``algorithm="auto"`` rule: IISE vs IISE-γ on bundled data.

For each dataset and seed, the same candidates are searched by ``"iise"``
(bounds ξ, elimination margin 2ξ_m) and ``"iise-gamma"`` (bounds γ, margin
γ_m), both with bias bounds estimated by the same calibration (adaptive),
delta=0.05, epsilon=0.02 and a cap of 1,500 pulls. Printed: the calibration's
ratio γ̂/(2ξ̂) per fidelity, pulls and seconds of fitting until the stop, the
stopping reason and the test accuracy of the recommendation.

Run: ``PYTHONPATH=. python benchmarks/auto_rule.py`` (a few minutes on 2 cores).
"""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mftune import MFTuner, Real

DATA = {"breast_cancer": load_breast_cancer, "digits": load_digits}
SPACE = {"svc__C": Real(1e-2, 1e3, log=True), "svc__gamma": Real(1e-4, 1e1, log=True)}


def main(seeds=(0, 1)):
    print(f"{'data':14s} {'seed':>4s} {'algorithm':10s} {'gamma/2xi':>18s} {'pulls':>6s} "
          f"{'cost s':>7s} {'stop':14s} {'test acc':>8s}")
    totals: dict[str, list] = {"iise": [], "iise-gamma": []}
    for name, loader in DATA.items():
        X, y = loader(return_X_y=True)
        X, X_te, y, y_te = train_test_split(X, y, random_state=0, stratify=y)
        for seed in seeds:
            for algo in ("iise", "iise-gamma"):
                t = MFTuner(make_pipeline(StandardScaler(), SVC()), SPACE, algorithm=algo,
                            n_candidates=16, cv=5, epsilon=0.02, max_pulls=1500,
                            random_state=seed).fit(X, y)
                ratio = "-"
                if algo == "iise-gamma":
                    xi = MFTuner(make_pipeline(StandardScaler(), SVC()), SPACE,
                                 algorithm="iise", n_candidates=16, cv=5, max_pulls=1,
                                 bias="estimate", random_state=seed).fit(X, y).bias_bounds_
                    g = MFTuner(make_pipeline(StandardScaler(), SVC()), SPACE,
                                algorithm="iise-gamma", n_candidates=16, cv=5, max_pulls=1,
                                bias="estimate", random_state=seed).fit(X, y).bias_bounds_
                    ratio = "/".join(f"{a / (2 * b):.2f}" for a, b in zip(g[:-1], xi[:-1],
                                                                           strict=True))
                totals[algo].append(t.total_cost_)
                print(f"{name:14s} {seed:4d} {algo:10s} {ratio:>18s} {t.n_pulls_:6d} "
                      f"{t.total_cost_:7.2f} {t.stopping_reason_:14s} "
                      f"{t.score(X_te, y_te):8.4f}")
    r = np.array(totals["iise-gamma"]) / np.array(totals["iise"])
    print(f"cost ratio iise-gamma / iise, paired: median {np.median(r):.2f} "
          f"[{r.min():.2f}-{r.max():.2f}]")


if __name__ == "__main__":
    main()
