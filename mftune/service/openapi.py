"""The OpenAPI 3 description of the server's JSON API (``GET /api/openapi.json``).

Written by hand, next to the handlers of :mod:`mftune.service.app`: the API
is small and its rules (leases, idempotent tells) are easier to state than
to generate.
"""

from __future__ import annotations

__all__ = ["OPENAPI"]


def _op(summary: str, body: dict | None = None, *, ok: str = "200",
        query: list | None = None) -> dict:
    op: dict = {"summary": summary, "responses": {
        ok: {"description": "OK (JSON)"},
        "4XX": {"description": "refused: {error: 'field: message', field}; nothing written"}}}
    if body is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {
            "schema": {"type": "object", "properties": body}}}}
    params = [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}]
    op["parameters"] = params + (query or [])
    return op


_NUM = {"type": "number"}
_INT = {"type": "integer", "minimum": 1}
_STR = {"type": "string"}

OPENAPI = {
    "openapi": "3.0.3",
    "info": {"title": "mftune tuning server", "version": "1",
             "description": "Multi-fidelity tuning studies: ask for a pull (a lease), run "
                            "it anywhere, tell its score. Send 'Authorization: Bearer TOKEN' "
                            "on every request but /api/health."},
    "components": {"securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
    "security": [{"token": []}],
    "paths": {
        "/api/health": {"get": {"summary": "Liveness (no token)", "security": [],
                                "responses": {"200": {"description": "ok"}}}},
        "/api/studies": {
            "get": {"summary": "List the studies", "responses": {"200": {"description": "OK"}}},
            "post": {"summary": "Create a study from a space file's tables (JSON) or text "
                                "(application/toml)",
                     "parameters": [{"name": "name", "in": "query", "required": True,
                                     "schema": _STR}],
                     "requestBody": {"required": True, "content": {
                         "application/json": {"schema": {"type": "object"}},
                         "application/toml": {"schema": _STR}}},
                     "responses": {"201": {"description": "created"},
                                   "4XX": {"description": "refused, nothing written"}}}},
        "/api/studies/{name}": {"get": _op("The study's space, fidelity, objective, arms")},
        "/api/studies/{name}/ask": {"post": _op(
            "Lease the next pull: {pull: {pull_id, lease, deadline, config, fidelity, seed, "
            "...} or null, state, retry_after}", {"worker": _STR})},
        "/api/studies/{name}/tell": {"post": _op(
            "Report a pull once: score (status done) or error (failed, timed-out), seconds",
            {"pull_id": _INT, "lease": _STR, "score": _NUM, "seconds": _NUM,
             "status": {"type": "string", "enum": ["done", "failed", "timed-out"]},
             "error": _STR})},
        "/api/studies/{name}/heartbeat": {"post": _op(
            "Extend a lease: {deadline}", {"pull_id": _INT, "lease": _STR})},
        "/api/studies/{name}/resume": {"post": _op(
            "Continue a study stopped by its budget or pull cap (give a larger one) or by "
            "failed runs (they run again): the server's view of the study",
            {"budget": {"type": "number", "exclusiveMinimum": 0}, "max_pulls": _INT})},
        "/api/studies/{name}/status": {"get": _op(
            "What 'mftune status --json' prints, plus the server's view")},
        "/api/studies/{name}/export": {"get": _op(
            "One row per pull", query=[{"name": "format", "in": "query",
                                        "schema": {"type": "string", "enum": ["json", "csv"]}}])},
    },
}
