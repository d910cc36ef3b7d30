"""Scope and plan shapes (seed 000): decided in code; the normaliser repairs LM plans."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from pipeline.errors import UnknownScopeError
from pipeline.execution.steps import (
    SEARCH_DOCS_REF,
    Plan,
    PlanStep,
    build_plan,
    normalise_plan,
    parse_plan,
    two_step_plan,
)
from pipeline.intake.scope import NO_SCOPE, Scope, allowed_document_ids, gate_entity_ids, resolve_scope
from pipeline.types import Entity
from tests.support.properties import assert_plan_reads_only_scope_ids

IDS = [str(uuid.uuid5(uuid.NAMESPACE_URL, f"doc-{i}")) for i in range(8)]
PROPERTY = str(uuid.uuid5(uuid.NAMESPACE_URL, "entity-banda"))
OTHER = str(uuid.uuid5(uuid.NAMESPACE_URL, "entity-dikdik"))
OWNED = {PROPERTY: IDS[:3], OTHER: IDS[3:5]}
CALLS: list[str] = []


def resolver(entity_id: str) -> list[str]:
    CALLS.append(entity_id)
    return list(OWNED.get(entity_id, []))


def chunk_step(ids: Sequence[str], step_id: str = "s1", query: str = "rent?") -> PlanStep:
    return PlanStep(step_id=step_id, tool="retrieve_chunks", query=query, document_ids=tuple(ids))


def one_step(ids: Sequence[str]) -> Plan:
    return Plan(steps=(chunk_step(ids),))


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
    assert allowed_document_ids(NO_SCOPE, resolver) is None
    assert allowed_document_ids(Scope(kind="chip", document_ids=(IDS[5],)), resolver) == frozenset({IDS[5]})
    assert allowed_document_ids(Scope(kind="property", entity_id=PROPERTY), resolver) == frozenset(IDS[:3])


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
    plan = build_plan(NO_SCOPE, "what is the value of highlands?", resolver)
    assert [(s.step_id, s.tool, s.document_ids) for s in plan.steps] == [
        ("search_docs", "retrieve_docs", ()),
        ("search_chunks", "retrieve_chunks", (SEARCH_DOCS_REF,)),
    ]
    assert SEARCH_DOCS_REF == "<from_step_search_docs>"


def test_chip_plan_is_one_step_on_the_selected_ids() -> None:
    plan = build_plan(Scope(kind="chip", document_ids=(IDS[4], IDS[2])), "q", resolver)
    assert [(s.tool, s.document_ids) for s in plan.steps] == [("retrieve_chunks", (IDS[4], IDS[2]))]


def test_property_plan_is_one_step_on_the_catalog_ids() -> None:
    CALLS.clear()
    plan = build_plan(Scope(kind="property", entity_id=PROPERTY), "q", resolver)
    assert [(s.tool, s.document_ids) for s in plan.steps] == [("retrieve_chunks", tuple(IDS[:3]))]
    assert CALLS == [PROPERTY]


def test_plan_rules() -> None:
    with pytest.raises(ValidationError, match="repeat"):
        Plan(steps=(chunk_step([IDS[0]]), chunk_step([IDS[1]])))
    with pytest.raises(ValidationError, match="blank"):
        chunk_step([IDS[0]], query="   ")
    with pytest.raises(ValidationError):
        Plan(steps=())
    with pytest.raises(ValidationError):
        PlanStep(step_id="s1", tool="delete_docs", query="q")  # type: ignore[arg-type]


# -- the normaliser --------------------------------------------------------------------------


def test_chip_plan_with_placeholder_ids_gets_the_chip() -> None:
    scope = Scope(kind="chip", document_ids=(IDS[0], IDS[1]))
    out = normalise_plan(one_step(["<document ids from the workspace>", IDS[0]]), scope, resolver)
    assert out.plan.steps[0].document_ids == (IDS[0], IDS[1])
    assert [(f.action, f.removed) for f in out.fixes] == [
        ("replaced_from_chip", ("'<document ids from the workspace>'",))
    ]


def test_chip_plan_with_a_subset_of_the_chip_is_kept() -> None:
    scope = Scope(kind="chip", document_ids=(IDS[0], IDS[1]))
    out = normalise_plan(one_step([IDS[1]]), scope, resolver)
    assert out.plan == one_step([IDS[1]])
    assert out.fixes == ()


def test_chip_plan_with_an_id_outside_the_chip_is_replaced() -> None:
    scope = Scope(kind="chip", document_ids=(IDS[0],))
    out = normalise_plan(one_step([IDS[7]]), scope, resolver)
    assert out.plan.steps[0].document_ids == (IDS[0],)


def test_property_plan_with_invalid_ids_gets_the_property_documents_from_the_resolver() -> None:
    CALLS.clear()
    scope = Scope(kind="property", entity_id=PROPERTY)
    out = normalise_plan(one_step(["DOC-1", IDS[0].upper()]), scope, resolver)
    assert out.plan.steps[0].document_ids == tuple(IDS[:3])
    assert out.fixes[0].action == "replaced_from_property"
    assert set(CALLS) == {PROPERTY}


def test_property_plan_never_keeps_ids_copied_from_another_property() -> None:
    scope = Scope(kind="property", entity_id=PROPERTY)
    out = normalise_plan(one_step([IDS[3]]), scope, resolver)
    assert out.plan.steps[0].document_ids == tuple(IDS[:3])


def test_no_scope_one_step_plan_with_placeholder_is_rewritten_to_two_steps() -> None:
    out = normalise_plan(one_step(["<from_step_search_docs>"]), NO_SCOPE, resolver)
    assert out.plan == two_step_plan("rent?")
    assert out.fixes[-1].action == "rewritten_two_step"


def test_no_scope_uuid_literals_from_an_lm_are_not_trusted() -> None:
    out = normalise_plan(one_step([IDS[0]]), NO_SCOPE, resolver)
    assert out.plan == two_step_plan("rent?")


def test_no_scope_valid_two_step_plan_is_unchanged() -> None:
    plan = two_step_plan("what is the value of highlands?")
    out = normalise_plan(plan, NO_SCOPE, resolver)
    assert out.plan == plan
    assert out.fixes == ()


def test_reference_to_a_later_step_is_invalid() -> None:
    plan = Plan(
        steps=(
            chunk_step(["<from_step_find>"], step_id="read"),
            PlanStep(step_id="find", tool="retrieve_docs", query="rent?"),
        )
    )
    scope = Scope(kind="chip", document_ids=(IDS[0],))
    out = normalise_plan(plan, scope, resolver)
    assert out.plan.steps[0].document_ids == (IDS[0],)


def test_ids_given_to_retrieve_docs_are_cleared() -> None:
    plan = Plan(
        steps=(
            PlanStep(step_id="search_docs", tool="retrieve_docs", query="q", document_ids=("junk",)),
            chunk_step([SEARCH_DOCS_REF], step_id="search_chunks", query="q"),
        )
    )
    out = normalise_plan(plan, NO_SCOPE, resolver)
    assert out.plan == two_step_plan("q")
    assert out.fixes[0].action == "cleared_search_ids"


def test_plan_without_a_chunk_step_is_rebuilt_for_the_scope() -> None:
    plan = Plan(steps=(PlanStep(step_id="only", tool="retrieve_docs", query="q"),))
    scope = Scope(kind="property", entity_id=PROPERTY)
    out = normalise_plan(plan, scope, resolver)
    assert out.plan == build_plan(scope, "q", resolver)
    assert out.fixes[-1].action == "rewritten_for_scope"


def test_parse_plan_from_untrusted_data() -> None:
    scope = Scope(kind="chip", document_ids=(IDS[0],))
    bad = parse_plan({"steps": [{"tool": "rm -rf", "query": "q"}]}, scope, resolver, "question?")
    assert bad.plan == build_plan(scope, "question?", resolver)
    assert bad.fixes[0].action == "unparseable_plan"
    extra = parse_plan({"steps": [], "note": "x"}, NO_SCOPE, resolver, "q")
    assert extra.plan == two_step_plan("q")
    good = parse_plan(
        {"steps": [{"step_id": "s1", "tool": "retrieve_chunks", "query": "q", "document_ids": ["x"]}]},
        scope,
        resolver,
        "q",
    )
    assert good.plan.steps[0].document_ids == (IDS[0],)


# -- properties -----------------------------------------------------------------------------

JUNK = st.one_of(
    st.text(max_size=40),
    st.sampled_from(IDS).map(str.upper),
    st.sampled_from(IDS).map(lambda s: "{" + s + "}"),
    st.sampled_from(IDS).map(lambda s: "urn:uuid:" + s),
    st.sampled_from(IDS).map(lambda s: s.replace("-", "")),
    st.sampled_from(["<from_step_search_docs>", "<from_step_s0>", "<from_step_s3>", "<from_step_nope>"]),
)
VALUES = st.one_of(st.sampled_from(IDS), JUNK)
STEP_IDS = ["s0", "s1", "s2", "s3", "search_docs", "search_chunks"]


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    ids = draw(st.lists(st.sampled_from(STEP_IDS), min_size=1, max_size=5, unique=True))
    steps = [
        PlanStep(
            step_id=sid,
            tool=draw(st.sampled_from(["retrieve_docs", "retrieve_chunks"])),
            query=draw(st.sampled_from(["rent?", "who is the tenant", "value"])),
            document_ids=tuple(draw(st.lists(VALUES, max_size=4))),
        )
        for sid in ids
    ]
    return Plan(steps=tuple(steps))


SCOPES = st.one_of(
    st.just(NO_SCOPE),
    st.lists(st.sampled_from(IDS), min_size=1, max_size=4).map(lambda d: Scope(kind="chip", document_ids=tuple(d))),
    st.sampled_from([PROPERTY, OTHER]).map(lambda e: Scope(kind="property", entity_id=e)),
)


@settings(max_examples=200, deadline=None)
@given(plans(), SCOPES)
def test_normaliser_is_idempotent_and_leaves_only_valid_ids(plan: Plan, scope: Scope) -> None:
    _check_normaliser(plan, scope)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(plans(), SCOPES)
def test_normaliser_is_idempotent_slow(plan: Plan, scope: Scope) -> None:
    _check_normaliser(plan, scope)


def _check_normaliser(plan: Plan, scope: Scope) -> None:
    once = normalise_plan(plan, scope, resolver)
    twice = normalise_plan(once.plan, scope, resolver)
    assert twice.plan == once.plan
    assert twice.fixes == ()
    assert_plan_reads_only_scope_ids(once.plan, scope, resolver)
