"""Space files: the TOML description of a study run by ``mftune tune``.

A space file names the parameters, the fidelity, the objective and the
study settings. Every section but ``[parameters]`` and ``[fidelity]`` is
optional::

    [parameters]
    lr     = { type = "real", low = 1e-5, high = 1.0, log = true }
    depth  = { type = "integer", low = 1, high = 8 }
    kernel = { type = "categorical", choices = ["rbf", "linear"] }

    [fidelity]
    name   = "epochs"
    values = [1, 3, 9]          # or: min = 1, max = 27, factor = 3
    pass   = "arg"              # "arg": --epochs=9 (or {epochs}); "env": MFTUNE_FIDELITY only
    costs  = "measured"         # "measured" (seconds; default), "nominal" (the values), a list
    xi     = [0.2, 0.05, 0]     # optional known bias bounds (else calibrated)

    [objective]
    name      = "accuracy"
    direction = "maximize"      # or "minimize"
    sigma     = 0.02            # optional known noise scale (else calibrated)

    [study]
    path = "study.db"
    algorithm = "auto"          # the default rule; or se, iise, iise-gamma, lucb-a/b/c
    delta = 0.05
    n_candidates = 16
    adaptive = "auto"           # waves of candidates proposed by a surrogate; or true, false
    seed = 0

Errors are :class:`SpaceFileError` (a ``ValueError``) whose message starts
with ``file:line:`` (when the line is known) and names the offending key.
"""

from __future__ import annotations

import math
import numbers
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..fidelity import geometric_schedule
from ..space import Categorical, Integer, Real, Space

__all__ = ["SpaceFileError", "StudySpec", "build_space", "load_spacefile", "parse_spacefile",
           "spec_from_data"]

SECTIONS = ("parameters", "fidelity", "objective", "study", "calibration")
PARAM_TYPES = ("real", "integer", "categorical")
FIDELITY_PASS = ("arg", "env")
CONFIG_PASS = ("auto", "args", "placeholders")
DIRECTIONS = ("maximize", "minimize")
STUDY_KEYS = {
    "path": str, "algorithm": str, "delta": float, "epsilon": float, "n_candidates": int,
    "seed": int, "budget": float, "workers": int, "timeout": float, "error_score": float,
    "pass": str, "max_pulls": int, "adaptive": (bool, str),
}


class SpaceFileError(ValueError):
    """An invalid space file; the message names the file, the line (if known) and the key."""


@dataclass
class StudySpec:
    """Everything a space file says, validated (JSON-friendly except :attr:`space`).

    Attributes
    ----------
    parameters : dict
        The ``[parameters]`` table as written (re-buildable with :func:`build_space`).
    space : Space
    fidelity : dict
        ``name``, ``values`` (strictly increasing), ``pass``, ``costs``
        (``"nominal"``, ``"measured"`` or a list), optional ``xi`` and ``gamma``.
    objective : dict
        ``name``, ``direction``, optional ``sigma``.
    study : dict
        The ``[study]`` settings with defaults filled in.
    calibration : dict
        ``arms`` and ``repeats`` of the calibration used when σ, ξ or the
        costs must be estimated.
    source : str
        The file the spec came from.
    """

    parameters: dict
    space: Space
    fidelity: dict
    objective: dict
    study: dict = field(default_factory=dict)
    calibration: dict = field(default_factory=dict)
    source: str = ""

    def to_dict(self) -> dict:
        """The JSON-friendly spec (everything but the built :class:`Space`)."""
        return {"parameters": self.parameters, "fidelity": self.fidelity,
                "objective": self.objective, "study": self.study,
                "calibration": self.calibration, "source": self.source}

    @classmethod
    def from_dict(cls, data: dict) -> StudySpec:
        """Rebuild a spec stored by :meth:`to_dict` (the study store keeps it as JSON)."""
        return cls(parameters=data["parameters"], space=build_space(data["parameters"]),
                   fidelity=data["fidelity"], objective=data["objective"],
                   study=data["study"], calibration=data.get("calibration", {}),
                   source=data.get("source", ""))


class _Ctx:
    """Formats errors as ``file:line: key: message``."""

    def __init__(self, path: str, text: str):
        self.path, self.lines = path, text.splitlines()

    def line_of(self, key: str) -> int | None:
        """Best-effort line of a dotted key (tomllib keeps no positions for values)."""
        parts = key.split(".")
        last = re.escape(parts[-1])
        header = re.compile(r"^\s*\[\s*" + r"\s*\.\s*".join(map(re.escape, parts)) + r"\s*\]")
        assign = re.compile(r"^\s*[\"']?" + last + r"[\"']?\s*=")
        table = None
        for i, line in enumerate(self.lines, 1):
            if header.match(line):
                return i
            m = re.match(r"^\s*\[\s*([^\]]+?)\s*\]", line)
            if m:
                table = m.group(1).replace(" ", "")
                continue
            if assign.match(line) and (len(parts) == 1 or table in (
                    ".".join(parts[:-1]), parts[0]) or table is None):
                return i
        if len(parts) > 1:
            return self.line_of(".".join(parts[:-1]))
        return None

    def error(self, key: str, message: str) -> SpaceFileError:
        line = self.line_of(key) if key else None
        where = f"{self.path}:{line}" if line else self.path
        return SpaceFileError(f"{where}: {key}: {message}" if key else f"{where}: {message}")


def _number(value, key, ctx, *, integer=False, positive=False) -> float | int:
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ok and integer:
        ok = isinstance(value, int)
    if not ok or not math.isfinite(value) or (positive and value <= 0):
        kind = "an integer" if integer else "a finite number"
        raise ctx.error(key, f"must be {kind}{' > 0' if positive else ''}; got {value!r}")
    return value


def _choice(value, key, allowed, ctx) -> str:
    if value not in allowed:
        raise ctx.error(key, f"must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


def _unknown(table: dict, allowed, prefix: str, ctx) -> None:
    for k in table:
        if k not in allowed:
            raise ctx.error(f"{prefix}.{k}" if prefix else k,
                            f"unknown key; allowed keys are {', '.join(sorted(allowed))}")


#: A parameter name: what a script can take as ``--NAME=VALUE`` (pipelines' ``a__b`` too).
_NAME = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.-]*")


def build_space(parameters: dict, ctx: _Ctx | None = None) -> Space:
    """Build a :class:`Space` from a ``[parameters]`` table.

    Parameters
    ----------
    parameters : dict
        ``{name: {"type": "real"|"integer"|"categorical", ...}}``; reals and
        integers take ``low``, ``high`` and ``log``; categoricals ``choices``.
    ctx : optional
        Error context (file and text) used by :func:`parse_spacefile`.

    Returns
    -------
    Space
    """
    ctx = ctx or _Ctx("<parameters>", "")
    if not isinstance(parameters, dict) or not parameters:
        raise ctx.error("parameters", "must be a non-empty table of parameters")
    dims = {}
    for name, p in parameters.items():
        key = f"parameters.{name}"
        if not _NAME.fullmatch(name):
            raise ctx.error(key, "a parameter name is letters, digits, '_', '.' or '-', not "
                            f"starting with '-' (the script gets --NAME=VALUE); got {name!r}")
        if not isinstance(p, dict):
            raise ctx.error(key, f"must be a table like {{ type = \"real\", low = 0, high = 1 }};"
                            f" got {p!r}")
        kind = p.get("type")
        if kind is None:
            raise ctx.error(key, f"missing 'type' (one of {', '.join(PARAM_TYPES)})")
        _choice(kind, f"{key}.type", PARAM_TYPES, ctx)
        if kind == "categorical":
            _unknown(p, {"type", "choices"}, key, ctx)
            choices = p.get("choices")
            if not isinstance(choices, list) or not choices or not all(
                    isinstance(c, (str, int, float, bool)) for c in choices):
                raise ctx.error(f"{key}.choices", "must be a non-empty list of strings, "
                                f"numbers or booleans; got {choices!r}")
            try:
                dims[name] = Categorical(choices, name)
            except ValueError as exc:  # e.g. a choice given twice
                raise ctx.error(f"{key}.choices", str(exc).split(": ", 1)[-1]) from None
            continue
        _unknown(p, {"type", "low", "high", "log"}, key, ctx)
        for bound in ("low", "high"):
            if bound not in p:
                raise ctx.error(key, f"missing '{bound}'")
            _number(p[bound], f"{key}.{bound}", ctx, integer=kind == "integer")
        log = p.get("log", False)
        if not isinstance(log, bool):
            raise ctx.error(f"{key}.log", f"must be true or false; got {log!r}")
        if p["low"] > p["high"]:
            raise ctx.error(key, f"low must be <= high; got low = {p['low']!r}, "
                            f"high = {p['high']!r}")
        if log and p["low"] <= 0:
            raise ctx.error(f"{key}.low", f"log = true needs low > 0; got {p['low']!r}")
        cls = Real if kind == "real" else Integer
        dims[name] = cls(p["low"], p["high"], log=log, name=name)
    return Space(dims)


def _fidelity(table, ctx) -> dict:
    if table is None:
        raise ctx.error("fidelity", "missing [fidelity] table (name and values, or min/max/"
                        "factor)")
    if not isinstance(table, dict):
        raise ctx.error("fidelity", "must be a table")
    _unknown(table, {"name", "values", "min", "max", "factor", "pass", "costs", "xi", "gamma"},
             "fidelity", ctx)
    name = table.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-]*", name):
        raise ctx.error("fidelity.name", f"must be an identifier-like string; got {name!r}")
    if "values" in table:
        if any(k in table for k in ("min", "max", "factor")):
            raise ctx.error("fidelity.values", "give either values or min/max/factor, not both")
        values = table["values"]
        if not isinstance(values, list) or not values:
            raise ctx.error("fidelity.values", f"must be a non-empty list; got {values!r}")
        for v in values:
            _number(v, "fidelity.values", ctx, positive=True)
        if any(b <= a for a, b in zip(values, values[1:], strict=False)):
            raise ctx.error("fidelity.values", f"must be strictly increasing; got {values}")
    elif "min" in table or "max" in table:
        for k in ("min", "max"):
            if k not in table:
                raise ctx.error("fidelity", f"missing '{k}' (min, max and optional factor)")
        lo, hi = (_number(table[k], f"fidelity.{k}", ctx, positive=True) for k in ("min", "max"))
        factor = _number(table.get("factor", 3), "fidelity.factor", ctx)
        if factor <= 1:
            raise ctx.error("fidelity.factor", f"must be a number > 1; got {factor!r}")
        if hi <= lo:
            raise ctx.error("fidelity.max", f"must be above fidelity.min ({lo!r}); got {hi!r}")
        if lo < 1:
            raise ctx.error("fidelity.min", f"must be a number >= 1; got {lo!r}")
        values = geometric_schedule(lo, hi, factor)
    else:
        raise ctx.error("fidelity", "missing 'values' (or 'min'/'max'/'factor')")
    m = len(values)
    costs = table.get("costs", "measured")
    if isinstance(costs, list):
        if len(costs) != m:
            raise ctx.error("fidelity.costs", f"must have one entry per fidelity ({m})")
        for c in costs:
            _number(c, "fidelity.costs", ctx, positive=True)
        if any(b <= a for a, b in zip(costs, costs[1:], strict=False)):
            raise ctx.error("fidelity.costs", f"must be strictly increasing; got {costs}")
    else:
        _choice(costs, "fidelity.costs", ("nominal", "measured"), ctx)
    out = {"name": name, "values": values, "costs": costs,
           "pass": _choice(table.get("pass", "arg"), "fidelity.pass", FIDELITY_PASS, ctx)}
    for key in ("xi", "gamma"):
        if key in table:
            b = table[key]
            if not isinstance(b, list) or len(b) != m:
                raise ctx.error(f"fidelity.{key}", f"must be a list with one entry per "
                                f"fidelity ({m}); got {b!r}")
            for v in b:
                _number(v, f"fidelity.{key}", ctx)
            if b[-1] != 0 or any(v < 0 for v in b):
                raise ctx.error(f"fidelity.{key}", f"must be non-negative numbers ending in 0 "
                                f"(the top fidelity is the target); got {b}")
            out[key] = b
    return out


def parse_spacefile(text: str, path: str = "<string>") -> StudySpec:
    """Parse and validate the text of a space file.

    Parameters
    ----------
    text : str
        TOML text.
    path : str
        File name used in error messages.

    Returns
    -------
    StudySpec

    Raises
    ------
    SpaceFileError
        Invalid TOML (with tomllib's line and column) or invalid content
        (naming the key, and its line when it can be found).
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        where = f"{path}:{m.group(1)}" if m else path
        raise SpaceFileError(f"{where}: invalid TOML: {exc}") from None
    return spec_from_data(data, path, text)


def spec_from_data(data: Any, path: str = "<json>", text: str = "") -> StudySpec:
    """Validate the tables of a space file given as a mapping (e.g. decoded JSON).

    Parameters
    ----------
    data : dict
        The sections ``parameters``, ``fidelity``, ``objective``, ``study``
        and ``calibration``, as a space file holds them.
    path : str
        Name used in error messages.
    text : str
        The source text, if any (to name the line of an offending key).

    Returns
    -------
    StudySpec

    Raises
    ------
    SpaceFileError
        Invalid content, naming the key.
    """
    ctx = _Ctx(path, text)
    if not isinstance(data, dict):
        raise SpaceFileError(f"{path}: expected a table (a JSON object) of sections "
                             f"{', '.join(SECTIONS)}; got {type(data).__name__}")
    _unknown(data, SECTIONS, "", ctx)
    for section in SECTIONS:
        if section in data and not isinstance(data[section], dict):
            raise ctx.error(section, f"must be a table; got {data[section]!r}")
    space = build_space(data.get("parameters"), ctx)
    fidelity = _fidelity(data.get("fidelity"), ctx)
    if fidelity["name"] in data["parameters"]:
        raise ctx.error("fidelity.name", f"{fidelity['name']!r} is also a parameter name; "
                        "the fidelity must be a separate name")
    obj = data.get("objective", {})
    _unknown(obj, {"name", "direction", "sigma"}, "objective", ctx)
    if not isinstance(obj.get("name", "score"), str) or not obj.get("name", "score"):
        raise ctx.error("objective.name", f"must be a non-empty string; got {obj['name']!r}")
    objective = {"name": str(obj.get("name", "score")),
                 "direction": _choice(obj.get("direction", "maximize"), "objective.direction",
                                      DIRECTIONS, ctx)}
    if "sigma" in obj:
        objective["sigma"] = _number(obj["sigma"], "objective.sigma", ctx, positive=True)
    st = data.get("study", {})
    _unknown(st, set(STUDY_KEYS), "study", ctx)
    study = {"path": "study.db", "algorithm": "auto", "delta": 0.05, "epsilon": None,
             "n_candidates": 16, "seed": 0, "budget": None, "workers": 1, "timeout": None,
             "error_score": None, "pass": "auto", "max_pulls": None, "adaptive": "auto"}
    for key, value in st.items():
        kind = STUDY_KEYS[key]
        if key == "adaptive":
            if not (value == "auto" or value is True or value is False):
                raise ctx.error("study.adaptive", f"must be \"auto\", true or false; "
                                f"got {value!r}")
        elif kind is str:
            if not isinstance(value, str):
                raise ctx.error(f"study.{key}", f"must be a string; got {value!r}")
        else:
            _number(value, f"study.{key}", ctx, integer=kind is int,
                    positive=key not in ("seed", "error_score"))
        study[key] = value
    check_study(study, lambda k, msg: ctx.error(f"study.{k}", msg))
    cal = data.get("calibration", {})
    _unknown(cal, {"arms", "repeats"}, "calibration", ctx)
    calibration = {"arms": cal.get("arms", 4), "repeats": cal.get("repeats", 2)}
    _number(calibration["arms"], "calibration.arms", ctx, integer=True, positive=True)
    _number(calibration["repeats"], "calibration.repeats", ctx, integer=True, positive=True)
    if calibration["repeats"] < 2 and "sigma" not in objective:
        raise ctx.error("calibration.repeats", "must be >= 2 to estimate sigma (or give "
                        "objective.sigma)")
    return StudySpec(parameters=data["parameters"], space=space, fidelity=fidelity,
                     objective=objective, study=study, calibration=calibration, source=path)


def check_study(study: dict[str, Any], error) -> None:
    """Check cross-key constraints of the ``[study]`` settings (also after CLI overrides).

    ``error(key, message)`` builds the exception to raise.
    """
    from ..policies.registry import POLICIES

    allowed = ", ".join(["auto", *sorted(POLICIES)])
    if study["algorithm"] != "auto" and study["algorithm"] not in POLICIES:
        raise error("algorithm", f"must be one of {allowed}; got {study['algorithm']!r}")
    if not 0 < study["delta"] < 1:
        raise error("delta", f"must lie in (0, 1); got {study['delta']!r}")
    if study["n_candidates"] < 2:
        raise error("n_candidates", f"must be >= 2; got {study['n_candidates']!r}")
    if study["pass"] not in CONFIG_PASS:
        raise error("pass", f"must be one of {', '.join(CONFIG_PASS)}; got {study['pass']!r}")
    if not 0 <= study["seed"] < 2**63:  # a generator's seed that the study file can store
        raise error("seed", f"must be an integer in [0, 2**63); got {study['seed']!r}")
    if study["error_score"] is not None and not math.isfinite(study["error_score"]):
        raise error("error_score", f"must be a finite number; got {study['error_score']!r}")


def load_spacefile(path: str | Path) -> StudySpec:
    """Read and validate a space file (see :func:`parse_spacefile`)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpaceFileError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise SpaceFileError(f"{path}: not UTF-8 text") from None
    return parse_spacefile(text, str(path))
