"""Direct answers: arithmetic worked out by the bounded evaluator, small talk answered with a fixed message."""

from __future__ import annotations

import pytest

from pipeline.errors import ArithmeticRefused
from pipeline.execution.direct import SMALL_TALK_ANSWER, arithmetic_expression, direct_answer
from pipeline.values.arithmetic import evaluate_arithmetic, format_number


@pytest.mark.parametrize(
    ("question", "expression", "result"),
    [
        ("What is 12 * 7?", "12 * 7", "84"),
        ("what's 3 x 4", "3*4", "12"),
        ("calculate (2+3)*4 =", "(2+3)*4", "20"),
        ("What is 1,250,000 / 4?", "1250000 / 4", "312500"),
        ("10/4", "10/4", "2.5"),
        ("2^10", "2**10", "1024"),
        ("17 % 5", "17 % 5", "2"),
        ("-3 - -2", "-3 - -2", "-1"),
        ("0.1 + 0.2", "0.1 + 0.2", "0.3"),
        ("2 ** 0.5", "2 ** 0.5", "1.414213562"),
        ("1 / 3", "1 / 3", "0.3333333333"),
    ],
)
def test_arithmetic_is_worked_out(question: str, expression: str, result: str) -> None:
    assert arithmetic_expression(question) == expression
    answer = direct_answer(question, arithmetic=True)
    assert (answer.kind, answer.result, answer.refused) == ("arithmetic", result, None)
    assert answer.answer == f"{expression} = {result}"


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("1 / 0", "division by zero"),
        ("5 % 0", "division by zero"),
        ("9 ** 9 ** 9", "more than 100 digits"),
        ("10 ** 101", "more than 100 digits"),
        ("0.5 ** 1000000", "more than 100 digits"),
        ("0 ** -1", "negative power"),
        ("(-8) ** 0.5", "fractional power"),
        ("1e400", "not a finite number"),
        ("__import__('os').system('true')", "not Call"),
        ("(1).__class__", "not Attribute"),
        ("[1, 2]", "not List"),
        ("7 // 2", "not FloorDiv"),
        ("2 +", "could not be read"),
        ("1" + "+1" * 100, "longer than 200 characters"),
        ("+".join(["1"] * 40), "more than 60 parts"),
    ],
)
def test_anything_else_is_refused_naming_why(expression: str, reason: str) -> None:
    with pytest.raises(ArithmeticRefused, match=reason):
        evaluate_arithmetic(expression)
    answer = direct_answer(expression, arithmetic=True)
    assert answer.result is None and answer.refused is not None and reason in answer.refused
    assert answer.answer.startswith("I could not work that out")


def test_numbers_are_printed_exactly_or_to_ten_digits() -> None:
    assert format_number(evaluate_arithmetic("2 ** 64")) == "18446744073709551616"
    assert format_number(evaluate_arithmetic("22 / 7")) == "3.142857143"


def test_small_talk_gets_the_fixed_message() -> None:
    answer = direct_answer("hello", arithmetic=False)
    assert answer.kind == "small_talk" and answer.answer == SMALL_TALK_ANSWER
    assert "documents" in SMALL_TALK_ANSWER and "arithmetic" in SMALL_TALK_ANSWER
