"""The study: the SQLite store of pulls, exact replay, and what a study says of itself."""
