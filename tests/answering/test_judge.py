"""The judge of yes/no questions without its LM (pipeline.answering.judge): which statements it offers, and one
test per branch of the checks and the decision."""

from __future__ import annotations

from pipeline.answering.judge import (
    MAX_SENTENCES,
    ROW,
    Statement,
    Verdict,
    candidates,
    decide,
    judge,
    row_statement,
)
from pipeline.answering.sentences import OfferedSentence
from pipeline.types import Chunk, ChunkHit

HIT = ChunkHit(Chunk(0, "d", 1, 0, "text"), "d.pdf", 1.0)
TERMS = ("declar", "dividend", "common")


def offered(*texts: str) -> list[OfferedSentence]:
    return [OfferedSentence(10 + i, text, HIT) for i, text in enumerate(texts)]


def statements() -> list[Statement]:
    row = row_statement("Dividends declared", "$0.50", "Year Ended December 31, 2023")
    return candidates(row, offered("The Board declared a dividend.", "Dividends on common stock were paid."), TERMS)


def test_the_row_comes_first_then_sentences_holding_half_the_event_words() -> None:
    sentences = offered(
        "Revenue grew in every segment.",  # none of the words
        "A dividend was paid.",  # one of three: below half
        *(f"Dividends declared in quarter {n}." for n in range(1, 6)),
    )
    found = candidates("Dividends declared: $0.50 (2023)", sentences, TERMS)
    assert found[0] == Statement(ROW, "Dividends declared: $0.50 (2023)")
    assert [s.sentence.sentence_id for s in found[1:] if s.sentence] == [12, 13, 14][:MAX_SENTENCES]
    assert [s.number for s in found] == [ROW, 1, 2, 3]
    assert candidates(None, sentences, ()) == []
    assert row_statement("Dividends declared", "$0.50", "") == "Dividends declared: $0.50"


def test_a_yes_on_a_sentence_decides_and_names_it() -> None:
    offered_now = statements()
    decision = decide(offered_now, [Verdict(ROW, "not stated"), Verdict(1, " Yes ")])
    assert decision.yes == offered_now[1] and decision.floor is None
    assert decision.summary(offered_now) == "row: not stated; sentence 10: yes"


def test_a_yes_on_the_row_decides() -> None:
    offered_now = statements()
    decision = decide(offered_now, [Verdict(ROW, "yes")])
    assert decision.yes is not None and decision.yes.sentence is None


def test_no_yes_decides_nothing_with_every_verdict_kept() -> None:
    offered_now = statements()
    decision = decide(offered_now, [Verdict(ROW, "no"), Verdict(1, "not stated"), Verdict(2, "no")])
    assert decision.yes is None and decision.floor is None and len(decision.verdicts) == 3


def test_a_verdict_that_is_none_of_the_three_words_hands_the_question_to_the_floor() -> None:
    decision = decide(statements(), [Verdict(ROW, "no"), Verdict(1, "probably")])
    assert decision.yes is None and decision.floor is not None and "'probably'" in decision.floor
    assert decision.verdicts == (Verdict(ROW, "no"),)


def test_a_verdict_for_a_statement_not_offered_hands_the_question_to_the_floor() -> None:
    decision = decide(statements(), [Verdict(7, "yes")])
    assert decision.yes is None and decision.floor is not None and "statement 7" in decision.floor


def test_judging_stops_at_the_first_yes_and_falls_to_the_floor_without_a_verdict() -> None:
    asked: list[int] = []

    def says_yes_to_the_first_sentence(statement: Statement) -> Verdict:
        asked.append(statement.number)
        return Verdict(statement.number, "yes" if statement.number == 1 else "no")

    decision = judge(statements(), says_yes_to_the_first_sentence)
    assert asked == [ROW, 1] and decision.yes is not None and decision.yes.number == 1
    silent = judge(statements(), lambda statement: None)
    assert silent.yes is None and silent.floor == "no verdict for the row"
    assert judge([], says_yes_to_the_first_sentence).summary([]) == "no statement to judge"
