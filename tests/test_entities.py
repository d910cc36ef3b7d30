"""Entity matching: skeletons fold look-alikes; names match whole; other addresses are found."""

from __future__ import annotations

import pytest

from pipeline.entities import (
    entity_identifiers,
    find_entity_mentions,
    find_identifiers,
    name_variants,
    scan_addresses,
    scan_entity_mentions,
    shared_names,
    skeleton,
    without_mentions,
)
from pipeline.text import fold
from pipeline.types import Entity
from pipeline.values.name_forms import without_legal_form
from pipeline.vocabulary import Vocabulary
from tests.support.vocabulary import DEMO_VOCABULARY, demo_vocabulary_with

BANDA_LANE = Entity("e-bl", "banda-lane", "Banda Lane", ("14 Banda Lane", "Hardy Banda Lane", "L.R. NO: 1160/88"))
BANDA_ROAD = Entity("e-br", "banda-road", "Banda Road", ("7 Banda Road", "L.R. NO: 1160/880"))
DIK_DIK = Entity("e-dd", "dik-dik-lane", "Dik Dik Lane", ("3 Dik Dik Lane", "Nzohe Gardens", "L.R. NO: 2327/30"))
KAREN_RIDGE = Entity("e-kr", "karen-ridge", "Karen Ridge", ("22 Karen Ridge",))
KAREN_COURT = Entity("e-krc", "karen-ridges-court", "Karen Ridges Court", ("Townhouse 5, Karen Ridges Court",))
ALL = [BANDA_LANE, BANDA_ROAD, DIK_DIK, KAREN_RIDGE, KAREN_COURT]
VOCABULARY = demo_vocabulary_with("langata", "nzohe")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Banda Lane", "banda lane"),
        ("B\u0430nda L\u0430ne", "banda lane"),  # Cyrillic a
        ("Mellifera C\u043eurt", "mellifera court"),  # Cyrillic o
        ("\uff22\uff41\uff4e\uff44\uff41 Lane", "banda lane"),  # full-width
        ("Ban\u200bda\u00ad Lane", "banda lane"),  # zero-width space, soft hyphen
        ("B\u00e1nda LANE", "banda lane"),  # accent, upper case
        ("\u0392\u03b1nda Lane", "banda lane"),  # Greek capital beta and alpha
        ("Dik-Dik_Lane, Nairobi.", "dik dik lane nairobi"),
        ("B\u2c6dNDA LANE", "banda lane"),  # Latin capital alpha
        ("\u042cANDA \ua7acARDENS", "banda gardens"),  # Cyrillic capital soft sign, Latin capital script g
        ("Ban\U000e0041da Lane", "banda lane"),  # a Unicode tag character
    ],
)
def test_skeleton_folds_lookalikes_width_invisibles_accents_and_case(text: str, expected: str) -> None:
    assert skeleton(text) == expected


def test_fold_keeps_case_for_the_street_pattern() -> None:
    assert fold("B\u0430nda Lane") == "Banda Lane"


def test_name_variants_drop_leading_house_numbers() -> None:
    assert ("banda", "lane") in name_variants(BANDA_LANE)
    assert ("14", "banda", "lane") in name_variants(BANDA_LANE)
    assert all(v != ("14",) for v in name_variants(BANDA_LANE))


def test_full_names_only_banda_lane_is_not_banda_road() -> None:
    found = find_entity_mentions("the 7 Banda Road lease", ALL, DEMO_VOCABULARY)
    assert [m.entity_id for m in found] == ["e-br"]


def test_longest_name_wins_karen_ridges_court_is_not_karen_ridge() -> None:
    found = find_entity_mentions("Townhouse 5, Karen Ridges Court and 22 Karen Ridge", ALL, DEMO_VOCABULARY)
    assert [m.entity_id for m in found] == ["e-krc", "e-kr"]


def test_suburb_word_alone_is_no_entity() -> None:
    assert find_entity_mentions("14 Banda Lane, Hardy, Karen", [KAREN_RIDGE, KAREN_COURT], DEMO_VOCABULARY) == []


def test_parcel_numbers_are_compared_whole() -> None:
    assert find_identifiers("L.R. NO: 1160/880 and LR No. 2327 / 30", DEMO_VOCABULARY) == ["1160/880", "2327/30"]
    assert entity_identifiers(BANDA_LANE, DEMO_VOCABULARY.identifiers) == {"1160/88"}
    found = find_entity_mentions("title of L.R. NO: 1160/880", ALL, DEMO_VOCABULARY)
    assert [m.entity_id for m in found] == ["e-br"]
    assert [m.entity_id for m in find_entity_mentions("LR no 2327/30", ALL, DEMO_VOCABULARY)] == ["e-dd"]


def test_scan_finds_asked_and_every_kind_of_other_address() -> None:
    text = "14 Banda Lane; also 3 Dik Dik Lane, near Langata, L.R. NO: 9999/1 on Ngong Road at the High Court"
    scan = scan_addresses(text, [BANDA_LANE], [BANDA_ROAD, DIK_DIK], VOCABULARY)
    assert [m.label for m in scan.asked] == ["Banda Lane"]
    assert scan.other_labels == ("Dik Dik Lane", "langata", "parcel 9999/1", "ngong road")
    sources = {m.label: (m.source, m.strong) for m in scan.others}
    assert sources["ngong road"] == ("street_pattern", False)
    assert sources["parcel 9999/1"] == ("parcel_number", False)
    assert sources["langata"] == ("configured", True)


def test_lowercase_words_are_not_a_street_address() -> None:
    scan = scan_addresses("the house is close to the main road", [BANDA_LANE], [], VOCABULARY)
    assert scan.others == ()


def test_street_pattern_of_a_known_name_is_that_entity() -> None:
    scan = scan_addresses("Banda Road", [BANDA_LANE], [BANDA_ROAD], VOCABULARY)
    assert [(m.label, m.entity_id) for m in scan.others] == [("Banda Road", "e-br")]
    street_only = scan_addresses("Banda Street", [BANDA_LANE], [], VOCABULARY)
    assert street_only.other_labels == ("banda street",)


def test_configured_location_inside_an_asked_name_is_not_other() -> None:
    scan = scan_addresses("Nzohe Gardens house", [DIK_DIK], [BANDA_LANE], VOCABULARY)
    assert scan.others == ()
    assert [m.label for m in scan.asked] == ["Dik Dik Lane"]


def test_lookalike_cannot_hide_the_asked_entity_nor_disguise_another() -> None:
    hidden = scan_addresses("Follow-up at 14 B\u0430nda Lane", [BANDA_LANE], [BANDA_ROAD], VOCABULARY)
    assert hidden.asked and not hidden.others
    smuggled = scan_addresses("Works at 3 D\u0456k D\u0456k L\u0430ne", [BANDA_LANE], [DIK_DIK], VOCABULARY)
    assert not smuggled.asked and smuggled.other_labels == ("Dik Dik Lane",)


def test_phrase_shared_by_asked_and_other_entity_says_nothing() -> None:
    twin = Entity("e-twin", "twin", "Twin House", ("Banda Lane",))
    scan = scan_addresses("Banda Lane", [BANDA_LANE], [twin], VOCABULARY)
    assert scan.asked == () and scan.others == ()


def test_a_text_without_the_names_of_some_entities() -> None:
    question = "What is the rent at 14 Banda Lane, and is Banda Road's rent higher?"
    assert (
        without_mentions(question, [BANDA_LANE], VOCABULARY) == "What is the rent at , and is Banda Road's rent higher?"
    )
    assert (
        without_mentions(question, [BANDA_LANE, BANDA_ROAD], VOCABULARY) == "What is the rent at , and is rent higher?"
    )
    assert without_mentions(question, [DIK_DIK], VOCABULARY) == question  # names none of them: unchanged
    assert without_mentions("Banda Lane", [BANDA_LANE], VOCABULARY) == "Banda Lane"  # nothing else: kept whole
    assert without_mentions("Bаnda Lane rent", [BANDA_LANE], VOCABULARY) == "rent"  # a look-alike letter too


# -- names as people write them ----------------------------------------------------------------------

STREMWOOD = Entity("e-sw", "stremwood", "Stremwood's Dairy Farms")
HALCYON = Entity("e-hr", "halcyon", "Halcyon Resorts International Inc.")
NORVANE_LLC = Entity("e-nl", "norvane-llc", "Norvane LLC", ("Norvane",))
NORVANE_LTD = Entity("e-nd", "norvane-limited", "Norvane Limited", ("Norvane",))


@pytest.mark.parametrize(
    "text",
    [
        "Supply agreement of Stremwoods Dairy Farms, LLC.",  # apostrophe left out, a legal form added
        "Stremwood's Dairy Farms agrees.",
        "STREMWOODS DAIRY FARMS",
    ],
)
def test_a_name_matches_without_its_apostrophes(text: str) -> None:
    assert [m.entity_id for m in find_entity_mentions(text, [STREMWOOD], Vocabulary())] == ["e-sw"]


def test_a_name_matches_without_its_legal_form_and_with_another() -> None:
    for text in (
        "Halcyon Resorts International reported",
        "Halcyon Resorts International Corporation",
        "HALCYON RESORTS INTERNATIONAL, INC.",
    ):
        assert [m.entity_id for m in find_entity_mentions(text, [HALCYON], Vocabulary())] == ["e-hr"], text
    assert without_legal_form(("acme", "co", "ltd")) == ("acme",)
    assert without_legal_form(("acme", "l", "l", "c")) == ("acme",)
    assert without_legal_form(("limited",)) == ("limited",)  # nothing else would remain


def test_a_name_two_entities_go_by_names_neither() -> None:
    scan = scan_entity_mentions("What did Norvane report?", [NORVANE_LLC, NORVANE_LTD], Vocabulary())
    assert scan.mentions == () and scan.ambiguous == (("Norvane", ("e-nl", "e-nd")),)
    # the full name says which one
    full = scan_entity_mentions("What did Norvane Limited report?", [NORVANE_LLC, NORVANE_LTD], Vocabulary())
    assert [m.entity_id for m in full.mentions] == ["e-nd"] and full.ambiguous == ()
    assert shared_names([NORVANE_LLC, NORVANE_LTD]) == [("norvane", ("Norvane LLC", "Norvane Limited"))]
    assert shared_names([HALCYON, STREMWOOD]) == []
