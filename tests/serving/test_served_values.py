"""What the server sends carries typed values and names documents as a reader knows them: the SSE `completed`
event (each section's value and the answer's), and the recorded answer the history serves."""

from __future__ import annotations

from pathlib import Path

from pipeline.guards.citations import citation_name
from tests.support.app_server import Start, query
from tests.support.typed_values import ValuedQA

RENT = "What is the monthly rent?"


def test_the_completed_event_and_the_history_carry_typed_values_and_titled_citations(
    start: Start, tmp_path: Path
) -> None:
    server = start(program=ValuedQA, history=tmp_path / "history.sqlite")
    result = query(server, question=RENT, property="Banda Lane")
    done = result.last
    assert result.phases[-1] == "completed"
    [section] = done["sections"]
    assert section["value"]["kind"] == "number" and section["value"]["value"] == 285000
    assert done["value"] == section["value"]
    documents = server.store.catalog.documents
    for source in [*section["answer_sources"], *section["sources"], *section["value"]["pages"]]:
        document = documents[source["document_id"]]
        assert source["filename"] == document.filename
        assert source["title"] == citation_name(document, server.store.catalog.entities) != ""
    for source in section["answer_sources"]:  # the Markdown answer cites by title
        assert f"[{source['title']}, page {source['page']}]" in done["answer"]
    server.wait_idle()
    recorded = server.get(f"/v1/history/{done['history_id']}").json()
    assert recorded["trace"]["value"] == done["value"]
    assert recorded["trace"]["sections"][0]["value"] == section["value"]
