"""The web page (`/` and `/static/...`, files shipped inside the package) and the headers every response
carries: a strict Content-Security-Policy (scripts, styles, images and requests from this server only, no
inline code), no MIME sniffing, no framing, no referrer; and no state-changing request from another origin.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import Response

from pipeline.serving.limits import ASGIApp, Receive, Send, send_json

log = logging.getLogger(__name__)

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def static_files() -> dict[str, tuple[bytes, str]]:
    """Every file of the page (path under static/ -> bytes and media type), read once from the package."""
    files: dict[str, tuple[bytes, str]] = {}

    def walk(folder: Traversable, prefix: str) -> None:
        for item in folder.iterdir():
            if item.is_dir():
                walk(item, f"{prefix}{item.name}/")
            else:
                suffix = "." + item.name.rpartition(".")[2]
                if suffix in MEDIA_TYPES:
                    files[prefix + item.name] = (item.read_bytes(), MEDIA_TYPES[suffix])

    walk(resources.files("pipeline.serving") / "static", "")
    return files


def web_router() -> APIRouter:
    """`/` (the page) and `/static/{path}`; only files shipped with the package are ever served."""
    files = static_files()
    router = APIRouter(include_in_schema=False)

    def send(path: str) -> Response:
        if path not in files:
            raise HTTPException(404, "no such file")
        body, media_type = files[path]
        return Response(body, media_type=media_type, headers={"Cache-Control": "no-cache"})

    @router.get("/")
    def page() -> Response:
        return send("index.html")

    @router.get("/static/{path:path}")
    def static(path: str) -> Response:
        return send(path)

    return router


class SecurityHeadersMiddleware:
    """Adds SECURITY_HEADERS to every HTTP response, and answers 403 to a state-changing request whose
    Origin is not this server (a page elsewhere cannot make a browser import or activate a profile here)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        foreign = _foreign_origin(scope)
        if foreign is not None:
            log.info("403: %s %s from origin %r", scope["method"], scope["path"], foreign[:100])
            await _forbidden(send, foreign)
            return

        async def with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


def _header(scope: MutableMapping[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _foreign_origin(scope: MutableMapping[str, Any]) -> str | None:
    """The request's Origin when it is a state-changing request from another origin; else None."""
    if scope["method"] in SAFE_METHODS:
        return None
    origin = _header(scope, b"origin")
    if origin is None:  # not sent by a browser (curl, httpx): nothing to forge
        return None
    host = _header(scope, b"host")
    return None if host is not None and origin in (f"http://{host}", f"https://{host}") else origin


async def _forbidden(send: Send, origin: str) -> None:
    detail = f"cross-origin request refused (origin {origin[:100]!r}); use the page this server serves"
    await send_json(send, 403, detail, SECURITY_HEADERS)
