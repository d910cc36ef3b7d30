"""Computed figures: code, never the LM, works out a ratio, margin, change, sum or average from figures quoted
from the evidence, and writes the result with its formula and its cited operands; and a figure is written
as the question's format instructions ask ("in EUR billions", "to one decimal place"). Pure functions.

The no-LM way to find the operands (`find_operands`) reads the offered sentences as table rows: an
operand is the row whose label holds the operand's words best, and its value is the row's first figure
(a statement's current period); a change takes the row's first two figures (this period and the one it
is compared with); an average takes the best row of each document in scope. The LM's way names the
operands by sentence and figure and writes the expression; `check_expression` accepts it only when it is,
up to operand order, the one the asked operation stands for. Both end in `compute`, which checks each
operand against its sentence. An operand is always an amount of its sentence, never a year, a clause or
section number or a note reference (`amount_figures`).
"""

from __future__ import annotations

import ast
import itertools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

from pipeline.answering.asks import GROSS_MARGIN, ComputeRequest, FormatRequest, Operation, names_percent
from pipeline.answering.sentences import OfferedSentence
from pipeline.answering.spans import scale_note
from pipeline.answering.terms import held_terms, ordered_terms
from pipeline.deadline import Deadline, unbounded
from pipeline.errors import ArithmeticRefused
from pipeline.values.arithmetic import evaluate_arithmetic
from pipeline.values.quantities import SCALES, Quantity, amount_figures, figures_outside_dates, same_figure

NAMES = "abcdefgh"
# Words of an operand's name its answer line keeps.
MAX_LABEL_WORDS = 5
MAX_OPERANDS = len(NAMES)
# A gross margin is revenue less the cost of that revenue: where a statement prints no gross margin row, it is
# worked out from the two (margin_from_costs).
COST_OF_REVENUE = "cost of sales"
MARGIN_FROM_COSTS = "(a - b) / a * 100"
# The stem of the words that name a cost or an expense (terms.related joins the two), and a row label naming the
# cost of something ("Cost of sales", "Total costs of revenue", "Cost of goods sold").
COST = frozenset({"cost"})
_COST_OF = re.compile(r"\bcosts?\s+of\b", re.I)
_EXPRESSION = re.compile(r"^[a-h0-9+\-*/(). ]{1,120}$")


@dataclass(frozen=True)
class Operand:
    """A figure a computation uses: its name in the expression, what it is (the row's label or the
    sentence), the figure as quoted, and the offered sentence it is quoted from."""

    name: str
    label: str
    figure: Quantity
    sentence: OfferedSentence


@dataclass(frozen=True)
class Computation:
    """A worked-out figure: the expression over the operands' names, the operands, the result as written
    (formatted), and the formula a reader checks it by ("50,332 / 117,154 × 100")."""

    operation: Operation | None
    expression: str
    operands: tuple[Operand, ...]
    value: Decimal
    text: str
    formula: str

    @property
    def line(self) -> str:
        """The answer line: the result, then the formula with each operand named ("43.0% (Gross margin 50,332 /
        Total net sales 117,154 × 100)"); names are cut to their last words so the line stays short."""
        named = {o.name: f"{' '.join(o.label.split()[-MAX_LABEL_WORDS:])} {_shown(o.figure)}" for o in self.operands}
        labelled = re.sub(r"[a-h]", lambda m: named[m.group(0)], self.expression).replace("*", "×")
        return f"{self.text} ({labelled})"


def digit_figures(text: str) -> list[Quantity]:
    """The figures a table row or a sentence writes in digits, dates left out."""
    return figures_outside_dates(text, words=False)


def operand_figures(text: str) -> list[Quantity]:
    """The figures of a table row or a sentence that may be operands: amounts written in digits (no date, year,
    clause or section number, or note reference)."""
    return amount_figures(text)


def expression_for(operation: Operation, count: int, percent: bool) -> str:
    """The expression an operation stands for over `count` operands named a, b, c, ..."""
    names = NAMES[:count]
    if operation in ("share", "margin") or (operation == "ratio" and percent):
        return "a / b * 100"
    if operation == "ratio":
        return "a / b"
    if operation in ("difference", "change"):
        return "a - b"
    if operation == "percent_change":
        return "(a - b) / b * 100"
    if operation == "sum":
        return " + ".join(names)
    return f"({' + '.join(names)}) / {count}"


def operand_label(sentence: OfferedSentence, figure: Quantity) -> str:
    """What a figure is: the words of its row before it (a table row's label), at most 12 words."""
    words = sentence.text[: figure.start].replace("$", " ").split()
    return " ".join(words[-12:]).strip(" :,;") or sentence.text[:60]


def _best_row(
    sentences: Sequence[OfferedSentence],
    phrase: str,
    used: set[int],
    deadline: Deadline,
    others: Sequence[str] = (),
) -> OfferedSentence | None:
    """The offered sentence whose words hold `phrase` best and that holds a figure (best-ranked on ties); never
    a row whose label also names every word of one of the computation's `others` operands that `phrase` lacks
    ("gross margin as a percentage of total revenue" is neither the revenue's row nor the margin's)."""
    terms = ordered_terms(phrase)
    if not terms:
        return None
    wanted = frozenset(terms)
    rivals = [rest for other in others if (rest := frozenset(ordered_terms(other)) - wanted)]
    # a cost is not what it is the cost of: "Cost of sales" is no row of sales, nor "Cost of revenue" of revenue
    costs_apart = not held_terms(phrase, COST)
    best: tuple[float, int, OfferedSentence] | None = None
    for rank, sentence in enumerate(sentences):
        deadline.check("computing (rows floor)")
        figures = operand_figures(sentence.text)
        if sentence.sentence_id in used or not figures:
            continue
        first = figures[0]
        label = sentence.text[: first.start]
        held = held_terms(label, wanted)
        cost_of = _COST_OF.search(label) if costs_apart else None
        if not held or (cost_of and not held_terms(label[: cost_of.start()], wanted)):
            continue  # the phrase's words name only what the row is the cost of
        if any(held_terms(label, rest) == rest for rest in rivals):
            continue
        # every term of the phrase held, in as short a label as possible
        score = len(held) / len(wanted) - 0.01 * len(label.split()) / (1 + len(label.split()))
        if best is None or (score, -rank) > (best[0], -best[1]):
            best = (score, rank, sentence)
    return best[2] if best and best[0] >= 0.5 else None


def find_operands(
    request: ComputeRequest, sentences: Sequence[OfferedSentence], deadline: Deadline | None = None
) -> list[Operand]:
    """The operands of `request` read from the offered sentences as table rows (see the module docstring);
    empty when any of them is not found. Past the question's `deadline` DeadlinePassed stops it."""
    deadline = deadline or unbounded()
    operands: list[Operand] = []
    if request.operation in ("change", "difference", "percent_change") and len(request.operands) == 1:
        row = _best_row(sentences, request.operands[0], set(), deadline)
        figures = operand_figures(row.text) if row else []
        if row is None or len(figures) < 2:
            return []
        label = operand_label(row, figures[0])
        return [Operand("a", label, figures[0], row), Operand("b", label, figures[1], row)]
    if request.operation == "average":
        by_document: dict[str, OfferedSentence] = {}
        for sentence in sentences:
            by_document.setdefault(sentence.hit.chunk.document_id, sentence)
        rows = []
        for document in by_document:
            row = _best_row(
                [s for s in sentences if s.hit.chunk.document_id == document], request.operands[0], set(), deadline
            )
            if row is not None:
                rows.append(row)
        if len(rows) < 2:
            return []
        return [
            Operand(NAMES[i], operand_label(row, operand_figures(row.text)[0]), operand_figures(row.text)[0], row)
            for i, row in enumerate(rows[:MAX_OPERANDS])
        ]
    used: set[int] = set()
    for name, phrase in zip(NAMES, request.operands, strict=False):
        others = [other for other in request.operands if other != phrase]
        row = _best_row(sentences, phrase, used, deadline, others)
        if row is None:
            return []
        used.add(row.sentence_id)
        figure = operand_figures(row.text)[0]
        operands.append(Operand(name, operand_label(row, figure), figure, row))
    return operands if len(operands) >= 2 else []


def margin_from_costs(request: ComputeRequest, question: str) -> ComputeRequest | None:
    """For a gross margin percentage, the figures it is worked out from where a statement prints no gross margin
    row: the revenue (a) and the cost of sales or of revenue (b), for MARGIN_FROM_COSTS; None for any other
    request, and for a `question` that does not say "percent" (a gross margin "as reported" is an amount)."""
    if request.operation != "margin" or request.operands[:1] != (GROSS_MARGIN,) or not names_percent(question):
        return None
    return ComputeRequest("ratio", (request.operands[1], COST_OF_REVENUE), request.percent)


def operand_count(request: ComputeRequest) -> tuple[int, int]:
    """(fewest, most) operands the asked computation takes: two for a ratio, share, margin or change; as many
    as the question names for a sum; two or more for an average (one per period or document)."""
    if request.operation == "average":
        return 2, MAX_OPERANDS
    if request.operation == "sum":
        named = max(2, len(request.operands))
        return named, named
    return 2, 2


# Values the operand names stand for when two expressions are compared: far apart, no simple ratio between
# them, so two different expressions over them differ.
_PROBES = (
    (Fraction(7919, 13), Fraction(104729, 17), Fraction(1299709, 19), Fraction(15485863, 23)),
    (Fraction(-611953, 7), Fraction(32452843, 29), Fraction(49979687, 31), Fraction(86028121, 37)),
)
_PROBE_REST = (Fraction(179424673, 41), Fraction(2038074743, 43), Fraction(-122949823, 47), Fraction(961748941, 53))
_ALLOWED_NODES = (ast.Expression, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Name, ast.Load, ast.Constant)
_NODE_WORDS = {ast.UnaryOp: "a sign change", ast.Pow: "a power", ast.Mod: "a remainder", ast.Call: "a call"}


def _expression_parts(expression: str) -> tuple[Counter[str], Counter[Fraction]]:
    """(how often each operand name occurs, the numeric literals) of `expression`; ArithmeticRefused when it holds
    anything but operand names, numbers, + - * / and parentheses."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise ArithmeticRefused("the expression could not be read") from exc
    names: Counter[str] = Counter()
    literals: Counter[Fraction] = Counter()
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            what = next((w for kind, w in _NODE_WORDS.items() if isinstance(node, kind)), type(node).__name__)
            raise ArithmeticRefused(f"the expression holds {what}")
        if isinstance(node, ast.Name):
            if node.id not in NAMES:
                raise ArithmeticRefused(f"the expression names {node.id!r}, which is no operand")
            names[node.id] += 1
        elif isinstance(node, ast.Constant):
            if type(node.value) not in (int, float):
                raise ArithmeticRefused("the expression holds something other than a number")
            literals[Fraction(str(node.value))] += 1
    return names, literals


def _value_at(expression: str, values: dict[str, Fraction]) -> Fraction | None:
    """`expression` worked out with each name standing for `values[name]` (None on a division by zero)."""
    substituted = re.sub(r"[a-h]", lambda m: f"({values[m.group(0)]})", expression)
    try:
        result = evaluate_arithmetic(substituted)
    except ArithmeticRefused:
        return None
    return result if isinstance(result, Fraction) else Fraction(result)


def check_expression(expression: str, operation: Operation, count: int, percent: bool) -> None:
    """Nothing when `expression`, over operands a, b, ... (`count` of them), is the expression `operation` stands
    for (`expression_for`) up to the order of its operands: no numeric literal but those that expression holds
    (a percentage's 100, an average's count), every operand used as often as there, and the same value for
    any operands. Otherwise ArithmeticRefused says why (the LM wrote "a * 0 + 4242424", "(a + b) * 1000", a
    product for a sum)."""
    planned = expression_for(operation, count, percent)
    names, literals = _expression_parts(expression)
    wanted_names, wanted_literals = _expression_parts(planned)
    extra = literals - wanted_literals
    if extra:
        literal = max(extra, key=abs)
        number = str(literal.numerator) if literal.denominator == 1 else str(float(literal))
        raise ArithmeticRefused(f"the expression holds the number {number}, which a {operation} does not")
    unused = sorted(set(NAMES[:count]) - set(names))
    if unused:
        raise ArithmeticRefused(f"operand {unused[0]} is not used")
    if sorted(names.values()) != sorted(wanted_names.values()):
        overused = [n for n in sorted(names) if names[n] > max(wanted_names.values())]
        if overused:
            raise ArithmeticRefused(f"operand {overused[0]} is used {names[overused[0]]} times")
        raise ArithmeticRefused(f"the expression does not use its operands as a {operation} does ({planned})")
    orders = itertools.permutations(NAMES[:count]) if count <= 3 else iter([tuple(NAMES[:count])])
    for order in orders:
        renamed = dict(zip(NAMES[:count], order, strict=True))
        if all(
            (expected := _value_at(planned, _probe_values(probe, count))) is not None
            and _value_at(expression, {renamed[n]: v for n, v in _probe_values(probe, count).items()}) == expected
            for probe in _PROBES
        ):
            return
    raise ArithmeticRefused(f"the expression is not the {operation} asked for ({planned}, in any operand order)")


def _probe_values(probe: tuple[Fraction, ...], count: int) -> dict[str, Fraction]:
    values = (*probe, *_PROBE_REST)
    return {name: values[i] for i, name in enumerate(NAMES[:count])}


def _fraction(value: Decimal) -> Fraction:
    return Fraction(value)


def _shown(figure: Quantity) -> str:
    """A figure as a formula shows it: as written, without brackets or a currency sign."""
    return figure.text.strip("()$ ")


def evaluate(expression: str, operands: Sequence[Operand]) -> Decimal:
    """The value of `expression` with each operand's name standing for its figure as written (a table's
    scale is the same for all its figures); ArithmeticRefused when the expression is not one we evaluate."""
    if not _EXPRESSION.match(expression):
        raise ArithmeticRefused("the expression may hold only operand names, numbers, + - * / and parentheses")
    values = {o.name: o.figure.mantissa if not o.figure.scaled else o.figure.value for o in operands}
    names = set(re.findall(r"[a-h]", expression))
    if not names <= set(values):
        raise ArithmeticRefused(f"the expression names operands that were not given: {sorted(names - set(values))}")
    substituted = re.sub(r"[a-h]", lambda m: f"({values[m.group(0)]})", expression)
    result = evaluate_arithmetic(substituted)
    return Decimal(result.numerator) / Decimal(result.denominator) if isinstance(result, Fraction) else Decimal(result)


def format_figure(value: Decimal, percent: bool, request: FormatRequest | None, scale: str | None = None) -> str:
    """`value` written as asked: converted to the asked scale (from `scale`, the scale its figures were
    written in), rounded to the asked decimal places (default: 1 for a percentage, 2 for a fraction,
    none for a whole amount), thousands separated, with "%", the scale word and the currency code."""
    scale_factor = SCALES.get(scale or "", Decimal(1))
    asked = request.scale if request else None
    if asked and not percent:
        value = value * scale_factor / SCALES[asked]
        scale = asked
    decimals = request.decimals if request and request.decimals is not None else None
    if decimals is None:
        decimals = 1 if percent else (0 if value == value.to_integral_value() else 2)
        if not percent and asked and abs(value) < 100:
            decimals = 3 if abs(value) < 10 else 2
    quantum = Decimal(1).scaleb(-decimals)
    rounded = value.quantize(quantum, rounding=ROUND_HALF_UP)
    text = f"{rounded:,.{decimals}f}"
    if percent:
        return f"{text}%"
    parts = [request.currency] if request and request.currency else []
    parts.append(text)
    if scale:
        parts.append(scale)
    return " ".join(parts)


def compute(
    operation: Operation | None,
    expression: str,
    operands: Sequence[Operand],
    percent: bool,
    request: FormatRequest | None,
) -> Computation:
    """The worked-out figure. Every operand's figure must be in its sentence, and figures that state their own
    scale ("2.1 billion") are never combined with figures a table's note scales ("(In millions)"): either is
    ArithmeticRefused (an operand is quoted, never invented or rescaled by guess)."""
    for operand in operands:
        if not any(same_figure(operand.figure, q) for q in digit_figures(operand.sentence.text)):
            raise ArithmeticRefused(f"operand {operand.name} ({operand.figure.text}) is not in its sentence")
    scales = {scale_note(o.sentence.hit.chunk.text) for o in operands if not o.figure.scaled}
    if any(o.figure.scaled for o in operands) and scales - {None}:
        # "2.1 billion" beside a table's "6,844" (in millions): one is a count of units, the other of millions
        raise ArithmeticRefused("its operands are written on different scales (one states its own, one its table's)")
    ratio = "/" in expression and operation not in ("average",)
    scale = None if ratio or len(scales) != 1 else next(iter(scales))
    return computed_figure(operation, expression, operands, percent, request, scale)


def computed_figure(
    operation: Operation | None,
    expression: str,
    operands: Sequence[Operand],
    percent: bool,
    request: FormatRequest | None,
    scale: str | None = None,
) -> Computation:
    """The worked-out figure: the expression evaluated over the operands' values (in units when they are read
    from tables as figures; else in `scale`, the scale their table notes), written as the question's format
    asks, with its formula."""
    value = evaluate(expression, operands)
    text = format_figure(value, percent, request, scale)
    shown = {o.name: _shown(o.figure) for o in operands}
    formula = re.sub(r"[a-h]", lambda m: shown[m.group(0)], expression).replace("*", "×")
    return Computation(operation, expression, tuple(operands), value, text, formula)
