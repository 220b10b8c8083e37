"""Checks of request bodies: every rejection names the field and writes nothing.

The handlers of :mod:`mftune.service.app` parse and check a whole request
with these helpers *before* touching a study, so a rejected request leaves
the store as it was.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["NAME_RE", "ApiError", "check_name", "fields", "number", "parse_json", "text"]

#: A study name: it becomes ``<name>.db`` in the server's folder.
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class ApiError(Exception):
    """A request the server refuses: HTTP ``status``, the ``field`` at fault, a message."""

    def __init__(self, status: int, field: str, message: str):
        super().__init__(f"{field}: {message}" if field else message)
        self.status, self.field, self.message = int(status), field, message

    def body(self) -> dict:
        """The JSON answer: ``{"error": "field: message", "field": field}``."""
        return {"error": str(self), "field": self.field}


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def parse_json(raw: bytes, what: str = "body") -> Any:
    """Decode a JSON body (strict: no NaN or Infinity); 400 naming ``what`` otherwise."""
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise ApiError(400, what, "not UTF-8 text") from None
    except ValueError as exc:
        raise ApiError(400, what, f"malformed JSON: {exc}") from None


def fields(body: Any, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
    """``body`` as a JSON object with the ``required`` keys and no key outside both lists."""
    if not isinstance(body, dict):
        raise ApiError(400, "body", f"must be a JSON object; got {type(body).__name__}")
    for key in required:
        if key not in body:
            raise ApiError(400, key, "missing")
    for key in body:
        if key not in required and key not in optional:
            allowed = ", ".join((*required, *optional))
            raise ApiError(400, str(key)[:40], f"unknown field; allowed: {allowed}")
    return body


def number(body: dict, key: str, *, minimum: float | None = None,
           integer: bool = False, required: bool = True) -> float | int | None:
    """A finite number (an integer if asked) ``>= minimum``; ``None`` if absent and optional."""
    value = body.get(key)
    if value is None:
        if required:
            raise ApiError(400, key, "missing (null)")
        return None
    kind = "an integer" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        raise ApiError(400, key, f"must be {kind}; got {type(value).__name__} {value!r:.40}")
    if not math.isfinite(value):
        raise ApiError(400, key, f"must be finite; got {value!r}")
    if minimum is not None and value < minimum:
        raise ApiError(400, key, f"must be >= {minimum:g}; got {value!r}")
    return value


def text(body: dict, key: str, *, max_len: int = 2000, required: bool = False,
         choices: tuple[str, ...] | None = None) -> str | None:
    """A string of at most ``max_len`` characters, one of ``choices`` if given."""
    value = body.get(key)
    if value is None:
        if required:
            raise ApiError(400, key, "missing")
        return None
    if not isinstance(value, str):
        raise ApiError(400, key, f"must be a string; got {type(value).__name__}")
    if len(value) > max_len:
        raise ApiError(400, key, f"longer than {max_len} characters")
    if choices is not None and value not in choices:
        raise ApiError(400, key, f"must be one of {', '.join(choices)}; got {value!r:.40}")
    return value


def check_name(name: Any) -> str:
    """A valid study name (letters, digits, ``_.-``; at most 64 characters)."""
    if name is None:
        raise ApiError(400, "name", "missing: give the study's name (?name=NAME)")
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise ApiError(400, "name", "a study name is 1-64 letters, digits, '_', '.' or '-', "
                       f"starting with a letter or digit; got {str(name)[:40]!r}")
    return name.removesuffix(".db") or name
