"""The choice among the span floor's candidates without its LM (pipeline.answering.choose and
pipeline.answering.floors.span_choices): what is offered and how, and one test per branch of the checks and the
decision."""

from __future__ import annotations

import pytest

from pipeline.answering.choose import MAX_CANDIDATES, MAX_SENTENCE_CHARS, NONE, choose, decide, shown
from pipeline.answering.floors import Draft, span_choices, span_line
from pipeline.answering.sentences import OfferedSentence
from pipeline.types import Chunk, ChunkHit

HIT = ChunkHit(Chunk(0, "d", 1, 0, "text"), "d.pdf", 1.0)
QUESTION = "How long does the agreement remain in force?"
TERMS = ("long", "agreement", "remain", "force")


def offered(*texts: str) -> list[OfferedSentence]:
    return [OfferedSentence(10 + i, text, HIT) for i, text in enumerate(texts)]


SENTENCES = offered(
    "The obligations of confidentiality survive for five (5) years after the Agreement ends.",
    "This Agreement remains in force for three (3) years from the Effective Date.",
    "Within thirty (30) days of a written request, the receiving party shall return all materials.",
    "The Agreement remains in force; this Agreement remains in force for three (3) years.",
)


def test_the_choices_are_the_floors_ranking_each_text_once() -> None:
    found = span_choices(SENTENCES, "duration", TERMS, QUESTION, limit=MAX_CANDIDATES)
    assert found[0] == span_line(SENTENCES, "duration", TERMS, QUESTION)
    assert [d.text for d in found] == ["three (3) years", "five (5) years", "thirty (30) days"]
    assert [d.evidence for d in found] == [(11,), (10,), (12,)]  # the fourth repeats the first's text
    assert span_choices(SENTENCES, "duration", TERMS, QUESTION, limit=1) == found[:1]
    assert span_choices([], "duration", TERMS, QUESTION, limit=4) == []


def test_the_lm_reads_each_answer_with_its_sentence_cut_short() -> None:
    long = offered("x " * 400)[0]
    drafts = [Draft("three (3) years", (11,), "extracted"), Draft("x", (long.sentence_id,), "extracted")]
    text = shown(drafts, [*SENTENCES, long]).splitlines()
    assert text[0] == "1. three (3) years | from: " + SENTENCES[1].text
    assert text[1].startswith("2. x | from: x x") and text[1].endswith(" …")
    assert len(text[1]) <= len("2. x | from: ") + MAX_SENTENCE_CHARS + 2


DRAFTS = [Draft(t, (i,), "extracted") for i, t in enumerate(["a", "b", "c"])]


def test_a_choice_offered_decides() -> None:
    assert decide(DRAFTS, 2) == decide(DRAFTS, 2) and decide(DRAFTS, 2).draft == DRAFTS[1]
    assert decide(DRAFTS, 3).floor is None


@pytest.mark.parametrize(
    ("choice", "why"),
    [
        (NONE, "chose none"),
        (4, "was not offered"),
        (-1, "was not offered"),
        ("2", "not a number"),
        (True, "not a number"),
        (None, "not a number"),
    ],
)
def test_a_choice_that_does_not_count_leaves_the_floors_first(choice: object, why: str) -> None:
    decision = decide(DRAFTS, choice)
    assert decision.draft == DRAFTS[0] and decision.floor is not None and why in decision.floor


def test_the_lm_is_asked_only_when_there_is_a_choice() -> None:
    asked: list[str] = []

    def ask(candidates: str) -> object:
        asked.append(candidates)
        return 3

    assert choose([], SENTENCES, ask) is None
    one = choose(DRAFTS[:1], SENTENCES, ask)
    assert one is not None and one.draft == DRAFTS[0] and one.floor is None and asked == []
    chosen = choose(DRAFTS, SENTENCES, ask)
    assert chosen is not None and chosen.draft == DRAFTS[2] and len(asked) == 1 and asked[0].startswith("1. a |")
    failed = choose(DRAFTS, SENTENCES, lambda candidates: None)
    assert failed is not None and failed.draft == DRAFTS[0] and failed.floor == "no choice from the LM"
