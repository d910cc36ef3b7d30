"""The in-process llama.cpp model (xllamacpp) as a DSPy 3.4 custom engine.

DSPy 3.4 calls a custom engine as `engine.complete(dspy.lm15.Request) -> dspy.lm15.Response`
(sync calls) and `await async_engine.complete(request)` (acall/aforward); `stream(request)` only
when a caller streams. DSPy owns its response cache, retries and history around the engine; it
reads adapter capability hints (`supports_response_schema`, `supported_params`) from the engine.

Every call goes to the model's own llama.cpp HTTP listener (loopback, key-guarded), never straight into its C++
code, where nothing could stop it: a call made under a question's time bound (pipeline.deadline.call_seconds) has
that many seconds as its timeout, and llama.cpp stops the generation and frees its slot when the request's
connection closes. So a loaded model can be shut down at any moment (`LocalModel.close`, `release_models`): the
connections of the calls under way are cut, then the native server stops its threads and frees the model. That
happens before the interpreter exits (the CLI's exit path, and an atexit hook for every other program): a process
that exits while llama.cpp still decodes has its C++ runtime torn down under the decoding threads and dies of a
segmentation fault (exit 139), typically after a question stopped at its time bound or a Ctrl-C left a call
running.

A loaded model has `parallel` llama.cpp slots sharing one KV cache: up to that many generations
run at once (continuous batching), callers beyond them wait. On a CPU, batching two sequences
costs little more than one token step, so two examples evaluated at once finish sooner than one
after the other (benchmarks/lm_throughput.py).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import http.client
import json
import logging
import secrets
import socket
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from dspy.clients.engines.base import validate_request
from dspy.lm15 import InvalidRequestError, Request, Response, response_to_events

from pipeline.deadline import call_seconds
from pipeline.errors import ModelError
from pipeline.program.lm.translate import PROVIDER, llama_chat_body, response_from_llama

log = logging.getLogger(__name__)

# Host-RAM prompt cache: the KV states of recent prompts, so alternating between a program's
# modules (different instruction prefixes) still reuses their prefixes with a single slot.
PROMPT_CACHE_MIB = 1024
# Prompt tokens llama.cpp reads between two looks at whether a request was cancelled (its micro-batch size).
PROMPT_BATCH = 512


class ChatServer(Protocol):
    """What the engine needs from xllamacpp.Server (tests pass a fake)."""

    def handle_chat_completions(self, body: dict[str, Any]) -> dict[str, Any]: ...


@dataclass(frozen=True)
class LoadOptions:
    """How the model is loaded: CPU threads, context window per sequence (tokens), parallel slots."""

    threads: int = 1
    context_size: int = 8192
    parallel: int = 1


class LMTimeout(TimeoutError):
    """An embedded-model call ran out of the seconds it was given (its generation was stopped)."""


class LocalModel:
    """A loaded chat model plus a semaphore letting `parallel` generations run at once.

    `address` ("http://host:port" as xllamacpp gives it, or "host:port") and `key` reach the model's own HTTP
    listener, where every call runs; without them (a fake server in tests) calls are in-process.
    """

    def __init__(
        self, server: ChatServer, name: str, parallel: int = 1, *, address: str | None = None, key: str | None = None
    ) -> None:
        self.server: ChatServer | None = server
        self.name = name
        self.parallel = parallel
        self.address = address
        self.key = key
        self._slots = threading.BoundedSemaphore(parallel)
        # The connections of the calls under way, cut by `close`; `_state` guards them and `_closed`.
        self._state = threading.Lock()
        self._connections: set[http.client.HTTPConnection] = set()
        self._closed = False

    def chat(self, body: dict[str, Any], seconds: float | None = None) -> dict[str, Any]:
        """The raw llama.cpp chat completion for `body`; waits while every slot is busy. Given `seconds`, the
        wait and the call together take at most that long (LMTimeout past it, the generation stopped)."""
        if self.address and self.key:
            return self._chat_over_http(body, seconds)
        with self._slots:
            server = self._open_server()
            try:
                return server.handle_chat_completions(body)
            except ValueError as exc:
                # xllamacpp raises ValueError for requests it cannot plan (e.g. a schema it cannot compile).
                raise InvalidRequestError(f"embedded LM: {exc}", provider=PROVIDER) from exc

    def _open_server(self) -> ChatServer:
        """The loaded server; ModelError once the model was shut down."""
        server = self.server
        if self._closed or server is None:
            raise ModelClosed()
        return server

    def _chat_over_http(self, body: dict[str, Any], seconds: float | None) -> dict[str, Any]:
        """`body` sent to the model's HTTP listener, within `seconds` when given: closing the connection at the
        timeout is what makes llama.cpp stop generating and free the slot."""
        ends = None if seconds is None else time.monotonic() + seconds
        if not self._slots.acquire(timeout=None if seconds is None else max(0.0, seconds)):
            raise LMTimeout(f"embedded LM: no free slot within {seconds:.1f} s")
        try:
            connection = self._connect(None if ends is None else max(0.01, ends - time.monotonic()))
            try:
                connection.request(
                    "POST",
                    "/v1/chat/completions",
                    json.dumps(body),
                    {"Content-Type": "application/json", "Authorization": f"Bearer {self.key}"},
                )
                reply = connection.getresponse()
                data = reply.read()
            except TimeoutError as exc:
                raise LMTimeout(f"embedded LM: no answer within {seconds:.1f} s (generation stopped)") from exc
            except OSError as exc:
                if self._closed:  # cut by `close`: the process is shutting the model down
                    raise ModelClosed() from exc
                raise
            finally:
                with self._state:
                    self._connections.discard(connection)
                connection.close()
        finally:
            self._slots.release()
        if reply.status != 200:
            raise InvalidRequestError(f"embedded LM: HTTP {reply.status}: {data[:300]!r}", provider=PROVIDER)
        answer: dict[str, Any] = json.loads(data)
        return answer

    def _connect(self, timeout: float | None) -> http.client.HTTPConnection:
        """A connection to the model's listener, open and registered for `close` to cut (refused once closed:
        connected under the lock, so `close` never misses one that is about to send)."""
        address = self.address or ""
        where = urllib.parse.urlsplit(address if "//" in address else f"//{address}")
        with self._state:
            if self._closed:
                raise ModelClosed()
            connection = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port or 80, timeout=timeout)
            connection.connect()
            self._connections.add(connection)
        return connection

    def close(self) -> None:
        """Shut the model down: no call starts any more, the connections of the calls under way are cut (their
        callers get ModelError, llama.cpp stops their generations) and the native server is released, which stops
        its threads and frees the weights. Idempotent."""
        with self._state:
            self._closed = True
            cut = list(self._connections)
        for connection in cut:
            sock = connection.sock
            if sock is not None:
                with contextlib.suppress(OSError):  # already closed by its caller
                    sock.shutdown(socket.SHUT_RDWR)
        # The last reference: xllamacpp's Server frees itself here (its C++ destructor stops the HTTP listener and
        # the decoding loop and joins their threads), while the interpreter and the C++ runtime are intact.
        self.server = None

    @property
    def closed(self) -> bool:
        """Whether `close` shut the model down."""
        return self._closed

    def __deepcopy__(self, memo: dict[int, Any]) -> LocalModel:
        # Optimizers deep-copy programs; the loaded weights are shared, never copied.
        return self


class ModelClosed(ModelError):
    """A call to an embedded model that was shut down (the process is exiting)."""

    def __init__(self) -> None:
        super().__init__(
            "the embedded LM was shut down (the command is ending)", "Run the command again to load it anew"
        )


_loaded: dict[tuple[Path, LoadOptions], LocalModel] = {}
_loading = threading.Lock()


def load_local_model(model_path: Path, name: str, options: LoadOptions) -> LocalModel:
    """The model at `model_path` loaded once per process and options (later calls share it); shut down by
    `release_models` before the interpreter exits."""
    key = (model_path.resolve(), options)
    with _loading:
        if key not in _loaded:
            # xllamacpp always opens an HTTP listener while loaded: bound to loopback on a random port and
            # guarded by a key only this process knows. Every call goes through it (see the module's docstring).
            secret = secrets.token_urlsafe(24)
            server = start_model_server(model_path, options, host="127.0.0.1", port=0, key=secret)
            address = str(getattr(server, "listening_address", "") or "") or None
            if not _loaded:
                atexit.register(release_models)
            _loaded[key] = LocalModel(server, name, options.parallel, address=address, key=secret)
        return _loaded[key]


def release_models() -> int:
    """Shut down every model this process loaded (`LocalModel.close`), so that none is decoding when the
    interpreter exits; returns how many. Called by the CLI on its way out, and at exit for every other program."""
    with _loading:
        models = list(_loaded.values())
        _loaded.clear()
    for model in models:
        model.close()
    if models:
        log.info("embedded LM shut down (%d model(s))", len(models))
    return len(models)


def start_model_server(model_path: Path, options: LoadOptions, *, host: str, port: int, key: str) -> Any:
    """The model loaded by llama.cpp's own server (xllamacpp.Server): OpenAI-compatible HTTP on `host`:`port`
    (0: any free port) behind the API key `key`, and in-process calls; ModelError when it cannot load."""
    import xllamacpp

    try:
        server = xllamacpp.Server(server_params(model_path, options, host=host, port=port, key=key))
    except (RuntimeError, ValueError) as exc:
        raise ModelError(
            f"llama.cpp could not load {model_path} with context_size={options.context_size} on {host}:{port}: {exc}",
            "Check free memory and that the port is free, lower the context size, or delete the file to reassemble it",
            str(model_path),
        ) from exc
    log.info("embedded LM loaded from %s (HTTP listener %s, key-guarded)", model_path, server.listening_address)
    return server


def server_params(model_path: Path, options: LoadOptions, *, host: str, port: int, key: str) -> Any:
    """xllamacpp.CommonParams for the model: `options`' threads and slots (one KV cache shared by the slots, so
    each sequence may still use the whole context_size), a host-RAM prompt cache, HTTP on `host`:`port` behind
    `key`, no web UI, offline, quiet."""
    import xllamacpp

    if not key:
        raise ModelError("an LM server needs an API key", "Give one (SCOPERAG_LM_KEY) or let scoperag make one", host)
    params = xllamacpp.CommonParams()
    params.model.path = str(model_path)
    params.n_ctx = options.context_size * options.parallel
    params.kv_unified = True
    params.n_parallel = options.parallel
    params.cpuparams.n_threads = options.threads
    params.cpuparams_batch.n_threads = options.threads
    # llama.cpp looks for cancelled requests between batches: a prompt read in batches of PROMPT_BATCH tokens
    # stops soon after a call's time is up instead of after the whole prompt (the compute batch is 512 anyway).
    params.n_batch = PROMPT_BATCH
    params.cache_prompt = True
    params.cache_ram_mib = PROMPT_CACHE_MIB
    params.hostnames = [host]
    params.port = port
    params.api_keys = [key]
    params.n_threads_http = max(1, options.parallel)
    params.ui = False
    params.offline = True
    params.warmup = False
    params.verbosity = -1  # llama.cpp writes straight to stderr; keep it quiet
    return params


class EmbeddedEngine:
    """DSPy custom engine over a LocalModel; `max_tokens`/`temperature` apply when a call sets none."""

    supports_response_schema = True
    supports_function_calling = False
    supports_reasoning = False
    supported_params = frozenset(
        {
            "temperature",
            "max_tokens",
            "top_p",
            "stop",
            "seed",
            "presence_penalty",
            "frequency_penalty",
            "response_format",
        }
    )

    def __init__(self, model: LocalModel, *, max_tokens: int, temperature: float) -> None:
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature

    def complete(self, request: Request) -> Response:
        """One generation for a canonical request, with real token counts in `usage`."""
        validate_request(request)
        body = llama_chat_body(request, max_tokens=self.max_tokens, temperature=self.temperature)
        return response_from_llama(self.model.chat(body, call_seconds()), model=self.model.name)

    def stream(self, request: Request) -> Iterator[Any]:
        """The whole response as stream events (llama.cpp's token stream is not forwarded)."""
        return iter(response_to_events(self.complete(request)))

    def close(self) -> None:
        """Nothing to release per engine: the loaded model lives until `release_models`."""

    def __deepcopy__(self, memo: dict[int, Any]) -> EmbeddedEngine:
        return self


class AsyncEmbeddedEngine:
    """The async face DSPy awaits in acall(): the sync engine run in a worker thread."""

    def __init__(self, sync: EmbeddedEngine) -> None:
        self.sync = sync

    async def complete(self, request: Request) -> Response:
        """Same as EmbeddedEngine.complete, without blocking the event loop."""
        return await asyncio.to_thread(self.sync.complete, request)

    async def stream(self, request: Request) -> AsyncIterator[Any]:
        """The whole response as stream events."""
        for event in response_to_events(await self.complete(request)):
            yield event

    async def aclose(self) -> None:
        """Nothing to release per engine."""

    def __deepcopy__(self, memo: dict[int, Any]) -> AsyncEmbeddedEngine:
        return self
