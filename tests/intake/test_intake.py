"""Intake: literal terms, entity mentions, ambiguity and complexity signals (pure functions)."""

from __future__ import annotations

import pytest

from pipeline.intake.analysis import (
    Intake,
    analyse_question,
    doc_type_hint,
    find_ambiguous_acronyms,
    find_ambiguous_entities,
    find_literal_terms,
    find_partial_entities,
)
from pipeline.settings import PlannerConfig
from pipeline.types import Entity
from tests.support.vocabulary import DEMO_VOCABULARY

ENTITIES = [
    Entity("e-bl", "banda-lane", "Banda Lane", ("14 Banda Lane", "Hardy Banda Lane", "L.R. NO: 1160/88")),
    Entity("e-br", "banda-road", "Banda Road", ("7 Banda Road", "Karen Plains Banda Road", "L.R. NO: 1160/880")),
    Entity("e-mk", "mkungu-close", "Mkungu Close", ("11 Mkungu Close",)),
    Entity("e-mg", "mellifera-gardens", "Mellifera Gardens", ()),
    Entity("e-mc", "mellifera-court", "Mellifera Court", ()),
]
DOC_TYPES = {"lease", "valuation", "offer_letter", "inspection_report", "title_document"}
CONFIG = PlannerConfig(acronym_glossary={"LR": ("land reference", "lease renewal"), "KSH": ("Kenya shilling",)})


def analyse(question: str) -> Intake:
    return analyse_question(question, ENTITIES, DOC_TYPES, CONFIG, DEMO_VOCABULARY)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ('What does "quiet enjoyment" mean here?', [("quiet enjoyment", "quoted")]),
        ("Why does it fail with ValueError: bad magic number?", [("ValueError: bad magic number", "error_message")]),
        ("Look up ERR_CONNECTION_RESET", [("ERR_CONNECTION_RESET", "error_message")]),
        ("Find invoice INV-2023-001", [("INV-2023-001", "identifier")]),
        ("What does clause 4.2 say?", [("clause 4.2", "clause")]),
        ("Who owns L.R. NO: 1160/880?", [("L.R. NO: 1160/880", "parcel_number")]),
        ("the tenant's 'notice period'", [("notice period", "quoted")]),
        ("What is the rent at Banda Lane?", []),
    ],
)
def test_literal_terms(question: str, expected: list[tuple[str, str]]) -> None:
    assert [(t.text, t.kind) for t in find_literal_terms(question, DEMO_VOCABULARY)] == expected


def test_uuid_like_identifiers_are_literals() -> None:
    terms = find_literal_terms("document {123E4567-E89B-12D3-A456-426614174000} please", DEMO_VOCABULARY)
    assert [t.kind for t in terms] == ["identifier"]


def test_entity_mentions_fold_lookalikes_and_take_full_names() -> None:
    intake = analyse("What is the rent at 14 B\u0430nda Lane?")
    assert intake.entity_ids == ("e-bl",)
    assert intake.ambiguous_entities == ()


def test_a_shared_word_without_a_full_name_is_ambiguous() -> None:
    assert find_ambiguous_entities("rent at Mellifera?", ENTITIES, (), DEMO_VOCABULARY) == (
        ("mellifera", ("e-mg", "e-mc")),
    )
    assert find_ambiguous_entities("rent at Mellifera Court?", ENTITIES, ("e-mc",), DEMO_VOCABULARY) == ()


def test_a_word_only_one_entity_uses_names_it() -> None:
    assert find_partial_entities("rent at Mkungu?", ENTITIES, (), DEMO_VOCABULARY) == ("e-mk",)
    assert analyse("rent at Mkungu?").entity_ids == ("e-mk",)


def test_acronyms_with_several_meanings_are_ambiguous_unless_spelled_out() -> None:
    assert find_ambiguous_acronyms("What is the LR?", CONFIG.acronym_glossary) == (
        ("LR", ("land reference", "lease renewal")),
    )
    assert find_ambiguous_acronyms("Is the LR (lease renewal) signed?", CONFIG.acronym_glossary) == ()
    assert find_ambiguous_acronyms("Rent in KSH?", CONFIG.acronym_glossary) == ()


def test_doc_type_hint_from_type_names_and_synonyms() -> None:
    assert doc_type_hint("Summarise the Banda Lane offer", DOC_TYPES, {}) == {"offer_letter"}
    assert doc_type_hint("the title document", DOC_TYPES, {}) == {"title_document"}
    assert doc_type_hint("the application", DOC_TYPES, {"application": ("offer_letter",)}) == {"offer_letter"}
    assert doc_type_hint("what is the rent", DOC_TYPES, {}) == frozenset()


@pytest.mark.parametrize(
    ("question", "intent", "answerability"),
    [
        ("hello", "none", "needs_documents"),
        ("Thanks!", "none", "needs_documents"),
        ("What is 12 * 7?", "none", "reasoning_only"),
        ("What is the rent at Banda Lane?", "documents", "needs_documents"),
        ('hello "Banda Lane"', "documents", "needs_documents"),
    ],
)
def test_retrieval_intent(question: str, intent: str, answerability: str) -> None:
    intake = analyse(question)
    assert (intake.retrieval_intent, intake.answerability) == (intent, answerability)


def test_complexity_and_kind_signals() -> None:
    compare = analyse("Compare the leases of Banda Lane and Banda Road")
    assert compare.requires_synthesis and compare.entity_ids == ("e-bl", "e-br")
    parts = analyse("Who is the tenant? When does the lease end?")
    assert parts.requires_synthesis and parts.subquestions == ("Who is the tenant?", "When does the lease end?")
    assert analyse("How does the valuation method work?").conceptual
    assert not analyse('How does "forced sale value" work?').conceptual
    assert analyse("Is the tenant permitted to sublet?").policy_lookup
    assert analyse("It fails with KeyError: 'rent'").troubleshooting
    assert analyse("What is the tenant's phone number?").pii_request
