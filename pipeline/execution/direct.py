"""Answers for the direct_answer strategy: no retrieval and no LM call. Arithmetic is worked out
by the bounded evaluator of pipeline.values.arithmetic; small talk gets a fixed message saying what the
program answers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pipeline.errors import ArithmeticRefused
from pipeline.values.arithmetic import evaluate_arithmetic, format_number

SMALL_TALK_ANSWER = (
    "I answer questions about the documents in this collection, citing the pages each answer comes "
    "from, and I can work out simple arithmetic such as 12 * 7. Ask a question about your documents "
    "to begin."
)

_LEAD = re.compile(r"^\s*(?:what\s+is|what's|calculate|compute)\s*", re.IGNORECASE)
_TIMES = re.compile(r"(?<=[\d)])\s*[x×]\s*(?=[\d(])", re.IGNORECASE)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


@dataclass(frozen=True)
class DirectAnswer:
    """The answer given without retrieval, and what it was worked out from."""

    kind: Literal["arithmetic", "small_talk"]
    answer: str
    expression: str | None = None
    result: str | None = None
    refused: str | None = None


def arithmetic_expression(question: str) -> str:
    """The expression in an arithmetic question, in Python syntax ("what is 3 x 4?" -> "3*4")."""
    body = _LEAD.sub("", question).strip().rstrip("?").strip().rstrip("=").strip()
    body = _TIMES.sub("*", body).replace("÷", "/").replace("^", "**")
    return _THOUSANDS.sub("", body)


def direct_answer(question: str, arithmetic: bool) -> DirectAnswer:
    """The answer to a question that needs no documents: worked-out arithmetic, or the fixed message."""
    if not arithmetic:
        return DirectAnswer("small_talk", SMALL_TALK_ANSWER)
    expression = arithmetic_expression(question)
    try:
        result = format_number(evaluate_arithmetic(expression))
    except ArithmeticRefused as exc:
        return DirectAnswer("arithmetic", f"I could not work that out: {exc.reason}.", expression, refused=exc.reason)
    return DirectAnswer("arithmetic", f"{expression} = {result}", expression, result)
