"""`cudalogs serve`: the HTTP API for chat and issue bots, and a paste-a-log page.

An adapter like the CLI: every endpoint calls one library function and returns the
same JSON documents the CLI prints. Limits protect the server: a body-size cap (413),
a per-request time budget (504), no stack traces in responses, one JSON access-log line
per request on stderr. Needs the `server` extra: pip install '.[server]'.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import socket
import sys
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any

import anyio
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from cudalogs import render
from cudalogs.errors import CudalogsError, UnknownGpuError
from cudalogs.knowledge import KnowledgeBase, load_kb

log = logging.getLogger("cudalogs.access")


@dataclass(frozen=True)
class ServerLimits:
    max_body_bytes: int = 2 * 1024 * 1024
    time_budget_s: float = 10.0
    explain_threads: int = 1


class ExplainRequest(BaseModel):
    log: str | None = Field(None, description="The log text (one of log / issue_body).")
    issue_body: str | None = Field(None, description="An issue body or chat message in Markdown.")
    gpu: str | None = Field(None, description="The user's GPU name, e.g. \"Tesla T4\".")
    cc: str | None = Field(None, description="The user's compute capability, e.g. \"7.5\".")


def create_app(kb: KnowledgeBase | None = None, limits: ServerLimits = ServerLimits()) -> FastAPI:
    """The ASGI app; `kb` defaults to the shipped knowledge base."""
    app = FastAPI(title="cudalogs", version="1", description="Explain GPU error logs for the user's GPU.")
    app.add_middleware(_Guard, limits=limits)
    if not log.handlers:  # here, not in serve(): each uvicorn worker process builds its own app
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    knowledge = kb or load_kb()
    # explain is CPU-bound Python: more threads than this only fight over the GIL and stretch every request's
    # latency; the event loop stays free to take requests, answer /healthz and enforce the time budget.
    explain_slots = anyio.CapacityLimiter(limits.explain_threads)

    @app.exception_handler(CudalogsError)
    async def library_error(_request: Request, exc: CudalogsError) -> JSONResponse:
        return _error(422 if isinstance(exc, UnknownGpuError) else 400, str(exc))

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        return {"status": "ok", "entries": len(knowledge.entries)}

    request_schema = {"requestBody": {"required": True, "content": {"application/json": {"schema": ExplainRequest.model_json_schema()}}}}

    @app.post("/v1/explain", openapi_extra=request_schema)
    async def explain_endpoint(request: Request) -> JSONResponse:
        body = await _read_json(request, limits)
        try:
            req = ExplainRequest.model_validate(body)
        except ValidationError as exc:
            raise HTTPException(422, "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from None
        if (req.log is None) == (req.issue_body is None):
            raise HTTPException(422, "send exactly one of \"log\" or \"issue_body\"")
        from cudalogs.pipeline import explain, explain_issue

        if req.log is not None:
            work = functools.partial(explain, req.log, req.gpu, req.cc, kb=knowledge)
        else:
            work = functools.partial(explain_issue, req.issue_body or "", req.gpu, req.cc, kb=knowledge)
        report = await anyio.to_thread.run_sync(work, limiter=explain_slots)
        # a JSONResponse as is: FastAPI's jsonable_encoder walk of the report costs more than explain itself
        return JSONResponse({"report": report.to_dict(), "markdown": render.markdown(report)})

    @app.get("/v1/search")
    def search_endpoint(q: str, gpu: str | None = None, cls: str | None = None, limit: int = 10) -> list[dict[str, Any]]:
        from cudalogs.search import search

        results = search(q, gpu=gpu, cls=cls, limit=max(1, min(limit, 50)), kb=knowledge)
        return [{"id": r.id, "class": r.cls, "title": r.title, "status": r.status, "score": r.score,
                 "snippet": r.snippet} for r in results]

    @app.get("/v1/entries/{entry_id}")
    def entry_endpoint(entry_id: str) -> Any:
        from cudalogs.kb.show import entry_json

        entry = knowledge.by_id.get(entry_id)
        if entry is None:
            raise HTTPException(404, f"no entry {entry_id!r}")
        return json.loads(entry_json(entry))

    @app.get("/v1/gpus/{name}")
    def gpu_endpoint(name: str) -> dict[str, Any]:
        from cudalogs import gpu_report
        from cudalogs.gpu import resolve

        found = resolve(name, None, knowledge.catalog)
        if found is None:
            raise HTTPException(404, f"unknown GPU {name!r}")
        return gpu_report.profile(found, knowledge).to_dict()

    @app.get("/", response_class=HTMLResponse)
    def page() -> str:
        return resources.files("cudalogs").joinpath("static/index.html").read_text(encoding="utf-8")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    return app


class _Guard:
    """The limits around every request, as plain ASGI middleware: the body-size cap (413), the time budget
    (504), a JSON error instead of any traceback (500), and one JSON access-log line.

    Why not `@app.middleware("http")`: Starlette's BaseHTTPMiddleware runs each request in an extra task
    with a streamed copy of the response, which costs as much as explaining a small log.
    """

    def __init__(self, app: Any, limits: ServerLimits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        sent = {"status": 0}

        async def send_and_note(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                sent["status"] = message["status"]
            await send(message)

        length = dict(scope.get("headers") or ()).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.limits.max_body_bytes:
            await _error(413, f"request body over {self.limits.max_body_bytes} bytes; send the relevant part of the log")(
                scope, receive, send_and_note)
        else:
            try:
                async with asyncio.timeout(self.limits.time_budget_s):
                    await self.app(scope, receive, send_and_note)
            except TimeoutError:
                if not sent["status"]:
                    await _error(504, f"took over the {self.limits.time_budget_s:g} s budget; send a shorter log")(
                        scope, receive, send_and_note)
            except Exception:  # noqa: BLE001 - never a stack trace in a response
                logging.getLogger("cudalogs").exception("unhandled error")
                if not sent["status"]:
                    await _error(500, "internal error")(scope, receive, send_and_note)
        log.info(json.dumps({"method": scope["method"], "path": scope["path"], "status": sent["status"],
                             "ms": round((time.perf_counter() - start) * 1000, 1)}))


async def _read_json(request: Request, limits: ServerLimits) -> dict[str, Any]:
    """The body as a JSON object, with the size cap enforced while reading (no Content-Length trust)."""
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > limits.max_body_bytes:
            raise HTTPException(413, f"request body over {limits.max_body_bytes} bytes; send the relevant part of the log")
    if not data.strip():
        raise HTTPException(400, "empty body; send JSON like {\"log\": \"...\"}")
    try:
        body = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise HTTPException(400, "body is not UTF-8 JSON") from None
    except json.JSONDecodeError as exc:
        raise HTTPException(400, f"body is not JSON ({exc.msg} at position {exc.pos})") from None
    if not isinstance(body, dict):
        raise HTTPException(400, "body must be a JSON object like {\"log\": \"...\"}")
    if "\x00" in str(body.get("log") or ""):
        raise HTTPException(400, "log contains NUL bytes: it looks binary, not a text log")
    return body


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def serve(host: str = "127.0.0.1", port: int = 8000, workers: int = 1) -> None:
    """Run the server: one process, or `workers` processes each with its own SO_REUSEPORT listening socket.

    Why not uvicorn's own --workers: its workers share one socket, and whichever wakes first accepts a whole
    burst of new connections; keep-alive clients (bots, load balancers) then stay lopsided on one process.
    With a socket per worker the kernel spreads connections across them by a hash of each connection.
    """
    import uvicorn

    if workers == 1 or not hasattr(socket, "SO_REUSEPORT"):
        uvicorn.run("cudalogs.server:create_app", factory=True, host=host, port=port, workers=workers,
                    log_level="warning", access_log=False)
        return
    import multiprocessing
    import signal

    children = [multiprocessing.Process(target=_worker, args=(host, port), daemon=True) for _ in range(workers)]
    for child in children:
        child.start()

    def stop(_signum: int, _frame: Any) -> None:
        for child in children:
            child.terminate()
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for child in children:
        child.join()


def _worker(host: str, port: int) -> None:
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(2048)
    server = uvicorn.Server(uvicorn.Config(create_app(), log_level="warning", access_log=False))
    server.run(sockets=[sock])
