"""A section answered by a figure read from a table (pipeline.answering.figures): what the question asks of
the tables, the figure over the documents retrieval found, and the line and evidence the guards then check.

The documents searched are those of the sub-question's retrieved chunks, best-ranked first; all of their
table rows are read (a statement's page need not be among the chunks kept). The evidence is the row as the
table prints it, labelled cells with their column headers, and the note stating the table's scale when the
page prints one; the pages they stand on are shown to the section, so the citation guard checks them like
any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from typing import Protocol

from pipeline.answering.figures import (
    Figure,
    MetricAsk,
    asked_months,
    document_period_matches,
    find_figure,
    label_terms,
    metric_terms,
)
from pipeline.answering.floors import Draft
from pipeline.answering.metric_labels import alternatives
from pipeline.answering.sentences import OfferedSentence, offered_sentences
from pipeline.intake.contract import Contract
from pipeline.types import ChunkHit, TableRow
from pipeline.values.money import currency_sign, table_units
from pipeline.values.periods import Period, find_periods

# Documents of the retrieved chunks whose tables are read, best-ranked first.
MAX_DOCUMENTS = 3
# Sentence ids of the evidence a figure section makes (apart from the ids of offered sentences).
FIRST_ID = 100_000
_COUNT_WORDS = ("employees", "headcount", "patents", "stores", "customers", "subscribers", "people", "staff")


class TableSource(Protocol):
    """What reading figures needs from the store (Store satisfies it)."""

    def document_rows(self, document_id: str) -> Sequence[TableRow]: ...

    def page_hits(self, document_id: str, page: int) -> list[ChunkHit]: ...

    def document_periods(self, document_id: str) -> tuple[Period, ...]: ...

    def owner_names(self, document_id: str) -> tuple[str, ...]: ...


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
    percent = unit == "%" or "percent" in lowered or "%" in asked or " margin" in f" {lowered}"
    return MetricAsk(
        terms=terms,
        alternatives=alternatives(terms),
        periods=periods,
        latest=bool(contract and contract.period == "latest") or periods.latest,
        months=asked_months(sub_question),
        percent=percent,
        per_share=per_share,
        count=count,
        sources=contract.sources if contract else (),
        names=frozenset(names),
    )


def figure_for(ask: MetricAsk, hits: Sequence[ChunkHit], tables: TableSource) -> Figure | None:
    """The best figure in the tables of the documents `hits` come from (MAX_DOCUMENTS, best-ranked first)."""
    if not ask.terms:
        return None
    order = list(dict.fromkeys(h.chunk.document_id for h in hits))[:MAX_DOCUMENTS]
    rows = {d: tables.document_rows(d) for d in order}
    owners = {t for d in order for name in tables.owner_names(d) for t in label_terms(name)}
    # the owner's name says whose figure it is, not which: it is left out of the metric's words
    terms = tuple(t for t in ask.terms if t not in owners) or ask.terms
    ask = replace(ask, terms=terms, names=ask.names | owners)
    matching = frozenset(d for d in order if document_period_matches(ask.periods, tables.document_periods(d)))
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
