"""A pure ASGI middleware that refuses request bodies over a size limit with 413.

The declared Content-Length is checked first; every body (chunked ones too) is also counted as it
arrives, so a missing or false length cannot smuggle more bytes in. Bodies within the limit are
buffered and replayed to the app, which therefore never sees more than the limit.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

log = logging.getLogger(__name__)

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]

DEFAULT_MAX_BODY_BYTES = 1024 * 1024
# How much of an oversized body is read and dropped before answering, so that the client, still
# sending, reads the 413 instead of a connection reset. Beyond this the connection is just closed.
DRAIN_FACTOR = 4


class BodyLimitMiddleware:
    """413 for any HTTP request whose body is larger than `max_body_bytes`."""

    def __init__(self, app: ASGIApp, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        if max_body_bytes < 0:
            raise ValueError(f"max_body_bytes must be >= 0, got {max_body_bytes}")
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.drain_bytes = max_body_bytes * DRAIN_FACTOR

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            if declared <= self.drain_bytes:
                await self._drain(receive, 0)
            await self._reject(send, f"the request body is {declared} bytes")
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # http.disconnect: the client is gone before it finished sending
            body: bytes = message.get("body", b"")
            size += len(body)
            more = bool(message.get("more_body", False))
            if size > self.max_body_bytes:
                if more:
                    await self._drain(receive, size)
                await self._reject(send, f"the request body is over {self.max_body_bytes} bytes")
                return
            chunks.append(body)
            if not more:
                break
        await self.app(scope, _replay(b"".join(chunks), receive), send)

    async def _drain(self, receive: Receive, already: int) -> None:
        """Read and drop the rest of the body, up to `drain_bytes` in all."""
        size = already
        while size <= self.drain_bytes:
            message = await receive()
            if message["type"] != "http.request":
                return
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                return

    async def _reject(self, send: Send, what: str) -> None:
        log.info("413: %s", what)
        detail = f"{what}, over the {self.max_body_bytes}-byte limit; send a smaller request"
        await send_json(send, 413, detail, [(b"connection", b"close")])


async def send_json(send: Send, status: int, detail: str, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """A whole `{"detail": ...}` JSON response, sent from middleware before the app runs."""
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _content_length(scope: MutableMapping[str, Any]) -> int | None:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the server itself rejects a malformed length
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that yields the buffered body once, then the client's later messages (disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
