"""Documents several entities own, and documents none owns: the gate's rules for both parties of a
contract, another pair's contract, blank forms and shared annexes, the opening it reads beside the
summary, and the note a scope of another entity's (or no entity's) documents gets. One test per branch."""

from __future__ import annotations

import dataclasses

from pipeline.guards.entity_gate import gate, gate_inputs, judge_document, pair_documents
from pipeline.intake.scope import scope_note
from pipeline.settings import EntityGateConfig
from pipeline.types import Document, Entity
from pipeline.vocabulary import Vocabulary

NORTHWIND = Entity("e-nw", "northwind", "Northwind Systems Inc.", ("Northwind Systems", "Northwind"))
HELIX = Entity("e-hx", "helix", "Helix Robotics Ltd", ("Helix Robotics", "Helix"))
QUARRY = Entity("e-qa", "quarry", "Quarry Analytics LLC", ("Quarry Analytics", "Quarry"))
ENTITIES = {e.entity_id: e for e in (NORTHWIND, HELIX, QUARRY)}
CONFIG = EntityGateConfig()
VOCABULARY = Vocabulary()


def nda(
    did: str, summary: str, owners: tuple[str, ...], opening: str = "", outside: bool = False, text_rules: bool = False
) -> Document:
    return Document(
        did, f"{did}.pdf", f"nda/{did}.pdf", "Mutual NDA", summary, "nda", 3, owners, (), opening, outside, text_rules
    )


NW_HELIX = nda(
    "nw-hx", "Mutual non-disclosure agreement between Northwind Systems Inc. and Helix Robotics Ltd.", ("e-nw", "e-hx")
)
NW_QUARRY = nda(
    "nw-qa",
    "Mutual non-disclosure agreement between Northwind Systems Inc. and Quarry Analytics LLC.",
    ("e-nw", "e-qa"),
)
# The summary names only the shared party; the opening names the counterparty.
QUARRY_SHORT = nda(
    "qa-short",
    "Mutual non-disclosure agreement of Northwind Systems Inc. covering evaluation of a partnership.",
    ("e-nw", "e-qa"),
)
BLANK = nda(
    "blank",
    "Mutual non-disclosure agreement form. The parties agree to keep information confidential.",
    (),
    outside=True,
)
ANNEX = nda("annex", "Standard definitions annex for confidentiality agreements.", (), outside=False)


def owned(entity_id: str) -> list[str]:
    return [d.document_id for d in (NW_HELIX, NW_QUARRY, QUARRY_SHORT) if entity_id in d.entity_ids]


def test_a_co_owner_named_more_often_in_the_opening_is_no_other_entity() -> None:
    # The summary names only the shared party; the first page names it three times, the asked
    # counterparty once: for a document both own, the co-owner does not outweigh the asked one.
    opening = (
        "Northwind Systems Inc. (Northwind) and Quarry Analytics LLC agree that Northwind may disclose"
        " information; Northwind Systems Inc. retains all rights."
    )
    both = nda("qa-open", QUARRY_SHORT.summary, ("e-nw", "e-qa"), opening, text_rules=True)
    asked, others = gate_inputs(["e-qa"], ENTITIES)
    verdict = judge_document(both, asked, others, CONFIG, VOCABULARY)
    assert verdict.keep and verdict.entity_in_opening and verdict.reasons == ()
    assert "owners: 2 in the catalog, 1 asked" in verdict.evidence
    # where the text rules judge owned documents, a summary naming only another entity excludes it
    judged = nda("qa-short", QUARRY_SHORT.summary, ("e-nw", "e-qa"), text_rules=True)
    assert not judge_document(judged, asked, others, CONFIG, VOCABULARY).keep


def test_where_the_catalog_declares_owners_the_catalog_decides_both_ways() -> None:
    # Quarry owns it: kept although its summary names only Northwind (an NDA whose summary names only
    # the other party) ...
    asked, others = gate_inputs(["e-qa"], ENTITIES)
    verdict = judge_document(QUARRY_SHORT, asked, others, CONFIG, VOCABULARY)
    assert verdict.keep and verdict.owner and verdict.tier == 0
    assert verdict.evidence == ("owners: 2 in the catalog, 1 asked; the catalog decides",)
    # ... and Helix does not own it: excluded although nothing in it says so
    owned_by_quarry = nda("qa-only", "Annual report naming its largest customer, Helix Robotics Ltd.", ("e-qa",))
    helix, not_helix = gate_inputs(["e-hx"], ENTITIES)
    other = judge_document(owned_by_quarry, helix, not_helix, CONFIG, VOCABULARY)
    assert not other.keep and other.hard and other.reasons == ("owned_by_other_entity",)
    # never relaxed back, even when it is all there is
    assert gate([owned_by_quarry], helix, not_helix, CONFIG, VOCABULARY).kept_ids == ()
    # the text rules would have decided the other way on both
    assert not judge_document(
        dataclasses.replace(QUARRY_SHORT, text_rules=True), asked, others, CONFIG, VOCABULARY
    ).keep
    assert judge_document(
        dataclasses.replace(owned_by_quarry, text_rules=True), helix, not_helix, CONFIG, VOCABULARY
    ).keep


def test_the_same_summary_is_excluded_for_an_entity_that_does_not_own_it() -> None:
    asked, others = gate_inputs(["e-hx"], ENTITIES)
    verdict = judge_document(QUARRY_SHORT, asked, others, CONFIG, VOCABULARY)
    assert not verdict.keep and verdict.hard and verdict.reasons == ("owned_by_other_entity",)
    judged = judge_document(dataclasses.replace(QUARRY_SHORT, text_rules=True), asked, others, CONFIG, VOCABULARY)
    assert not judged.keep and judged.hard and "Northwind Systems Inc." in judged.other_addresses


def test_the_opening_names_the_asked_entity_when_the_summary_does_not() -> None:
    # Only Quarry is declared as its owner and the summary names only the shared party: the parties
    # clause on the first page says whose agreement it is.
    opening = "This Agreement is made between Northwind Systems Inc. and Quarry Analytics LLC, a Delaware company."
    summary = "Mutual non-disclosure agreement of Northwind Systems Inc. covering a partnership evaluation."
    quarry_only = nda("open", summary, ("e-qa",), opening, text_rules=True)
    asked, others = gate_inputs(["e-qa"], ENTITIES)
    verdict = judge_document(quarry_only, asked, others, CONFIG, VOCABULARY)
    assert verdict.keep and verdict.entity_in_opening and not verdict.entity_in_summary and verdict.tier == 0
    assert any(e.startswith("opening: ") and "quarry analytics" in e.casefold() for e in verdict.evidence)
    # without the opening the summary alone excludes it (it names another entity, not the asked one)
    blind = judge_document(nda("open", summary, ("e-qa",), text_rules=True), asked, others, CONFIG, VOCABULARY)
    assert not blind.keep and blind.hard


def test_the_opening_does_not_speak_for_a_document_another_entity_owns() -> None:
    opening = (
        "Agreement between Northwind Systems Inc. and Helix Robotics Ltd; Quarry Analytics LLC is named as adviser."
    )
    helix_only = nda("hx-only", "Agreement of Helix Robotics Ltd.", ("e-hx",), opening)
    asked, others = gate_inputs(["e-qa"], ENTITIES)
    verdict = judge_document(helix_only, asked, others, CONFIG, VOCABULARY)
    assert not verdict.keep and not verdict.entity_in_opening


def test_another_pairs_document_is_excluded_when_the_asked_pair_owns_one_together() -> None:
    asked, others = gate_inputs(["e-nw", "e-hx"], ENTITIES)
    pairs = pair_documents(["e-nw", "e-hx"], owned)
    assert pairs == frozenset({"nw-hx"})
    result = gate([NW_QUARRY, NW_HELIX], asked, others, CONFIG, VOCABULARY, pair_documents=pairs)
    assert result.kept_ids == ("nw-hx",)
    assert [e.reasons for e in result.exclusions] == [("another_pair",)]
    assert result.relaxed == ()


def test_with_no_joint_document_each_asked_entity_keeps_its_own() -> None:
    # "compare Helix and Quarry": they own no document together, so each one's contracts stay
    asked, others = gate_inputs(["e-hx", "e-qa"], ENTITIES)
    pairs = pair_documents(["e-hx", "e-qa"], owned)
    assert pairs == frozenset()
    result = gate([NW_QUARRY, NW_HELIX], asked, others, CONFIG, VOCABULARY, pair_documents=pairs)
    assert set(result.kept_ids) == {"nw-hx", "nw-qa"}
    assert pair_documents(["e-hx"], owned) == frozenset()


def test_a_document_no_entity_owns_is_outside_every_entity_unless_selected_or_shared() -> None:
    asked, others = gate_inputs(["e-qa"], ENTITIES)
    out = judge_document(BLANK, asked, others, CONFIG, VOCABULARY)
    assert not out.keep and out.hard and out.reasons == ("owned_by_no_entity",)
    selected = judge_document(BLANK, asked, others, CONFIG, VOCABULARY, selected=frozenset({"blank"}))
    assert selected.keep and "owned by no entity; selected by the question's scope" in selected.evidence
    assert judge_document(ANNEX, asked, others, CONFIG, VOCABULARY).keep
    # never relaxed back, even when it is all there is
    assert gate([BLANK], asked, others, CONFIG, VOCABULARY).kept_ids == ()
    # a question naming no entity reads it
    assert gate([BLANK], (), list(ENTITIES.values()), CONFIG, VOCABULARY).kept_ids == ("blank",)


DOCUMENTS = {d.document_id: d for d in (NW_HELIX, NW_QUARRY, BLANK, ANNEX)}


def test_a_selection_of_another_entitys_documents_gets_a_note_naming_whose_they_are() -> None:
    note = scope_note(["nw-qa"], ["e-hx"], DOCUMENTS, ENTITIES, "company")
    assert note is not None and note.kind == "other_entity"
    assert note.about == ("Northwind Systems Inc.", "Quarry Analytics LLC") and note.asked == ("Helix Robotics Ltd",)
    assert note.message.startswith(
        "The selected documents are about Northwind Systems Inc. and Quarry Analytics LLC, not Helix Robotics Ltd."
    )


def test_a_selection_holding_a_document_no_entity_owns_says_so() -> None:
    note = scope_note(["blank", "nw-qa"], ["e-hx"], DOCUMENTS, ENTITIES, "company")
    assert note is not None and note.kind == "no_entity" and note.document_ids == ("blank",)
    assert "blank.pdf belongs to no company: it is not Helix Robotics Ltd's" in note.message


def test_no_note_when_the_selection_is_the_asked_entitys_shared_or_nothing_is_asked() -> None:
    assert scope_note(["nw-qa", "nw-hx"], ["e-hx"], DOCUMENTS, ENTITIES) is None
    assert scope_note(["annex"], ["e-hx"], DOCUMENTS, ENTITIES) is None
    assert scope_note(["nw-qa"], [], DOCUMENTS, ENTITIES) is None
    assert scope_note(None, ["e-hx"], DOCUMENTS, ENTITIES) is None
