"""A Pipeline with a conditional space (``step__param`` names, a list of dicts).

Scaling + logistic regression or an RBF SVM: the list of dicts gives each
model its own parameters. Uses the bundled breast-cancer data.
Run: ``python examples/pipeline_conditional.py`` (~10 s).
"""

from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mftune import MFTuner, Real

X, y = load_breast_cancer(return_X_y=True)
X, X_test, y, y_test = train_test_split(X, y, random_state=0, stratify=y)
pipe = Pipeline([("scale", StandardScaler()), ("model", SVC())])
space = [
    {"model": [LogisticRegression(max_iter=2000)], "model__C": Real(1e-3, 1e2, log=True)},
    {"model": [SVC()], "model__C": Real(1e-2, 1e3, log=True),
     "model__gamma": Real(1e-4, 1e0, log=True)},
]
tuner = MFTuner(pipe, space, n_candidates=16, cv=5, epsilon=0.02, budget=20,
                scoring={"acc": "accuracy", "auc": "roc_auc"}, refit="acc",
                random_state=0, verbose=1)
tuner.fit(X, y)
print("best", tuner.best_params_, f"CV accuracy {tuner.best_score_:.4f}",
      f"test accuracy {tuner.score(X_test, y_test):.4f}", tuner.stopping_reason_)
