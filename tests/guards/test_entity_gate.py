"""The entity gate and chunk backstop (seed 002): one test per branch, plus a property test."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.guards.entity_gate import chunk_backstop, gate, gate_inputs, judge_document
from pipeline.settings import EntityGateConfig
from pipeline.types import Chunk, ChunkHit, Document, Entity
from tests.support.vocabulary import DEMO_VOCABULARY, demo_vocabulary_with

BANDA_LANE = Entity("e-bl", "banda-lane", "Banda Lane", ("14 Banda Lane", "Hardy Banda Lane", "L.R. NO: 1160/88"))
BANDA_ROAD = Entity(
    "e-br", "banda-road", "Banda Road", ("7 Banda Road", "Karen Plains Banda Road", "L.R. NO: 1160/880")
)
DIK_DIK = Entity("e-dd", "dik-dik-lane", "Dik Dik Lane", ("3 Dik Dik Lane", "Nzohe Gardens", "L.R. NO: 2327/30"))
KAREN_RIDGE = Entity("e-kr", "karen-ridge", "Karen Ridge", ("22 Karen Ridge", "L.R. NO: 1159/215"))
KAREN_COURT = Entity(
    "e-krc",
    "karen-ridges-court",
    "Karen Ridges Court",
    ("Townhouse 5, Karen Ridges Court", "L.R. NO: 1159/604"),
)
MELLIFERA_GARDENS = Entity("e-mg", "mellifera-gardens", "Mellifera Gardens", ("House 9, Mellifera Gardens",))
MELLIFERA_COURT = Entity("e-mc", "mellifera-court", "Mellifera Court", ("Apartment B4, Mellifera Court",))
ENTITIES = {
    e.entity_id: e
    for e in (BANDA_LANE, BANDA_ROAD, DIK_DIK, KAREN_RIDGE, KAREN_COURT, MELLIFERA_GARDENS, MELLIFERA_COURT)
}
CONFIG = EntityGateConfig()
VOCABULARY = demo_vocabulary_with("langata")
ASKED, OTHERS = gate_inputs(["e-bl"], ENTITIES)


def doc(
    did: str,
    summary: str,
    filename: str = "doc.pdf",
    doc_type: str = "lease",
    owners: tuple[str, ...] = (),
    title: str = "",
) -> Document:
    """A document; one with owners is of a corpus whose manifest asks the text rules to judge owned
    documents too (`ownership = "text"`): the rules these tests exercise."""
    return Document(
        did, filename, f"x/{filename}", title or filename, summary, doc_type, 1, owners, text_rules=bool(owners)
    )


LANE_LEASE = doc("d-lane", "Lease of 14 Banda Lane, Hardy, Karen to Peter Otieno Ochieng.", "lease.pdf")
ROAD_LEASE = doc("d-road", "Lease of 7 Banda Road, Karen Plains, Karen to Helen Achieng.", "banda-lane-lease.pdf")
DIKDIK_COPY = doc(
    "d-dd",
    "Lease of 3 Dik Dik Lane, Nzohe Gardens, Langata to Martin Wainaina.",
    "offer-letter-banda-lane-copy.pdf",
)
GENERIC = doc("d-gen", "Standard terms annex for residential leases: deposits, notices, repairs.", "annex.md")


def test_gate_inputs_split_asked_and_others() -> None:
    assert [e.entity_id for e in ASKED] == ["e-bl"]
    assert "e-bl" not in {e.entity_id for e in OTHERS} and len(OTHERS) == len(ENTITIES) - 1
    assert gate_inputs(["nope"], ENTITIES)[0] == ()


def test_inactive_gate_keeps_everything_and_only_applies_the_type_hint() -> None:
    valuation = doc("d-val", "Valuation of 7 Banda Road.", doc_type="valuation")
    result = gate([ROAD_LEASE, valuation], (), list(ENTITIES.values()), CONFIG, VOCABULARY, {"valuation"})
    assert result.kept_ids == ("d-val", "d-road")
    assert result.exclusions == ()


def test_keeps_document_naming_the_entity() -> None:
    verdict = judge_document(LANE_LEASE, ASKED, OTHERS, CONFIG, VOCABULARY)
    assert verdict.keep and verdict.entity_in_summary and verdict.tier == 0


def test_excludes_summary_naming_only_another_property_even_with_entity_in_filename(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="pipeline.guards.entity_gate"):
        result = gate([LANE_LEASE, DIKDIK_COPY, ROAD_LEASE], ASKED, OTHERS, CONFIG, VOCABULARY)
    assert result.kept_ids == ("d-lane",)
    by_id = {e.document_id: e for e in result.exclusions}
    assert by_id["d-dd"].reasons == ("entity_not_in_summary", "other_address_in_summary")
    assert by_id["d-dd"].filename == "offer-letter-banda-lane-copy.pdf"
    assert "Dik Dik Lane" in by_id["d-dd"].other_addresses
    assert by_id["d-road"].other_addresses == ("Banda Road",)
    assert "d-dd (offer-letter-banda-lane-copy.pdf): entity_not_in_summary, other_address_in_summary" in caplog.text
    assert all(judge_document(d, ASKED, OTHERS, CONFIG, VOCABULARY).hard for d in (DIKDIK_COPY, ROAD_LEASE))


def test_configured_location_alone_excludes() -> None:
    verdict = judge_document(doc("d", "A bungalow in Langata with a garden."), ASKED, OTHERS, CONFIG, VOCABULARY)
    assert verdict.reasons == ("entity_not_in_summary", "other_address_in_summary")
    assert verdict.other_addresses == ("langata",)


def test_parcel_number_of_another_property_excludes() -> None:
    verdict = judge_document(doc("d", "Official search of L.R. NO: 1160/880."), ASKED, OTHERS, CONFIG, VOCABULARY)
    assert not verdict.keep and verdict.other_addresses == ("Banda Road",)
    own = judge_document(doc("d", "Official search of L.R. NO: 1160/88."), ASKED, OTHERS, CONFIG, VOCABULARY)
    assert own.keep


def test_unknown_street_or_parcel_pattern_excludes_when_entity_missing() -> None:
    for summary in ("House on Ngong Road, Karen.", "Search of L.R. NO: 4242/7, registered owner X."):
        verdict = judge_document(doc("d", summary), ASKED, OTHERS, CONFIG, VOCABULARY)
        assert verdict.reasons == ("entity_not_in_summary", "other_address_in_summary")


def test_generic_summary_with_another_property_in_the_filename_is_excluded() -> None:
    annex = doc("d", "Standard terms for leases.", filename="dik-dik-lane-annex.md")
    verdict = judge_document(annex, ASKED, OTHERS, CONFIG, VOCABULARY)
    assert verdict.reasons == ("entity_not_in_summary", "other_address_in_filename") and verdict.hard


def test_generic_summary_unowned_or_owned_by_the_asked_entity_is_kept() -> None:
    assert judge_document(GENERIC, ASKED, OTHERS, CONFIG, VOCABULARY).keep
    owned = doc("d", GENERIC.summary, owners=("e-bl",))
    assert judge_document(owned, ASKED, OTHERS, CONFIG, VOCABULARY).keep


def test_entity_required_in_summary_excludes_a_generic_document_owned_by_another_entity() -> None:
    owned = doc("d", GENERIC.summary, owners=("e-br",))
    strict = judge_document(owned, ASKED, OTHERS, CONFIG, VOCABULARY)
    # the catalog gives it to another entity only: a hard exclusion, never relaxed back
    assert strict.reasons == ("entity_not_in_summary", "owned_by_other_entity") and strict.hard
    lenient = judge_document(
        owned, ASKED, OTHERS, CONFIG.model_copy(update={"require_entity_in_summary": False}), VOCABULARY
    )
    assert lenient.keep


def test_empty_summary_falls_back_to_the_filename() -> None:
    named = doc("d", "", filename="banda-lane-offer.pdf", owners=("e-dd",))
    verdict = judge_document(named, ASKED, OTHERS, CONFIG, VOCABULARY)
    assert verdict.keep and verdict.entity_in_filename and verdict.tier == 1


def test_prominence_other_mentioned_more_often_excludes() -> None:
    summary = "Valuation of 3 Dik Dik Lane, Nzohe Gardens (L.R. NO: 2327/30); a comparable sale at 14 Banda Lane."
    verdict = judge_document(doc("d", summary, owners=("e-dd",)), ASKED, OTHERS, CONFIG, VOCABULARY)
    assert verdict.reasons == ("other_address_more_prominent",)
    assert verdict.other_addresses[0] == "Dik Dik Lane"


def test_prominence_equal_mentions_known_other_first_excludes() -> None:
    summary = "Letting report on Townhouse 5, Karen Ridges Court; a passing comparison with 22 Karen Ridge."
    asked, others = gate_inputs(["e-kr"], ENTITIES)
    verdict = judge_document(doc("d", summary), asked, others, CONFIG, VOCABULARY)
    assert verdict.reasons == ("other_address_more_prominent",)
    asked_court, others_court = gate_inputs(["e-krc"], ENTITIES)
    assert judge_document(doc("d", summary), asked_court, others_court, CONFIG, VOCABULARY).keep


def test_prominence_a_guessed_street_needs_more_mentions_to_win() -> None:
    verdict = judge_document(doc("d", "Off Ngong Road: the 14 Banda Lane house."), ASKED, OTHERS, CONFIG, VOCABULARY)
    assert verdict.keep and verdict.other_addresses == ("ngong road",)


def test_prominence_check_can_be_switched_off_and_defers_to_catalog_co_owners() -> None:
    summary = "Portfolio offer for 7 Banda Road and 14 Banda Lane."
    assert not judge_document(doc("d", summary), ASKED, OTHERS, CONFIG, VOCABULARY).keep
    off = CONFIG.model_copy(update={"prominence_check": False})
    assert judge_document(doc("d", summary), ASKED, OTHERS, off, VOCABULARY).keep
    assert judge_document(doc("d", summary, owners=("e-br", "e-bl")), ASKED, OTHERS, CONFIG, VOCABULARY).keep


def test_relaxation_brings_back_soft_exclusions_in_order_never_hard_ones(
    caplog: pytest.LogCaptureFixture,
) -> None:
    generic_other = doc("d-g", GENERIC.summary, filename="annex.md", owners=("e-br",))
    filename_only = doc("d-f", GENERIC.summary, filename="banda-lane-terms.md", owners=("e-br",))
    prominent = doc("d-p", "Valuation of 7 Banda Road, Karen Plains Banda Road; see 14 Banda Lane.")
    with_prominence = CONFIG.model_copy(update={"relax_prominence_exclusions": True})
    with caplog.at_level(logging.WARNING, logger="pipeline.guards.entity_gate"):
        result = gate([prominent, generic_other, ROAD_LEASE, filename_only], ASKED, OTHERS, with_prominence, VOCABULARY)
    # only the prominence loser is soft; documents the catalog gives to another entity stay out
    assert result.kept_ids == ("d-p",) and result.relaxed == ("d-p",)
    assert {e.document_id for e in result.exclusions} == {"d-road", "d-g", "d-f"}
    assert "relaxed 1 soft exclusions" in caplog.text
    assert gate([prominent, generic_other, ROAD_LEASE, filename_only], ASKED, OTHERS, CONFIG, VOCABULARY).kept_ids == ()


def test_no_relaxation_when_something_is_kept_or_when_switched_off() -> None:
    soft = doc("d-p", "Valuation of 7 Banda Road, Karen Plains Banda Road; see 14 Banda Lane.")
    relaxing = CONFIG.model_copy(update={"relax_prominence_exclusions": True})
    assert gate([LANE_LEASE, soft], ASKED, OTHERS, relaxing, VOCABULARY).kept_ids == ("d-lane",)
    off = relaxing.model_copy(update={"relax_when_all_excluded": False})
    assert gate([soft], ASKED, OTHERS, off, VOCABULARY).kept_ids == ()


def test_kept_documents_rank_summary_first_then_the_type_hint() -> None:
    offer = doc("d-offer", "Offer to buy 14 Banda Lane for KSH 117,000,000.", doc_type="offer_letter")
    named_file = doc("d-file", "", filename="banda-lane-note.md")
    result = gate([named_file, GENERIC, LANE_LEASE, offer], ASKED, OTHERS, CONFIG, VOCABULARY, {"offer_letter"})
    assert result.kept_ids == ("d-offer", "d-lane", "d-file", "d-gen")


def test_lookalike_letters_neither_hide_nor_smuggle() -> None:
    hidden = doc("d", "Follow-up inspection of 14 B\u0430nda Lane, Hardy, Karen.")
    assert judge_document(hidden, ASKED, OTHERS, CONFIG, VOCABULARY).keep
    asked_road, others_road = gate_inputs(["e-br"], ENTITIES)
    assert not judge_document(hidden, asked_road, others_road, CONFIG, VOCABULARY).keep
    smuggled = doc("d", "Counter-offer for 22 Karen Ridge; viewings at House 9, Mellifera G\u0430rdens.")
    asked_mg, others_mg = gate_inputs(["e-mg"], ENTITIES)
    assert judge_document(smuggled, asked_mg, others_mg, CONFIG, VOCABULARY).reasons == (
        "other_address_more_prominent",
    )


def hit(text: str, row: int, did: str = "d1") -> ChunkHit:
    return ChunkHit(Chunk(row, did, 1, row, text), "file.pdf", 1.0 / (row + 1))


def test_chunk_backstop_drops_chunks_naming_only_another_property(caplog: pytest.LogCaptureFixture) -> None:
    hits = [
        hit("The rent for 14 Banda Lane is KSH 285,000.", 0),
        hit("Comparable: 3 Dik Dik Lane let at KSH 95,000.", 1),
        hit("Rent is payable quarterly in advance.", 2),
        hit("Unlike 7 Banda Road, 14 Banda Lane has a pool.", 3),
    ]
    with caplog.at_level(logging.INFO, logger="pipeline.guards.entity_gate"):
        result = chunk_backstop(hits, ASKED, OTHERS, VOCABULARY)
    assert [h.chunk.row for h in result.kept] == [0, 2, 3]
    assert [(e.row, e.reasons, e.other_addresses) for e in result.exclusions] == [
        (1, ("entity_not_in_chunk", "other_address_in_chunk"), ("Dik Dik Lane",))
    ]
    assert "chunk backstop dropped file.pdf page 1" in caplog.text
    assert chunk_backstop(hits, (), OTHERS, VOCABULARY).kept == tuple(hits)


# -- property: a summary naming only other properties is never kept -------------------------

FILLER = st.lists(
    st.sampled_from(
        [
            "lease",
            "of",
            "the",
            "valuation",
            "tenant",
            "KSH",
            "120,000",
            "dated",
            "Karen",
            "Westlands",
            "house",
            "report",
            "by",
            "Mwangaza",
            "Valuers",
            "per",
            "month",
            ",",
            ";",
            ".",
        ]
    ),
    max_size=8,
).map(" ".join)
LOOKALIKE = str.maketrans({"a": "\u0430", "o": "\u043e", "e": "\u0435"})


@st.composite
def name_of(draw: st.DrawFn, entity: Entity) -> str:
    name = draw(st.sampled_from(entity.names))
    style = draw(st.sampled_from(["plain", "upper", "lookalike", "lower"]))
    return {
        "plain": name,
        "upper": name.upper(),
        "lookalike": name.translate(LOOKALIKE),
        "lower": name.lower(),
    }[style]


@st.composite
def cases(draw: st.DrawFn) -> tuple[Entity, list[Document], set[str]]:
    asked = draw(st.sampled_from(list(ENTITIES.values())))
    others = [e for e in ENTITIES.values() if e is not asked]
    documents, wrong = [], set()
    for i in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["other_only", "asked", "generic"]))
        named = []
        if kind in ("other_only", "asked"):
            named = [draw(name_of(draw(st.sampled_from(others)))) for _ in range(draw(st.integers(1, 3)))]
        if kind == "asked":
            named.insert(draw(st.integers(0, len(named))), draw(name_of(asked)))
        parts = [draw(FILLER)] + [f"{n} {draw(FILLER)}" for n in named]
        filename = draw(st.sampled_from(["doc.pdf", f"{asked.slug}.pdf", f"{asked.name}.md"]))
        owners = tuple(draw(st.lists(st.sampled_from(list(ENTITIES)), max_size=2, unique=True)))
        documents.append(doc(f"d{i}", " ".join(parts), filename, owners=owners))
        if kind == "other_only":
            wrong.add(f"d{i}")
    return asked, documents, wrong


CONFIGS = st.builds(
    EntityGateConfig,
    require_entity_in_summary=st.booleans(),
    prominence_check=st.booleans(),
    relax_when_all_excluded=st.booleans(),
    relax_prominence_exclusions=st.booleans(),
)


def _check_gate_excludes_the_wrong(case: tuple[Entity, list[Document], set[str]], config: EntityGateConfig) -> None:
    asked_entity, documents, wrong = case
    asked, others = gate_inputs([asked_entity.entity_id], ENTITIES)
    result = gate(documents, asked, others, config, DEMO_VOCABULARY)
    assert not wrong & set(result.kept_ids)
    assert wrong <= {e.document_id for e in result.exclusions}


@settings(max_examples=200, deadline=None)
@given(cases(), CONFIGS)
def test_gate_never_keeps_a_summary_naming_only_another_property(
    case: tuple[Entity, list[Document], set[str]], config: EntityGateConfig
) -> None:
    _check_gate_excludes_the_wrong(case, config)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(cases(), CONFIGS)
def test_gate_never_keeps_a_summary_naming_only_another_property_slow(
    case: tuple[Entity, list[Document], set[str]], config: EntityGateConfig
) -> None:
    _check_gate_excludes_the_wrong(case, config)
