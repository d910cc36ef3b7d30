"""The `request` fuzz target (benchmarks/fuzz.py): request bodies through QueryRequest and the real app.

Bodies (request-shaped JSON with good and bad fields, any JSON, bytes, nesting, traps, under any content type) go
through QueryRequest (the model POST /v1/query validates) and, for about one in five, through the real app (httpx
ASGI transport, scripted LM): statuses are 2xx/4xx only, agree with the model, error bodies are JSON naming the
problem and streams end with `completed` or `error`.
"""

from __future__ import annotations

import asyncio
import email.message
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy
import httpx
from fuzz_inputs import ANY_TEXT, RAW_TRAPS, Record, deep, shown
from hypothesis import strategies as st
from pydantic import ValidationError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's pipeline and tests

from pipeline.errors import UnknownScopeError
from pipeline.guards.ids import is_canonical_uuid
from pipeline.guards.sanitise import MAX_QUESTION_CHARS
from pipeline.intake.scope import resolve_scope
from pipeline.program.module import ScopedQA
from pipeline.serving import create_app, parse_sse
from pipeline.serving.hosts import AllowedHost
from pipeline.serving.limits import DEFAULT_MAX_BODY_BYTES
from pipeline.serving.schemas import MAX_DOCUMENT_IDS, MAX_PROPERTY_CHARS, QueryRequest
from pipeline.store import Store
from tests.support.fakes import cooperative, scripted_lm
from tests.support.properties import JSON_VALUES, mutated_bytes

CONTENT_TYPES = (
    "application/json",
    "application/json",
    None,
    "",
    "application/json; charset=latin-1",
    "application/merge-patch+json",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/octet-stream",
    "application/jsonx",
)
LONG_TEXT = ("x" * (MAX_QUESTION_CHARS - 1), "x" * MAX_QUESTION_CHARS, "x" * (MAX_QUESTION_CHARS + 1), "é" * 5000)
NON_STRINGS = st.one_of(
    st.none(),
    st.integers(),
    st.booleans(),
    st.floats(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@dataclass(frozen=True)
class Vocabulary:
    """Known document ids and property names of the served store, to build requests that get through."""

    documents: tuple[str, ...]
    properties: tuple[str, ...]


def _questions() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(["What is the monthly rent?", "Who is the tenant?", "rent?"]),
        ANY_TEXT,
        st.sampled_from(["", " ", "\n\t", "\u200b", *LONG_TEXT]),
        NON_STRINGS,
    )


def _document_ids(vocabulary: Vocabulary) -> st.SearchStrategy[Any]:
    known = st.sampled_from(vocabulary.documents)
    return st.one_of(
        st.none(),
        st.lists(known, min_size=1, max_size=3),
        st.lists(st.one_of(known, st.uuids().map(str), known.map(str.upper), ANY_TEXT), max_size=4),
        st.lists(known, min_size=MAX_DOCUMENT_IDS, max_size=MAX_DOCUMENT_IDS + 1),
        st.lists(NON_STRINGS, min_size=1, max_size=2),
        NON_STRINGS.filter(lambda v: not isinstance(v, list) and v is not None),
    )


def _properties(vocabulary: Vocabulary) -> st.SearchStrategy[Any]:
    known = st.sampled_from(vocabulary.properties)
    return st.one_of(
        st.none(),
        known,
        known.map(str.upper),
        known.map(_fullwidth),
        ANY_TEXT,
        st.sampled_from(["", "x" * MAX_PROPERTY_CHARS, "x" * (MAX_PROPERTY_CHARS + 1), "Atlantis Towers"]),
        NON_STRINGS.filter(lambda v: v is not None),
    )


@st.composite
def request_bodies(draw: st.DrawFn, vocabulary: Vocabulary) -> tuple[bytes, str | None]:
    """(body, content type): request-shaped JSON with good and bad fields, or any JSON, bytes, nesting, traps."""
    content_type = draw(st.sampled_from(CONTENT_TYPES))
    kind = draw(st.integers(0, 9))
    if kind <= 6:
        body: dict[str, Any] = {}
        for key, values in (
            ("question", _questions()),
            ("document_ids", _document_ids(vocabulary)),
            ("property", _properties(vocabulary)),
        ):
            if key == "question" or draw(st.booleans()):
                body[key] = draw(values)
        if draw(st.integers(0, 9)) == 9:
            body[draw(st.sampled_from(["scope", "k", "Question", ""]))] = draw(JSON_VALUES)
        if draw(st.integers(0, 9)) == 9:
            body.pop("question", None)
        encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-16", "utf-32"]))
        text = json.dumps(body, ensure_ascii=draw(st.booleans()), allow_nan=True)
        return text.encode(encoding, "surrogatepass"), content_type
    if kind == 7:
        valid = json.dumps({"question": "What is the rent?", "property": vocabulary.properties[0]}).encode()
        return draw(mutated_bytes(valid, duplicate=True, max_cut=64)), content_type
    if kind == 8:
        return json.dumps(draw(JSON_VALUES)).encode(), content_type
    return draw(
        st.one_of(
            st.binary(max_size=200),
            st.sampled_from(RAW_TRAPS),
            st.sampled_from([100, 900, 1100, 100_000]).map(deep),
            st.sampled_from([DEFAULT_MAX_BODY_BYTES - 40, DEFAULT_MAX_BODY_BYTES + 1]).map(
                lambda n: b'{"question": "' + b"x" * (n - 16) + b'"}'
            ),
        )
    ), content_type


def _reads_json(content_type: str | None) -> bool:
    """Whether FastAPI parses the body as JSON for this content type (the rule in fastapi/routing.py; with
    strict_content_type, its default, a body without a content type is not JSON)."""
    if not content_type:
        return False
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json"))


def _check_model(request: QueryRequest) -> None:
    """Every invariant a QueryRequest that validated must hold."""
    assert isinstance(request.question, str) and 1 <= len(request.question) <= MAX_QUESTION_CHARS
    assert request.question.strip()
    assert request.document_ids is None or len(request.document_ids) <= MAX_DOCUMENT_IDS
    assert all(is_canonical_uuid(d) for d in request.document_ids or ())
    assert request.property is None or 1 <= len(request.property) <= MAX_PROPERTY_CHARS


@dataclass
class RequestTarget:
    """Request bodies through QueryRequest, and a share of them through the real app."""

    store: Store
    name: str = "request"

    def __post_init__(self) -> None:
        entities = list(self.store.catalog.entities.values())
        self.vocabulary = Vocabulary(
            documents=tuple(sorted(self.store.catalog.documents)),
            properties=tuple(n for e in entities for n in (e.name, e.slug, e.entity_id)),
        )
        app = create_app(
            store=self.store,
            program=ScopedQA(self.store),
            lm=scripted_lm(cooperative()),
            adapter=dspy.ChatAdapter(),
            # the in-process client names this host; the server answers only hosts it was started for
            allowed_hosts=(AllowedHost("fuzz"),),
        )
        self.runner = asyncio.Runner()
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app, raise_app_exceptions=False), base_url="http://fuzz", timeout=60
        )

    def close(self) -> None:
        self.runner.run(self.client.aclose())
        self.runner.close()

    def expected(self, body: bytes, content_type: str | None) -> str:
        """What the server should answer, from the model alone: ok, too_large, unparseable, invalid, unknown_scope."""
        if len(body) > DEFAULT_MAX_BODY_BYTES:
            return "too_large"
        if not _reads_json(content_type):
            return "invalid" if body else "missing"
        if not body:
            return "missing"
        try:
            value = json.loads(body)
        except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
            return "unparseable"
        try:
            request = QueryRequest.model_validate(value)
        except ValidationError:
            return "invalid"
        _check_model(request)
        try:
            resolve_scope(self.store, document_ids=request.document_ids, property_ref=request.property)
        except UnknownScopeError:
            return "unknown_scope"
        return "ok"

    def check(self, data: st.DataObject, record: Record) -> str:
        body, content_type = data.draw(request_bodies(self.vocabulary), label="request")
        through_app = data.draw(st.sampled_from([False, False, False, False, True]), label="through_app")
        record.update(content_type=content_type, body=shown(body), body_bytes=len(body), through_app=through_app)
        expected = self.expected(body, content_type)
        if not through_app:
            return f"model: {expected}"
        headers = {"content-type": content_type} if content_type is not None else {}
        response = self.runner.run(self.client.post("/v1/query", content=body, headers=headers))
        record["status"] = response.status_code
        self._check_response(response, expected)
        return f"app: {response.status_code}"

    def _check_response(self, response: httpx.Response, expected: str) -> None:
        status = response.status_code
        assert status < 500, f"server error {status}: {response.text[:300]}"
        allowed = {
            "ok": {200},
            "too_large": {413},
            "unparseable": {400, 422},
            "invalid": {422},
            "missing": {422},
            "unknown_scope": {422},
        }[expected]
        assert status in allowed, f"expected {sorted(allowed)} ({expected}), got {status}: {response.text[:300]}"
        if status == 200:
            events = list(parse_sse(response.text.splitlines()))
            assert events and events[-1].event in ("completed", "error"), [e.event for e in events]
            assert [e.data["seq"] for e in events] == list(range(len(events)))
            return
        assert response.headers["content-type"].startswith("application/json"), response.headers["content-type"]
        detail = response.json()["detail"]
        if status == 422:
            assert detail and all(item["loc"] and item["msg"] for item in detail), detail
        else:
            assert isinstance(detail, str) and detail, detail
