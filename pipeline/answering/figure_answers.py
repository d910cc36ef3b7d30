"""A section answered by a figure read from a table (pipeline.answering.figures): what the question asks of
the tables, the figure over the documents retrieval found, and the line and evidence the guards then check.

The documents searched are those of the sub-question's retrieved chunks, best-ranked first; all of their
table rows are read (a statement's page need not be among the chunks kept). The evidence is the row as the
table prints it, labelled cells with their column headers, and the note stating the table's scale when the
page prints one; the pages they stand on are shown to the section, so the citation guard checks them like
any other.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from decimal import Decimal
from typing import Protocol

from pipeline.answering.asks import ComputeRequest
from pipeline.answering.compute import MAX_OPERANDS, NAMES, Operand
from pipeline.answering.figures import (
    Figure,
    MetricAsk,
    asked_months,
    cell_value,
    document_period_matches,
    find_figure,
    label_terms,
    metric_terms,
)
from pipeline.answering.floors import Draft
from pipeline.answering.metric_labels import alternatives
from pipeline.answering.sentences import OfferedSentence, offered_sentences
from pipeline.intake.contract import Contract
from pipeline.text import bm25_tokens
from pipeline.types import ChunkHit, TableRow
from pipeline.values.columns import column_period
from pipeline.values.money import currency_sign, table_units
from pipeline.values.periods import AskedPeriods, Period, find_periods
from pipeline.values.quantities import Quantity

# Documents of the retrieved chunks whose tables are read, best-ranked first.
MAX_DOCUMENTS = 3
# Sentence ids of the evidence a figure section makes (apart from the ids of offered sentences).
FIRST_ID = 100_000
_PERCENT_METRIC = re.compile(r"\b(?:margin|rate)s?\b")
_MARGIN_METRIC = re.compile(r"\bmargins?\b")
_COUNT_WORDS = ("employees", "headcount", "patents", "stores", "customers", "subscribers", "people", "staff")


class TableSource(Protocol):
    """What reading figures needs from the store (Store satisfies it)."""

    def document_rows(self, document_id: str) -> Sequence[TableRow]: ...

    def page_hits(self, document_id: str, page: int) -> list[ChunkHit]: ...

    def document_periods(self, document_id: str) -> tuple[Period, ...]: ...

    def owner_names(self, document_id: str) -> tuple[str, ...]: ...

    def first_hit(self, document_id: str) -> ChunkHit | None: ...


def metric_ask(
    sub_question: str,
    asked: str,
    contract: Contract | None,
    generic: AbstractSet[str],
    names: AbstractSet[str] = frozenset(),
) -> MetricAsk:
    """What `sub_question` asks of the tables; `asked` is it without entity names (its metric's words);
    `names` the stemmed words of the scope's entities' names."""
    terms = metric_terms(asked, frozenset(generic))
    periods = find_periods(sub_question)
    unit = contract.unit if contract else None
    lowered = asked.casefold()
    per_share = "per share" in lowered or "eps" in terms or "per-share" in lowered
    count = (unit not in (None, "%") and not per_share) or any(w in lowered for w in _COUNT_WORDS)
    named_percent = unit == "%" or "percent" in lowered or "%" in asked
    # a rate ("effective tax rate", "interest rate") is a percentage, never an amount of money; a margin named
    # without a percentage is either ("gross margin" is a sum of money in many statements)
    percent = named_percent or bool(_PERCENT_METRIC.search(lowered))
    percent_or_amount = not named_percent and bool(_MARGIN_METRIC.search(lowered))
    return MetricAsk(
        terms=terms,
        alternatives=alternatives(terms),
        periods=periods,
        latest=bool(contract and contract.period == "latest") or periods.latest,
        months=asked_months(sub_question) or (12 if contract and contract.report == "annual" else None),
        percent=percent,
        percent_or_amount=percent_or_amount,
        per_share=per_share,
        count=count,
        sources=contract.sources if contract else (),
        names=frozenset(names),
        report=contract.report if contract else None,
    )


def figure_for(ask: MetricAsk, hits: Sequence[ChunkHit], tables: TableSource) -> Figure | None:
    """The best figure in the tables of the documents `hits` come from (MAX_DOCUMENTS, best-ranked first)."""
    if not ask.terms:
        return None
    order = list(dict.fromkeys(h.chunk.document_id for h in hits))
    matching = frozenset(d for d in order if document_period_matches(ask.periods, tables.document_periods(d)))
    # the documents of the period asked first, then the kind of report asked for (an annual report before the
    # quarters' reports), then retrieval's order
    report = ask.report
    order.sort(
        key=lambda d: (d not in matching, report is not None and not report_matches(report, tables.document_periods(d)))
    )
    order = order[:MAX_DOCUMENTS]
    rows = {d: with_document_scale(tables.document_rows(d)) for d in order}
    owners = {t for d in order for name in tables.owner_names(d) for t in label_terms(name)}
    # the owner's name says whose figure it is, not which: it is left out of the metric's words
    terms = tuple(t for t in ask.terms if t not in owners) or ask.terms
    ask = replace(ask, terms=terms, names=ask.names | owners)
    return find_figure(ask, rows, matching, {d: i for i, d in enumerate(order)})


def render_row(row: TableRow) -> str:
    """A row as its table prints it, cells joined with their column headers ("Total net sales | 81,797 (Three
    Months Ended July 1, 2023) | ...")."""
    cells = [f"{c.text} ({c.header})" if c.header else c.text for c in row.cells]
    return " | ".join([row.label, *cells])


def figure_line(figure: Figure) -> str:
    """The answer line of a figure: its row's label, the figure with its currency sign and the table's scale,
    and its column's period ("Total net sales: $81,797 million (Three Months Ended July 1, 2023)")."""
    text = figure.cell.text.strip()
    sign = currency_sign(figure.currency)
    if figure.unit is None and figure.currency and not any(s in text for s in "$€£¥"):
        text = f"{sign}{text}" if sign else f"{figure.currency} {text}"
    if figure.row.scale and figure.unit is None:
        text = f"{text} {figure.row.scale}"
    header = f" ({figure.cell.header})" if figure.cell.header else ""
    return f"{figure.row.label}: {text}{header}"


def figure_evidence(
    figure: Figure, tables: TableSource, filename: str
) -> tuple[Draft, list[OfferedSentence], list[ChunkHit]]:
    """The figure's line, its evidence (the row as printed, then the page's note of the table's scale when the
    page prints one) and the chunks of its page, which the section is shown."""
    page_hits = tables.page_hits(figure.document_id, figure.page)
    if not page_hits:
        return Draft(figure_line(figure), (), "extracted"), [], []
    first = page_hits[0]
    hit = ChunkHit(first.chunk, filename, first.score, first.scores)
    row = OfferedSentence(FIRST_ID, render_row(figure.row), hit)
    evidence = [row]
    if figure.row.scale:
        note = next(
            (
                s
                for s in offered_sentences(page_hits, 10_000)
                if table_units(s.text)[0] == figure.row.scale and len(s.text) < 300
            ),
            None,
        )
        if note is not None:
            evidence.append(OfferedSentence(FIRST_ID + 1, note.text, note.hit))
    return Draft(figure_line(figure), (FIRST_ID,), "extracted"), evidence, page_hits


def operand_figures(
    request: ComputeRequest,
    sub_question: str,
    contract: Contract | None,
    generic: AbstractSet[str],
    hits: Sequence[ChunkHit],
    tables: TableSource,
) -> list[Figure]:
    """The figures a computation asks for, each read from the tables as a figure asked alone would be (its row
    names the operand, its column the period asked), all from one document: a change takes one row's figure of
    the period asked and of the same span a year before. Empty when any operand is not found."""
    periods = find_periods(sub_question)
    report = contract.report if contract else None
    months = asked_months(sub_question) or (12 if report == "annual" else None)
    latest = bool(contract and contract.period == "latest") or periods.latest

    def ask(phrase: str) -> MetricAsk:
        terms = metric_terms(phrase, frozenset(generic))
        return MetricAsk(terms, alternatives(terms), periods, latest, months, report=report)

    if request.operation in ("change", "difference", "percent_change") and len(request.operands) == 1:
        named = sorted(periods.periods, key=lambda p: p.end)
        if len(named) >= 2:
            # "between the quarter ended July 30 and the quarter ended October 29": the later against the earlier
            def at(period: Period) -> Figure | None:
                return figure_for(replace(ask(request.operands[0]), periods=AskedPeriods((period,))), hits, tables)

            later, earlier = at(named[-1]), at(named[0])
            return [later, earlier] if later is not None and earlier is not None else []
        current = figure_for(ask(request.operands[0]), hits, tables)
        prior = None if current is None else prior_figure(current)
        return [current, prior] if current is not None and prior is not None else []
    if request.operation == "average":
        # "average quarterly net sales over the quarters ended A, B, C and D": the figure of each period named
        named = sorted(periods.periods, key=lambda p: p.end)
        if len(named) < 2 or not request.operands:
            return []
        each = [
            figure_for(replace(ask(request.operands[0]), periods=AskedPeriods((period,))), hits, tables)
            for period in named[:MAX_OPERANDS]
        ]
        return [f for f in each if f is not None] if all(each) else []
    if len(request.operands) < 2:
        return []
    found: list[Figure] = []
    for phrase in request.operands[:MAX_OPERANDS]:
        same = [h for h in hits if not found or h.chunk.document_id == found[0].document_id]
        figure = figure_for(ask(phrase), same, tables)
        if figure is None:
            return []
        found.append(figure)
    return found


def prior_figure(figure: Figure) -> Figure | None:
    """The figure of the same row for the same span ending a year before (the period a change compares with)."""
    end = figure.period.end
    year = end.year if end else figure.period.year
    if year is None:
        return None
    for cell in figure.row.cells:
        period = column_period(cell.header)
        earlier = period.end.year if period.end else period.year
        if cell is figure.cell or earlier != year - 1 or period.months != figure.period.months:
            continue
        read = cell_value(cell.text)
        if read is None:
            continue
        number = read[0] * (figure.value / figure_number(figure)) if figure_number(figure) else read[0]
        return replace(figure, cell=cell, value=number, period=period)
    return None


def figure_number(figure: Figure) -> Decimal:
    """The figure's number as its cell prints it (sign applied, no scale)."""
    read = cell_value(figure.cell.text)
    return read[0] if read else Decimal(0)


def figure_operands(figures: Sequence[Figure], filename_of: Callable[[str], str], tables: TableSource) -> list[Operand]:
    """The figures as a computation's operands: each named a, b, ..., labelled by its row, quoted from its row
    as printed, on a page the section is shown."""
    operands: list[Operand] = []
    for index, figure in enumerate(figures):
        hits = tables.page_hits(figure.document_id, figure.page)
        if not hits:
            return []
        hit = replace(hits[0], filename=filename_of(figure.document_id))
        text = render_row(figure.row)
        sentence = OfferedSentence(FIRST_ID + 10 + index, text, hit)
        start = text.find(figure.cell.text)
        quantity = Quantity(
            value=figure.value,
            mantissa=figure_number(figure),
            percent=figure.unit == "%",
            quantum=Decimal(1),
            start=max(start, 0),
            end=max(start, 0) + len(figure.cell.text),
            text=figure.cell.text,
        )
        operands.append(Operand(NAMES[index], figure.row.label, quantity, sentence))
    return operands


def report_matches(report: str, periods: Sequence[Period]) -> bool:
    """Whether a document whose attributes state `periods` is the kind of report asked for: an annual report
    states a year and no quarter, a quarterly one a quarter."""
    quarter = any(p.kind == "quarter" for p in periods)
    if report == "annual":
        return not quarter and any(p.kind == "year" for p in periods)
    return report == "quarterly" and quarter


def with_document_scale(rows: Sequence[TableRow]) -> list[TableRow]:
    """A document's rows with the scale most of its tables state given to those whose own note was not found
    (a statement continued on a page without its note): a report writes its figures in one scale."""
    counts = Counter(r.scale for r in rows if r.scale)
    if not counts:
        return list(rows)
    usual = counts.most_common(1)[0][0]
    return [r if r.scale else replace(r, scale=usual) for r in rows]


# Documents (periods) a figure asked over time is listed for.
MAX_PERIODS = 4
# Words that ask how a figure moved, not which figure.
_OVER_TIME_WORDS = frozenset(
    bm25_tokens(
        "fluctuated fluctuate fluctuations historical history trend trends identifiable identified changed change "
        "changes shift shifts substantial significant variation variations evolved evolve reported periods over "
        "across seen any"
    )
)


def figures_over_time(ask: MetricAsk, hits: Sequence[ChunkHit], tables: TableSource) -> list[Figure]:
    """For a figure asked over time ("How has revenue changed over the quarters?"): the figure of each document
    retrieval found (a filing is a period), read from its latest column of the span asked, in period order;
    empty when fewer than two documents give one."""
    documents = list(dict.fromkeys(h.chunk.document_id for h in hits))
    terms = tuple(t for t in ask.terms if t not in _OVER_TIME_WORDS) or ask.terms
    each = replace(ask, terms=terms, alternatives=alternatives(terms), periods=AskedPeriods(), latest=True)
    found: list[Figure] = []
    for document in documents:
        own = [h for h in hits if h.chunk.document_id == document]
        figure = figure_for(each, own, tables)
        if figure is not None:
            found.append(figure)
        if len(found) >= MAX_PERIODS:
            break
    found.sort(key=lambda f: f.period.sort_key())
    return found if len(found) >= 2 else []
