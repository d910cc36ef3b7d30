"""Headings: a section's heading is never an answer line, and a question naming it is answered from its body.
The text is the contract corpus's (datasets/contracts, the Northwind-Helix NDA)."""

from __future__ import annotations

import pytest

from pipeline.answering.asks import answer_kind
from pipeline.answering.floors import span_line
from pipeline.answering.headings import heading_title, is_heading, section_bodies
from pipeline.answering.sentences import offered_sentences
from pipeline.answering.terms import focus_terms, ordered_terms
from pipeline.text import split_sentences
from pipeline.types import Chunk, ChunkHit
from tests.support.paths import DATASETS

PAGES = (DATASETS / "contracts" / "agreements" / "northwind-helix-nda.txt").read_text().split("<!-- pagebreak -->")


def _hits(page: int) -> list[ChunkHit]:
    return [ChunkHit(Chunk(0, "northwind-helix", page, 0, PAGES[page - 1]), "northwind-helix-nda.txt", 1.0)]


def _span(page: int, question: str) -> str | None:
    sentences = offered_sentences(_hits(page), 5000, question)
    kind = answer_kind(question)
    draft = span_line(sentences, kind, ordered_terms(question, {"nda", "agreement"}), question, focus_terms(question))
    return draft.text if draft else None


@pytest.mark.parametrize(
    "text",
    [
        "6. Governing law.",
        "1. Purpose.",
        "5. Return of materials.",
        "MUTUAL NON-DISCLOSURE AGREEMENT",
        "Confidential Information.",
        "Section 4.2 Term",
    ],
)
def test_a_heading_is_recognised(text: str) -> None:
    assert is_heading(text)


@pytest.mark.parametrize(
    "text",
    [
        "This Agreement is governed by the laws of the State of Delaware, and any dispute is resolved by the"
        " courts of Wilmington.",
        "three (3) years",
        "Ray Okafor",
        "Helix Robotics Ltd.",
        "Payment is due.",
        "the State of Delaware",
    ],
)
def test_a_line_that_states_something_or_names_someone_is_no_heading(text: str) -> None:
    assert not is_heading(text)


def test_each_body_sentence_carries_its_heading_up_to_the_next_one() -> None:
    sentences = split_sentences(PAGES[1])
    headings = dict(zip(sentences, section_bodies(sentences), strict=True))
    assert headings["4. Term."] == ""  # a heading heads others, not itself
    survival = next(s for s in sentences if s.startswith("The obligations of confidentiality"))
    assert headings[survival] == "Term"
    assert headings[next(s for s in sentences if s.startswith("Within fifteen"))] == "Return of materials"
    assert heading_title("6. Governing law.") == "Governing law"


def test_no_heading_is_offered_and_its_body_ranks_first_for_a_question_naming_it() -> None:
    sentences = offered_sentences(_hits(3), 5000, "Which law governs the NDA?")
    assert not any(is_heading(s.text) for s in sentences)
    assert sentences[0].text.startswith("This Agreement is governed by the laws of the State of Delaware")
    assert sentences[0].heading == "Governing law"


def test_a_question_naming_a_heading_is_answered_from_its_section_body_not_the_heading() -> None:
    # before: "6. Governing law." and "4. Term." were the answer lines
    law = _span(3, "Which law governs the NDA between Northwind Systems and Helix Robotics?")
    assert law is not None and "the State of Delaware" in law
    term = _span(2, "What is the term of the agreement?")
    assert term is not None and "three (3) years" in term
