"""Computed-figure examples of the SEC 10-Q traces: questions whose answer is a figure worked out from two or
more figures the filings report (a margin, a ratio, a sum, a change, a percentage change, an average).

Every operand is read from a filing's statement of operations as the index reads it
(scripts/sec_statements.py), never typed here; the answer is evaluated by the project's arithmetic
evaluator (pipeline.execution.direct) and rounded to the question's precision. `check_figure` re-reads
every operand from the line of its gold page that names it and recomputes the answer; the build stops
when any gold value does not come out the same.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # scripts/ is no package: its builders import each other by name

import sec_filings as sec  # noqa: E402
from sec_figure_specs import COMPANY, FORMATS, KINDS, METRICS, REVENUE, SERVICES, SPECS, SUMS, Format, Kind, Term  # noqa: E402
from sec_statements import Operand, Statement, parse_value, read_statement, split_line  # noqa: E402

from pipeline.errors import ExamplesError  # noqa: E402
from pipeline.evaluation.examples import GoldPage, LabelledExample, make_example  # noqa: E402
from pipeline.values.arithmetic import evaluate_arithmetic  # noqa: E402


@dataclass(frozen=True)
class ComputedFigure:
    """One computed-figure question: its operands (each read from a filing's page), the expression over
    their values, the exact value and the answer as the question's format states it."""

    question: str
    ticker: str
    kind: str
    op: str
    format: str
    formula: str
    expression: str
    operands: tuple[Operand, ...]
    answer: str

    @property
    def documents(self) -> tuple[str, ...]:
        return tuple(sorted({o.document for o in self.operands}))

    @property
    def pages(self) -> tuple[GoldPage, ...]:
        return tuple(GoldPage(document=d, page=p) for d, p in sorted({(o.document, o.page) for o in self.operands}))

    def record(self, example_ids: Sequence[str]) -> dict[str, Any]:
        """The figure as a JSON object: what an answer must compute and from which cited figures."""
        return {
            "question": self.question,
            "example_ids": list(example_ids),
            "op": self.op,
            "formula": self.formula,
            "expression": self.expression,
            "operands": [
                {
                    "document": o.document,
                    "page": o.page,
                    "line": o.label,
                    "period_end": o.period_end,
                    "printed": o.printed,
                    "value": str(o.value),
                }
                for o in self.operands
            ],
            "answer": self.answer,
        }


def round_to(value: Fraction, places: int) -> Decimal:
    """`value` to `places` decimals, to the nearest; ExamplesError on an exact tie (pick another precision)."""
    scaled = value * 10**places
    floor = scaled.numerator // scaled.denominator
    rest = scaled - floor
    if rest == Fraction(1, 2):
        raise ExamplesError(f"{float(value)} lies exactly halfway at {places} decimal places: ask another precision")
    return Decimal(floor + (1 if rest > Fraction(1, 2) else 0)).scaleb(-places)


def state(value: Fraction, fmt: Format) -> str:
    """The answer fact: "43.0%", "$14,316 million", "-$1.18 billion"."""
    if fmt.unit == "percent":
        return f"{round_to(value, fmt.places):.{fmt.places}f}%"
    amount = round_to(value / 1000 if fmt.unit == "billions" else value, fmt.places)
    scale = "billion" if fmt.unit == "billions" else "million"
    return f"{'-' if amount < 0 else ''}${abs(amount):,.{fmt.places}f} {scale}"


def _number(value: Decimal) -> str:
    return f"({value})" if value < 0 else str(value)


def evaluate(expression: str, operands: Mapping[str, Operand]) -> tuple[str, Fraction]:
    """(the expression with the operands' values, its exact value) by the project's arithmetic evaluator."""
    filled = expression.format(**{name: _number(o.value) for name, o in operands.items()})
    return filled, Fraction(evaluate_arithmetic(filled))


def _terms(ticker: str, kind: Kind) -> tuple[tuple[Term, ...], str]:
    if kind.op != "sum":
        return kind.terms, kind.expression
    metrics, _ = SUMS[ticker]
    terms = tuple(Term(m, m) for m in metrics)
    return terms, " + ".join(f"{{{m}}}" for m in metrics)


def figure(
    ticker: str,
    kind_name: str,
    quarters: Sequence[str],
    format_name: str,
    wording: int,
    statements: Mapping[str, Statement],
) -> ComputedFigure:
    """One question's figure, its operands read from the filings' statements of operations."""
    kind, fmt = KINDS[kind_name], FORMATS[format_name]
    filings = [statements[f"{q} {ticker}.pdf"] for q in quarters]
    terms, expression = _terms(ticker, kind)
    operands: dict[str, Operand] = {}
    for term in terms:
        labels, section = METRICS[term.metric][ticker]
        operands[term.name] = filings[term.filing].operand(labels, section, term.column)
    denominators = [o for n, o in operands.items() if kind.op != "sum" and n in {"whole", "before", "pretax", "sales"}]
    if any(o.value <= 0 for o in denominators):
        raise ExamplesError(f"{ticker} {kind_name} {quarters}: a base figure is not positive: {denominators}")
    filled, value = evaluate(expression, operands)
    _, sum_name = SUMS[ticker]
    names = {
        "co": COMPANY[ticker],
        "revenue": REVENUE[ticker],
        "services": SERVICES.get(ticker, ""),
        "sum_name": sum_name,
        "date": filings[-1].period_end,
        "prior_date": filings[0].prior_period_end,
        "d1": filings[0].period_end,
        "d2": filings[-1].period_end,
        "dates": ", ".join(s.period_end for s in filings[:-1]) + f" and {filings[-1].period_end}",
    }
    question = kind.wordings[wording].format(**names)
    question = f"{question} {fmt.instruction}".strip()
    formula = expression.format(**{n: f"{o.label} ({o.period_end})" for n, o in operands.items()})
    try:
        answer = state(value, fmt)
    except ExamplesError as exc:
        raise ExamplesError(f"{question!r}: {exc}") from None
    return ComputedFigure(
        question, ticker, kind_name, kind.op, format_name, formula, filled, tuple(operands.values()), answer
    )


def check_figure(fig: ComputedFigure, pages: Mapping[str, Sequence[str]]) -> None:
    """Re-read every operand from its page's line and recompute the answer; ExamplesError on any difference."""
    for o in fig.operands:
        lines = [split_line(" ".join(line.split())) for line in pages[o.document][o.page - 1].splitlines()]
        printed = [values for label, values in lines if label == o.label and o.printed in values]
        if not printed or parse_value(o.printed) != o.value:
            raise ExamplesError(
                f"{fig.question!r}: {o.document} page {o.page} has no line {o.label!r} showing {o.printed}"
            )
    kind = KINDS[fig.kind]
    terms, expression = _terms(fig.ticker, kind)
    filled, value = evaluate(expression, dict(zip((t.name for t in terms), fig.operands, strict=True)))
    recomputed = state(value, FORMATS[fig.format])
    if filled != fig.expression or recomputed != fig.answer:
        raise ExamplesError(f"{fig.question!r}: recomputed {filled} = {recomputed}, the example says {fig.answer}")


def computed_figures(pages: Mapping[str, Sequence[str]]) -> list[ComputedFigure]:
    """Every question of SPECS with its figure, each checked against the filings' pages."""
    statements = {d: read_statement(d, pages[d]) for d in sec.SEC_DOCUMENTS}
    figures = [figure(*spec, statements=statements) for spec in SPECS]
    for fig in figures:
        check_figure(fig, pages)
    questions = [f.question for f in figures]
    if len(set(questions)) != len(questions):
        raise ExamplesError("two computed-figure questions have the same text: vary the wording")
    return figures


def figure_examples(fig: ComputedFigure) -> list[LabelledExample]:
    """The chip (the operands' filings selected), company-scope and no-scope examples of a figure."""
    others = tuple(d for d in sec.SEC_DOCUMENTS if sec.ticker_of(d) != fig.ticker)
    tags = ("computed", f"op:{fig.op}", *FORMATS[fig.format].tags, "chunk:table")
    if len(fig.documents) > 1:
        tags += ("multi_doc",)
    common = {
        "corpus": sec.CORPUS,
        "question": fig.question,
        "split": sec.split_of(fig.question),
        "gold_documents": fig.documents,
        "gold_pages": fig.pages,
        "answer_facts": (fig.answer,),
        "forbidden_documents": others,
    }
    return [
        make_example(
            case="chip",
            scope={"document_ids": fig.documents},
            expected_plan="one_step",
            tags=(*tags, "scope:chip"),
            **common,
        ),
        make_example(
            case="property",
            scope={"property": fig.ticker.lower()},
            expected_plan="one_step",
            tags=(*tags, "scope:property"),
            **common,
        ),
        make_example(case="no_scope", expected_plan="two_step", tags=(*tags, "scope:none"), **common),
    ]


def computed_examples(pages: Mapping[str, Sequence[str]]) -> tuple[list[LabelledExample], list[dict[str, Any]]]:
    """Every computed-figure example and, per question, the record of how its answer is computed."""
    examples: list[LabelledExample] = []
    records: list[dict[str, Any]] = []
    for fig in computed_figures(pages):
        mine = figure_examples(fig)
        examples += mine
        records.append(fig.record([e.id for e in mine]))
    return examples, records
