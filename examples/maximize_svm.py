"""MF-GP-UCB on a plain Python function: an RBF SVM on scikit-learn's digits.

The fidelity is the number of training rows (300 or all 1,437 of the
training split); the value is the 3-fold CV accuracy on those rows. The
budget counts costs proportional to the rows (the default of ``costs``).
Run: ``python examples/maximize_svm.py``.
"""

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import cross_val_score, train_test_split
from sklearn.svm import SVC

from mftune import Real, maximize

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0,
                                                    stratify=y)
rows = np.random.default_rng(0).permutation(len(y_train))


def cv_accuracy(config, n_rows):
    idx = rows[:n_rows]
    model = SVC(C=config["C"], gamma=config["gamma"])
    return cross_val_score(model, X_train[idx], y_train[idx], cv=3).mean()


res = maximize(cv_accuracy, {"C": Real(1e-1, 1e3, log=True), "gamma": Real(1e-5, 1e-1, log=True)},
               fidelities=[300, len(y_train)], budget=30 * len(y_train) / 300,
               random_state=0)
model = SVC(**res.x).fit(X_train, y_train)
print(f"best {res.x} CV accuracy {res.fun:.4f}; test accuracy {model.score(X_test, y_test):.4f}")
print(f"{res.nfev} evaluations ({res.nfev_per_fidelity.tolist()} per fidelity), "
      f"{res.n_failed} failed, {sum(r['seconds'] for r in res.history):.1f} s; {res.message}")
