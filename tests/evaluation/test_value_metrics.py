"""Typed-value metrics (pipeline.evaluation.value_metrics): a test per branch (accepts, rejects, absent, None),
the page-reference score's two properties, and the strict matcher of computed figures."""

from __future__ import annotations

import pytest

from pipeline.evaluation.examples import ComparedEntity, ExpectedValue
from pipeline.evaluation.value_metrics import (
    PAGE_COST,
    answer_value,
    cited_pages,
    computed_strict,
    false_absent,
    gold_page_cited,
    name_key,
    names_precision,
    names_recall,
    page_reference,
    stated_figure,
    value_class,
    value_correct,
    value_metrics,
)
from pipeline.types import SourceRef
from pipeline.values.typed import TypedValue

A = "1111aaaa-1111-5111-8111-11111111111a"
B = "22222222-2222-5222-8222-222222222222"
C = "33333333-3333-5333-8333-333333333333"
ASSETS = ExpectedValue(kind="number", value=406100000, currency="USD")
IN_MILLIONS = ExpectedValue(kind="number", value=406100000, currency="USD", scale="million")


def number(value: float, **fields: object) -> TypedValue:
    return TypedValue(kind="number", value=value, **fields)  # type: ignore[arg-type]


def ref(document: str, page: int) -> SourceRef:
    return SourceRef(document_id=document, filename="primary-document.html", page=page)


# ---- numbers ------------------------------------------------------------------------------------------------


def test_a_number_within_the_relative_tolerance_is_right_and_one_outside_it_is_not() -> None:
    assert value_correct(ASSETS, number(406100000, currency="USD")) == 1.0
    assert value_correct(ASSETS, number(406100000 * 1.009)) == 1.0  # no currency stated: not held against it
    assert value_correct(ASSETS, number(406100000 * 1.02, currency="USD")) == 0.0
    assert value_correct(ASSETS, number(-406100000, currency="USD")) == 0.0  # the sign counts
    zero = ExpectedValue(kind="number", value=0)
    assert value_correct(zero, number(0)) == 1.0 and value_correct(zero, number(1)) == 0.0


def test_a_number_is_compared_in_units_and_in_the_scale_the_question_asked_for() -> None:
    assert value_correct(ASSETS, number(406.1, scale="million", currency="USD")) == 1.0
    assert value_correct(IN_MILLIONS, number(406.1, scale="million")) == 1.0
    # "Answer in USD millions" answered in units, or in billions: the instruction was not honoured.
    assert value_correct(IN_MILLIONS, number(406100000)) == 0.0
    assert value_correct(IN_MILLIONS, number(0.4061, scale="billion")) == 0.0
    # A table already in millions, scaled again: 406.1 million million.
    assert value_correct(IN_MILLIONS, number(406100000, scale="million")) == 0.0


def test_a_number_in_another_currency_a_percentage_or_no_number_at_all_is_wrong() -> None:
    assert value_correct(ASSETS, number(406100000, currency="EUR")) == 0.0
    margin = ExpectedValue(kind="number", value=12.5, unit="%")
    assert value_correct(margin, number(12.5, unit="%")) == 1.0
    assert value_correct(margin, number(12.5, unit="percent")) == 1.0
    assert value_correct(margin, number(12.5)) == 0.0  # a plain 12.5 is not 12.5%
    assert value_correct(ASSETS, number(406100000, unit="%")) == 0.0
    assert value_correct(ASSETS, TypedValue(kind="text", value="406100000")) == 0.0
    assert value_correct(ASSETS, TypedValue(kind="number", value=True)) == 0.0
    assert value_correct(ASSETS, TypedValue(kind="number", value="N/A", absent=True)) == 0.0


def test_no_typed_value_is_scored_as_wrong_and_as_absent() -> None:
    for expected in (
        ASSETS,
        ExpectedValue(kind="boolean", value=False, absent=True),
        ExpectedValue(kind="number", value="N/A", absent=True),
    ):
        assert value_correct(expected, None) == 0.0
    assert false_absent(ASSETS, None) == 1.0


# ---- booleans, names, absent values ---------------------------------------------------------------------------


def test_a_boolean_is_right_only_with_the_same_truth_value() -> None:
    yes = ExpectedValue(kind="boolean", value=True)
    no = ExpectedValue(kind="boolean", value=False, absent=True)
    assert value_correct(yes, TypedValue(kind="boolean", value=True)) == 1.0
    assert value_correct(yes, TypedValue(kind="boolean", value=False, absent=True)) == 0.0
    assert value_correct(no, TypedValue(kind="boolean", value=False, absent=True)) == 1.0
    assert value_correct(no, TypedValue(kind="boolean", value=True)) == 0.0
    assert value_correct(yes, TypedValue(kind="text", value="True")) == 0.0
    assert (value_class(yes), value_class(no)) == ("boolean_true", "boolean_false")


def test_names_match_without_case_punctuation_legal_forms_or_a_leading_the() -> None:
    assert name_key("The Coca-Cola Company") == name_key("coca cola") == "coca cola"
    assert name_key("Ernst & Young LLP") == name_key("ERNST AND YOUNG") == "ernst and young"
    auditor = ExpectedValue(
        kind="name", value="Deloitte & Touche LLP", aliases={"Deloitte & Touche LLP": ("Deloitte",)}
    )
    assert value_correct(auditor, TypedValue(kind="name", value="DELOITTE & TOUCHE LLP")) == 1.0
    assert value_correct(auditor, TypedValue(kind="name", value="Deloitte")) == 1.0  # an alias
    assert value_correct(auditor, TypedValue(kind="name", value="KPMG LLP")) == 0.0
    assert value_correct(auditor, TypedValue(kind="name", value="N/A", absent=True)) == 0.0


def test_names_are_right_as_a_set_and_report_precision_and_recall() -> None:
    exchanges = ExpectedValue(
        kind="names",
        value=["New York Stock Exchange", "Chicago Stock Exchange"],
        aliases={"New York Stock Exchange": ("NYSE",)},
    )
    both = TypedValue(kind="names", value=["Chicago Stock Exchange", "NYSE"])
    assert value_correct(exchanges, both) == 1.0  # order ignored, an alias accepted
    one = TypedValue(kind="names", value=["NYSE"])
    extra = TypedValue(kind="names", value=["NYSE", "Chicago Stock Exchange", "Nasdaq"])
    assert value_correct(exchanges, one) == 0.0 and value_correct(exchanges, extra) == 0.0
    assert (names_recall(exchanges, one), names_precision(exchanges, one)) == (0.5, 1.0)
    assert names_recall(exchanges, extra) == 1.0 and names_precision(exchanges, extra) == pytest.approx(2 / 3)
    assert names_recall(exchanges, None) == 0.0 and names_precision(exchanges, None) is None
    assert names_recall(ASSETS, both) is None  # not a names question


def test_an_absent_value_is_right_when_the_answer_says_not_available() -> None:
    na = ExpectedValue(kind="number", value="N/A", absent=True, currency="EUR")
    assert value_correct(na, TypedValue(kind="number", absent=True, note="reported in USD, not EUR")) == 1.0
    assert value_correct(na, TypedValue(kind="text", value="N/A")) == 1.0
    assert value_correct(na, number(406100000, currency="USD")) == 0.0  # shown unconverted
    assert value_class(na) == "absent" and false_absent(na, None) is None


def test_false_absent_counts_not_available_said_of_a_present_value() -> None:
    assert false_absent(ASSETS, TypedValue(kind="number", value="N/A", absent=True)) == 1.0
    assert false_absent(ASSETS, number(1)) == 0.0  # a wrong value, but not a claim of absence
    assert false_absent(ExpectedValue(kind="boolean", value=True), TypedValue(kind="boolean", value=False)) == 1.0
    assert false_absent(ExpectedValue(kind="boolean", value=False), TypedValue(kind="boolean", value=False)) is None


def test_the_verdict_is_reported_under_its_kind_only() -> None:
    scores = value_metrics(ASSETS, number(406100000))
    assert scores["value_correct"] == scores["number_correct"] == 1.0
    assert scores["boolean_true"] is None and scores["absent_correct"] is None and scores["false_absent"] == 0.0
    no = value_metrics(ExpectedValue(kind="boolean", value=False, absent=True), None)
    assert no["boolean_false"] == 0.0 and no["number_correct"] is None and no["false_absent"] is None


# ---- comparisons ------------------------------------------------------------------------------------------


def _comparison(*extra: ComparedEntity) -> ExpectedValue:
    entities = (
        ComparedEntity(quoted="Coca-Cola", entity="ko", name="The Coca-Cola Company", document="a", value=97.7e9),
        ComparedEntity(quoted="PepsiCo", entity="pep", name="PepsiCo, Inc.", document="b", value=100.5e9),
        *extra,
    )
    return ExpectedValue(
        kind="name",
        value="The Coca-Cola Company",
        aliases={"The Coca-Cola Company": ("Coca-Cola", "KO")},
        compare="lowest",
        entities=entities,
    )


def test_a_comparison_is_right_when_it_names_the_winner_and_every_unknown_company() -> None:
    plain = _comparison(ComparedEntity(quoted="Visa", entity="v", name="Visa Inc.", document="c"))  # excluded
    assert value_class(plain) == "comparison"
    assert value_correct(plain, TypedValue(kind="name", value="Coca-Cola")) == 1.0
    assert value_correct(plain, TypedValue(kind="name", value="PepsiCo")) == 0.0
    assert value_correct(plain, TypedValue(kind="name", value="N/A", absent=True)) == 0.0
    unknown = _comparison(ComparedEntity(quoted="Globex Corporation"))
    named = TypedValue(kind="name", value="The Coca-Cola Company", note="Globex is not a company of the corpus")
    assert value_correct(unknown, named, mentions=named.note or "") == 1.0
    assert value_correct(unknown, TypedValue(kind="name", value="Coca-Cola"), mentions="Coca-Cola") == 0.0


def test_a_comparison_value_must_be_the_winner_of_its_entities() -> None:
    with pytest.raises(ValueError, match="lowest"):
        ExpectedValue(kind="name", value="PepsiCo, Inc.", compare="lowest", entities=_comparison().entities)
    with pytest.raises(ValueError, match="both"):
        ExpectedValue(kind="name", value="PepsiCo, Inc.", compare="lowest")


# ---- page references --------------------------------------------------------------------------------------

GOLD = {A: frozenset({5}), B: frozenset({7})}


def test_page_reference_rewards_a_gold_page_and_costs_each_page_without_evidence() -> None:
    assert page_reference([(A, 5)], {A: frozenset({5})}) == 1.0
    assert page_reference([(A, 5), (A, 6)], {A: frozenset({5})}) == 1.0 - PAGE_COST
    assert page_reference([(A, 5), (A, 5)], {A: frozenset({5})}) == 1.0  # a page counts once
    assert page_reference([(A, 5)], GOLD) == 0.5  # one of two companies' pages (a comparison)
    assert page_reference([(C, 1)], {C: None}) == 1.0  # a gold document without page labels: any page
    assert page_reference([(C, p) for p in range(1, 20)], GOLD) == -1.0  # floored


def test_answering_wrongly_with_citations_scores_below_citing_nothing() -> None:
    nothing = page_reference([], GOLD)
    assert nothing == 0.0
    assert page_reference([(A, 6)], GOLD) < nothing  # the wrong cell's page
    assert page_reference([(C, 1)], GOLD) < nothing  # another filing
    assert page_reference([(A, 5)], {}) < page_reference([], {})  # a value cited where none is in scope


def test_gold_page_cited_is_the_share_of_gold_documents_proved() -> None:
    assert gold_page_cited([(A, 5), (B, 1)], GOLD) == 0.5
    assert gold_page_cited([(A, 5)], {}) is None


def test_the_answer_value_and_its_pages_come_from_the_answer_or_its_one_section() -> None:
    whole = number(1, pages=(ref(A, 5),))
    part = number(2, pages=(ref(B, 7),))
    assert answer_value(whole, [part]) is whole
    assert answer_value(None, [None, part]) is part
    assert answer_value(None, [part, number(3)]) is None  # several parts, not combined
    assert cited_pages(None, [part, number(3, pages=(ref(A, 1),))]) == [(B, 7), (A, 1)]
    assert cited_pages(whole, [part]) == [(A, 5)]


# ---- computed figures, strictly -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fact", "line", "expected"),
    [
        ("23.6%", "23.6% (Services 19,604 / Total net sales 82,959 × 100)", 1.0),
        ("23.6%", "23.64%", 1.0),  # within the gold's rounding
        ("23.6%", "23.7%", 0.0),
        ("23.6%", "23.6", 0.0),  # a percentage answered as a plain number
        ("23.6%", "Services were 19,604 of 82,959, or 23.6%", 0.0),  # several figures: no one value
        ("23.6%", "(19,604 / 82,959 × 100 = 23.6%)", 0.0),  # the result only inside the formula
        ("23.6%", "19,604 / 82,959 × 100 = 23.6%", 1.0),  # what follows the "=" is the value
        ("-2.51%", "-2.51%", 1.0),
        ("-2.51%", "2.51%", 0.0),  # the sign counts
        ("-2.51%", "(2.51)%", 1.0),  # an accounting negative
        ("-$13,039 million", "-$13,039 million (81,797 - 94,836)", 1.0),
        ("-$13,039 million", "$13,039 million", 0.0),
        ("$14,316 million", "$14.316 billion", 1.0),
        ("$14,316 million", "$14.3 billion", 0.0),  # less precise than the gold
        ("$14,316 million", "14,316", 1.0),  # the digits of a figure asked in millions
        ("$2.04 billion", "For the quarter ended July 1, 2023: $2.04 billion", 1.0),  # dates are no figures
    ],
)
def test_the_strict_matcher_reads_the_value_alone(fact: str, line: str, expected: float) -> None:
    assert computed_strict(fact, None, [line]) == expected


def test_the_strict_matcher_reads_the_typed_value_first_and_the_first_line_only() -> None:
    assert computed_strict("23.6%", number(23.6, unit="%"), ["nothing"]) == 1.0
    assert computed_strict("23.6%", number(23.6), []) == 0.0  # not a percentage
    assert computed_strict("-$13,039 million", number(-13039, scale="million"), []) == 1.0
    assert computed_strict("-$13,039 million", number(13039, scale="million"), []) == 0.0
    assert computed_strict("23.6%", None, ["12%", "23.6%"]) == 0.0  # a later section is not the answer
    assert computed_strict("23.6%", None, []) == 0.0
    assert computed_strict("about a quarter", None, ["23.6%"]) is None  # the gold is no one figure
    assert stated_figure("no figure here") is None


# ---- other accepted answers (a question set that accepts "N/A" or either of two figures) -------------------


def test_an_answer_among_the_accepted_others_is_right_and_another_is_not():
    expected = ExpectedValue(
        kind="number",
        value=3770600000,
        also=(ExpectedValue(kind="number", value=5679500000), ExpectedValue(kind="number", absent=True)),
    )
    assert value_correct(expected, number(3770600000)) == 1.0
    assert value_correct(expected, number(5679500000)) == 1.0
    assert value_correct(expected, TypedValue(kind="number", absent=True)) == 1.0
    assert value_correct(expected, number(1234)) == 0.0


def test_an_accepted_absent_value_makes_a_not_available_answer_no_false_absence():
    either = ExpectedValue(kind="number", value=15.63, unit="%", also=(ExpectedValue(kind="number", absent=True),))
    assert false_absent(either, TypedValue(kind="number", absent=True)) is None
    only = ExpectedValue(kind="number", value=15.63, unit="%")
    assert false_absent(only, TypedValue(kind="number", absent=True)) == 1.0
