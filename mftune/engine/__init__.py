"""The engine: the one search loop, the calibration, and the search built on them."""
