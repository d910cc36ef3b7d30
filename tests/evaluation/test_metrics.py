"""Metrics with hand-computed values, including the two hard gates."""

from __future__ import annotations

import pytest

from pipeline.evaluation.metrics import (
    ExampleScores,
    ReadSection,
    abstention_correct,
    answer_line_correct,
    citation_precision,
    citation_recall,
    composite,
    evidence_precision,
    fact_present,
    fact_recall,
    invalid_store_ids,
    line_fact_recall,
    page_recall_at_k,
    reader_metrics,
    recall_at_k,
    span_answer,
    states_span,
    sub_question_coverage,
    wrong_property_citations,
)

A = "1111aaaa-1111-5111-8111-11111111111a"
B = "22222222-2222-5222-8222-222222222222"
C = "33333333-3333-5333-8333-333333333333"


def test_wrong_property_citations_counts_forbidden_and_out_of_scope() -> None:
    assert wrong_property_citations([A, A, B], forbidden={B}, allowed=None) == 1
    assert wrong_property_citations([A, C], forbidden=set(), allowed={A}) == 1
    assert wrong_property_citations([A, B, C], forbidden={B}, allowed={A, B}) == 2
    assert wrong_property_citations([], forbidden={B}, allowed={A}) == 0


def test_invalid_store_ids() -> None:
    known = {A, B, C}
    assert invalid_store_ids([A, B], known, None) == 0
    assert (
        invalid_store_ids(
            [A.upper(), "{" + A + "}", "<from_step_x>", "00000000-0000-0000-0000-000000000000"], known, None
        )
        == 4
    )
    assert invalid_store_ids([A, C], known, {A}) == 1


def test_recall_at_k_over_distinct_documents() -> None:
    ranked = [A, A, B, C]
    assert recall_at_k(ranked, {C}, 2) == 0.0  # distinct top-2 is A, B
    assert recall_at_k(ranked, {C}, 3) == 1.0
    assert recall_at_k(ranked, {A, C}, 2) == 0.5
    assert recall_at_k(ranked, set(), 5) is None


def test_page_recall_counts_gold_documents_whose_evidence_page_is_ranked() -> None:
    ranked = [(A, 3), (B, 1), (A, 7), (C, 2)]
    gold = {A: frozenset({7, 9}), B: frozenset({4})}
    assert page_recall_at_k(ranked, gold, 2) == 0.0  # (A, 3) and (B, 1) are not evidence pages
    assert page_recall_at_k(ranked, gold, 3) == 0.5  # A's page 7 is in; B's page 4 never is
    # A gold document with no known page (None) is left out of the share; with none known, no score.
    assert page_recall_at_k(ranked, {A: frozenset({7}), C: None}, 10) == 1.0
    assert page_recall_at_k(ranked, {A: None}, 10) is None
    assert page_recall_at_k(ranked, {}, 10) is None


def test_sub_question_coverage() -> None:
    gold = ["What is the rent at Karen Ridge?", "When does the lease end?"]
    assert sub_question_coverage(["what is the rent at karen ridge", "who is the landlord"], gold) == 0.5
    assert sub_question_coverage(gold, gold) == 1.0
    assert sub_question_coverage(["x"], []) is None


def test_citation_precision_and_recall() -> None:
    gold_pages = {A: frozenset({2}), B: None}
    cited = [(A, 2), (A, 3), (B, 7), (C, 1), (A, 2)]
    # distinct: (A,2) good, (A,3) wrong page, (B,7) any page good, (C,1) not gold -> 2/4
    assert citation_precision(cited, gold_pages) == 0.5
    assert citation_precision([], gold_pages) is None
    assert citation_recall([A, C], {A, B}) == 0.5
    assert citation_recall([A], set()) is None


@pytest.mark.parametrize(
    ("fact", "answer", "present"),
    [
        ("KSH 120,000", "The rent is KSh 120000.00 per month.", True),
        ("KSH 120,000", "The rent is KSH 12,000 per month.", False),
        ("1 March 2023", "The lease began on March 1, 2023.", True),
        ("1 March 2023", "It began on 2023-03-01.", True),
        ("1 March 2023", "It began on 1 March 2024.", False),
        ("June 25, 2022", "quarter ended 25 June 2022", True),
        ("$82,959 million", "net sales were $82,959 million", True),
        ("$82,959 million", "net sales were 82959", True),
        ("25%", "margin of 25 %", True),
        ("Amina Otieno", "The tenant is AMINA   otieno.", True),
        ("Amina Otieno", "The tenant is Amina Hassan.", False),
        ("L.R. NO: 2327/30", "parcel L.R. No. 2327/30", True),
    ],
)
def test_fact_present_is_number_and_date_aware(fact: str, answer: str, present: bool) -> None:
    assert fact_present(fact, answer) is present


def test_fact_recall() -> None:
    assert fact_recall(["KSH 120,000", "Amina Otieno"], "Amina Otieno pays KSH 120,000.") == 1.0
    assert fact_recall(["KSH 120,000", "Amina Otieno"], "Amina Otieno pays rent.") == 0.5
    assert fact_recall([], "anything") is None


def test_abstention() -> None:
    assert abstention_correct(True, True) and abstention_correct(False, False)
    assert not abstention_correct(True, False) and not abstention_correct(False, True)


def _scores(**overrides: object) -> ExampleScores:
    base: dict[str, object] = {
        "wrong_property_citations": 0,
        "invalid_ids": 0,
        "recall_at_5": 1.0,
        "recall_at_10": 1.0,
        "sub_question_coverage": None,
        "citation_precision": 0.5,
        "citation_recall": 1.0,
        "fact_recall": 1.0,
        "abstention": 1.0,
        "lm_calls": 3,
        "tokens": 100,
    }
    base.update(overrides)
    return ExampleScores(**base)  # type: ignore[arg-type]


def test_composite_weighted_mean_of_applicable_metrics() -> None:
    weights = {"fact_recall": 0.5, "citation_precision": 0.25, "sub_question_coverage": 0.25}
    # coverage is None: (0.5 * 1.0 + 0.25 * 0.5) / 0.75
    assert composite(_scores(), weights) == pytest.approx(0.625 / 0.75)


def test_composite_is_none_when_no_weighted_metric_applies() -> None:
    # A retrieval-only wrong-property example has no gold document: recall does not apply, so the
    # example has no composite (and is left out of averages) instead of scoring 0.
    scores = _scores(recall_at_10=None)
    assert composite(scores, {"recall_at_10": 1.0}) is None
    assert composite(_scores(recall_at_10=None, wrong_property_citations=1), {"recall_at_10": 1.0}) == 0.0


@pytest.mark.parametrize("gate", [{"wrong_property_citations": 1}, {"invalid_ids": 2}])
def test_composite_hard_gates_zero_the_example(gate: dict[str, int]) -> None:
    scores = _scores(**gate)
    assert not scores.gates_passed and composite(scores) == 0.0


# ---- what a reader reads ---------------------------------------------------------------------------

GOLD_PAGES = {A: frozenset({2})}
RENT = "1.2 The Tenant shall pay rent of KSH 285,000 per month (KSH 3,420,000 per year), in advance."
FILLER = [
    ("1.4 Rent unpaid fourteen days after it falls due bears interest at two per cent per month.", A, 2),
    ("2.1 On signing, the Tenant pays a deposit of KSH 570,000, equal to 2 months' rent.", A, 2),
    ("6.1 After the first year, either party may end this lease by giving 3 months' written notice.", A, 3),
    ("Particulars Premises: 14 Banda Lane, Hardy, Karen Landlord: Grace Wanjiku Kamau Tenant: Peter.", A, 1),
]


def _read(sections: list[ReadSection], expect_not_found: bool = False) -> ExampleScores:
    facts = () if expect_not_found else ("KSH 285,000",)
    reader = reader_metrics(sections, facts, GOLD_PAGES, expect_not_found)
    abstention = float(reader.pop("abstention") or 0.0)
    return ExampleScores(0, 0, 1.0, 1.0, None, None, None, abstention=abstention, lm_calls=0, tokens=0, **reader)


def test_a_correct_one_line_answer_with_one_quote_beats_a_five_quote_dump() -> None:
    answer = ReadSection("KSH 285,000 per month", ((RENT, A, 2),))
    dump = ReadSection(RENT, tuple(FILLER))  # the old way: the first quote stood as the answer
    one, five = _read([answer]), _read([dump])
    assert one.answer_line_correct == five.answer_line_correct == 1.0  # both lines hold the fact...
    assert one.evidence_precision == 1.0 > 0.5 >= five.evidence_precision  # ...only one quote backs it
    assert composite(one) > composite(five)
    assert one.words_per_section < 30 < 60 < five.words_per_section


def test_a_line_over_40_words_is_no_answer_even_when_it_holds_the_fact() -> None:
    long = ReadSection("KSH 285,000 " + "and more " * 25, ((RENT, A, 2),))
    assert answer_line_correct(["KSH 285,000"], [long]) == 0.0
    assert line_fact_recall(["KSH 285,000"], [ReadSection("KSH 285,000")]) == 1.0


def test_abstention_is_scored_both_ways() -> None:
    not_found = ReadSection("The documents in scope do not state this.", found=False)
    right = _read([not_found], expect_not_found=True)
    assert right.abstention == 1.0 and right.abstained_when_absent == 1.0 and right.false_abstention is None
    wrong = _read([not_found])
    assert wrong.abstention == 0.0 and wrong.false_abstention == 1.0 and wrong.abstained_when_absent is None
    assert composite(wrong) < composite(_read([ReadSection("KSH 285,000", ((RENT, A, 2),))]))


def test_evidence_on_a_gold_page_or_stating_a_fact_counts_as_precise() -> None:
    sections = [ReadSection("x", ((RENT, B, 9), ("unrelated", B, 9), ("on the gold page", A, 2)))]
    assert evidence_precision(sections, GOLD_PAGES, ["KSH 285,000"]) == 2 / 3
    assert evidence_precision([ReadSection("x")], GOLD_PAGES, []) is None


# ---- clauses: an answer resting on the span lawyers marked ----------------------------------------------

ASSIGNMENT = (
    "Neither party shall assign or transfer any of its rights under this Agreement without the prior written "
    "approval of the other party, except no such approval shall be required for an assignment to a financially "
    "responsible affiliate."
)
NOTICES = "All notices under this Agreement shall be in writing and sent to the addresses set out above."


def test_a_passage_states_a_span_when_most_of_its_words_are_the_spans_or_most_of_the_spans_are_in_it() -> None:
    assert states_span(
        "Neither party may assign its rights without the prior written approval of the other", ASSIGNMENT
    )
    assert states_span(ASSIGNMENT + " " + NOTICES, ASSIGNMENT)  # the clause within a longer quote
    assert not states_span(NOTICES, ASSIGNMENT)
    assert not states_span("Yes.", ASSIGNMENT)  # too few words to state anything


def test_a_clause_answer_is_right_by_its_line_or_its_first_quote_and_never_when_abstaining() -> None:
    by_line = ReadSection("No: neither party may assign its rights without the other party's prior written approval")
    by_quote = ReadSection("Yes", ((ASSIGNMENT, A, 1),))
    by_second_quote = ReadSection("Yes", ((NOTICES, A, 1), (ASSIGNMENT, A, 1)))
    unfound = ReadSection("The documents do not state it", ((ASSIGNMENT, A, 1),), found=False)
    assert span_answer([ASSIGNMENT], [by_line]) == 1.0
    assert span_answer([ASSIGNMENT], [by_quote]) == 1.0
    assert span_answer([ASSIGNMENT], [by_second_quote]) == 0.0
    assert span_answer([ASSIGNMENT], [unfound]) == 0.0
    assert span_answer([], [by_line]) is None


def test_reader_metrics_judge_the_line_by_spans_only_where_there_are_no_facts() -> None:
    quote = ReadSection("Yes", ((ASSIGNMENT, A, 1),))
    spans_only = reader_metrics([quote], [], {A: None}, expect_not_found=False, spans=[ASSIGNMENT])
    assert spans_only["answer_line_correct"] == 1.0
    with_facts = reader_metrics([quote], ["Delaware"], {A: None}, expect_not_found=False, spans=[ASSIGNMENT])
    assert with_facts["answer_line_correct"] == 0.0
