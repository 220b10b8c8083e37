"""In-process searches: the scikit-learn ``MFTuner`` and ``maximize``/``minimize``."""
