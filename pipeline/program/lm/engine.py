"""The in-process llama.cpp model (xllamacpp) as a DSPy 3.4 custom engine.

DSPy 3.4 calls a custom engine as `engine.complete(dspy.lm15.Request) -> dspy.lm15.Response`
(sync calls) and `await async_engine.complete(request)` (acall/aforward); `stream(request)` only
when a caller streams. DSPy owns its response cache, retries and history around the engine; it
reads adapter capability hints (`supports_response_schema`, `supported_params`) from the engine.

A call made under a question's time bound (pipeline.deadline.call_seconds) does not run in-process, where
nothing could stop it: it goes to the model's own llama.cpp HTTP listener (loopback, key-guarded) with that
many seconds as its timeout, and llama.cpp stops the generation and frees its slot when the request's
connection closes. Calls with no bound (stage jobs, benchmarks) stay in-process.

A loaded model has `parallel` llama.cpp slots sharing one KV cache: up to that many generations
run at once (continuous batching), callers beyond them wait. On a CPU, batching two sequences
costs little more than one token step, so two examples evaluated at once finish sooner than one
after the other (benchmarks/lm_throughput.py).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import secrets
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
    listener, where a call given a time limit runs; without them every call is in-process.
    """

    def __init__(
        self, server: ChatServer, name: str, parallel: int = 1, *, address: str | None = None, key: str | None = None
    ) -> None:
        self.server = server
        self.name = name
        self.parallel = parallel
        self.address = address
        self.key = key
        self._slots = threading.BoundedSemaphore(parallel)

    def chat(self, body: dict[str, Any], seconds: float | None = None) -> dict[str, Any]:
        """The raw llama.cpp chat completion for `body`; waits while every slot is busy. Given `seconds`, the
        wait and the call together take at most that long (LMTimeout past it, the generation stopped)."""
        if seconds is not None and self.address and self.key:
            return self._chat_over_http(body, seconds)
        with self._slots:
            try:
                return self.server.handle_chat_completions(body)
            except ValueError as exc:
                # xllamacpp raises ValueError for requests it cannot plan (e.g. a schema it cannot compile).
                raise InvalidRequestError(f"embedded LM: {exc}", provider=PROVIDER) from exc

    def _chat_over_http(self, body: dict[str, Any], seconds: float) -> dict[str, Any]:
        """`body` sent to the model's HTTP listener within `seconds`: closing the connection at the timeout is
        what makes llama.cpp stop generating and free the slot."""
        ends = time.monotonic() + seconds
        if not self._slots.acquire(timeout=max(0.0, seconds)):
            raise LMTimeout(f"embedded LM: no free slot within {seconds:.1f} s")
        try:
            address = self.address or ""
            where = urllib.parse.urlsplit(address if "//" in address else f"//{address}")
            left = max(0.01, ends - time.monotonic())
            connection = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port or 80, timeout=left)
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
            finally:
                connection.close()
        finally:
            self._slots.release()
        if reply.status != 200:
            raise InvalidRequestError(f"embedded LM: HTTP {reply.status}: {data[:300]!r}", provider=PROVIDER)
        answer: dict[str, Any] = json.loads(data)
        return answer

    def __deepcopy__(self, memo: dict[int, Any]) -> LocalModel:
        # Optimizers deep-copy programs; the loaded weights are shared, never copied.
        return self


_loaded: dict[tuple[Path, LoadOptions], LocalModel] = {}
_loading = threading.Lock()


def load_local_model(model_path: Path, name: str, options: LoadOptions) -> LocalModel:
    """The model at `model_path` loaded once per process and options (later calls share it)."""
    key = (model_path.resolve(), options)
    with _loading:
        if key not in _loaded:
            # xllamacpp always opens an HTTP listener while loaded: bound to loopback on a random port and
            # guarded by a key only this process knows. In-process calls bypass it; calls with a time limit use it.
            secret = secrets.token_urlsafe(24)
            server = start_model_server(model_path, options, host="127.0.0.1", port=0, key=secret)
            address = str(getattr(server, "listening_address", "") or "") or None
            _loaded[key] = LocalModel(server, name, options.parallel, address=address, key=secret)
        return _loaded[key]


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
        """Nothing to release per engine: the loaded model lives for the process."""

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
