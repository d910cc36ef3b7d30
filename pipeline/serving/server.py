"""Running the app on uvicorn: in the foreground (`scoperag serve`), or in a thread (tests, benchmarks)."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dspy
import uvicorn
from fastapi import FastAPI

from pipeline.errors import ExamplesError, ScopeRagError
from pipeline.evaluation.examples import load_examples
from pipeline.evaluation.history import index_key
from pipeline.export.choice import build_program, plan_program, shipped_for
from pipeline.export.profiles import ProfilePaths
from pipeline.program.lm import LMKeys, make_lm
from pipeline.serving.app import create_app
from pipeline.serving.hosts import AllowedHost
from pipeline.settings import Settings
from pipeline.store import open_store

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
# Streams still running this long after a stop request are cancelled.
GRACEFUL_SHUTDOWN_SECONDS = 5
STARTUP_TIMEOUT_SECONDS = 30.0


def _config(app: FastAPI, host: str, port: int) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
    )


class _ReadyServer(uvicorn.Server):
    """A uvicorn server that calls `ready()` once it listens (not before: loading the model takes a while)."""

    def __init__(self, config: uvicorn.Config, ready: Callable[[], None]) -> None:
        super().__init__(config)
        self._ready = ready

    async def startup(self, sockets: list[Any] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self._ready()


def serve(
    app: FastAPI, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, ready: Callable[[], None] | None = None
) -> None:
    """Serve `app` until interrupted (Ctrl-C / SIGTERM stop it gracefully); `ready()` once it answers."""
    log.info("scoperag serving on http://%s:%d (OpenAPI at /docs)", host, port)
    _ReadyServer(_config(app, host, port), ready or (lambda: None)).run()


@contextmanager
def running_server(app: FastAPI, host: str = DEFAULT_HOST, port: int = 0) -> Iterator[str]:
    """`app` served from a background thread (port 0: any free port); yields its base URL, stops on exit."""
    server = uvicorn.Server(_config(app, host, port))
    thread = threading.Thread(target=server.run, name="scoperag-uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise ScopeRagError(f"the server did not start on {host}:{port} (port in use?)")
        time.sleep(0.01)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{bound}"
    finally:
        server.should_exit = True
        thread.join(GRACEFUL_SHUTDOWN_SECONDS + 5)


def build_app(
    *,
    index_dir: Path,
    lm_spec: str | None,
    cache_dir: Path,
    lm_typed: bool = False,
    program_dir: Path | None = None,
    uncompiled: bool = False,
    profiles: ProfilePaths | None = None,
    history: Path | None = None,
    lm_threads: int | None = None,
    settings: Settings | None = None,
    announce: Callable[[str], None] = log.info,
    corpus: Path | None = None,
    allowed_hosts: Sequence[AllowedHost] = (),
    keys: LMKeys | None = None,
    label_to: Path | None = None,
    tracking: str | None = None,
) -> FastAPI:
    """The app `scoperag serve` runs: the program chosen (`announce` is told its line first: where it came from
    and which steps run by the LM; `lm_typed`: `lm_spec` was typed as --lm, which chooses the program as
    pipeline.export.choice says), the index opened, the LM made, the program run with `settings`; cited pages
    shown from the files in `corpus`; requests answered when they name the server's own names or one of
    `allowed_hosts`; labels appended to `label_to`; MLflow runs linked on `tracking`."""
    settings = settings or Settings()
    shipped = shipped_for(lm_spec)
    lm_named = lm_spec if lm_typed else None
    plan = plan_program(program_dir, profiles, settings, shipped=shipped, uncompiled=uncompiled, lm=lm_named)
    announce(plan.line())
    store = open_store(index_dir)
    lm = make_lm(lm_spec, cache_dir=cache_dir, threads=lm_threads, requests=settings.lm_requests, keys=keys)
    choice = build_program(plan, store)
    return create_app(
        store=store,
        program=choice.program,
        manifest=choice.manifest,
        profile=choice.profile,
        lm=lm,
        adapter=dspy.JSONAdapter(),
        profiles=profiles,
        history=history,
        index=index_key(index_dir),
        corpus=corpus,
        allowed_hosts=allowed_hosts,
        label_to=label_to,
        tracking=tracking,
    )


def checked_label_file(path: Path) -> Path:
    """`path`, a traces file labels can be appended to: valid when it exists, its folder writable; ExamplesError
    naming the problem otherwise (before the model is loaded)."""
    if path.exists():
        load_examples(path)  # ExamplesError names the bad line
    folder = path.parent if path.parent.exists() else next(p for p in path.parents if p.exists())
    if not os.access(folder, os.W_OK):
        raise ExamplesError(f"{path}: labels cannot be written there ({folder} is not writable); choose another file")
    return path


def run(
    *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, ready: Callable[[], None] | None = None, **app: Any
) -> None:
    """`scoperag serve`: `build_app(**app)`, served until interrupted; `ready()` once it answers."""
    serve(build_app(**app), host, port, ready)
