"""The server answers only requests naming its own names: a page on another name re-pointed at 127.0.0.1
(DNS rebinding) gets 400 on every route before anything runs, over a real socket, against the app as
`scoperag serve` builds it, without and with `--allowed-host`."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from pipeline.export.profiles import ProfilePaths, add_profile, export_profile, list_profiles
from pipeline.serving import running_server
from pipeline.serving.hosts import AllowedHost, host_refusal, parse_allowed_host
from pipeline.serving.server import build_app
from pipeline.settings import DEFAULT_PROFILES
from pipeline.store import Store
from tests.support.exports import save_demo_export
from tests.support.serve_process import scoperag_serve

REBIND = "rebind.evil.example"
# Nothing listens here: the app is built with a remote LM it never calls in these tests.
UNUSED_LM = "http://127.0.0.1:9/v1"
FOREIGN_HOSTS = ("{rebind}:{port}", "a b\tc", "evil.example", "evil.example:{port}", "127.0.0.1:1", "")


# ---- the rule, one test per branch ---------------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost:8000", "LOCALHOST:8000", "[::1]:8000"])
def test_loopback_names_with_the_servers_port_are_answered(host: str) -> None:
    assert host_refusal(host, ("127.0.0.1", 8000)) is None


def test_the_address_the_connection_arrived_on_is_answered() -> None:
    assert host_refusal("192.0.2.7:8000", ("192.0.2.7", 8000)) is None
    assert host_refusal("192.0.2.8:8000", ("192.0.2.7", 8000)) == "a name this server was not started to answer to"


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        (None, "no Host header"),
        ("a b\tc", "a Host header that is no host name"),
        ("user@127.0.0.1:8000", "a Host header that is no host name"),
        ("127.0.0.1:99999", "a Host header that is no host name"),
        ("evil.example", "a name this server was not started to answer to"),
        (f"{REBIND}:8000", "a name this server was not started to answer to"),
        ("localhost.:8000", "a Host header that is no host name"),  # a trailing dot is refused too
        ("127.0.0.1:8001", "another port than this server's"),
        ("localhost", "another port than this server's"),  # no port: 80
    ],
)
def test_any_other_host_is_refused_with_its_reason(host: str | None, reason: str) -> None:
    assert host_refusal(host, ("127.0.0.1", 8000)) == reason


def test_allowed_names_are_answered_on_any_port_or_on_theirs() -> None:
    anywhere, one_port = parse_allowed_host("RAG.internal"), parse_allowed_host("proxy.internal:443")
    assert anywhere == AllowedHost("rag.internal") and one_port == AllowedHost("proxy.internal", 443)
    assert host_refusal("rag.internal", ("127.0.0.1", 8000), [anywhere]) is None
    assert host_refusal("rag.internal:9999", ("127.0.0.1", 8000), [anywhere]) is None
    assert host_refusal("proxy.internal:443", ("127.0.0.1", 8000), [one_port]) is None
    assert host_refusal("proxy.internal:444", ("127.0.0.1", 8000), [one_port]) is not None
    with pytest.raises(ValueError, match="is not a host name"):
        parse_allowed_host("http://rag.internal/")


# ---- over a real socket, the app as `scoperag serve` builds it --------------------------------------------


def _raw(
    base: str, method: str, path: str, host: str, body: bytes = b"", origin: str | None = None
) -> tuple[int, bytes]:
    """One HTTP/1.1 request with exactly this Host header; the status and body of the answer."""
    address = base.removeprefix("http://").rsplit(":", 1)
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Connection: close", f"Content-Length: {len(body)}"]
    if body:
        lines.append("Content-Type: application/json")
    if origin is not None:
        lines.append(f"Origin: {origin}")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    with socket.create_connection((address[0], int(address[1])), timeout=30) as conn:
        conn.sendall(request)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    head, _, rest = b"".join(chunks).partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), rest


@pytest.fixture
def profiles(tmp_path: Path, demo_store: Store) -> ProfilePaths:
    """A registry holding profile `alpha` (not active)."""
    root = tmp_path / DEFAULT_PROFILES
    paths = ProfilePaths(registry=root / "profiles.json", root=root / "programs")
    add_profile(paths, "alpha", save_demo_export(demo_store, tmp_path / "export"))
    return paths


def _app(demo_index_dir: Path, tmp_path: Path, profiles: ProfilePaths, allowed: tuple[str, ...] = ()) -> FastAPI:
    return build_app(
        index_dir=demo_index_dir,
        lm_spec=UNUSED_LM,
        cache_dir=tmp_path / "models",
        profiles=profiles,
        history=tmp_path / "history.sqlite",
        allowed_hosts=[parse_allowed_host(name) for name in allowed],
    )


@pytest.fixture
def served(demo_index_dir: Path, tmp_path: Path, profiles: ProfilePaths) -> Iterator[tuple[str, FastAPI]]:
    app = _app(demo_index_dir, tmp_path, profiles)
    with running_server(app) as base:
        yield base, app


def _every_route(app: FastAPI, document_id: str) -> Iterator[tuple[str, str]]:
    """(method, path) of every route the app documents, path parameters filled in with real-looking values,
    then the page, the documentation and a path no route has."""
    values = {"history_id": "0" * 32, "document_id": document_id, "page": "1", "name": "alpha"}
    for template, operations in app.openapi()["paths"].items():
        path = template
        for key, value in values.items():
            path = path.replace(f"{{{key}}}", value)
        for method in operations:
            yield method.upper(), path
    for path in ("/", "/static/js/main.js", "/openapi.json", "/docs", "/no/such/route"):
        yield "GET", path


@pytest.mark.parametrize("template", FOREIGN_HOSTS)
def test_every_route_refuses_a_foreign_host_before_anything_runs(
    served: tuple[str, FastAPI], demo_store: Store, template: str
) -> None:
    base, app = served
    port = base.rsplit(":", 1)[1]
    host = template.format(rebind=REBIND, port=port)
    origin = f"http://{host}"  # the rebinding page's own origin: it matches its Host, so the origin check passes
    routes = list(_every_route(app, next(iter(demo_store.catalog.documents))))
    assert len(routes) >= 15
    for method, path in routes:
        status, body = _raw(base, method, path, host, b"{}" if method == "POST" else b"", origin)
        assert status == 400, (method, path, status, body[:200])
        assert "--allowed-host" in json.loads(body)["detail"]


def test_a_rebinding_page_can_neither_import_nor_activate_a_profile_nor_ask(
    served: tuple[str, FastAPI], profiles: ProfilePaths, tmp_path: Path
) -> None:
    base, app = served
    port = base.rsplit(":", 1)[1]
    payload = json.dumps(export_profile(profiles, "alpha")).encode()
    foreign, own = f"{REBIND}:{port}", f"127.0.0.1:{port}"
    for host in (foreign, own):
        origin = f"http://{host}"
        imported, _ = _raw(base, "POST", "/v1/profiles/beta/import", host, payload, origin)
        activated, _ = _raw(base, "POST", "/v1/profiles/beta/activate", host, b"", origin)
        asked, _ = _raw(base, "POST", "/v1/query", host, json.dumps({"question": ""}).encode(), origin)
        if host == foreign:
            assert (imported, activated, asked) == (400, 400, 400)
            assert [p.name for p in list_profiles(profiles)] == ["alpha"]
            assert app.state.scoperag.current.profile is None
        else:  # the same requests from the server's own page work: the refusal above was the Host's alone
            assert (imported, activated, asked) == (200, 200, 422)
            assert app.state.scoperag.current.profile == "beta"


def test_allowed_host_names_are_answered_and_no_other(
    demo_index_dir: Path, tmp_path: Path, profiles: ProfilePaths
) -> None:
    app = _app(demo_index_dir, tmp_path, profiles, ("rag.internal",))
    with running_server(app) as base:
        port = base.rsplit(":", 1)[1]
        for host in ("rag.internal", f"rag.internal:{port}", f"localhost:{port}", f"127.0.0.1:{port}"):
            status, body = _raw(base, "GET", "/v1/profiles", host)
            assert status == 200 and json.loads(body)["profiles"][0]["name"] == "alpha", host
        for host in (f"{REBIND}:{port}", "rag.internal.evil.example", "evil.example"):
            assert _raw(base, "GET", "/v1/profiles", host)[0] == 400, host


def test_scoperag_serve_takes_allowed_host_from_its_command_line(demo_index_dir: Path, tmp_path: Path) -> None:
    options = ["--index", str(demo_index_dir), "--lm", UNUSED_LM, "--allowed-host", "rag.internal"]
    with scoperag_serve(options, tmp_path) as base:
        port = base.rsplit(":", 1)[1]
        statuses: dict[str, Any] = {
            host: _raw(base, "GET", "/v1/health", host)[0]
            for host in ("rag.internal", f"127.0.0.1:{port}", f"{REBIND}:{port}", "a b\tc")
        }
    assert statuses == {"rag.internal": 200, f"127.0.0.1:{port}": 200, f"{REBIND}:{port}": 400, "a b\tc": 400}
