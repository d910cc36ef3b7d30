"""The document-id guard: one test per branch, each rejection names the value and the reason."""

from __future__ import annotations

import uuid

import pytest

from pipeline.guards.ids import filter_document_ids, referenced_step, resolve_step_references, step_reference

A = str(uuid.uuid5(uuid.NAMESPACE_URL, "a"))
B = str(uuid.uuid5(uuid.NAMESPACE_URL, "b"))
C = str(uuid.uuid5(uuid.NAMESPACE_URL, "c"))
KNOWN = frozenset({A, B, C})


def test_accepts_canonical_known_in_scope_ids_in_order_without_duplicates() -> None:
    result = filter_document_ids([B, A, B], allowed={A, B}, known=KNOWN)
    assert result.accepted == (B, A)
    assert result.rejections == ()


@pytest.mark.parametrize(
    "value",
    [
        A.upper(),
        "{" + A + "}",
        "urn:uuid:" + A,
        A.replace("-", ""),
        " " + A,
        A + "\n",
        A[:-1],
        "",
        "use the ids from step 1",
        "Documents in scope: " + A,
        A.replace("a", "а", 1) if "a" in A else A[:-1] + "g",  # Cyrillic look-alike or non-hex
    ],
)
def test_rejects_every_non_canonical_form_uuid_would_accept(value: str) -> None:
    result = filter_document_ids([value], allowed=KNOWN, known=KNOWN)
    assert result.accepted == ()
    assert [(r.value, r.reason) for r in result.rejections] == [(repr(value), "not_canonical_uuid")]


def test_uuid_module_alone_would_have_let_these_through() -> None:
    # the reason the guard does not rely on uuid.UUID()
    for value in (A.upper(), "{" + A + "}", "urn:uuid:" + A, A.replace("-", "")):
        assert str(uuid.UUID(value)) == A


def test_rejects_non_strings() -> None:
    result = filter_document_ids([None, 7, uuid.UUID(A)], allowed=KNOWN, known=KNOWN)
    assert result.accepted == ()
    assert {r.reason for r in result.rejections} == {"not_a_string"}


def test_unknown_document_vs_out_of_scope() -> None:
    stranger = str(uuid.uuid4())
    result = filter_document_ids([stranger, C, A], allowed={A}, known=KNOWN)
    assert result.accepted == (A,)
    assert [(r.value, r.reason) for r in result.rejections] == [
        (repr(stranger), "unknown_document"),
        (repr(C), "out_of_scope"),
    ]


def test_without_catalog_every_id_outside_allowed_is_out_of_scope() -> None:
    result = filter_document_ids([C], allowed={A})
    assert [r.reason for r in result.rejections] == ["out_of_scope"]


def test_unresolved_step_reference_never_passes() -> None:
    result = filter_document_ids([step_reference("search_docs")], allowed=KNOWN, known=KNOWN)
    assert [r.reason for r in result.rejections] == ["unresolvable_step_reference"]


def test_step_reference_round_trip() -> None:
    assert referenced_step(step_reference("search_docs")) == "search_docs"
    assert referenced_step("<from_step_search_docs >") is None
    assert referenced_step("<FROM_STEP_SEARCH_DOCS>") is None
    assert referenced_step(None) is None


def test_resolve_reference_to_every_id_of_the_step() -> None:
    values, rejections = resolve_step_references([step_reference("s1"), C], {"s1": (A, B)})
    assert values == [A, B, C]
    assert rejections == ()


def test_resolve_reference_to_a_step_that_found_nothing_gives_no_ids() -> None:
    values, rejections = resolve_step_references([step_reference("s1")], {"s1": ()})
    assert values == []
    assert rejections == ()


@pytest.mark.parametrize("ref", ["<from_step_missing>", "<from_step_>", "<from_step_search docs>", "<from_step"])
def test_resolve_rejects_references_to_unknown_or_malformed_steps(ref: str) -> None:
    values, rejections = resolve_step_references([ref], {"s1": (A,)})
    assert values == []
    assert [(r.value, r.reason) for r in rejections] == [(repr(ref), "unresolvable_step_reference")]
