"""HistGradientBoostingClassifier with ``max_iter`` as the fidelity.

Each pull trains on a whole CV training fold with ``max_iter`` set to the
fidelity level; a candidate's cost grows with the level. A pull at a higher
level continues the model the same (candidate, fold) reached at a lower one
(``continuation="auto"``: ``warm_start``, the same model as a direct fit)
instead of refitting it. Uses scikit-learn's bundled digits data. Run:
``python examples/hgb_max_iter.py`` (~30 s).
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
print(f"continuation {tuner.continuation_}: {tuner.pulls_['continued'].sum()} of "
      f"{len(tuner.pulls_['cost'])} pulls continued a lower-level model, "
      f"saving about {tuner.continuation_saved_:.1f} s of {tuner.total_cost_:.1f} s")
