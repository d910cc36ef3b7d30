"""Which positions changed (pipeline.answering.titles): titles from statements of appointment and departure."""

from __future__ import annotations

from pipeline.answering.sentences import OfferedSentence
from pipeline.answering.titles import asks_titles, changed_titles, titles_in
from pipeline.types import Chunk, ChunkHit

HIT = ChunkHit(Chunk(0, "d", 1, 0, "text"), "d.pdf", 1.0)


def offered(*texts: str) -> list[OfferedSentence]:
    return [OfferedSentence(i, text, HIT) for i, text in enumerate(texts)]


def test_a_question_about_changed_positions_is_asked_for_titles_and_one_about_people_is_not() -> None:
    assert asks_titles("Which leadership positions changed at Acme in the reporting period?")
    assert asks_titles("Which roles were affected?", ["Give me the title of the position."])
    assert not asks_titles("What are the names of all new executives that took on new leadership positions?")
    assert not asks_titles("What was the total revenue?")


def test_a_title_is_the_office_not_the_person_or_company_before_it() -> None:
    assert titles_in("Julian Viggars Chief Investment Officer was appointed") == ["Chief Investment Officer"]
    assert titles_in("TransUnion’s Regional President retired") == ["Regional President"]
    assert titles_in("was promoted to Executive Vice President, Chief Credit Officer") == [
        "Executive Vice President",
        "Chief Credit Officer",
    ]
    assert titles_in("The CFO resigned") == ["Chief Financial Officer"]


def test_only_sentences_stating_a_change_give_titles_never_a_heading_a_slogan_or_the_company() -> None:
    found = changed_titles(
        offered(
            "Board of Directors and Chief Executive Officer",  # a heading: no change
            "Intelligent Positioning for a changing world.",  # a slogan: no office
            "In March 2022 Jane Roe was appointed Chief Lending Officer.",
            "John Doe retired as Managing Director.",
            "Acme Director Holdings was appointed as agent.",
        ),
        company_names=["Acme Director Holdings"],
    )
    assert [f.title for f in found] == ["Chief Lending Officer", "Managing Director"]
    assert found[0].sentence.sentence_id == 2
