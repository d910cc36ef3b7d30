"""The HTTP app on a loopback port in this process, driven over real sockets with httpx (tests/serving)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy
import httpx
from fastapi import FastAPI

from pipeline.program.module import ScopedQA
from pipeline.serving import SSEMessage, create_app, parse_sse, running_server
from pipeline.serving.state import ServingState
from pipeline.store import Store, open_store
from tests.support.fakes import Responder, cooperative, scripted_lm


@dataclass
class Server:
    url: str
    app: FastAPI
    store: Store

    @property
    def query_url(self) -> str:
        return f"{self.url}/v1/query"

    @property
    def state(self) -> ServingState:
        return self.app.state.scoperag  # type: ignore[no-any-return]

    def health(self) -> dict[str, Any]:
        return httpx.get(f"{self.url}/v1/health").json()  # type: ignore[no-any-return]

    def get(self, path: str, **options: Any) -> httpx.Response:
        return httpx.get(f"{self.url}{path}", timeout=30, **options)

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Until no stream's worker is running (fails after `timeout`: a stuck worker is a bug)."""
        wait_until(lambda: self.health()["active_streams"] == 0, timeout)


Start = Callable[..., Server]
# DummyLM writes its answers in ChatAdapter's format.
DUMMY_ADAPTER = dspy.ChatAdapter()


@contextmanager
def app_servers(index_dir: Path, embedder: Any) -> Iterator[Start]:
    """A `start(...)` that runs an app on 127.0.0.1:<free port> with a scripted LM; all stop on exit."""
    with ExitStack() as stack:

        def start(
            respond: Responder | None = None,
            program: Callable[[Store], ScopedQA] = ScopedQA,
            lm: Any = None,
            adapter: Any = DUMMY_ADAPTER,
            **options: Any,
        ) -> Server:
            store = open_store(index_dir, embedder)
            lm = lm if lm is not None else scripted_lm(respond or cooperative())
            app = create_app(store=store, program=program(store), lm=lm, adapter=adapter, **options)
            return Server(stack.enter_context(running_server(app)), app, store)

        yield start


@dataclass
class Streamed:
    status: int
    stream_id: str
    events: list[SSEMessage]

    @property
    def phases(self) -> list[str]:
        return [m.event for m in self.events]

    @property
    def last(self) -> dict[str, Any]:
        return self.events[-1].data


def query(server: Server, **body: Any) -> Streamed:
    with httpx.Client(timeout=30) as client, client.stream("POST", server.query_url, json=body) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        events = list(parse_sse(response.iter_lines()))
    return Streamed(response.status_code, response.headers["x-stream-id"], events)


def post(server: Server, body: Any) -> httpx.Response:
    return httpx.post(server.query_url, json=body, timeout=30)


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.01)
