"""The answer step without an LM: spans of the kind asked for, the best-ranked sentence, and abstention by
support. Inputs are sentences as documents write them (leases, registers, statements, forms)."""

from __future__ import annotations

import pytest

from pipeline.answering.asks import answer_kind
from pipeline.answering.floors import sentence_line, span_line, support
from pipeline.answering.sentences import offered_sentences
from pipeline.answering.spans import candidates, fields, typed_spans
from pipeline.answering.terms import focus_terms, ordered_terms
from pipeline.types import Chunk, ChunkHit

LEASE = (
    "THIS LEASE is made on 20 February 2023 BETWEEN Grace Wanjiku Kamau of P.O. Box 24518-00502, Nairobi "
    '(the "Landlord") AND Peter Otieno Ochieng (the "Tenant"). '
    "1.2 The Tenant shall pay rent of KSH 285,000 per month (KSH 3,420,000 per year), in advance. "
    "2.1 On signing, the Tenant pays a deposit of KSH 570,000. "
    "6.1 After the first year, either party may end this lease by giving 3 months' written notice. "
    "1.4 Rent unpaid fourteen days after it falls due bears interest at two per cent per month."
)
REGISTER = (
    "Title number: L.R. NO: 7785/41 Date of search: 10 June 2024 Applicant: Esther Wangari Maina "
    "Area: 0.1821 ha Tenure: Leasehold, 99 years from 1 January 1998"
)
STATEMENT = (
    "(In millions) Three Months Ended December 31, 2022 Total net sales 117,154 123,945 Gross margin 50,332 54,243"
)


def _sentences(text: str, question: str) -> list:
    return offered_sentences([ChunkHit(Chunk(0, "d", 1, 0, text), "doc.pdf", 1.0)], 5000, question)


def _span(text: str, question: str) -> str | None:
    draft = span_line(
        _sentences(text, question), answer_kind(question), ordered_terms(question), question, focus_terms(question)
    )
    return draft.text if draft else None


@pytest.mark.parametrize(
    ("text", "question", "span"),
    [
        (LEASE, "What is the monthly rent?", "KSH 285,000 per month"),
        (LEASE, "How much deposit did the tenant pay?", "KSH 570,000"),
        (LEASE, "Who is the tenant?", "Peter Otieno Ochieng"),
        (LEASE, "Who is the landlord?", "Grace Wanjiku Kamau"),
        (LEASE, "How much notice ends the lease after its first year?", "3 months"),
        (
            LEASE,
            'What interest is charged on "rent unpaid fourteen days after it falls due"?',
            "two per cent per month",
        ),
        (LEASE, "When was the lease made?", "20 February 2023"),
        (REGISTER, "On what date was the official search made?", "10 June 2024"),
        (REGISTER, "Who applied for the search?", "Esther Wangari Maina"),
        (REGISTER, "What is the tenure?", "Tenure: Leasehold, 99 years from 1 January 1998"),
        (REGISTER, "What is the L.R. number?", "Title number: L.R. NO: 7785/41"),
        (STATEMENT, "What were total net sales?", "117,154 million"),
    ],
)
def test_the_span_floor_takes_the_value_of_the_kind_asked_for(text: str, question: str, span: str) -> None:
    assert _span(text, question) == span


def test_a_value_the_question_states_is_never_the_answer() -> None:
    found = candidates(
        "Rent unpaid fourteen days after it falls due bears interest.",
        "duration",
        ["rent"],
        "Is rent unpaid fourteen days late?",
    )
    assert all("fourteen" not in c.text for c in found)


def test_a_label_lists_value_runs_to_the_next_label_and_a_label_right_after_another_is_its_value() -> None:
    found = {label: REGISTER[start:end].strip() for label, start, end in fields(REGISTER)}
    assert found["Title number"] == "L.R. NO: 7785/41" and found["Area"] == "0.1821 ha"


def test_the_sentence_floor_is_the_best_ranked_sentence_cut_to_40_words() -> None:
    long = "The rent " + "and more words " * 30 + "ends here."
    draft = sentence_line(_sentences(long, "What is the rent?"))
    assert draft is not None and draft.basis == "sentence" and len(draft.text.split()) == 41  # 40 and the ellipsis


@pytest.mark.parametrize(
    ("question", "answerable"),
    [
        ("What is the monthly rent?", True),
        ("Who is the tenant?", True),
        ("What is the monthly service charge?", False),
        ("How many parking bays come with the house?", False),
    ],
)
def test_support_is_high_where_the_sentences_answer_and_low_where_they_do_not(question: str, answerable: bool) -> None:
    value = support(_sentences(LEASE, question), answer_kind(question), frozenset(focus_terms(question)))
    assert (value >= 0.5) is answerable


SALE_AND_LEASE = (
    "Deposit (10%) | KSH 9,100,000 on signing the sale agreement. "
    "3.1 On signing, the Tenant pays a deposit of KSH 310,000, equal to two months' rent."
)
INSPECTION = (
    "The garage roof has cracked ridge tiles (High priority). "
    "The paintwork is faded on the east wall (Low priority). "
    "SURVEY REPORT Property: 12 Elm Row Inspection date: 3 May 2024 Inspector: Jane Doe"
)


def test_a_sentence_holding_more_of_what_is_asked_wins_over_a_labelled_field_holding_less() -> None:
    # the lease's own sentence names deposit, tenant and paying; the sale's field names only the deposit
    assert _span(SALE_AND_LEASE, "How much deposit did the tenant pay?") == "KSH 310,000"


def test_a_field_answers_an_open_question_only_when_its_label_names_what_is_asked() -> None:
    # "Inspector" shares a stem with "inspection" but names none of the high-priority issues asked for
    line = _span(INSPECTION, "What high-priority issues did the inspection find?")
    assert line is not None and "cracked ridge tiles" in line and "Jane Doe" not in line


def test_a_number_written_out_keeps_the_figure_that_repeats_it() -> None:
    text = "Payment is due within thirty (30) days; the term is 4 (5) years; a loss of (3) million."
    assert typed_spans(text, "duration", frozenset({"due"}), frozenset(), None, 0) == ["thirty (30) days", "(5) years"]
    assert typed_spans(text, "amount", frozenset({"loss"}), frozenset(), None, 0)[-1] == "(3) million"
    assert typed_spans("a deposit (EUR 420) is held", "amount", frozenset(), frozenset(), None, 0) == ["EUR 420"]


def test_the_focus_is_what_a_question_asks_about_past_a_measure_of_it() -> None:
    assert focus_terms("What is the land area of plot 1159/215?") == ["land", "area"]  # the complement identifies
    assert focus_terms('What was the value of number of patents of "Holley Inc." at the end of the period?') == [
        "patent"
    ]
    assert focus_terms("What is the number of employees?") == ["employe"]
    assert focus_terms("What is the value?") == ["valu"]  # nothing follows: the measure itself


def test_a_sentence_without_the_thing_measured_does_not_support_its_value() -> None:
    question = "What was the value of number of patents of the company?"
    text = "The contractual value of the accounts receivable acquired was $3,894."
    assert support(_sentences(text, question), answer_kind(question), frozenset(focus_terms(question))) == 0.0
    held = "The company held 412 patents at the end of the year."
    assert support(_sentences(held, question), answer_kind(question), frozenset(focus_terms(question))) == 1.0
