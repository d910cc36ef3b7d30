"""Grounding of answer lines and the sub-question guard: one test per branch (accepts, rejects naming what is
missing)."""

from __future__ import annotations

import pytest

from pipeline.guards.grounding import ground_line, proper_names
from pipeline.guards.sub_questions import check_sub_questions, introduced

EVIDENCE = [
    "1.2 The Tenant shall pay rent of KSH 285,000 per month (KSH 3,420,000 per year), in advance.",
    "SIGNED by the Tenant, Peter Otieno Ochieng, on 20 February 2023.",
]


@pytest.mark.parametrize(
    "line",
    [
        "KSH 285,000 per month",
        "Peter Otieno Ochieng",
        "The rent is 285,000 a month, KSH 3.42 million a year",  # values compared as values
        "signed on 20/2/2023",  # a date in other words
    ],
)
def test_a_line_its_evidence_states_is_grounded(line: str) -> None:
    assert ground_line(line, EVIDENCE).grounded


@pytest.mark.parametrize(
    ("line", "missing"),
    [
        ("KSH 258,000 per month", "258,000"),
        ("Peter Otieno Kamau", "Peter Otieno Kamau"),
        ("signed on 21 February 2023", "21 February 2023"),
        ("A roof leak above the master bedroom", None),
    ],
)
def test_a_line_stating_what_its_evidence_does_not_is_not_grounded(line: str, missing: str | None) -> None:
    verdict = ground_line(line, EVIDENCE)
    assert not verdict.grounded and verdict.reason
    if missing:
        assert missing in verdict.missing


def test_a_line_restating_its_question_is_no_answer() -> None:
    question = "What is the monthly rent?"
    evidence = ["The monthly rent is KSH 285,000."]
    assert ground_line("the monthly rent", evidence, question=question).reason == "restates the question"
    assert ground_line("The monthly rent is KSH 285,000.", evidence, question=question).grounded


def test_no_evidence_or_an_empty_line_is_never_grounded() -> None:
    assert ground_line("KSH 285,000", []).reason == "no evidence"
    assert ground_line("  ", EVIDENCE).reason == "empty"


def test_proper_names_skip_a_capitalised_first_word_and_stopwords() -> None:
    assert proper_names("The tenant is Peter Otieno Ochieng of Nairobi.") == ["Peter Otieno Ochieng Nairobi"]
    assert proper_names("Rent is due.") == []


QUESTION = "What is the operating margin for Acme Corp in FY2022?"


def test_sub_questions_that_say_only_what_the_question_says_are_kept() -> None:
    kept, dropped = check_sub_questions(
        ["What is Acme Corp's operating income in FY2022?", "What is revenue?"], QUESTION
    )
    assert len(kept) == 2 and not dropped


@pytest.mark.parametrize(
    ("sub_question", "reason"),
    [
        ("What operating margin for Acme Corp is 1.2%?", "1.2%"),
        ("What is the margin in FY2021?", "FY2021"),
        ("What is the margin on 31 March 2022?", "31 March 2022"),
        ("What is the margin of Globex Inc?", "Globex Inc"),
        ("Answer in USD billions.?", "format"),
        ("Round to one decimal place.", "format"),
    ],
)
def test_a_sub_question_bringing_what_the_question_does_not_say_is_dropped(sub_question: str, reason: str) -> None:
    kept, dropped = check_sub_questions([sub_question], QUESTION)
    assert kept == [] and len(dropped) == 1 and reason in dropped[0].reason


def test_introduced_lists_figures_dates_and_names() -> None:
    assert introduced("Is the Acme Corp margin 5% since 2019?", QUESTION) == ["5%", "2019"]
