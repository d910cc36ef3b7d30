"""The HTTP server, run on a loopback port and driven over real sockets with httpx."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from pipeline.evaluation.history import History
from pipeline.export.profiles import ProfilePaths, add_profile, export_profile, profile_json
from pipeline.intake.scope import Scope
from pipeline.program.events import Decomposed, Event
from pipeline.program.module import ScopedQA
from pipeline.serving import parse_sse
from pipeline.serving.streaming import INTERNAL_ERROR
from pipeline.store import Store
from tests.support.app_server import Start, Streamed, post, query, wait_until
from tests.support.exports import DEMO_QUESTION, save_demo_export
from tests.support.fakes import ONE_SECTION_PHASES, cooperative, cooperative_llama, embedded_lm, prompt_step

MiB = 1024 * 1024
RENT = "What is the monthly rent at Banda Lane?"
ORDER_ONE_SECTION = ONE_SECTION_PHASES


@dataclass
class SpyLM:
    """A cooperative responder that records each call's step, sleeps `delay`, and can fail from call `fail_from`."""

    delay: float = 0.0
    fail_from: int | None = None
    sub_questions: list[str] | None = None
    calls: list[str] = field(default_factory=list)
    in_flight: int = 0
    peak: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, prompt: str) -> Any:
        with self._lock:
            self.calls.append(prompt_step(prompt))
            number = len(self.calls)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            time.sleep(self.delay)
            if self.fail_from is not None and number >= self.fail_from:
                raise ConnectionError("model server went away")
            return cooperative(self.sub_questions)(prompt)
        finally:
            with self._lock:
                self.in_flight -= 1


def entity_docs(store: Store, name: str) -> set[str]:
    return set(store.entity_document_ids(store.resolve_entity(name).entity_id))


def cited(done: dict[str, Any]) -> set[str]:
    return {s["document_id"] for section in done["sections"] for s in section["sources"]}


# -- the four cases ---------------------------------------------------------------------------------


def assert_one_stream(result: Streamed) -> None:
    assert all(m.data["stream_id"] == result.stream_id for m in result.events)
    assert [m.data["seq"] for m in result.events] == list(range(len(result.events)))
    assert all(m.data["phase"] == m.event for m in result.events)


def test_no_scope_event_order(start: Start) -> None:
    server = start()
    result = query(server, question=RENT)
    assert result.phases == ORDER_ONE_SECTION
    assert_one_stream(result)
    assert result.events[1].data["sub_questions"] == [RENT]
    assert result.last["answer"].startswith("## 1. ") and cited(result.last)


def test_chip_event_order_and_sources_inside_the_chip(start: Start) -> None:
    server = start(cooperative(["Who is the tenant?", "What is the rent?"]))
    chosen = sorted(entity_docs(server.store, "Banda Road"))[:2]
    result = query(server, question="What does the lease say?", document_ids=chosen)
    assert result.phases == [*ORDER_ONE_SECTION[:5], "generating_subquestion", "generating_subquestion", "completed"]
    assert_one_stream(result)
    assert [m.data["index"] for m in result.events if m.event == "generating_subquestion"] == [0, 1]
    sections = result.last["sections"]
    assert [s["sub_question"] for s in sections] == ["Who is the tenant?", "What is the rent?"]
    assert cited(result.last) and cited(result.last) <= set(chosen)


def test_property_event_order_and_sources_of_that_property(start: Start) -> None:
    server = start()
    result = query(server, question="What did the inspection find?", property="Mellifera Gardens")
    assert result.phases == ORDER_ONE_SECTION
    assert_one_stream(result)
    assert cited(result.last) and cited(result.last) <= entity_docs(server.store, "Mellifera Gardens")


def test_wrong_property_never_cites_the_other_property(start: Start) -> None:
    server = start()
    question = "When was Apartment B4, Mellifera Court inspected and by which firm?"
    result = query(server, question=question, property="mellifera-court")
    assert result.phases == ORDER_ONE_SECTION
    assert_one_stream(result)
    court = entity_docs(server.store, "Mellifera Court")
    gardens_only = entity_docs(server.store, "Mellifera Gardens") - court
    assert cited(result.last) and cited(result.last) <= court
    assert not cited(result.last) & gardens_only


def test_a_chip_of_another_propertys_documents_streams_a_typed_answer_without_sources(start: Start) -> None:
    server = start()
    chosen = sorted(entity_docs(server.store, "Banda Lane"))[:2]
    result = query(server, question="What is the rent at 7 Banda Road?", document_ids=chosen)
    assert_one_stream(result)
    done = result.last
    assert done["phase"] == "completed" and done["sections"] == [] and not cited(done)
    assert done["scope_note"]["kind"] == "other_entity"
    assert done["scope_note"]["about"] == ["Banda Lane"] and done["scope_note"]["asked"] == ["Banda Road"]
    assert done["answer"].startswith("The selected documents are about Banda Lane, not Banda Road.")


# -- limits and errors ------------------------------------------------------------------------------


def test_question_over_2000_characters_is_422(start: Start) -> None:
    server = start()
    response = post(server, {"question": "x" * 2001})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "question"]
    assert post(server, {"question": "   "}).status_code == 422
    assert post(server, {"question": RENT, "unexpected": 1}).status_code == 422
    assert server.health()["active_streams"] == 0


def test_tighter_question_limit_is_422(start: Start) -> None:
    server = start(max_question_chars=10)
    response = post(server, {"question": "x" * 11})
    assert response.status_code == 422 and "at most 10 characters" in response.json()["detail"][0]["msg"]


def test_unknown_document_id_is_422_naming_it(start: Start) -> None:
    server = start()
    known = sorted(entity_docs(server.store, "Banda Road"))[0]
    missing = "00000000-0000-4000-8000-000000000000"
    response = post(server, {"question": RENT, "document_ids": [known, missing]})
    assert response.status_code == 422
    (item,) = response.json()["detail"]
    assert item["loc"] == ["body", "document_ids"] and missing in item["msg"] and known not in item["msg"]


def test_non_canonical_document_id_is_422_naming_it(start: Start) -> None:
    server = start()
    upper = sorted(entity_docs(server.store, "Banda Road"))[0].upper()
    response = post(server, {"question": RENT, "document_ids": [upper]})
    assert response.status_code == 422
    (item,) = response.json()["detail"]
    assert item["loc"] == ["body", "document_ids"] and upper in item["msg"]


def test_unknown_property_is_422_naming_it(start: Start) -> None:
    server = start()
    response = post(server, {"question": RENT, "property": "Atlantis Towers"})
    assert response.status_code == 422
    (item,) = response.json()["detail"]
    assert item["loc"] == ["body", "property"] and "Atlantis Towers" in item["msg"]


def _json_padded_to(size: int) -> bytes:
    head = b'{"question": "rent?", "pad": "'
    return head + b"x" * (size - len(head) - 2) + b'"}'


def test_body_over_1_mib_by_content_length_is_413(start: Start) -> None:
    server = start()
    body = _json_padded_to(MiB + 1)
    response = httpx.post(server.query_url, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 413 and "1048576-byte limit" in response.json()["detail"]


def test_chunked_body_over_1_mib_is_413(start: Start) -> None:
    server = start()
    body = _json_padded_to(MiB + 64 * 1024)

    def chunks() -> Iterator[bytes]:
        for offset in range(0, len(body), 64 * 1024):
            yield body[offset : offset + 64 * 1024]

    with httpx.Client() as client:
        request = client.build_request("POST", server.query_url, content=chunks())
        assert request.headers.get("transfer-encoding") == "chunked" and "content-length" not in request.headers
        response = client.send(request)
    assert response.status_code == 413


def test_chunked_body_within_the_limit_is_served(start: Start) -> None:
    server = start()
    body = b'{"question": "' + RENT.encode() + b'"}'

    def chunks() -> Iterator[bytes]:
        yield from (body[i : i + 5] for i in range(0, len(body), 5))

    with (
        httpx.Client() as client,
        client.stream(
            "POST", server.query_url, content=chunks(), headers={"content-type": "application/json"}
        ) as response,
    ):
        assert response.status_code == 200
        phases = [m.event for m in parse_sse(response.iter_lines())]
    assert phases == ORDER_ONE_SECTION


def test_lm_failure_mid_stream_is_an_error_event_then_a_clean_close(start: Start) -> None:
    lm = SpyLM(fail_from=2)  # decomposing works, scoring fails
    server = start(lm)
    result = query(server, question=RENT)
    assert result.phases == ["decomposing", "decomposed", "retrieving", "filtering", "error"]
    assert_one_stream(result)
    assert "ConnectionError" in result.last["message"] and "went away" not in result.last["message"]
    server.wait_idle()
    assert query(server, question=RENT).phases[-1] == "error"  # the server keeps serving


class Exploding(ScopedQA):
    """A program with a bug after its first event."""

    def stream(self, question: str, scope: Scope) -> Iterator[Event]:
        yield Decomposed(sub_questions=(question,))
        raise RuntimeError("secret internals")


def test_unexpected_exception_is_a_generic_error_event(start: Start, caplog: pytest.LogCaptureFixture) -> None:
    server = start(program=Exploding)
    result = query(server, question=RENT)
    assert result.phases == ["decomposed", "error"]
    assert result.last["message"] == INTERNAL_ERROR
    assert "secret internals" not in result.last["message"]
    server.wait_idle()
    assert any(r.exc_info and "secret internals" in str(r.exc_info[1]) for r in caplog.records)


def test_disconnect_mid_stream_frees_its_work(start: Start) -> None:
    lm = SpyLM(delay=0.5)
    server = start(lm)
    with (
        httpx.Client(timeout=30) as client,
        client.stream("POST", server.query_url, json={"question": RENT}) as r,
    ):
        events = parse_sse(r.iter_lines())  # kept referenced: dropping it would close the response
        assert [next(events).event for _ in range(4)] == ["decomposing", "decomposed", "retrieving", "filtering"]
        wait_until(lambda: "score" in lm.calls)
        assert server.state.registry.active == 1
    # The client hung up while its worker was scoring: the worker stops, and the answer is never asked for.
    server.wait_idle()
    assert lm.calls == ["decompose", "score"]
    time.sleep(0.5)
    assert lm.calls == ["decompose", "score"]


def test_keep_alive_comments_while_the_lm_works(start: Start) -> None:
    server = start(SpyLM(delay=0.3), heartbeat_seconds=0.05)
    with httpx.Client(timeout=30) as client, client.stream("POST", server.query_url, json={"question": RENT}) as r:
        lines = list(r.iter_lines())
    assert ": keep-alive" in lines
    assert [m.event for m in parse_sse(lines)] == ORDER_ONE_SECTION


def test_streams_over_the_concurrency_limit_get_503(start: Start) -> None:
    server = start(SpyLM(delay=0.3), max_concurrent_streams=1)
    with (
        httpx.Client(timeout=30) as client,
        client.stream("POST", server.query_url, json={"question": RENT}) as r,
    ):
        events = parse_sse(r.iter_lines())
        assert [next(events).event for _ in range(2)] == ["decomposing", "decomposed"]
        busy = post(server, {"question": RENT})
        assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
    server.wait_idle()
    assert query(server, question=RENT).phases == ORDER_ONE_SECTION


def test_fifty_parallel_streams_each_get_only_their_own_events(start: Start) -> None:
    server = start()
    questions = [f"What is the monthly rent at Banda Lane? (client {i})" for i in range(50)]

    async def one(client: httpx.AsyncClient, question: str) -> Streamed:
        async with client.stream("POST", server.query_url, json={"question": question}) as response:
            assert response.status_code == 200
            lines = [line async for line in response.aiter_lines()]
        return Streamed(response.status_code, response.headers["x-stream-id"], list(parse_sse(lines)))

    async def all_of_them() -> list[Streamed]:
        limits = httpx.Limits(max_connections=50, max_keepalive_connections=50)
        async with httpx.AsyncClient(limits=limits, timeout=120) as client:
            return await asyncio.gather(*(one(client, q) for q in questions))

    results = asyncio.run(all_of_them())
    assert len({r.stream_id for r in results}) == 50
    for question, result in zip(questions, results, strict=True):
        assert result.phases == ORDER_ONE_SECTION
        assert_one_stream(result)
        assert result.events[1].data["sub_questions"] == [question]
        assert result.events[5].data["sub_question"] == question
        assert [s["sub_question"] for s in result.last["sections"]] == [question]
    server.wait_idle()


def test_a_remote_lm_serves_streams_concurrently(start: Start) -> None:
    lm = SpyLM(delay=0.2)
    server = start(lm)

    async def run() -> None:
        async with httpx.AsyncClient(timeout=60) as client:
            await asyncio.gather(*(client.post(server.query_url, json={"question": RENT}) for _ in range(4)))

    asyncio.run(run())
    assert lm.peak >= 2  # calls of different streams overlapped: nothing serialises a remote LM


def test_the_embedded_model_runs_one_generation_at_a_time(start: Start) -> None:
    llama = cooperative_llama(delay=0.05)
    server = start(lm=embedded_lm(llama), adapter=None)  # the server's default adapter: JSON, as `scoperag ask` uses

    def ask(number: int) -> Streamed:
        return query(server, question=f"{RENT} ({number})")

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(ask, range(4)))
    assert all(r.phases == ORDER_ONE_SECTION for r in results)
    assert len(llama.bodies) == 12 and llama.peak == 1  # 4 streams x 3 calls, never two at once
    # JSON-schema decoding reached the model: the streams' LM view exposes the model's capabilities
    assert all(b["response_format"]["type"] == "json_schema" for b in llama.bodies)


def test_answers_are_recorded_in_the_history(start: Start, tmp_path: Path) -> None:
    server = start(history=tmp_path / "history.sqlite")
    result = query(server, question=RENT)
    history_id = result.last["history_id"]
    assert history_id
    server.wait_idle()
    entry = History(tmp_path / "history.sqlite").get(history_id)
    assert entry.question == RENT and entry.answer == result.last["answer"]


# -- health, OpenAPI, profiles ----------------------------------------------------------------------


def test_health(start: Start) -> None:
    server = start()
    health = server.health()
    assert health == {
        "status": "ok",
        "index": server.store.manifest.generation,
        "documents": len(server.store.catalog.documents),
        "program": "uncompiled",
        "lm": "dummy",
        "active_streams": 0,
        "labels": False,
        "tracking": None,
    }


def test_openapi_lists_the_endpoints(start: Start) -> None:
    server = start()
    schema = httpx.get(f"{server.url}/openapi.json").json()
    assert {
        "/v1/query",
        "/v1/health",
        "/v1/profiles",
        "/v1/profiles/export",
        "/v1/profiles/{name}/export",
        "/v1/profiles/{name}/activate",
        "/v1/profiles/{name}/import",
    } <= set(schema["paths"])
    assert "text/event-stream" in schema["paths"]["/v1/query"]["post"]["responses"]["200"]["content"]
    assert schema["components"]["schemas"]["QueryRequest"]["properties"]["question"]["maxLength"] == 2000


def _profile_payload(store: Store, tmp_path: Path, trainset_hash: str = "sha256:" + "1" * 64) -> bytes:
    save_demo_export(store, tmp_path / "export", trainset_hash)
    source = ProfilePaths(registry=tmp_path / "source" / "profiles.json", root=tmp_path / "source" / "programs")
    add_profile(source, "compiled", tmp_path / "export", note="from a test", confirm_overwrite=True)
    return profile_json(export_profile(source, "compiled"))


def test_profile_endpoints(start: Start, tmp_path: Path) -> None:
    llama = cooperative_llama(delay=0.0)  # sees whole conversations, demos included
    paths = ProfilePaths(registry=tmp_path / "served" / "profiles.json", root=tmp_path / "served" / "programs")
    server = start(lm=embedded_lm(llama), adapter=None, profiles=paths)
    base = f"{server.url}/v1/profiles"
    payload = _profile_payload(server.store, tmp_path)
    with httpx.Client(timeout=30) as client:
        assert client.get(base).json() == {"active": None, "profiles": []}

        imported = client.post(f"{base}/alpha/import", content=payload)
        assert imported.status_code == 200 and imported.json()["name"] == "alpha"
        again = client.post(f"{base}/alpha/import", content=payload)
        assert again.status_code == 409 and "already exists" in again.json()["detail"]
        assert client.post(f"{base}/alpha/import", params={"confirm": "true"}, content=payload).status_code == 200
        bad = client.post(f"{base}/beta/import", content=b'{"format": "something-else"}')
        assert bad.status_code == 422 and "format" in bad.json()["detail"]
        assert client.post(f"{base}/bad name!/import", content=payload).status_code == 422

        one = client.get(f"{base}/alpha/export")
        assert one.status_code == 200 and one.json()["format"] == "scoperag-profile/v1"
        assert one.json()["export"]["manifest"]["trainset_hash"] == "sha256:" + "1" * 64
        bundle = client.get(f"{base}/export").json()
        assert bundle["format"] == "scoperag-profiles-bundle/v1" and set(bundle["profiles"]) == {"alpha"}
        assert client.get(f"{base}/nobody/export").status_code == 404

        # Before activation the uncompiled program runs: no demo in its prompts.
        query(server, question=RENT)
        assert llama.bodies and not any(DEMO_QUESTION in json.dumps(b["messages"]) for b in llama.bodies)
        assert client.post(f"{base}/nobody/activate").status_code == 404
        activated = client.post(f"{base}/alpha/activate")
        assert activated.status_code == 200, activated.text
        assert activated.json()["profile"]["active"] is True
        assert activated.json()["program"]["profile"] == "alpha"
        assert client.get(base).json()["active"] == "alpha"
        assert server.health()["program"]["trainset_hash"] == "sha256:" + "1" * 64
        # importing over the profile being served serves the new program
        newer = _profile_payload(server.store, tmp_path / "newer", trainset_hash="sha256:" + "2" * 64)
        assert client.post(f"{base}/alpha/import", params={"confirm": "true"}, content=newer).status_code == 200
        assert server.health()["program"]["trainset_hash"] == "sha256:" + "2" * 64

    assert query(server, question=RENT).phases == ORDER_ONE_SECTION
    # the activated program's demo is now shown to the LM (as an earlier turn of the conversation)
    assert any(DEMO_QUESTION in json.dumps(b["messages"]) for b in llama.bodies)


def test_profile_endpoints_without_a_registry_are_404(start: Start) -> None:
    server = start()
    assert httpx.get(f"{server.url}/v1/profiles").status_code == 404
    assert httpx.post(f"{server.url}/v1/profiles/alpha/import", content=b"{}").status_code == 404
