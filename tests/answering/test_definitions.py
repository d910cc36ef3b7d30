"""Defined terms: a clause that defines a term answers a question naming the term with the value it defines,
never with the term's own words. The text is the contract corpus's (datasets/contracts) and the preamble
found weak on unseen contracts ('dated March 3, 2000 (the "Effective Date")')."""

from __future__ import annotations

from pipeline.answering.asks import answer_kind
from pipeline.answering.definitions import defined_terms, definitions, names_term, only_term
from pipeline.answering.floors import span_choices, span_line
from pipeline.answering.sentences import offered_sentences
from pipeline.answering.terms import focus_terms, ordered_terms
from pipeline.types import Chunk, ChunkHit
from tests.support.paths import DATASETS

AGREEMENTS = DATASETS / "contracts" / "agreements"
HELIX_PAGE_1 = (AGREEMENTS / "northwind-helix-nda.txt").read_text().split("<!-- pagebreak -->")[0]
QUARRY_PAGE_1 = (AGREEMENTS / "northwind-quarry-nda.txt").read_text().split("<!-- pagebreak -->")[0]
GENERIC = frozenset({"nda", "agreement"})


def _span(text: str, question: str) -> str | None:
    sentences = offered_sentences([ChunkHit(Chunk(0, "d", 1, 0, text), "nda.txt", 1.0)], 5000, question)
    terms = ordered_terms(question, GENERIC)
    draft = span_line(sentences, answer_kind(question), terms, question, focus_terms(question, GENERIC))
    return draft.text if draft else None


def test_a_term_defined_after_its_value_is_given_that_value() -> None:
    found = {d.term: d.value for text in HELIX_PAGE_1.split("\n\n") for d in definitions(text)}
    assert found["Effective Date"] == "3 March 2021"
    assert found["Purpose"] == "a robotic warehouse picking collaboration"
    # a term before its value: what "means" introduces, up to the clause that only adds to it
    assert found["Confidential Information"] == (
        "all non-public business, technical and financial information a party discloses"
    )


def test_a_date_written_with_a_comma_is_the_whole_value() -> None:
    preamble = 'This Agreement, dated March 3, 2000 (the "Effective Date"), is entered into by the parties.'
    assert [(d.term, d.value) for d in definitions(preamble)] == [("Effective Date", "March 3, 2000")]
    assert _span(preamble, "What is the effective date of the agreement?") == "March 3, 2000"


def test_a_question_naming_a_defined_term_is_answered_with_its_value() -> None:
    assert _span(HELIX_PAGE_1, "What is the Effective Date of this agreement?") == "3 March 2021"
    assert _span(QUARRY_PAGE_1, "What is the purpose of the Quarry Analytics agreement?") == (
        "a pilot of a demand forecasting platform"
    )
    meaning = _span(HELIX_PAGE_1, "What does Confidential Information mean?")
    assert meaning is not None and meaning.startswith("all non-public business, technical and financial information")


def test_a_corpus_generic_term_names_no_value() -> None:
    # '(the "Agreement")' defines the agreement itself: a question about "the agreement" asks for no value of it
    line = _span(HELIX_PAGE_1, "What purpose does the agreement cover?")
    assert line == "a robotic warehouse picking collaboration"
    assert names_term("What is the effective date?", "Effective Date")
    assert not names_term("What is the date it takes effect?", "Effective Date")


def test_a_bare_defined_term_is_never_an_answer_line() -> None:
    text = (
        'Northwind Systems Inc. and Helix Robotics Ltd (each a "Party") agree as follows. '
        "Neither Party may assign this Agreement without the other's consent."
    )
    question = "Who may assign this Agreement?"
    sentences = offered_sentences([ChunkHit(Chunk(0, "d", 1, 0, text), "nda.txt", 1.0)], 5000, question)
    lines = [d.text for d in span_choices(sentences, "name", ordered_terms(question), question, limit=4)]
    assert "Neither Party" not in lines
    assert only_term("Neither Party", defined_terms([text]))
    assert only_term("Confidential Information.", frozenset({"confidential information"}))
    assert not only_term("Helix Robotics Ltd", defined_terms([text]))
