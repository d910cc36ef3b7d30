"""The HTTP API: `POST /v1/query` streams a question's progress as server-sent events.

Everything the app uses is passed to `create_app`; it reads no environment and keeps no global state.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import dspy
from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from pipeline.export import ExportManifest
from pipeline.export.profiles import ProfilePaths
from pipeline.guards.sanitise import MAX_QUESTION_CHARS
from pipeline.program.module import ScopedQA
from pipeline.serving.asking import prepare
from pipeline.serving.catalog_routes import catalog_router
from pipeline.serving.history_routes import history_router
from pipeline.serving.hosts import AllowedHost, HostCheckMiddleware
from pipeline.serving.job_routes import job_router
from pipeline.serving.label_routes import label_router
from pipeline.serving.limits import DEFAULT_MAX_BODY_BYTES, BodyLimitMiddleware
from pipeline.serving.profile_routes import profile_router
from pipeline.serving.schemas import ErrorResponse, HealthResponse, QueryRequest
from pipeline.serving.sse import KEEPALIVE, MEDIA_TYPE, frame
from pipeline.serving.state import LabelFile, Limits, LockedHistory, ServingProgram, ServingState, lm_name
from pipeline.serving.streaming import EventChannel, Idle, StreamRegistry, StreamWorker
from pipeline.serving.web import SecurityHeadersMiddleware, web_router
from pipeline.store import Store

log = logging.getLogger(__name__)

DEFAULT_MAX_CONCURRENT_STREAMS = 64
# Why questions under way when the server stops are cancelled, as their history records it.
SERVER_STOPPED = "the server stopped"
DEFAULT_HEARTBEAT_SECONDS = 15.0

_STREAM_DOC = (
    "Server-sent events in this order, each stage's sent as it starts: `decomposing`, `decomposed` (the "
    "sub-questions), `retrieving`, `filtering`, `generating`, `generating_subquestion` (one per section, once "
    "parsed), then `completed` (answer Markdown, sections with their sources, a `notice` when retrieval steps "
    "were given up, and a `scope_note` when the selected documents are another entity's or no entity's) or "
    "`error`. Every event's data is JSON "
    "carrying the stream's `stream_id` and a `seq` number."
)


def create_app(
    *,
    store: Store,
    program: ScopedQA,
    lm: Any,
    profiles: ProfilePaths | None = None,
    history: Path | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_question_chars: int = MAX_QUESTION_CHARS,
    max_concurrent_streams: int = DEFAULT_MAX_CONCURRENT_STREAMS,
    adapter: Any = None,
    manifest: ExportManifest | None = None,
    profile: str | None = None,
    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS,
    corpus: Path | None = None,
    allowed_hosts: Sequence[AllowedHost] = (),
    label_to: Path | None = None,
    tracking: str | None = None,
    index: str | None = None,
) -> FastAPI:
    """The scoperag HTTP app over `store`, answering with `program` on `lm`.

    `adapter` defaults to dspy.JSONAdapter() (as `scoperag ask` uses); `manifest`/`profile` describe
    where `program` came from (GET /v1/health); `history` is a SQLite file every answered question's
    trace is recorded in (and cited pages are opened through); `profiles` enables the /v1/profiles
    endpoints; `corpus` is the folder the index was built from (cited pages are shown from its files);
    `label_to` is the JSONL traces file labels made on the page are appended to (none: labels are not saved);
    `tracking` the MLflow tracking server the page links runs to; `index` names the store's index in the history
    (pipeline.evaluation.history.index_key), which lists its questions first. Only requests naming the server's own
    loopback names or address, or one of `allowed_hosts`, are answered.
    """
    if not 1 <= max_question_chars <= MAX_QUESTION_CHARS:
        raise ValueError(f"max_question_chars must be within 1..{MAX_QUESTION_CHARS}, got {max_question_chars}")
    state = ServingState(
        store=store,
        lm=lm,
        adapter=adapter if adapter is not None else dspy.JSONAdapter(),
        limits=Limits(max_body_bytes, max_question_chars, max_concurrent_streams, heartbeat_seconds),
        current=ServingProgram(program, manifest, profile),
        registry=StreamRegistry(max_concurrent_streams),
        profiles=profiles,
        history=LockedHistory(history, lm_name(lm), index) if history is not None else None,
        corpus=corpus,
        labels=LabelFile(label_to) if label_to is not None else None,
        tracking=tracking,
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        state.registry.end_all(SERVER_STOPPED)  # questions under way land in the history as cancelled
        if state.history is not None:
            state.history.close()

    app = FastAPI(
        title="scoperag",
        summary="Scoped, sectioned question answering with checked citations, streamed as server-sent events.",
        version="1",
        lifespan=lifespan,
    )
    app.state.scoperag = state
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=max_body_bytes)
    app.add_middleware(SecurityHeadersMiddleware)  # every response, a 413 too, carries the headers
    app.add_middleware(HostCheckMiddleware, allowed=allowed_hosts)  # outermost: nothing runs for a foreign Host
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.include_router(profile_router(state))
    app.include_router(catalog_router(state))
    app.include_router(history_router(state))
    app.include_router(job_router(state))
    app.include_router(label_router(state))
    app.include_router(web_router())
    _add_query_routes(app, state)
    return app


def _add_query_routes(app: FastAPI, state: ServingState) -> None:
    errors: dict[int | str, dict[str, Any]] = {
        413: {"model": ErrorResponse, "description": "The request body is over the size limit"},
        422: {"model": ErrorResponse, "description": "Invalid question, or an unknown document id or property"},
        404: {"model": ErrorResponse, "description": "No such profile (`profile`)"},
        503: {"model": ErrorResponse, "description": "Too many streams are running; retry shortly"},
    }

    @app.post(
        "/v1/query",
        tags=["query"],
        response_class=StreamingResponse,
        responses={200: {"content": {MEDIA_TYPE: {}}, "description": _STREAM_DOC}, **errors},
    )
    async def query(body: QueryRequest) -> Response:
        """Answer a question inside its scope, streaming progress events (text/event-stream). The question is
        cancelled when the client goes away (POST /v1/jobs answers one that outlives its client)."""
        prepared = await run_in_threadpool(prepare, state, body)
        if isinstance(prepared, Response):
            return prepared
        scope, program = prepared.scope, prepared.program
        stream_id = uuid.uuid4().hex
        channel = EventChannel(asyncio.get_running_loop())
        if not state.registry.reserve(stream_id, channel):
            detail = f"{state.registry.limit} streams are already running; retry shortly"
            return JSONResponse({"detail": detail}, status_code=503, headers={"Retry-After": "1"})
        worker = StreamWorker(
            stream_id=stream_id,
            question=body.question,
            scope=scope,
            program=program,
            lm=state.lm,
            adapter=state.adapter,
            channel=channel,
            on_done=state.registry.release,
            history=state.history,
        )
        state.registry.attach(stream_id, worker)
        log.info("stream %s: %s scope, %d chars", stream_id, scope.kind, len(body.question))
        return StreamingResponse(
            _sse(worker, channel, state.limits.heartbeat_seconds, state.registry.release),
            media_type=MEDIA_TYPE,
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "X-Stream-Id": stream_id},
        )

    @app.get("/v1/health", tags=["health"])
    async def health() -> HealthResponse:
        """The index generation, document count, program and LM this server answers with."""
        return HealthResponse(
            index=state.store.manifest.generation,
            documents=len(state.store.catalog.documents),
            program=state.current.info(),
            lm=state.lm_name,
            active_streams=state.registry.active,
            labels=state.labels is not None,
            tracking=state.tracking,
        )


async def _sse(
    worker: StreamWorker, channel: EventChannel, heartbeat: float, release: Callable[[str], None]
) -> AsyncIterator[bytes]:
    """The stream's SSE frames; leaving early (client gone, server stopping) cancels its worker."""
    started = False
    seq = 0
    try:
        worker.start()
        started = True
        while True:
            item = await channel.get(heartbeat)
            if isinstance(item, Idle):
                yield KEEPALIVE  # keeps proxies from closing an idle stream while the LM works
                continue
            if item is None:
                return
            yield frame(item, worker.stream_id, seq)
            seq += 1
    finally:
        channel.cancel()
        if not started:
            release(worker.stream_id)
        log.info("stream %s: closed after %d events", worker.stream_id, seq)


async def _invalid_request(_: Request, exc: Exception) -> JSONResponse:
    """422 naming every problem, like FastAPI's own handler, but never a 500 for an input JSON cannot carry.

    FastAPI echoes each bad `input` into the body; a lone surrogate, NaN/Infinity or undecodable raw bytes
    there made rendering the 422 itself fail. Such an input is shown by its repr instead.
    """
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    return JSONResponse({"detail": [_json_safe_error(e) for e in errors]}, status_code=422)


def _json_safe_error(error: Any) -> Any:
    try:
        encoded = jsonable_encoder(error)
        json.dumps(encoded, ensure_ascii=False, allow_nan=False).encode("utf-8")  # as JSONResponse renders it
        return encoded
    except (ValueError, TypeError, RecursionError):  # UnicodeError is a ValueError
        pass
    loc = [part if isinstance(part, int) else _printable(str(part)) for part in error.get("loc", ())]
    return {
        "type": _printable(str(error.get("type", ""))),
        "loc": loc,
        "msg": _printable(str(error.get("msg", ""))),
        "input": _shown(error.get("input")),
    }


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _shown(value: Any) -> str:
    try:
        return repr(value)[:200]
    except RecursionError:
        return f"<{type(value).__name__} nested too deeply to show>"
