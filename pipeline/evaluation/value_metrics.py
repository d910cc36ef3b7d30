"""Metrics of typed answers (issue 33) as pure functions over values: whether the answer's typed value is the
expected one, per kind, whether it claims "not available" on a present value, how well the pages it cites
prove it, and the strict matcher of computed figures.

The typed value is the answer's `Completed.value`, or its one section's value (`answer_value`). An answer
that carries none is scored, not skipped: its value is wrong, counts as absent for `false_absent`, and it
cites no page.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Literal

from pipeline.evaluation.examples import ExpectedValue
from pipeline.text import normalise
from pipeline.values.name_forms import without_legal_form
from pipeline.values.quantities import SCALES, Quantity, figures_outside_dates
from pipeline.values.typed import TypedValue

# What an expected value is, for per-kind means: a boolean is counted by the answer it expects (both ways).
ValueClass = Literal["number", "boolean_true", "boolean_false", "name", "names", "comparison", "absent", "date", "text"]
VALUE_CLASSES: tuple[ValueClass, ...] = (
    "number",
    "boolean_true",
    "boolean_false",
    "name",
    "names",
    "comparison",
    "absent",
    "date",
    "text",
)
# The column each kind's correctness is reported in (dates and text only in `value_correct`).
KIND_COLUMNS: dict[ValueClass, str] = {
    "number": "number_correct",
    "boolean_true": "boolean_true",
    "boolean_false": "boolean_false",
    "name": "name_correct",
    "names": "names_correct",
    "comparison": "comparison_correct",
    "absent": "absent_correct",
}
PERCENT_UNITS = frozenset({"%", "percent", "per cent", "pct", "percentage"})
# Gold pages by document id (None: any page of the document), as pipeline.evaluation.labels resolves them.
GoldPages = Mapping[str, frozenset[int] | None]
# What one cited page holding no evidence costs the page-reference score (a gold page cited earns 1).
PAGE_COST = 0.25


def value_class(expected: ExpectedValue) -> ValueClass:
    """The kind an expected value is counted under: booleans by the answer they expect (True or False, the
    latter being the question's absent value), then absent values, comparisons, and the value's kind."""
    if expected.kind == "boolean":
        return "boolean_true" if expected.value is True else "boolean_false"
    if expected.absent:
        return "absent"
    if expected.entities:
        return "comparison"
    return expected.kind


def answer_value(completed: TypedValue | None, sections: Sequence[TypedValue | None]) -> TypedValue | None:
    """The answer's typed value: the whole answer's, else the value of its only section that has one (None
    when no section has one, or several have and the answer did not combine them)."""
    if completed is not None:
        return completed
    values = [v for v in sections if v is not None]
    return values[0] if len(values) == 1 else None


def cited_pages(value: TypedValue | None, sections: Sequence[TypedValue | None] = ()) -> list[tuple[str, int]]:
    """The (document id, page) pairs the typed value cites; without an answer value, those of the sections'
    values (a comparison's parts cite their own pages)."""
    chosen = [value] if value is not None else [v for v in sections if v is not None]
    return list(dict.fromkeys((ref.document_id, ref.page) for v in chosen for ref in v.pages))


# ---- numbers --------------------------------------------------------------------------------------------


def _decimal(value: object) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def value_in_units(value: TypedValue) -> Decimal | None:
    """A number's value in units: its `value` times its `scale` (None for anything but a finite number)."""
    number = _decimal(value.value)
    if number is None:
        return None
    return number * SCALES[value.scale] if value.scale else number


def is_percent(unit: str | None) -> bool:
    """Whether a unit names a percentage ("%", "percent")."""
    return unit is not None and unit.strip().casefold() in PERCENT_UNITS


def number_correct(expected: ExpectedValue, predicted: TypedValue) -> bool:
    """Whether a predicted number is the expected one: its value in units within the expected relative
    tolerance (exact for zero), sign included; a percentage answered as a percentage; written in the scale the
    question asked for, when it asked for one; and not in another currency than expected (a value without a
    currency is not penalised for it)."""
    wanted = _decimal(expected.value)
    got = value_in_units(predicted)
    if predicted.kind != "number" or predicted.absent or wanted is None or got is None:
        return False
    if is_percent(expected.unit) != is_percent(predicted.unit):
        return False
    if expected.scale is not None and predicted.scale != expected.scale:
        return False
    if expected.currency and predicted.currency and predicted.currency != expected.currency:
        return False
    return abs(got - wanted) <= Decimal(str(expected.tolerance)) * abs(wanted)


# ---- names ----------------------------------------------------------------------------------------------


def name_key(name: str) -> str:
    """A name as compared: case, punctuation, a leading "the" and the legal forms that end it ignored, "&"
    read as "and" ("The Coca-Cola Company" and "coca cola" are one key; "Ernst & Young LLP", "Ernst and
    Young")."""
    words = re.findall(r"[0-9a-z]+", normalise(name).replace("&", " and "))
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    words = list(without_legal_form(words))
    if len(words) > 1 and words[-1] == "company":
        words = words[:-1]
    return " ".join(words)


def _forms(name: str, aliases: Mapping[str, Sequence[str]]) -> set[str]:
    return {name_key(n) for n in (name, *aliases.get(name, ()))} - {""}


def name_correct(expected: str, aliases: Mapping[str, Sequence[str]], predicted: str) -> bool:
    """Whether a predicted name is the expected one or one of its aliases (compared by `name_key`)."""
    return name_key(predicted) in _forms(expected, aliases)


def _predicted_names(predicted: TypedValue) -> list[str]:
    if isinstance(predicted.value, list):
        return [n for n in predicted.value if n.strip()]
    return [predicted.value] if isinstance(predicted.value, str) and predicted.value.strip() else []


def names_recall(expected: ExpectedValue, predicted: TypedValue | None) -> float | None:
    """Share of the expected names the answer lists (None unless a names list is expected)."""
    wanted = expected.value if expected.kind == "names" and not expected.absent else None
    if not isinstance(wanted, list) or not wanted:
        return None
    got = {name_key(n) for n in _predicted_names(predicted)} if predicted and not predicted.absent else set()
    return sum(1 for n in wanted if _forms(n, expected.aliases) & got) / len(wanted)


def names_precision(expected: ExpectedValue, predicted: TypedValue | None) -> float | None:
    """Share of the names the answer lists that are expected (None unless a names list is expected and the
    answer lists some)."""
    wanted = expected.value if expected.kind == "names" and not expected.absent else None
    if not isinstance(wanted, list) or predicted is None or predicted.absent:
        return None
    got = _predicted_names(predicted)
    if not got:
        return None
    forms = set().union(*(_forms(n, expected.aliases) for n in wanted)) if wanted else set()
    return sum(1 for n in got if name_key(n) in forms) / len(got)


def names_correct(expected: ExpectedValue, predicted: TypedValue) -> bool:
    """All-match: every expected name is listed and every listed name is expected (a set, order ignored)."""
    if predicted.kind not in ("names", "name") or predicted.absent:
        return False
    return names_recall(expected, predicted) == 1.0 and names_precision(expected, predicted) == 1.0


def comparison_correct(expected: ExpectedValue, predicted: TypedValue, mentions: str) -> bool:
    """The winning entity named (by name or alias), and every quoted name that is no entity of the corpus
    named in `mentions` (the value's note and the answer's text) as the answer must name it as unknown."""
    if predicted.absent or not isinstance(predicted.value, str) or not isinstance(expected.value, str):
        return False
    if not name_correct(expected.value, expected.aliases, predicted.value):
        return False
    said = f" {name_key(mentions)} "
    return all(f" {name_key(e.quoted)} " in said for e in expected.entities if e.status == "unknown")


# ---- absent values and the verdict ----------------------------------------------------------------------


def stated_absent(predicted: TypedValue) -> bool:
    """Whether an answer says the value is not available: its `absent` flag, or the absent value written as
    its value ("N/A", or False for a yes/no question)."""
    if predicted.absent or predicted.value is None:
        return True
    if predicted.kind == "boolean":
        return predicted.value is False
    return isinstance(predicted.value, str) and predicted.value.strip().casefold() in ("n/a", "na", "not available")


def value_correct(expected: ExpectedValue, predicted: TypedValue | None, mentions: str = "") -> float:
    """1.0 when the answer's typed value is the expected one, else 0.0 (no typed value: 0.0):

    - absent: the answer says it is not available (`stated_absent`);
    - boolean: the same truth value, exactly (False is the absent value of "return False" questions);
    - number: `number_correct`; name: `name_correct`; names: `names_correct` (all-match);
    - comparison: `comparison_correct`; a date or text: the same string, case and spacing ignored;
    - any of the other accepted answers (`expected.also`) as well.
    """
    if predicted is None:
        return 0.0
    if expected.also:
        return max(
            value_correct(e, predicted, mentions) for e in (expected.model_copy(update={"also": ()}), *expected.also)
        )
    kind = value_class(expected)
    if kind == "absent":
        return float(stated_absent(predicted))
    if kind in ("boolean_true", "boolean_false"):
        return float(predicted.kind == "boolean" and predicted.value is expected.value)
    if kind == "number":
        return float(number_correct(expected, predicted))
    if kind == "comparison":
        return float(comparison_correct(expected, predicted, mentions))
    if kind == "names":
        return float(names_correct(expected, predicted))
    if predicted.absent or not isinstance(predicted.value, str) or not isinstance(expected.value, str):
        return 0.0
    if kind == "name":
        return float(name_correct(expected.value, expected.aliases, predicted.value))
    return float(normalise(predicted.value) == normalise(expected.value))


def false_absent(expected: ExpectedValue, predicted: TypedValue | None) -> float | None:
    """1.0 when the answer says "not available" (or gives no typed value) although the value is present, 0.0
    when it gives a value; None when the expected value is itself absent (False included)."""
    if (
        expected.absent
        or (expected.kind == "boolean" and expected.value is False)
        or any(e.absent for e in expected.also)
    ):
        return None
    return 1.0 if predicted is None or stated_absent(predicted) else 0.0


def value_metrics(expected: ExpectedValue, predicted: TypedValue | None, mentions: str = "") -> dict[str, float | None]:
    """The typed-value metrics of one answer (ExampleScores' field names): `value_correct`, the same under
    its kind's column (KIND_COLUMNS; the other kinds' None), `false_absent`, and names precision and recall."""
    correct = value_correct(expected, predicted, mentions)
    kind = value_class(expected)
    out: dict[str, float | None] = {"value_correct": correct}
    out.update({column: (correct if c == kind else None) for c, column in KIND_COLUMNS.items()})
    out["false_absent"] = false_absent(expected, predicted)
    out["names_precision"] = names_precision(expected, predicted)
    out["names_recall"] = names_recall(expected, predicted)
    return out


# ---- page references ------------------------------------------------------------------------------------


def _evidence(document: str, page: int, gold_pages: GoldPages) -> bool:
    if document not in gold_pages:
        return False
    pages = gold_pages[document]
    return pages is None or page in pages


def gold_page_cited(cited: Collection[tuple[str, int]], gold_pages: GoldPages) -> float | None:
    """Share of the gold documents (each company's filing in a comparison) of which the typed value cites a
    gold page (any page of a gold document without page labels); None without gold documents."""
    if not gold_pages:
        return None
    hit = {d for d, p in cited if _evidence(d, p, gold_pages)}
    return len(hit) / len(gold_pages)


def page_reference(cited: Collection[tuple[str, int]], gold_pages: GoldPages) -> float:
    """The page-reference score of a typed value, in [-1, 1]:

        score = max(-1, gold_page_cited - PAGE_COST * (cited pages that hold no evidence))

    A cited (document, page) holds evidence when it is a gold page (any page of a gold document without page
    labels); gold_page_cited counts 0 without gold documents. So citing nothing scores 0; one gold page cited
    scores 1, less PAGE_COST for each other page cited beside it; and an answer whose citations hold no
    evidence (a wrong figure's page, any page cited for a value that is not in scope) scores below 0, below
    citing nothing. Each distinct page counts once.
    """
    pages = set(cited)
    reward = gold_page_cited(pages, gold_pages) or 0.0
    wasted = sum(1 for d, p in pages if not _evidence(d, p, gold_pages))
    return max(-1.0, reward - PAGE_COST * wasted)


# ---- computed figures, strictly -------------------------------------------------------------------------

# A bracketed group that holds arithmetic: the formula an answer line shows its result by ("(Gross margin
# 50,332 / Total net sales 117,154 × 100)"). A bracketed figure alone ("(1,234)") is an accounting negative.
_FORMULA = re.compile(r"[(\[][^()\[\]]*(?:[×*/÷+=]|\s[-−–]\s)[^()\[\]]*[)\]]")
_MINUS = ("-", "−", "–")
_CURRENCY_PREFIX = re.compile(r"(?:[-−–]\s?)(?:US\$|[$€£¥]|[A-Z]{3}\s)\s?$")


def stated_figure(line: str) -> Quantity | None:
    """The one figure an answer line states as its value, or None when it states none or several: formulas
    in brackets are left out, and after an "=" only what follows it is read, so no operand of the working
    counts; dates are no figures. A minus before a currency sign ("-$13,039 million") makes it negative."""
    text = _FORMULA.sub(" ", line)
    if "=" in text:
        text = text.rsplit("=", 1)[1]
    figures = figures_outside_dates(text, words=False)
    if len(figures) != 1:
        return None
    figure = figures[0]
    if figure.value > 0 and _CURRENCY_PREFIX.search(text[: figure.start]):
        return dataclasses.replace(figure, value=-figure.value, mantissa=-figure.mantissa)
    return figure


def _round_to(value: Decimal, quantum: Decimal) -> Decimal:
    return (value / quantum).quantize(Decimal(1), rounding="ROUND_HALF_UP") * quantum if quantum > 0 else value


def strict_figure_match(gold: Quantity, value: Decimal, percent: bool, scaled: bool = True) -> bool:
    """Whether `value` is the gold figure to the rounding the gold states (its last written digit), sign
    included, a percentage only for a percentage. A figure written without a scale word (`scaled` False)
    also matches a gold figure with one by its digits ("32,348" for "$32,348 million")."""
    if percent != gold.percent:
        return False
    if _round_to(value, gold.quantum) == gold.value:
        return True
    if scaled or gold.value == gold.mantissa or gold.mantissa == 0:
        return False
    return _round_to(value, gold.quantum / (gold.value / gold.mantissa)) == gold.mantissa


def gold_figure(fact: str) -> Quantity | None:
    """The one figure of a gold answer ("-$13,039 million", "23.6%"), signed (None: not one figure)."""
    return stated_figure(fact)


def computed_strict(fact: str, value: TypedValue | None, lines: Sequence[str]) -> float | None:
    """1.0 when the answer's value is the gold computed figure strictly, else 0.0; None when `fact` is not one
    figure. The value is the typed value when the answer has one (a number, in units or in the scale it names;
    a percentage when its unit says so), else the one figure of the first answer line (`lines`: the answered
    sections' lines in order; `stated_figure`): never a figure found inside the formula or among the operands
    the line quotes, never one of several, never a later section's."""
    gold = gold_figure(fact)
    if gold is None:
        return None
    if value is not None:
        units = value_in_units(value)
        if value.kind != "number" or value.absent or units is None:
            return 0.0
        return float(strict_figure_match(gold, units, is_percent(value.unit)))
    figure = stated_figure(lines[0]) if lines else None
    return float(figure is not None and strict_figure_match(gold, figure.value, figure.percent, figure.scaled))
