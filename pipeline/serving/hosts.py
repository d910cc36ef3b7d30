"""Which `Host` a request may name: only this server's own names, checked before anything else runs.

A page on another site whose name is re-pointed at 127.0.0.1 (DNS rebinding) reaches the server with its
own name in `Host` and a matching `Origin`; every route would answer it as if it came from the server's
own page. The server therefore answers only requests naming a loopback name (127.0.0.1, localhost,
[::1]) or the address the connection arrived on, with the server's port, or a name its operator allowed
(`scoperag serve --allowed-host NAME[:PORT]`). Every other request gets 400 before any route runs.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any

from pipeline.serving.limits import ASGIApp, Receive, Send, send_json
from pipeline.serving.web import SECURITY_HEADERS

log = logging.getLogger(__name__)

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
DEFAULT_HTTP_PORT = 80
# A Host header: a DNS name or an IPv4 address, or an IPv6 address in brackets; then an optional port.
_HOST = re.compile(
    r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::(?P<port>[0-9]{1,5}))?"
)


@dataclass(frozen=True)
class AllowedHost:
    """A name the operator allowed, on any port (`port` None) or on one port."""

    name: str
    port: int | None = None


def parse_allowed_host(text: str) -> AllowedHost:
    """`NAME` or `NAME:PORT` as an AllowedHost; ValueError naming the problem when it is neither."""
    parsed = _split(text.strip())
    if parsed is None:
        raise ValueError(
            f"{text[:100]!r} is not a host name (NAME or NAME:PORT, e.g. rag.internal or rag.internal:8000)"
        )
    return AllowedHost(*parsed)


def host_refusal(host: str | None, server: tuple[str, int] | None, allowed: Iterable[AllowedHost] = ()) -> str | None:
    """Why a request naming `host` must be refused (None: it may be answered).

    `server` is the (address, port) the connection arrived on: loopback names and that address itself are
    accepted with that port; `allowed` names on the port they were given with (any port without one).
    """
    if host is None:
        return "no Host header"
    parsed = _split(host)
    if parsed is None:
        return "a Host header that is no host name"
    name, port = parsed
    for entry in allowed:
        if name == entry.name and (entry.port is None or entry.port == port):
            return None
    own = set(LOOPBACK_NAMES)
    if server is not None:
        own.add(_bare(server[0].lower()))
    if name not in own:
        return "a name this server was not started to answer to"
    if server is not None and (port if port is not None else DEFAULT_HTTP_PORT) != server[1]:
        return "another port than this server's"
    return None


def _split(host: str) -> tuple[str, int | None] | None:
    match = _HOST.fullmatch(host)
    if match is None:
        return None
    port = match.group("port")
    if port is not None and not 0 < int(port) < 65536:
        return None
    return _bare(match.group("name").lower()), int(port) if port is not None else None


def _bare(name: str) -> str:
    return name[1:-1] if name.startswith("[") and name.endswith("]") else name


class HostCheckMiddleware:
    """400 for any HTTP request whose Host is not one of the server's own names (`host_refusal`)."""

    def __init__(self, app: ASGIApp, allowed: Iterable[AllowedHost] = ()) -> None:
        self.app = app
        self.allowed = tuple(allowed)

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        hosts = [bytes(v).decode("latin-1") for k, v in scope.get("headers", ()) if k.lower() == b"host"]
        server = scope.get("server")
        reason = "more than one Host header" if len(hosts) > 1 else None
        if reason is None:
            reason = host_refusal(hosts[0] if hosts else None, tuple(server) if server else None, self.allowed)
        if reason is None:
            await self.app(scope, receive, send)
            return
        shown = hosts[0][:100] if hosts else ""
        log.info("400: %s %s with Host %r: %s", scope.get("method", "WS"), scope.get("path", "")[:200], shown, reason)
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        detail = (
            f"refused: Host {shown!r} is {reason}. Open the page at http://127.0.0.1:<port>/ (or localhost), "
            "or start the server with `scoperag serve --allowed-host NAME` for a name that reaches it"
        )
        await send_json(send, 400, detail, SECURITY_HEADERS)
