"""Tables of a PDF page as rows, read from where its words stand (pure functions over words with boxes).

A financial statement on a PDF page is words on baselines: a row label at the left, figures in columns
to the right ("$ 60,584", "(265)", "—"), column headers stacked above the first row of figures ("Three
Months Ended" over "July 1," over "2023"), a title and a note of units above them ("(In millions, except
per share amounts)"). `page_rows` groups words into lines by baseline, finds the figure columns by where
figures stand across the lines of a table, gives each figure the headers above its column (all levels),
each row its label (a label wrapped onto two lines is one), the label-only lines heading its block
("Current assets:") and what the table's note says about units. Footnote markers, a note-reference
column and years in headers are never figures.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.store.pdf_lines import Line, Word, page_lines
from pipeline.types import RowCell, TableRow
from pipeline.values.money import Scale, currency_of, table_units

_NOTE_HEADER = re.compile(r"(?:notes?|ref\.?)", re.IGNORECASE)
_PERIOD_WORDS = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\b|\bended\b|\bmonths?\b|\bweeks?\b"
    r"|\bquarters?\b|\byears?\b|\bas\s+(?:of|at)\b|\b(?:19|20)\d\d\b",
    re.IGNORECASE,
)
_DATED = re.compile(r"\b(?:19|20)\d\d\b")
# Words that leave a label unfinished: the next line goes on with it.
_OPEN_ENDS = frozenset({"and", "or", "of", "for", "to", "in", "on", "the", "from", "by", "with", "at", "net", "less"})
MAX_WORDS = 20_000  # a page holding more words than this is not read for tables (no statement has them)
MAX_COLUMNS = 40  # more figure columns than this are not a table (and would make placing cells quadratic)


@dataclass
class _Column:
    x0: float
    x1: float
    headers: list[str] = field(default_factory=list)

    @property
    def centre(self) -> float:
        return (self.x0 + self.x1) / 2

    def overlaps(self, x0: float, x1: float, slack: float = 0.0) -> bool:
        return x0 < self.x1 + slack and self.x0 - slack < x1


def page_rows(words: Sequence[Word], page: int, first_ordinal: int = 0) -> list[TableRow]:
    """The rows of every table on a page, top to bottom; `table` numbers the page's tables from 0 and
    `ordinal` counts on from `first_ordinal`."""
    if not words or len(words) > MAX_WORDS:
        return []
    lines = page_lines(words)
    rows: list[TableRow] = []
    index = 0
    table = 0
    previous: _Previous = ([], (None, None, ""))
    while index < len(lines):
        if not lines[index].is_data:
            index += 1
            continue
        end = _table_end(lines, index)
        found, previous = _table_rows(lines, index, end, (page, table, first_ordinal + len(rows)), previous)
        if found:
            rows.extend(found)
            table += 1
        index = end
    return rows


def _table_end(lines: Sequence[Line], start: int) -> int:
    """The index after the last line of the table whose first row is lines[start]: data lines and the
    label lines between them, while the lines stay close and none crosses into the figures."""
    zone = min(c.fx0 for c in lines[start].cells)
    last = start
    index = start + 1
    while index < len(lines):
        line = lines[index]
        pitch = lines[index - 1].bottom - line.top
        if pitch > 3.5 * max(line.height, lines[index - 1].height):
            break
        if line.is_data:
            zone = min(zone, *(c.fx0 for c in line.cells))
            last = index
        elif line.cells or line.x1 > zone or _period_stub(line):
            break  # a header of the next table, prose running across the columns, the next period's block
        index += 1
    return last + 1


def _columns(lines: Sequence[Line]) -> list[_Column]:
    """The figure columns of a table: figures of its rows that overlap across lines stand in one column."""
    spans = sorted((c.fx0, c.x1) for line in lines for c in line.cells if c.figure)
    columns: list[_Column] = []
    for x0, x1 in spans:
        if columns and x0 < columns[-1].x1 + 0.5:
            columns[-1].x1 = max(columns[-1].x1, x1)
        else:
            columns.append(_Column(x0, x1))
    for line in lines:  # a column reaches over the currency signs of its figures
        for cell in line.cells:
            for column in columns:
                if column.overlaps(cell.fx0, cell.x1):
                    column.x0 = min(column.x0, cell.x0)
    return columns


def _period_stub(line: Line) -> bool:
    """Whether a line left of the columns names a period with its year ("Ended December 31, 2022"): the
    heading of the block of rows below it."""
    return not line.is_data and bool(_DATED.search(line.text)) and bool(_PERIOD_WORDS.search(_DATED.sub("", line.text)))


# The table above on the page: its columns, and its scale, currency and title.
_Previous = tuple[list["_Column"], tuple[Scale | None, str | None, str]]


def _table_rows(
    lines: Sequence[Line], start: int, end: int, where: tuple[int, int, int], previous: _Previous
) -> tuple[list[TableRow], _Previous]:
    """The rows of the table whose rows are lines[start:end], with its columns and units for the next. A
    table without column headers of its own under a table of the same columns (the next period's block)
    takes their headers, and its units and title when it states none."""
    page, table, first_ordinal = where
    body = lines[start:end]
    columns = _columns([line for line in body if line.is_data])
    if not columns or len(columns) > MAX_COLUMNS:
        return [], previous
    zone = columns[0].x0
    # Label lines directly above the first row head it (parents) or begin its label; above them, headers.
    top = start
    while (
        top > 0
        and _label_only(lines[top - 1], zone)
        and not _period_stub(lines[top - 1])
        and lines[top - 1].bottom - lines[top].top < 2.5 * lines[top].height
    ):
        top -= 1
    header_lines, stub = _headers(lines, top, end, columns)
    above = _title_block(lines, top - len(header_lines))
    notes = " ".join([*above, *stub, *(" ".join(c.headers) for c in columns)])
    scale, currency = table_units(notes)
    title = _title(above)
    if not any(c.headers for c in columns) and _same_columns(columns, previous[0]):
        for column, before in zip(columns, previous[0], strict=True):
            column.headers = list(before.headers)
        if scale is None and currency is None:
            scale, currency, title = previous[1]
    if currency is None:
        signs = {currency_of(c.text) for line in body for c in line.cells if c.figure} - {None}
        currency = signs.pop() if len(signs) == 1 else None
    period = " ".join(s for s in stub if _PERIOD_WORDS.search(s) and table_units(s) == (None, None))
    headers = [" ".join(([period] if period else []) + column.headers) for column in columns]
    keep = [not _note_column(column, i, body) for i, column in enumerate(columns)]
    rows = _rows(lines[top:end], columns, headers, keep, page, table, first_ordinal, (scale, currency, title))
    return rows, (columns, (scale, currency, title))


def _same_columns(columns: Sequence[_Column], others: Sequence[_Column]) -> bool:
    return len(columns) == len(others) and all(a.overlaps(b.x0, b.x1) for a, b in zip(columns, others, strict=True))


def _label_only(line: Line, zone: float) -> bool:
    return not line.cells and bool(line.label) and line.x1 < zone


def _across(phrase: Sequence[Word], zone: float, left: float) -> bool:
    """Whether a phrase reaching over the columns comes from the left (a title or prose running across
    them) rather than standing over a column (a header wider than its figures)."""
    x0, x1 = phrase[0].x0, phrase[-1].x1
    size = max(w.size for w in phrase)
    return x0 < zone - 2 and (x0 <= left + 2 * size or (x0 + x1) / 2 < zone)


def _headers(lines: Sequence[Line], top: int, end: int, columns: list[_Column]) -> tuple[list[Line], list[str]]:
    """The header lines above a table's first line (nearest last in the list's order: top to bottom), each
    phrase given to the columns it stands over; and the phrases left of the columns (the stub's heading)."""
    zone = columns[0].x0
    left = min(line.x0 for line in lines[top:end])
    found: list[Line] = []
    index = top - 1
    while index >= 0 and len(found) < 10:
        line = lines[index]
        below = lines[index + 1]
        if line.bottom - below.top > 3.0 * max(line.height, below.height) or line.is_data:
            break
        inside = [p for p in line.phrases if p[-1].x1 > zone - 2]
        if (not inside and not _PERIOD_WORDS.search(line.text)) or any(_across(p, zone, left) for p in inside):
            break  # a line left of the columns naming no period, or one running across them: the title block
        found.append(line)
        index -= 1
    found.reverse()
    stub: list[str] = []
    for line in found:
        phrases = [p for p in line.phrases if p[-1].x1 > zone - 2]
        stub.extend(" ".join(w.text for w in p) for p in line.phrases if p[-1].x1 <= zone - 2)
        _place(phrases, columns)
    return found, stub


def _place(phrases: Sequence[Sequence[Word]], columns: list[_Column]) -> None:
    """Each header phrase of one line to the columns under it: one each when a line has a phrase per
    column; else every column it overlaps, or the nearest one; a column left without a phrase on the line
    takes the nearest one when that phrase is centred between it and a column it stands over (a spanning
    header shorter than the columns it spans: "Year ended" over "2023" and "2022")."""
    texts = [" ".join(w.text for w in p) for p in phrases]
    if len(phrases) == len(columns):
        for column, text in zip(columns, texts, strict=True):
            column.headers.append(text)
        return

    def centre(x0: float, x1: float) -> float:
        return (x0 + x1) / 2

    placed: list[list[int]] = []
    for phrase in phrases:
        x0, x1 = phrase[0].x0, phrase[-1].x1
        under = [i for i, c in enumerate(columns) if c.overlaps(x0, x1)]
        placed.append(under or [min(range(len(columns)), key=lambda i: abs(columns[i].centre - centre(x0, x1)))])
    taken = {i for under in placed for i in under}
    for index, column in enumerate(columns):
        if index in taken or not phrases:
            continue
        nearest = min(
            range(len(phrases)), key=lambda p: abs(centre(phrases[p][0].x0, phrases[p][-1].x1) - column.centre)
        )
        middle = centre(phrases[nearest][0].x0, phrases[nearest][-1].x1)
        if any(_centred(middle, column.centre, columns[i].centre) for i in placed[nearest]):
            placed[nearest].append(index)
    for text, under in zip(texts, placed, strict=True):
        for index in sorted(under):
            if not columns[index].headers or columns[index].headers[-1] != text:
                columns[index].headers.append(text)


def _centred(middle: float, a: float, b: float) -> bool:
    """Whether `middle` stands about halfway between `a` and `b`."""
    return abs(middle - (a + b) / 2) < 0.25 * abs(a - b)


def _title_block(lines: Sequence[Line], top: int) -> list[str]:
    """The text of up to four lines just above a table's headers (its title and note), top to bottom."""
    block: list[str] = []
    index = top - 1
    below = lines[top] if top < len(lines) else None
    while index >= 0 and len(block) < 4:
        line = lines[index]
        if below is not None and line.bottom - below.top > 3.0 * max(line.height, below.height):
            break
        if line.is_data:
            break
        block.append(line.text)
        below = line
        index -= 1
    block.reverse()
    return block


def _title(block: Sequence[str]) -> str:
    """The table's title among the lines above it: the nearest line in capitals or naming a statement, else
    the nearest line that is not a note of units."""
    candidates = [t for t in block if not t.startswith("(") and (len(t) > 60 or table_units(t) == (None, None))]
    for text in reversed(candidates):
        letters = [ch for ch in text if ch.isalpha()]
        if re.search(r"statements?\b|balance sheets?|income|cash flows", text, re.IGNORECASE) or (
            len(letters) > 8 and sum(ch.isupper() for ch in letters) > 0.8 * len(letters)
        ):
            return text[:200]
    return candidates[-1][:200] if candidates else ""


def _note_column(column: _Column, index: int, body: Sequence[Line]) -> bool:
    """Whether a column holds note references ("Note" over "5", "12"), not figures: its header says so,
    or it is the first column, holds small whole numbers only and has figures to its right."""
    header = " ".join(column.headers).strip()
    if header and _NOTE_HEADER.fullmatch(header):
        return True
    if index != 0 or header:
        return False
    texts = [c.text for line in body for c in line.cells if column.overlaps(c.fx0, c.x1)]
    return (
        bool(texts)
        and all(re.fullmatch(r"\d{1,2}(?:\.\d)?", t) for t in texts)
        and any(c.fx0 > column.x1 for line in body for c in line.cells)
    )


def _rows(
    lines: Sequence[Line],
    columns: list[_Column],
    headers: list[str],
    keep: list[bool],
    page: int,
    table: int,
    first_ordinal: int,
    units: tuple[Scale | None, str | None, str],
) -> list[TableRow]:
    """The table's rows: a label line above a row is its parent or the start of its label."""
    scale, currency, title = units
    rows: list[TableRow] = []
    parents: list[tuple[float, str]] = []
    pending: list[Line] = []  # label lines not yet known as parents or the start of a wrapped label
    for index, line in enumerate(lines):
        if not line.is_data:
            if line.label and not line.cells:
                pending.append(line)
            continue
        label, x0 = line.label, line.label_x0 if line.label else line.x0
        following = lines[index + 1] if index + 1 < len(lines) else None
        while pending:
            above = pending[-1]
            if label and not _wraps(above, line, following):
                break
            pending.pop()
            label = f"{above.label} {label}".strip() if label else above.label
            x0 = above.label_x0
        for above in pending:
            while parents and parents[-1][0] >= above.label_x0 - 1:
                parents.pop()
            parents.append((above.label_x0, above.label))
        pending = []
        while parents and parents[-1][0] > x0 + 1:
            parents.pop()  # a row less indented than a heading ends its block
        while parents and parents[-1][0] >= x0 - 1 and not parents[-1][1].endswith(":"):
            parents.pop()
        cells = []
        for cell in line.cells:
            for column, header, kept in zip(columns, headers, keep, strict=True):
                if column.overlaps(cell.fx0, cell.x1, slack=1.0):
                    if kept:
                        cells.append(RowCell(cell.text, header))
                    break
        if not label or not cells:
            continue
        rows.append(
            TableRow(
                page,
                table,
                first_ordinal + len(rows),
                label,
                tuple(cells),
                tuple(text for _, text in parents),
                scale,
                currency,
                title,
            )
        )
        if label.casefold().startswith("total") and parents:
            parents.pop()  # a total closes the block it sums
    return rows


def _wraps(above: Line, line: Line, following: Line | None) -> bool:
    """Whether a label line goes on in the label of the row below it (a label wrapped onto two lines)
    rather than heading a block: it does not end with a colon and the row's label starts in lower case,
    or it ends on a word that leaves it open, or the row hangs indented under it alone."""
    text = above.label
    if text.endswith(":") or line.bottom < above.bottom - 2.5 * above.height:
        return False
    words = text.split()
    if line.label[:1].islower() or (words and (words[-1].casefold() in _OPEN_ENDS or text.endswith((",", "-", "—")))):
        return True
    indented = line.label_x0 > above.label_x0 + 1
    return indented and following is not None and following.is_data and following.label_x0 < line.label_x0 - 1
