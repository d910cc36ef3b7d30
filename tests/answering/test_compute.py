"""Computed figures: operands read as table rows or named by the LM, checked against their sentences,
worked out by code, written as the question asks."""

from __future__ import annotations

from decimal import Decimal

import pytest

from pipeline.answering.asks import ComputeRequest, read_format
from pipeline.answering.compute import Operand, compute, evaluate, expression_for, find_operands, format_figure
from pipeline.answering.sentences import offered_sentences
from pipeline.errors import ArithmeticRefused
from pipeline.types import Chunk, ChunkHit
from pipeline.values.quantities import find_quantities

Q1 = (
    "(In millions) Three Months Ended December 31, 2022 December 25, 2021 Net sales: Products $ 96,388 $ 104,429 "
    "Services 20,766 19,516 Total net sales 117,154 123,945 Cost of sales: Total cost of sales 66,822 69,702 "
    "Gross margin 50,332 54,243 Operating expenses: Research and development 7,709 6,306 "
    "Selling, general and administrative 6,607 6,449 Total operating expenses 14,316 12,755"
)
Q2 = (
    "(In millions) Three Months Ended April 1, 2023 March 26, 2022 Total net sales 94,836 97,278 "
    "Gross margin 41,976 42,559"
)


def _sentences(*texts: str, question: str = "") -> list:
    hits = [ChunkHit(Chunk(i, f"doc-{i}", 4, 0, text), f"q{i + 1}.pdf", 1.0) for i, text in enumerate(texts)]
    return offered_sentences(hits, 5000, question or None)


def _computed(request: ComputeRequest, *texts: str, asked: str | None = None) -> str:
    operands = find_operands(request, _sentences(*texts))
    fmt = read_format(asked) if asked else None
    percent = request.percent or bool(fmt and fmt.percent)
    return compute(
        request.operation, expression_for(request.operation, len(operands), percent), operands, percent, fmt
    ).text


@pytest.mark.parametrize(
    ("request_", "texts", "text"),
    [
        (ComputeRequest("share", ("gross margin", "total net sales"), True), (Q1,), "43.0%"),
        (
            ComputeRequest("sum", ("research and development", "selling, general and administrative"), False),
            (Q1,),
            "14,316 million",
        ),
        (ComputeRequest("change", ("total net sales",), False), (Q1,), "-6,791 million"),
        (ComputeRequest("percent_change", ("total net sales",), True), (Q1,), "-5.5%"),
        (ComputeRequest("average", ("total net sales",), False), (Q1, Q2), "105,995 million"),
    ],
)
def test_operands_are_read_as_table_rows_and_worked_out(
    request_: ComputeRequest, texts: tuple[str, ...], text: str
) -> None:
    assert _computed(request_, *texts) == text


def test_the_question_s_format_is_applied_by_code() -> None:
    request = ComputeRequest("sum", ("research and development", "selling, general and administrative"), False)
    assert _computed(request, Q1, asked="Answer in USD billions, rounded to two decimal places.") == "USD 14.32 billion"
    assert format_figure(Decimal("42.957"), True, read_format("Round to one decimal place.")) == "43.0%"


def test_a_formula_shows_the_quoted_operands() -> None:
    request = ComputeRequest("share", ("gross margin", "total net sales"), True)
    operands = find_operands(request, _sentences(Q1))
    computation = compute("share", "a / b * 100", operands, True, None)
    assert computation.formula == "50,332 / 117,154 × 100" and computation.value.quantize(Decimal("0.01")) == Decimal(
        "42.96"
    )
    assert [o.label for o in computation.operands] == ["Gross margin", "Total net sales"]


def test_an_operand_not_in_its_sentence_or_a_bad_expression_is_refused() -> None:
    sentence = _sentences("Total net sales 117,154 123,945")[0]
    invented = Operand("a", "Total net sales", find_quantities("999")[0], sentence)
    real = Operand("b", "Total net sales", find_quantities("117,154")[0], sentence)
    with pytest.raises(ArithmeticRefused, match="not in its sentence"):
        compute("ratio", "a / b", [invented, real], False, None)
    with pytest.raises(ArithmeticRefused, match="only operand names"):
        evaluate("__import__('os')", [real])
    with pytest.raises(ArithmeticRefused, match="not given"):
        evaluate("b / c", [real])
    with pytest.raises(ArithmeticRefused, match="division by zero"):
        evaluate("b / (b - b)", [real])


def test_a_missing_operand_computes_nothing() -> None:
    assert find_operands(ComputeRequest("share", ("inventory", "total assets"), True), _sentences(Q1)) == []


def test_figures_on_different_scales_are_never_combined() -> None:
    # the table's 7,709 is in millions (its note); "2.1 billion" states its own scale
    offered = _sentences(Q1, "Marketing expenses increased to 2.1 billion in the quarter.")
    table, stated = next(s for s in offered if "7,709" in s.text), offered[-1]
    in_table = Operand("a", "Research and development", find_quantities("7,709")[0], table)
    own = Operand("b", "Marketing expenses", find_quantities("2.1 billion")[0], stated)
    with pytest.raises(ArithmeticRefused, match="different scales"):
        compute("sum", "a + b", [in_table, own], False, None)


def test_a_cost_of_something_is_not_that_thing() -> None:
    margin = ComputeRequest("margin", ("gross margin", "revenue"), True)
    # "Cost of sales" holds "sales" (a word for revenue) but is what the revenue cost: no revenue row here
    costs = ("Gross margin 4,638 35.8 % 5,587", "Cost of sales 8,311 64.2 % 9,734")
    assert find_operands(margin, _sentences(*costs)) == []
    assert find_operands(margin, _sentences("Total costs of revenue 8,311 9,734", costs[0])) == []
    # beside the revenue row, the revenue row is read; a phrase that names the cost still finds it
    assert _computed(margin, "Net revenue 12,949 15,321", *costs) == "35.8%"
    share = ComputeRequest("share", ("cost of sales", "net revenue"), True)
    assert _computed(share, "Net revenue 12,949 15,321", *costs) == "64.2%"
    # a label naming the thing before its cost keeps it ("Revenue, net of cost of returns")
    assert _computed(margin, "Revenue, net of cost of returns 12,949 15,321", *costs) == "35.8%"


@pytest.mark.parametrize(
    ("asked", "decimals", "text"),
    [
        ("Round to the nearest whole percent.", 0, "36%"),
        ("Round to the nearest percent.", 0, "36%"),
        ("Round to the nearest percentage point.", 0, "36%"),
        ("Round to the nearest whole number.", 0, "36%"),
        ("Round to one decimal place.", 1, "35.8%"),
        ("Round to the nearest tenth.", 1, "35.8%"),
        ("Express it as a percentage.", None, "35.8%"),
    ],
)
def test_a_percentage_is_rounded_as_asked(asked: str, decimals: int | None, text: str) -> None:
    request = read_format(asked)
    assert request.decimals == decimals
    assert format_figure(Decimal("35.818"), True, request) == text


def test_a_row_naming_both_operands_is_neither_operand_s_row() -> None:
    margin = ComputeRequest("margin", ("gross margin", "revenue"), True)
    caption = "Percentages in chart indicate gross margin as a percentage of total revenue (In Millions) $ 4,638"
    # the caption's figure is the margin's; read as the revenue it would give 4,638 / 4,638 = 100%
    assert find_operands(margin, _sentences("Gross margin 4,638 5,587", caption)) == []
    assert _computed(margin, "Gross margin 4,638 5,587", caption, "Net revenue 12,949 15,321") == "35.8%"
