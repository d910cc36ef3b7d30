"""The compute step's proposal checked: the operands and the expression the LM names for a computed figure are
worked out by code (pipeline.answering.compute) only when each operand is an amount of the sentence it cites,
or refused with the reason (the answer step then falls back to the "rows" floor)."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.answering.asks import FormatRequest
from pipeline.answering.compute import (
    NAMES,
    Computation,
    Operand,
    check_expression,
    compute,
    digit_figures,
    operand_count,
    operand_figures,
    operand_label,
)
from pipeline.answering.lines import SectionInputs
from pipeline.answering.sentences import OfferedSentence
from pipeline.errors import ArithmeticRefused
from pipeline.values.quantities import find_quantities, reference_kind, same_figure
from signatures.models import FigureComputation


def lm_computation(
    item: SectionInputs,
    shown: Sequence[OfferedSentence],
    given: FigureComputation | None,
    request: FormatRequest | None,
) -> Computation | str:
    """The LM's operands and expression worked out by code, or why they cannot be used: an operand that is not
    an amount of its sentence (a year, a clause or note number, a figure it does not hold), a repeated name,
    too few or too many operands, or an expression that is not the asked operation's (pipeline.answering.
    compute.check_expression)."""
    asked = item.request
    if given is None or not given.operands or not given.expression.strip() or asked is None:
        return "it named no operands or no expression"
    offered = {s.sentence_id: s for s in shown}
    operands: list[Operand] = []
    for choice in given.operands:
        sentence = offered.get(choice.sentence_id)
        wanted = find_quantities(choice.figure)
        if sentence is None or not wanted:
            return f"operand {choice.name!r} is no figure of an offered sentence"
        if choice.name not in NAMES or choice.name in {o.name for o in operands}:
            return f"operand name {choice.name!r} is not one of a-h or repeats"
        figure = next((q for q in operand_figures(sentence.text) if same_figure(wanted[0], q)), None)
        if figure is None:
            written = next((q for q in digit_figures(sentence.text) if same_figure(wanted[0], q)), None)
            kind = reference_kind(sentence.text, written) if written else None
            return f"operand {choice.name} ({choice.figure[:40]}) is {kind or 'not a figure of its sentence'}"
        twice = next((o for o in operands if o.sentence is sentence and o.figure.start == figure.start), None)
        if twice is not None:  # one figure of one sentence counted twice ("2.1" as both terms of a sum)
            return f"operand {choice.name} ({choice.figure[:40]}) is the same figure as operand {twice.name}"
        operands.append(Operand(choice.name, operand_label(sentence, figure), figure, sentence))
    fewest, most = operand_count(asked)
    if not fewest <= len(operands) <= most:
        return f"{len(operands)} operands given; a {asked.operation} takes {fewest}" + (
            f" to {most}" if most != fewest else ""
        )
    operands.sort(key=lambda o: o.name)
    if [o.name for o in operands] != list(NAMES[: len(operands)]):
        return "its operands are not named a, b, c, ... in turn"
    percent = asked.percent or bool(request and request.percent)
    expression = given.expression.strip()
    try:
        check_expression(expression, asked.operation, len(operands), percent)
        return compute(asked.operation, expression, operands, percent, request)
    except ArithmeticRefused as refused:
        return refused.reason
