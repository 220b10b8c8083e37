"""The tuning server's HTTP face: the JSON API under ``/api/`` and the dashboard at ``/``.

A Starlette application (ASGI; uvicorn serves it). The handlers of ``ask``,
``tell`` and ``heartbeat`` run on the event loop (one thread), so a study's
leases need no locks; each answers only after its change is committed to
the study file. Status, export and the dashboard read the study through
read-only SQLite connections in a thread pool, which never block the
running study (WAL readers take no lock writers wait for).

Every request needs the server's token (``Authorization: Bearer TOKEN``,
or ``?token=`` / the cookie the dashboard sets) except ``GET /api/health``
and, with ``public=True``, the dashboard pages. A request is checked
completely before anything is written (:mod:`mftune.service.requests`).
"""

from __future__ import annotations

import contextlib
import hmac
import io
import json
import os
import threading
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from ..engine.summary import export_rows, study_summary, write_csv
from ..scripts.spacefile import SpaceFileError, parse_spacefile, spec_from_data
from ..scripts.study import create_study
from ..study.store import StudyStore
from .dashboard import index_page, study_page
from .hosted import HostedStudy
from .openapi import OPENAPI
from .requests import ApiError, check_name, fields, number, parse_json, text

__all__ = ["MAX_BODY", "Service", "create_app"]

#: Largest request body accepted (bytes); larger ones get 413 and are not read further.
MAX_BODY = 1 << 20
STATUSES = ("done", "failed", "timed-out")


class Service:
    """What one server holds: its studies, its folder for new ones, its token.

    Parameters
    ----------
    folder : Path
        Where studies created through the API are written (``<name>.db``).
    token : str
        The secret every request must carry.
    public : bool, default=False
        Serve the dashboard pages without a token (the API still needs it).
    lease_seconds : float, default=30
        How long a worker holds a pull without a heartbeat.
    max_body : int
        Largest accepted body in bytes.
    """

    def __init__(self, folder, token: str, *, public: bool = False,
                 lease_seconds: float = 30.0, max_body: int = MAX_BODY):
        self.folder, self.token, self.public = Path(folder), token, bool(public)
        self.lease_seconds, self.max_body = float(lease_seconds), int(max_body)
        self.studies: dict[str, HostedStudy] = {}
        self.started = time.time()
        self._pages: dict[str, tuple] = {}
        self._lock = threading.Lock()

    def host(self, path, name: str | None = None) -> HostedStudy:
        """Serve the study file ``path`` (its engine thread starts at once)."""
        path = Path(path)
        name = check_name(name or path.stem)
        if name in self.studies:
            raise ValueError(f"two studies named {name!r}: {self.studies[name].path} and "
                             f"{path}; rename one file")
        hosted = HostedStudy(name, path, lease_seconds=self.lease_seconds)
        self.studies[name] = hosted
        hosted.start()
        return hosted

    def study(self, name: str) -> HostedStudy:
        """The hosted study ``name``, or a 404 naming it."""
        if name not in self.studies:
            raise ApiError(404, "study", f"no study named {name[:64]!r} on this server")
        return self.studies[name]

    def read(self, hosted: HostedStudy) -> tuple[dict, list]:
        """The study's summary and rows for the dashboard, recomputed only after a change.

        The key is what changes when the study does: the server's own counters
        and the size and time of the study file and its WAL (so a change made
        by another process counts too). However many pages are open, a study
        is read at most once per change.
        """
        key = (hosted.n_told, hosted.leases.n_expired, len(hosted.leases), hosted.state,
               None if hosted.batch is None else hosted.batch.number,
               *(_stat(f"{hosted.path}{suffix}") for suffix in ("", "-wal")))
        with self._lock:
            cached = self._pages.get(hosted.name)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        summary, rows = _safe_summary(hosted.path), _rows(hosted.path)
        with self._lock:
            self._pages[hosted.name] = (key, summary, rows)
        return summary, rows

    def close(self) -> None:
        """Release every study's lock (the engine threads are daemons)."""
        for hosted in self.studies.values():
            hosted.close()


def create_app(service: Service) -> Starlette:
    """The Starlette application serving ``service``."""

    def authorize(request: Request, *, page: bool = False) -> None:
        if page and service.public:
            return
        given = None
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            given = auth[7:].strip()
        given = given or request.headers.get("x-mftune-token")
        if page:
            given = given or request.query_params.get("token") or request.cookies.get(
                "mftune_token")
        if not given:
            raise ApiError(401, "token", "missing: send 'Authorization: Bearer TOKEN' (the "
                           "token mftune serve printed, or MFTUNE_TOKEN)")
        if not hmac.compare_digest(given.encode(), service.token.encode()):
            raise ApiError(403, "token", "wrong token")

    async def body_of(request: Request) -> bytes:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > service.max_body):
            raise ApiError(413, "body", f"larger than {service.max_body} bytes")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > service.max_body:
                raise ApiError(413, "body", f"larger than {service.max_body} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    async def json_body(request: Request, empty: object = None) -> object:
        raw = await body_of(request)
        if not raw.strip() and empty is not None:
            return empty
        kind = request.headers.get("content-type", "application/json").split(";")[0].strip()
        if kind != "application/json":
            raise ApiError(415, "content-type", f"must be application/json; got {kind!r}")
        return parse_json(raw)

    def api(handler, *, page: bool = False):
        async def endpoint(request: Request) -> Response:
            try:
                authorize(request, page=page)
                return await handler(request)
            except ApiError as exc:
                return JSONResponse(exc.body(), status_code=exc.status)
        return endpoint

    # -- handlers -------------------------------------------------------------------
    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "version": _version(),
                             "studies": len(service.studies)})

    async def openapi(request: Request) -> Response:
        return JSONResponse(OPENAPI)

    async def list_studies(request: Request) -> Response:
        return JSONResponse({"studies": [h.server_view() for h in service.studies.values()]})

    async def create(request: Request) -> Response:
        name = check_name(request.query_params.get("name"))
        kind = request.headers.get("content-type", "application/json").split(";")[0].strip()
        raw = await body_of(request)
        try:
            if kind == "application/json":
                spec = spec_from_data(parse_json(raw, "spec"), "spec")
            elif kind in ("application/toml", "text/plain"):
                try:
                    source = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise ApiError(400, "spec", "not UTF-8 text") from None
                spec = parse_spacefile(source, "spec")
            else:
                raise ApiError(415, "content-type", "must be application/json or "
                               f"application/toml; got {kind!r}")
        except SpaceFileError as exc:  # "spec:LINE: key: ..." (the source is named spec)
            raise ApiError(400, "spec", str(exc).removeprefix("spec:").lstrip()) from None
        path = service.folder / f"{name}.db"
        if name in service.studies or StudyStore.exists(path):
            raise ApiError(409, "name", f"a study named {name!r} exists")
        spec.study["path"] = str(path)
        try:
            create_study(spec, None, path).close()
        except (ValueError, OSError) as exc:
            raise ApiError(400, "spec", str(exc)) from None
        hosted = service.host(path, name)
        return JSONResponse(hosted.server_view(), status_code=201)

    async def describe(request: Request) -> Response:
        hosted = service.study(request.path_params["name"])
        meta = hosted.meta
        spec = meta["spec"].get("spec", {})
        configs = await run_in_threadpool(hosted.candidates)
        return JSONResponse({"name": hosted.name, "space": meta["space"],
                             "fidelity": meta["fidelities"], "objective": meta["objective"],
                             "algorithm": meta["algorithm"], "seed": meta["seed"],
                             "study": spec.get("study", {}),
                             "calibration": spec.get("calibration", {}),
                             "n_candidates": len(configs), "configs": configs})

    async def ask(request: Request) -> Response:
        hosted = service.study(request.path_params["name"])
        body = fields(await json_body(request, empty={}), (), ("worker",))
        holder = text(body, "worker", max_len=80) or (
            request.client.host if request.client else "")
        got = hosted.ask(holder)
        if got is None:
            return JSONResponse({"pull": None, "state": hosted.state, "retry_after": 0.05})
        return JSONResponse({"pull": hosted.pull_payload(*got), "state": hosted.state})

    async def tell(request: Request) -> Response:
        hosted = service.study(request.path_params["name"])
        body = fields(await json_body(request), ("pull_id", "seconds"),
                      ("score", "status", "error", "lease"))
        pull_id = number(body, "pull_id", integer=True, minimum=1)
        seconds = number(body, "seconds", minimum=0)
        status = text(body, "status", choices=STATUSES) or "done"
        score = number(body, "score", required=status == "done")
        if status != "done" and score is not None:
            raise ApiError(400, "score", f"a {status} pull has no score (send error instead)")
        error = text(body, "error", max_len=4000, required=status != "done")
        if status == "done" and error is not None:
            raise ApiError(400, "error", "a done pull has no error (status failed instead)")
        token = text(body, "lease", max_len=64)
        return JSONResponse(hosted.tell(pull_id, status=status, score=score,
                                        seconds=seconds, error=error, token=token))

    async def heartbeat(request: Request) -> Response:
        hosted = service.study(request.path_params["name"])
        body = fields(await json_body(request), ("pull_id", "lease"))
        pull_id = number(body, "pull_id", integer=True, minimum=1)
        token = text(body, "lease", max_len=64, required=True)
        return JSONResponse({"deadline": hosted.heartbeat(pull_id, token)})

    async def resume(request: Request) -> Response:
        hosted = service.study(request.path_params["name"])
        body = fields(await json_body(request, empty={}), (), ("budget", "max_pulls"))
        budget = number(body, "budget", required=False)
        if budget is not None and not budget > 0:
            raise ApiError(400, "budget", f"must be > 0 (seconds); got {budget!r}")
        max_pulls = number(body, "max_pulls", integer=True, minimum=1, required=False)
        return JSONResponse(hosted.resume(budget, max_pulls))

    async def status(request: Request) -> Response:
        hosted = service.study(request.path_params["name"])
        summary = await run_in_threadpool(study_summary, hosted.path)
        summary["server"] = hosted.server_view()
        return Response(json.dumps(summary, default=str), media_type="application/json")

    async def export(request: Request) -> Response:
        hosted = service.study(request.path_params["name"])
        fmt = text(dict(request.query_params), "format", choices=("csv", "json")) or "json"
        header, rows = await run_in_threadpool(export_rows, hosted.path)
        if fmt == "json":
            return JSONResponse({"columns": header,
                                 "pulls": [dict(zip(header, r, strict=True)) for r in rows]})
        buf = io.StringIO()
        write_csv(buf, header, rows)
        return PlainTextResponse(buf.getvalue(), media_type="text/csv")

    async def index(request: Request) -> Response:
        views = [h.server_view() for h in service.studies.values()]
        summaries = await run_in_threadpool(
            lambda: [service.read(h)[0] for h in service.studies.values()])
        return _page(request, index_page(views, summaries))

    async def page(request: Request) -> Response:
        hosted = service.study(request.path_params["name"])
        summary, rows = await run_in_threadpool(service.read, hosted)
        configs = await run_in_threadpool(hosted.candidates)
        return _page(request, study_page(hosted.server_view(), summary, rows, configs))

    def _page(request: Request, html: str) -> Response:
        resp = HTMLResponse(html)
        token = request.query_params.get("token")
        if token and hmac.compare_digest(token.encode(), service.token.encode()):
            resp.set_cookie("mftune_token", token, httponly=True, samesite="strict")
        return resp

    async def not_found(request: Request, exc: HTTPException) -> Response:
        return JSONResponse({"error": f"path: {request.url.path}: {exc.detail}", "field": "path"},
                            status_code=exc.status_code)

    routes = [
        Route("/api/health", health),
        Route("/api/openapi.json", api(openapi)),
        Route("/api/studies", api(list_studies), methods=["GET"]),
        Route("/api/studies", api(create), methods=["POST"]),
        Route("/api/studies/{name}", api(describe), methods=["GET"]),
        Route("/api/studies/{name}/ask", api(ask), methods=["POST"]),
        Route("/api/studies/{name}/tell", api(tell), methods=["POST"]),
        Route("/api/studies/{name}/heartbeat", api(heartbeat), methods=["POST"]),
        Route("/api/studies/{name}/resume", api(resume), methods=["POST"]),
        Route("/api/studies/{name}/status", api(status), methods=["GET"]),
        Route("/api/studies/{name}/export", api(export), methods=["GET"]),
        Route("/", api(index, page=True)),
        Route("/studies/{name}", api(page, page=True)),
    ]
    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        service.close()

    return Starlette(routes=routes, exception_handlers={HTTPException: not_found},
                     lifespan=lifespan)


def _version() -> str:
    try:
        return version("mftune")
    except PackageNotFoundError:
        return "unknown"


def _safe_summary(path) -> dict:
    try:
        return study_summary(path)
    except Exception as exc:  # a study the engine has not set up yet, a broken file
        return {"error": f"{type(exc).__name__}: {exc}"}


def _stat(path: str) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _rows(path) -> list:
    with StudyStore(path, readonly=True) as store:
        return store.rows()
