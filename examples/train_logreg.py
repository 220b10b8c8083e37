"""A deterministic training script: logistic regression on scikit-learn's breast-cancer data.

mftune passes the configuration as ``--C=...`` and the fidelity as ``--rows=...``
(training rows); the script prints ``mftune-score: <validation accuracy>``.
The split and the solver are fixed, so a configuration always scores the same:

    mftune tune examples/space_logreg.toml -- python examples/train_logreg.py
"""

import argparse

from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

parser = argparse.ArgumentParser()
parser.add_argument("--C", type=float, required=True)
parser.add_argument("--rows", type=int, required=True)
args = parser.parse_args()

X, y = load_breast_cancer(return_X_y=True)
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.3, random_state=0,
                                                  stratify=y)
model = make_pipeline(StandardScaler(), LogisticRegression(C=args.C, max_iter=1000))
model.fit(X_train[: args.rows], y_train[: args.rows])
print(f"mftune-score: {model.score(X_val, y_val):.6f}")
