"""The tables of a study file (:mod:`mftune.study.store` describes their columns)."""

__all__ = ["ADDED", "SCHEMA"]

#: The tables of candidates added during a search (a wave's end, a point proposed by a
#: Gaussian-process policy), created on opening a file written before they were recorded.
ADDED = """
CREATE TABLE IF NOT EXISTS waves (
    wave INTEGER PRIMARY KEY,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS proposals (
    query INTEGER PRIMARY KEY,
    data TEXT NOT NULL
)"""

#: Every table (a new study file runs it in one transaction).
SCHEMA = ADDED + """;
CREATE TABLE IF NOT EXISTS study (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    format_version INTEGER NOT NULL,
    created REAL NOT NULL,
    space TEXT NOT NULL,
    fidelities TEXT NOT NULL,
    objective TEXT NOT NULL,
    direction TEXT NOT NULL CHECK (direction IN ('maximize', 'minimize')),
    algorithm TEXT NOT NULL,
    settings TEXT NOT NULL,
    seed INTEGER,
    spec TEXT NOT NULL,
    state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS arms (
    arm INTEGER PRIMARY KEY,
    config TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pulls (
    id INTEGER PRIMARY KEY,
    batch INTEGER NOT NULL,
    pos INTEGER NOT NULL,
    kind TEXT NOT NULL DEFAULT 'policy',
    arm INTEGER NOT NULL REFERENCES arms(arm),
    fidelity INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN
        ('pending', 'running', 'done', 'failed', 'timed-out')),
    score REAL,
    reward REAL,
    cost REAL,
    attempts INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    started REAL,
    ended REAL,
    worker TEXT,
    error TEXT,
    info TEXT,
    UNIQUE (batch, pos)
);
CREATE INDEX IF NOT EXISTS pulls_status ON pulls (status);
CREATE TABLE IF NOT EXISTS updates (
    batch INTEGER PRIMARY KEY,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS workers (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started REAL NOT NULL,
    seen REAL NOT NULL
);
"""
