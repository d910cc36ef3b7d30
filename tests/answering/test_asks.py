"""What a question asks for: the kind of answer, format instructions taken out, computations named."""

from __future__ import annotations

import pytest

from pipeline.answering.asks import ComputeRequest, answer_kind, compute_request, format_only, split_format


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What is the monthly rent?", "amount"),
        ("How much deposit did the tenant pay?", "amount"),
        ("Who is the tenant?", "name"),
        ("Which firm valued the house?", "name"),
        ("When was the property inspected?", "date"),
        ("On what date was the search made?", "date"),
        ("How much notice ends the lease?", "duration"),
        ("Within how many days must the sale complete?", "duration"),
        ("How many bedrooms does it have?", "count"),
        ("By what percentage does the rent rise?", "percent"),
        ("What interest is charged on late rent?", "percent"),
        ("Has the energiser been replaced?", "yes_no"),
        ("What issues did the inspection find?", "text"),
    ],
)
def test_the_kind_of_answer_comes_from_the_question_words(question: str, kind: str) -> None:
    assert answer_kind(question) == kind


@pytest.mark.parametrize(
    ("question", "body", "scale", "decimals", "percent", "currency"),
    [
        (
            "What were total revenues for fiscal 2023? Answer in USD billions.",
            "What were total revenues for fiscal 2023?",
            "billion",
            None,
            False,
            "USD",
        ),
        (
            "What is the capex as a % of revenue? Answer in units of percents and round to one decimal place.",
            "What is the capex as a % of revenue?",
            None,
            1,
            True,
            None,
        ),
        ("What is the operating margin (in percent)?", "What is the operating margin?", None, None, True, None),
        ("What was the net income, rounded to two decimal places?", "What was the net income?", None, 2, False, None),
    ],
)
def test_format_instructions_are_taken_out_of_the_question(
    question: str, body: str, scale: str | None, decimals: int | None, percent: bool, currency: str | None
) -> None:
    rest, request = split_format(question)
    assert rest == body and request is not None
    assert (request.scale, request.decimals, request.percent, request.currency) == (scale, decimals, percent, currency)


def test_a_question_without_format_instructions_is_left_alone() -> None:
    question = "Answer the following: what is the rent?"
    assert split_format("What is the rent?") == ("What is the rent?", None)
    assert split_format(question)[1] is None or split_format(question)[0].strip()


def test_an_instruction_alone_is_format_only() -> None:
    assert format_only("Answer in USD billions.?") and format_only("Round to one decimal place.")
    assert not format_only("What is the rent in USD?") and not format_only("What is the monthly rent?")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "What was Acme's gross margin as a percentage of total net sales in Q1 2023?",
            ComputeRequest("share", ("gross margin", "total net sales"), True),
        ),
        (
            "What is the operating margin for Acme in FY2022?",
            ComputeRequest("margin", ("operating income", "revenue"), True),
        ),
        (
            "What is the ratio of total liabilities to total assets?",
            ComputeRequest("ratio", ("total liabilities", "total assets"), False),
        ),
        (
            "What was the percentage change in revenue from Q2 to Q3?",
            ComputeRequest("percent_change", ("revenue",), True),
        ),
        (
            "What was the average quarterly revenue over the four quarters?",
            ComputeRequest("average", ("revenue",), False),
        ),
        (
            "How much did net sales increase compared with a year earlier?",
            ComputeRequest("change", ("net sales",), False),
        ),
        (
            "How much did the research and development expense grow, in percent, compared with a year earlier?",
            ComputeRequest("percent_change", ("research and development expense",), True),
        ),
        (
            "By what percentage did Acme's total net sales change year over year in the quarter?",
            ComputeRequest("percent_change", ("total net sales",), True),
        ),
        (
            "By what percent has the net income fallen since last year?",
            ComputeRequest("percent_change", ("net income",), True),
        ),
        (
            "What was Acme's year-over-year revenue growth rate for the quarter?",
            ComputeRequest("percent_change", ("revenue",), True),
        ),
        (
            "What was the percentage change in YoY net income?",
            ComputeRequest("percent_change", ("net income",), True),
        ),
        (
            "What were Acme's combined research and development, sales and marketing, and general and "
            "administrative expenses in the quarter?",
            ComputeRequest(
                "sum", ("research and development", "sales and marketing", "general and administrative"), False
            ),
        ),
        (
            "How much did Acme spend on R&D and SG&A together in the quarter?",
            ComputeRequest("sum", ("research and development", "selling, general and administrative"), False),
        ),
        (
            "How much did Acme spend on research and development and marketing, general, and administrative "
            "expenses together?",
            ComputeRequest("sum", ("research and development", "marketing, general and administrative"), False),
        ),
        (
            "How large was Acme's R&D spending relative to its net revenue?",
            ComputeRequest("share", ("research and development", "net revenue"), True),
        ),
        ("What was Acme's net income margin?", ComputeRequest("margin", ("net income", "revenue"), True)),
        (
            "Dividing the provision for income taxes by income before income taxes, what was the effective tax rate?",
            ComputeRequest("ratio", ("provision for income taxes", "income before income taxes"), True),
        ),
        (
            "What proportion of Acme's total net sales for the three months ended March 31 was net service sales?",
            ComputeRequest("share", ("net service sales", "total net sales"), True),
        ),
        (
            "On average, how much did Acme spend on R&D per quarter over the quarters ended March 31 and June 30?",
            ComputeRequest("average", ("research and development",), False),
        ),
        (
            "In Q1 2023, how did Acme's operational spending relate to its revenue figures?",
            ComputeRequest("share", ("operating expenses", "revenue"), True),
        ),
        (
            "How did Acme's operating expenses for Q1 2023 compare to its revenue for the same quarter?",
            ComputeRequest("share", ("operating expenses", "revenue"), True),
        ),
        ("How does Acme's R&D spending in the latest quarter compare to previous quarters?", None),
        ("What was the combined revenue?", None),
        ("What is the monthly rent?", None),
        ("What was the total gross margin percentage?", ComputeRequest("margin", ("gross margin", "revenue"), True)),
    ],
)
def test_a_computation_is_named_with_its_operands(question: str, expected: ComputeRequest | None) -> None:
    assert compute_request(question) == expected
