"""Support decided per sentence: a line is supported only by a sentence that holds what is asked (with its
section's heading) and, for a value, a value of that kind; key terms spread over unrelated sentences support
nothing. The text is the contract corpus's Northwind-Helix NDA (datasets/contracts)."""

from __future__ import annotations

from pipeline.answering.asks import answer_kind
from pipeline.answering.floors import Draft, draft_support, sentence_support, span_line, support
from pipeline.answering.sentences import offered_sentences
from pipeline.answering.terms import focus_terms, ordered_terms
from pipeline.types import Chunk, ChunkHit
from tests.support.paths import DATASETS

PAGES = (DATASETS / "contracts" / "agreements" / "northwind-helix-nda.txt").read_text().split("<!-- pagebreak -->")
HITS = [ChunkHit(Chunk(i, "nh", i + 1, 0, page), "northwind-helix-nda.txt", 1.0) for i, page in enumerate(PAGES)]
THRESHOLD = 0.5


def _read(question: str, asked: str) -> tuple[list, str, frozenset[str]]:
    sentences = offered_sentences(HITS, 5000, asked)
    return sentences, answer_kind(question), frozenset(focus_terms(asked, {"nda", "ndas", "agreement"}))


def test_terms_and_a_value_in_different_sentences_support_no_line() -> None:
    # the notice clause holds "notice", the survival clause a duration: together they pass the support floor,
    # but the line the span floor takes ("five (5) years") rests on a sentence that states no notice period
    question = "How much notice does Helix Robotics need to give to terminate its NDAs before the term ends?"
    asked = "How much notice does need to give to terminate its NDAs before the term ends?"
    sentences, kind, focus = _read(question, asked)
    assert kind == "duration"
    notices = next(s for s in sentences if s.text.startswith("Notices to"))
    assert sentence_support(notices, kind, focus) < THRESHOLD  # the term, but no duration
    assert support(sentences, kind, focus) >= THRESHOLD  # spread over two sentences
    draft = span_line(sentences, kind, ordered_terms(asked), question, tuple(focus))
    assert draft is not None and draft.text == "five (5) years"
    held = draft_support(draft, sentences, kind, focus)
    assert held is not None and held < THRESHOLD


def test_a_line_citing_no_offered_sentence_has_no_support_to_judge() -> None:
    sentences, kind, focus = _read("How long does the agreement remain in force?", "How long does it remain in force?")
    assert draft_support(Draft("x", (999,), "extracted"), sentences, kind, focus) is None


def test_a_sentence_and_its_heading_support_the_answer_they_state() -> None:
    question = "Within how many days must materials be returned?"
    sentences, kind, focus = _read(question, question)
    assert support(sentences, kind, focus) >= THRESHOLD  # "materials" is in the heading "Return of materials"
    draft = span_line(sentences, kind, ordered_terms(question), question, tuple(focus))
    assert draft is not None and draft.text == "fifteen (15) days"
    held = draft_support(draft, sentences, kind, focus)
    assert held is not None and held >= THRESHOLD


def test_what_a_clause_says_about_a_topic_is_asked_about_the_topic_not_saying() -> None:
    # "say" is a question word like "tell" and "describe": the dev question abstained on 0.40 of its terms
    asked = "What does the NDA between and say about returning materials?"
    sentences, kind, focus = _read(asked, asked)
    assert "say" not in focus and {"return", "materi"} <= focus
    body = next(s for s in sentences if s.text.startswith("Within fifteen"))
    assert body.heading == "Return of materials"
    assert support(sentences, kind, focus) >= THRESHOLD
