"""The wrong-property traps of the demo corpus (datasets/demo/traps.toml): the gate makes the
expected keep/exclude call on each, alone, among the whole corpus, and end to end."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from pipeline.execution.executor import StepExecutor
from pipeline.execution.steps import scope_steps
from pipeline.execution.tools import SearchSettings
from pipeline.guards.entity_gate import gate, gate_inputs, judge_document
from pipeline.intake.scope import NO_SCOPE, question_scope
from pipeline.settings import EntityGateConfig
from pipeline.store import Store
from tests.support.paths import ROOT

TRAPS_FILE = ROOT / "datasets" / "demo" / "traps.toml"
TRAPS: list[dict[str, Any]] = tomllib.loads(TRAPS_FILE.read_text(encoding="utf-8"))["traps"]
CONFIG = EntityGateConfig()


def trap_id(trap: dict[str, Any]) -> str:
    return f"{trap['kind']}:{trap['document']}:{trap['asked_entity']}"


def _setup(store: Store, trap: dict[str, Any]) -> tuple[str, tuple[Any, ...], tuple[Any, ...]]:
    document_id = next(d.document_id for d in store.catalog.documents.values() if d.relpath == trap["document"])
    entity_id = next(e.entity_id for e in store.catalog.entities.values() if e.slug == trap["asked_entity"])
    asked, others = gate_inputs([entity_id], store.catalog.entities)
    return document_id, asked, others


def test_every_trap_kind_is_covered() -> None:
    kinds = {t["kind"] for t in TRAPS}
    assert kinds == {
        "filename_content_mismatch",
        "near_identical_address",
        "parcel_number",
        "two_property_summary",
        "lookalike_hides_entity",
        "lookalike_smuggles_other",
        "generic_summary",
    }


@pytest.mark.parametrize("trap", TRAPS, ids=trap_id)
def test_gate_decides_each_trap_on_its_own(demo_store: Store, trap: dict[str, Any]) -> None:
    document_id, asked, others = _setup(demo_store, trap)
    document = demo_store.catalog.documents[document_id]
    verdict = judge_document(document, asked, others, CONFIG, demo_store.catalog.vocabulary)
    assert ("keep" if verdict.keep else "exclude") == trap["expected"], (verdict.reasons, verdict.other_addresses)


@pytest.mark.parametrize("trap", TRAPS, ids=trap_id)
def test_gate_decides_each_trap_among_the_whole_corpus(demo_store: Store, trap: dict[str, Any]) -> None:
    document_id, asked, others = _setup(demo_store, trap)
    result = gate(list(demo_store.catalog.documents.values()), asked, others, CONFIG, demo_store.catalog.vocabulary)
    assert result.relaxed == ()
    assert ("keep" if document_id in result.kept_ids else "exclude") == trap["expected"]


@pytest.mark.parametrize("slug", sorted({t["asked_entity"] for t in TRAPS}))
def test_no_excluded_trap_document_is_read_end_to_end(demo_store: Store, slug: str) -> None:
    entity = next(e for e in demo_store.catalog.entities.values() if e.slug == slug)
    question = f"Summarise the documents about {entity.name}"
    result = StepExecutor(demo_store, question_scope(NO_SCOPE, demo_store)).run(
        scope_steps(question_scope(NO_SCOPE, demo_store), question),
        SearchSettings(gate_entity_ids=(entity.entity_id,)),
    )
    forbidden = {
        d.document_id
        for t in TRAPS
        if t["asked_entity"] == slug and t["expected"] == "exclude"
        for d in demo_store.catalog.documents.values()
        if d.relpath == t["document"]
    }
    assert demo_store.call_log is not None
    sent = {i for c in demo_store.call_log if c.operation == "search_chunks" for i in c.document_ids or ()}
    assert not forbidden & sent
    assert not forbidden & {h.chunk.document_id for h in result.chunks}
    assert not forbidden & {h.document.document_id for h in result.documents}
