"""Scope and the steps each scope allows (seed 000): decided in code, before any LM."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import pytest
from pydantic import ValidationError

from pipeline.errors import UnknownScopeError
from pipeline.execution.steps import (
    SEARCH_DOCS_REF,
    Step,
    Steps,
    scope_steps,
)
from pipeline.intake.scope import NO_SCOPE, Scope, gate_entity_ids, question_scope, resolve_scope
from pipeline.types import Entity
from tests.support.scopes import OwnersCatalog

IDS = [str(uuid.uuid5(uuid.NAMESPACE_URL, f"doc-{i}")) for i in range(8)]
PROPERTY = str(uuid.uuid5(uuid.NAMESPACE_URL, "entity-banda"))
OTHER = str(uuid.uuid5(uuid.NAMESPACE_URL, "entity-dikdik"))
THIRD = str(uuid.uuid5(uuid.NAMESPACE_URL, "entity-third"))
# IDS[2] is owned by PROPERTY and OTHER together; IDS[7] is shared with every entity.
OWNED = {PROPERTY: IDS[:3], OTHER: [IDS[2], *IDS[3:5]], THIRD: [IDS[5]]}
CATALOG = OwnersCatalog(OWNED, shared=[IDS[7]])


def chunk_step(ids: Sequence[str], step_id: str = "s1", query: str = "rent?") -> Step:
    return Step(step_id=step_id, tool="retrieve_chunks", query=query, document_ids=tuple(ids))


def one_step(ids: Sequence[str]) -> Steps:
    return Steps(steps=(chunk_step(ids),))


# -- Scope values ---------------------------------------------------------------------------


def test_scope_rules() -> None:
    with pytest.raises(ValidationError, match="at least one document id"):
        Scope(kind="chip")
    with pytest.raises(ValidationError, match="canonical"):
        Scope(kind="chip", document_ids=(IDS[0].upper(),))
    with pytest.raises(ValidationError, match="needs an entity id"):
        Scope(kind="property")
    with pytest.raises(ValidationError, match="carries no document ids"):
        Scope(kind="property", entity_id=PROPERTY, document_ids=(IDS[0],))
    with pytest.raises(ValidationError, match="carries no document ids"):
        Scope(kind="no_scope", document_ids=(IDS[0],))
    with pytest.raises(ValidationError, match="no entity id"):
        Scope(kind="no_scope", entity_id=PROPERTY)
    with pytest.raises(ValidationError):
        Scope(kind="chip", document_ids=(IDS[0],), extra="x")  # type: ignore[call-arg]


def test_allowed_ids_per_scope() -> None:
    assert question_scope(NO_SCOPE, CATALOG).allowed is None
    assert question_scope(Scope(kind="chip", document_ids=(IDS[5],)), CATALOG).allowed == frozenset({IDS[5]})
    # a property reads what it owns and what the manifest shares with every entity
    property_scope = question_scope(Scope(kind="property", entity_id=PROPERTY), CATALOG)
    assert property_scope.document_ids == (*IDS[:3], IDS[7]) and not property_scope.implicit


def test_a_question_naming_entities_reads_their_documents_from_the_start() -> None:
    one = question_scope(NO_SCOPE, CATALOG, [THIRD])
    assert one.implicit and one.implicit_entity_ids == (THIRD,) and one.document_ids == (IDS[5], IDS[7])
    # two entities owning a document together: that document first, and only it (with the shared one)
    pair = question_scope(NO_SCOPE, CATALOG, [PROPERTY, OTHER])
    assert pair.document_ids == (IDS[2], IDS[7])
    # two that own nothing together: each one's documents
    apart = question_scope(NO_SCOPE, CATALOG, [PROPERTY, THIRD])
    assert apart.document_ids == (*IDS[:3], IDS[7], IDS[5])
    # a given scope is never narrowed or widened by the entities the question names
    chip = Scope(kind="chip", document_ids=(IDS[4],))
    assert question_scope(chip, CATALOG, [THIRD]) == question_scope(chip, CATALOG)
    assert not question_scope(chip, CATALOG, [THIRD]).implicit


def test_gate_entities_prefer_the_scope_property() -> None:
    assert gate_entity_ids(NO_SCOPE, [OTHER, OTHER]) == (OTHER,)
    # a question naming only another entity is about that entity, whatever the scope
    assert gate_entity_ids(Scope(kind="property", entity_id=PROPERTY), [OTHER]) == (OTHER,)
    assert gate_entity_ids(Scope(kind="property", entity_id=PROPERTY), [OTHER, PROPERTY]) == (PROPERTY,)
    assert gate_entity_ids(Scope(kind="property", entity_id=PROPERTY), []) == (PROPERTY,)
    assert gate_entity_ids(Scope(kind="chip", document_ids=(IDS[0],)), [OTHER]) == (OTHER,)
    assert gate_entity_ids(Scope(kind="chip", document_ids=(IDS[0],), entity_id=PROPERTY), [OTHER]) == (OTHER,)
    assert gate_entity_ids(Scope(kind="chip", document_ids=(IDS[0],), entity_id=PROPERTY), []) == (PROPERTY,)


class FakeSource:
    """Catalog lookups as Store does them."""

    def check_document_ids(self, document_ids: Sequence[str]) -> list[str]:
        bad = [d for d in document_ids if d not in IDS]
        if bad:
            raise UnknownScopeError("document id", bad)
        return list(document_ids)

    def resolve_entity(self, name_or_id: str) -> Entity:
        names = {"banda lane": PROPERTY, PROPERTY: PROPERTY}
        if name_or_id.casefold() not in names:
            raise UnknownScopeError("property", [name_or_id])
        return Entity(PROPERTY, "banda-lane", "Banda Lane")


def test_resolve_scope_branches() -> None:
    source = FakeSource()
    assert resolve_scope(source) == NO_SCOPE
    assert resolve_scope(source, document_ids=[]) == NO_SCOPE
    assert resolve_scope(source, document_ids=[IDS[1], IDS[1]]) == Scope(kind="chip", document_ids=(IDS[1],))
    assert resolve_scope(source, property_ref="Banda Lane") == Scope(kind="property", entity_id=PROPERTY)
    both = resolve_scope(source, document_ids=[IDS[6]], property_ref="Banda Lane")
    assert both == Scope(kind="chip", document_ids=(IDS[6],), entity_id=PROPERTY)
    with pytest.raises(UnknownScopeError):
        resolve_scope(source, document_ids=["not-an-id"])
    with pytest.raises(UnknownScopeError):
        resolve_scope(source, property_ref="Atlantis")


# -- plans built in code -------------------------------------------------------------------


def test_no_scope_plan_is_the_fixed_two_steps() -> None:
    plan = scope_steps(question_scope(NO_SCOPE, CATALOG), "what is the value of highlands?")
    assert [(s.step_id, s.tool, s.document_ids) for s in plan.steps] == [
        ("search_docs", "retrieve_docs", ()),
        ("search_chunks", "retrieve_chunks", (SEARCH_DOCS_REF,)),
    ]
    assert SEARCH_DOCS_REF == "<from_step_search_docs>"


def test_chip_plan_is_one_step_on_the_selected_ids() -> None:
    plan = scope_steps(question_scope(Scope(kind="chip", document_ids=(IDS[4], IDS[2])), CATALOG), "q")
    assert [(s.tool, s.document_ids) for s in plan.steps] == [("retrieve_chunks", (IDS[4], IDS[2]))]


def test_property_plan_is_one_step_on_the_catalog_ids() -> None:
    CATALOG.calls.clear()
    plan = scope_steps(question_scope(Scope(kind="property", entity_id=PROPERTY), CATALOG), "q")
    assert [(s.tool, s.document_ids) for s in plan.steps] == [("retrieve_chunks", (*IDS[:3], IDS[7]))]
    assert CATALOG.calls == [PROPERTY]


def test_an_implicit_entity_scope_keeps_the_two_steps_inside_the_entitys_documents() -> None:
    plan = scope_steps(question_scope(NO_SCOPE, CATALOG, [THIRD]), "q")
    assert [(s.tool, s.document_ids) for s in plan.steps] == [
        ("retrieve_docs", ()),
        ("retrieve_chunks", (SEARCH_DOCS_REF,)),
    ]


def test_plan_rules() -> None:
    with pytest.raises(ValidationError, match="repeat"):
        Steps(steps=(chunk_step([IDS[0]]), chunk_step([IDS[1]])))
    with pytest.raises(ValidationError, match="blank"):
        chunk_step([IDS[0]], query="   ")
    with pytest.raises(ValidationError):
        Steps(steps=())
    with pytest.raises(ValidationError):
        Step(step_id="s1", tool="delete_docs", query="q")  # type: ignore[arg-type]
