"""Properties (hypothesis) of request bodies the HTTP app must refuse with JSON, not a 500
(pipeline/serving/app.py): the regression benchmarks/fuzz.py found.

Each property is one `check_*` function turned into two tests by `fast_and_slow` (tests/support/properties.py):
`test_*` runs 50 examples in the default run, `test_*_slow` 1,000 under `-m slow`; both derandomized, no
example database.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import dspy
import httpx
import pytest
from hypothesis import strategies as st

from pipeline.program.module import ScopedQA
from pipeline.serving import create_app
from pipeline.store import open_store
from pipeline.store.embedders import HashEmbedder
from tests.support.fakes import cooperative, scripted_lm
from tests.support.properties import ANY_TEXT, fast_and_slow

Post = Callable[[bytes, "str | None"], httpx.Response]


@pytest.fixture(scope="module")
def post_query(demo_index_dir: Path, embedder: HashEmbedder) -> Iterator[Post]:
    """POST /v1/query on the real app (ASGI, in process, scripted LM); a server error comes back as a 500."""
    store = open_store(demo_index_dir, embedder)
    app = create_app(store=store, program=ScopedQA(store), lm=scripted_lm(cooperative()), adapter=dspy.ChatAdapter())
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    client = httpx.AsyncClient(transport=transport, base_url="http://scoperag")
    with asyncio.Runner() as runner:

        def post(body: bytes, content_type: str | None) -> httpx.Response:
            headers = {"content-type": content_type} if content_type else {}
            return runner.run(client.post("/v1/query", content=body, headers=headers))

        yield post
        runner.run(client.aclose())


# Values Python's json module reads but JSON cannot carry back out: echoing them in a 422 once made it a 500.
UNWRITABLE = st.one_of(
    st.sampled_from([float("nan"), float("inf"), float("-inf")]),
    st.tuples(ANY_TEXT, st.sampled_from(["\ud800", "\udfff"])).map("".join),
    st.lists(st.sampled_from([float("nan"), "\udc80"]), min_size=1, max_size=3),
)


@st.composite
def rejected_requests(draw: st.DrawFn) -> tuple[bytes, str | None]:
    """A body the server must refuse: a field holding NaN, Infinity or a lone surrogate, or raw bytes (any
    content type, none included) that are not UTF-8."""
    if draw(st.booleans()):
        field = draw(st.sampled_from(["question", "property", "document_ids"]))
        body = {"question": "What is the rent?", field: draw(UNWRITABLE)}
        text = json.dumps(body, allow_nan=True)  # ensure_ascii writes a lone surrogate as its \u escape
        return text.encode(), draw(st.sampled_from(["application/json", "application/json; charset=utf-8"]))
    raw = draw(st.binary(min_size=1, max_size=40).filter(lambda b: not _utf8(b)))
    return raw, draw(st.sampled_from([None, "", "text/plain", "application/octet-stream", "application/json"]))


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def check_rejected_requests_get_a_json_error(post_query: Post, request: tuple[bytes, str | None]) -> None:
    """POST /v1/query with a body holding NaN/Infinity/lone surrogates, or with non-UTF-8 bytes, gets a 400 or
    422 whose body is JSON naming each problem (the bad value shown by repr when JSON cannot carry it): no 500."""
    body, content_type = request
    response = post_query(body, content_type)
    assert response.status_code in (400, 422), (response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/json")
    detail = response.json()["detail"]
    if response.status_code == 422:
        assert detail and all(item["loc"][0] == "body" and item["msg"] for item in detail), detail
    else:
        assert isinstance(detail, str) and detail


(
    test_rejected_requests_get_a_json_error,
    test_rejected_requests_get_a_json_error_slow,
) = fast_and_slow(check_rejected_requests_get_a_json_error, request=rejected_requests())
