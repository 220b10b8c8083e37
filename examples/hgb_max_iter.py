"""HistGradientBoostingClassifier with ``max_iter`` as the fidelity.

Each pull trains on a whole CV training fold with ``max_iter`` set to the
fidelity level; a candidate's cost grows with the level. Uses scikit-learn's
bundled digits data. Run: ``python examples/hgb_max_iter.py`` (~30 s).
"""

from sklearn.datasets import load_digits
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split

from mftune import Integer, MFTuner, Real

X, y = load_digits(return_X_y=True)
X, X_test, y, y_test = train_test_split(X, y, random_state=0, stratify=y)
tuner = MFTuner(
    HistGradientBoostingClassifier(early_stopping=False, random_state=0),
    {"learning_rate": Real(0.01, 0.5, log=True), "max_leaf_nodes": Integer(4, 64, log=True),
     "l2_regularization": Real(1e-4, 10.0, log=True)},
    fidelity="max_iter", fidelities=[5, 15, 45], n_candidates=12, cv=3, budget=25,
    random_state=0, verbose=1,
)
tuner.fit(X, y)
print("best", tuner.best_params_, f"CV {tuner.best_score_:.4f}",
      f"test {tuner.score(X_test, y_test):.4f}", tuner.stopping_reason_)
print("measured seconds per pull at max_iter", tuner.fidelities_, "->", tuner.costs_.round(3))
