"""HTML documents (EDGAR filings and any other HTML) as printed pages of text.

Parsed with lexbor (selectolax), the fastest of the maintained parsers measured on the EDGAR filings
(benchmarks/html_parsers.py). Pages are the printed pages the file marks with `page-break-before` /
`page-break-after` (or `break-before` / `break-after: page`) styles; a file that marks none is cut into
screenfuls of SCREEN_CHARS characters at line ends, and says so. Hidden content (`display:none`, the
inline XBRL header) is left out; tables become rows of text with their column headers
(pipeline.store.tables); inline XBRL figures are kept as facts of the page they are printed on, and the
cover page's facts give the title, summary and period attributes. Tags nested deeper than MAX_PARSE_DEPTH are
taken out of the text before it is parsed (pipeline.store.html_nesting).
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser, LexborNode

from pipeline.errors import FactRefused, InputFileError
from pipeline.store.html_nesting import flatten_nesting
from pipeline.store.tables import Cell, grid_rows, table_header_text, table_lines, table_title
from pipeline.store.xbrl import (
    MAX_NAME_CHARS,
    Context,
    Cover,
    PageFact,
    cover_attributes,
    cover_from_facts,
    cover_summary,
    cover_title,
    fact_value,
    unit_name,
)
from pipeline.types import RowCell, TableRow
from pipeline.values.money import currency_of, table_units

# A file without page breaks is cut into pages of about this many characters (a printed page of a
# filing holds 3,000-4,000), at the end of a line when one falls in the last third.
SCREEN_CHARS = 3000
# Element nesting deeper than this is read as plain text (no page breaks, tables or facts inside).
MAX_DEPTH = 200
# Lines before a table that may hold its title and its scale note ("(In millions, except ...)").
TITLE_LINES = 4
# Tags nested deeper than this are taken out before the parser sees them, their text kept: the parser's cost
# grows faster than the square of the nesting (200,000 nested <div> took minutes), and the walk reads nothing
# below MAX_DEPTH but text anyway.
MAX_PARSE_DEPTH = 5 * MAX_DEPTH
# Bytes an HTML file may have (an annual report is 1-5 MB).
MAX_BYTES = 64 * 1024 * 1024
# Pages an HTML file may have (the longest annual report of the EDGAR set prints 142); a file with more, printed
# or screenfuls, is skipped and named.
MAX_PAGES = 5000
# Seconds reading one file may take; past it the file is skipped and named (the EDGAR filings read in 1-3 s).
MAX_READ_SECONDS = 60.0
_BLOCK = frozenset(
    "address article aside blockquote body br center dd div dl dt fieldset figcaption figure footer form h1 h2 h3 h4"
    " h5 h6 header hr li main nav ol p pre section table tbody td tfoot th thead tr ul".split()
)
_SKIP = frozenset("head script style template noscript title ix:header iframe object svg".split())
# The SGML header of a filing as EDGAR serves it (<TYPE>form <SEQUENCE>1 <FILENAME>... <TEXT>): never
# closed, so everything after them is inside them; their own words are left out, not their content.
_SGML_HEADER = frozenset("type sequence filename description".split())
_BREAK = re.compile(r"(?:page-)?break-(before|after)\s*:\s*(always|page|left|right|recto|verso)")
_HIDDEN = re.compile(r"display\s*:\s*none")
_SPACES = re.compile(r"[ \t\r\n\f\v\xa0\u2000-\u200a\u202f\u205f\u3000]+")


@dataclass(frozen=True)
class HtmlDocument:
    """What an HTML file holds: its pages, the figures on them, what its cover says, how it was paged."""

    pages: tuple[str, ...]
    facts: tuple[PageFact, ...]
    cover: Cover
    # The rows of its tables that hold figures, with their headers, scale and currency.
    rows: tuple[TableRow, ...]
    html_title: str | None
    # "page breaks": the file's printed pages; "screen": screenfuls of SCREEN_CHARS (no page breaks).
    paged_by: str
    # What reading it left out, for the build's warnings (facts dropped, tags read as text).
    notes: tuple[str, ...] = ()

    @property
    def title(self) -> str | None:
        """The cover's title ("Acme Widgets Inc. Form 10-X for the quarterly period ended July 1, 2023"),
        else the file's <title>."""
        return cover_title(self.cover) or self.html_title

    @property
    def summary(self) -> str | None:
        return cover_summary(self.cover)

    @property
    def attributes(self) -> dict[str, str]:
        """Form and period attributes from the cover; `paged_by = "screen"` when the file marks no page."""
        return {**cover_attributes(self.cover), **({"paged_by": "screen"} if self.paged_by == "screen" else {})}


def read_html(path: Path, relpath: str, seconds: float = MAX_READ_SECONDS) -> HtmlDocument:
    """The pages, facts and cover of an HTML file; InputFileError names the file when it cannot be used
    (over MAX_BYTES or MAX_PAGES, or still being read after `seconds`)."""
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise InputFileError(relpath, f"HTML file of {size:,} bytes exceeds {MAX_BYTES:,}; split it first")
    try:
        return parse_html(path.read_bytes(), seconds)
    except ReadingBound as bound:
        raise InputFileError(relpath, str(bound)) from None


class ReadingBound(Exception):
    """Reading an HTML file passed one of its bounds (pages, time); says which."""


def parse_html(data: bytes, seconds: float = MAX_READ_SECONDS) -> HtmlDocument:
    """An HtmlDocument from the bytes of an HTML file: UTF-8, or Windows-1252 (what older filings and
    pages saved on Windows are written in) when the bytes are no UTF-8. ReadingBound when it has more than
    MAX_PAGES pages or reading it takes longer than `seconds`."""
    deadline = time.monotonic() + seconds
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    text, flattened = flatten_nesting(text, MAX_PARSE_DEPTH)
    tree = LexborHTMLParser(text)
    contexts, units = _resources(tree)
    reader = _PageReader(contexts, units, deadline, seconds)
    cover_facts: dict[str, tuple[str, str]] = {}
    for node in tree.css("ix\\:nonnumeric"):
        name = node.attrs.get("name") or ""
        if name.startswith("dei:") and name not in cover_facts:
            cover_facts[name] = (node.text(deep=True), node.attrs.get("contextref") or "")
    body = tree.body
    if body is not None:
        reader.walk(body, 0)
    pages = reader.finish()
    paged_by = "page breaks"
    if len(pages) == 1 and len(pages[0]) > SCREEN_CHARS:
        pages = screenfuls(pages[0], SCREEN_CHARS)
        paged_by = "screen"
    if len(pages) > MAX_PAGES:
        raise ReadingBound(f"{len(pages):,} pages ({paged_by}) is more than {MAX_PAGES:,}; split the file first")
    notes = list(reader.dropped_notes())
    if flattened:
        notes.append(f"{flattened:,} elements nested deeper than {MAX_PARSE_DEPTH} were read as text")
    title_node = tree.css_first("title")
    html_title = " ".join(title_node.text(deep=True).split()) if title_node is not None else None
    return HtmlDocument(
        pages=tuple(pages),
        facts=tuple(reader.facts),
        rows=tuple(reader.rows) if paged_by != "screen" else _screen_rows(reader.rows, pages),
        cover=cover_from_facts(cover_facts, contexts),
        html_title=html_title or None,
        paged_by=paged_by,
        notes=tuple(notes),
    )


def _screen_rows(rows: list[TableRow], pages: list[str]) -> tuple[TableRow, ...]:
    """Rows of a file cut into screenfuls: each on the screen that prints its label and first figure, found in
    order (a row is never on a screen before the previous row's), so the search reads each screen once."""
    out: list[TableRow] = []
    at = 0
    for row in rows:
        first = row.cells[0].text if row.cells else ""
        for index in range(at, len(pages)):
            if row.label in pages[index] and first in pages[index]:
                out.append(dataclasses.replace(row, page=index + 1))
                at = index
                break
    return tuple(out)


def screenfuls(text: str, size: int) -> list[str]:
    """`text` cut into pages of at most about `size` characters: at a line end in the last third of a
    page when there is one, else at a space, else at `size`. Cut by position, so the time is linear in the
    text's length (slicing off the rest at every page was quadratic)."""
    pages: list[str] = []
    start, end = 0, len(text)
    while start < end and text[start].isspace():
        start += 1
    while end - start > size:
        cut = text.rfind("\n", start + size * 2 // 3, start + size)
        if cut < 0:
            cut = text.rfind(" ", start + size // 2, start + size)
        if cut < 0:
            cut = start + size
        page = text[start:cut].strip()
        if page:
            pages.append(page)
        start = cut
        while start < end and text[start].isspace():
            start += 1
    rest = text[start:end].strip()
    if rest:
        pages.append(rest)
    return pages


def _resources(tree: LexborHTMLParser) -> tuple[dict[str, Context], dict[str, str]]:
    """The inline XBRL contexts (id -> period and dimensions) and units (id -> unit_name)."""
    contexts: dict[str, Context] = {}
    for node in tree.css("xbrli\\:context"):
        start = _child_text(node, "xbrli\\:startdate")
        end = _child_text(node, "xbrli\\:enddate") or _child_text(node, "xbrli\\:instant")
        dimensions = tuple(
            f"{member.attrs.get('dimension') or ''}={' '.join(member.text(deep=True).split())}"
            for member in node.css("xbrldi\\:explicitmember, xbrldi\\:typedmember")
        )
        contexts[node.attrs.get("id") or ""] = Context(start, end, dimensions)
    units: dict[str, str] = {}
    for node in tree.css("xbrli\\:unit"):
        numerator = node.css_first("xbrli\\:unitnumerator")
        denominator = node.css_first("xbrli\\:unitdenominator")
        if numerator is not None and denominator is not None:
            name = unit_name(_measures(numerator), _measures(denominator))
        else:
            name = unit_name(_measures(node))
        units[node.attrs.get("id") or ""] = name
    return contexts, units


def _child_text(node: LexborNode, selector: str) -> str | None:
    found = node.css_first(selector)
    return found.text(deep=True).strip() or None if found is not None else None


def _measures(node: LexborNode) -> tuple[str, ...]:
    return tuple(m.text(deep=True).strip() for m in node.css("xbrli\\:measure"))


def _style_flags(style: str) -> tuple[bool, bool, bool]:
    """(hidden, break before, break after) from an inline style."""
    lowered = style.lower()
    hidden = "none" in lowered and _HIDDEN.search(lowered) is not None
    before = after = False
    if "break" in lowered:
        for side, _ in _BREAK.findall(lowered):
            before = before or side == "before"
            after = after or side == "after"
    return hidden, before, after


class _PageReader:
    """Walks the body once, keeping lines per page and the facts of each page."""

    def __init__(
        self, contexts: dict[str, Context], units: dict[str, str], deadline: float = float("inf"), seconds: float = 0
    ) -> None:
        self.contexts = contexts
        self.units = units
        self.pages: list[list[str]] = [[]]
        self.line: list[str] = []
        self.facts: list[PageFact] = []
        self.rows: list[TableRow] = []
        self.in_table = 0
        self.deadline = deadline
        self.seconds = seconds
        self.visited = 0
        self.dropped: list[str] = []

    # -- lines and pages ---------------------------------------------------------------------

    def end_line(self) -> None:
        if self.line:
            text = _SPACES.sub(" ", "".join(self.line)).strip()
            if text:
                self.pages[-1].append(text)
            self.line = []

    def page_break(self) -> None:
        """A new page, unless the current one is still empty (forced breaks in a row make one break)."""
        if self.in_table:
            return
        self.end_line()
        if self.pages[-1]:
            self.pages.append([])

    def finish(self) -> list[str]:
        self.end_line()
        return ["\n".join(lines) for lines in self.pages if lines]

    # -- the walk ------------------------------------------------------------------------------

    def dropped_notes(self) -> list[str]:
        """One note for the facts that were dropped, naming the first few and why."""
        if not self.dropped:
            return []
        distinct = list(dict.fromkeys(self.dropped))
        shown = "; ".join(distinct[:3]) + ("; ..." if len(distinct) > 3 else "")
        return [f"dropped {len(self.dropped):,} inline XBRL facts ({shown})"]

    def walk(self, node: LexborNode, depth: int, own_text: bool = True) -> None:
        for child in node.iter(include_text=True):
            self.visited += 1
            if not self.visited % 4096 and time.monotonic() > self.deadline:
                raise ReadingBound(f"still reading after {self.seconds:g} s (limit per file); split or simplify it")
            tag = child.tag
            if tag == "-text":
                if own_text:
                    self.line.append(child.text_content or "")
                continue
            if tag is None or tag.startswith("-") or tag in _SKIP:
                continue
            style = child.attrs.get("style")
            before = after = False
            if style:
                hidden, before, after = _style_flags(style)
                if hidden:
                    continue
            if before:
                self.page_break()
            if depth >= MAX_DEPTH:
                self.line.append(" " + child.text(deep=True) + " ")
            elif tag == "table":
                self.end_line()
                self.table(child, depth + 1)
            elif tag == "ix:nonfraction":
                self.fact(child)
            elif tag in _SGML_HEADER:
                self.walk(child, depth + 1, own_text=False)
            elif tag in _BLOCK:
                self.end_line()
                self.walk(child, depth + 1)
                self.end_line()
            else:
                self.walk(child, depth + 1)
            if after:
                self.page_break()

    def fact(self, node: LexborNode) -> None:
        """A tagged figure: its text goes on the line, the fact onto the current page."""
        shown = node.text(deep=True)
        self.line.append(shown)
        attrs = node.attrs
        concept = attrs.get("name")
        if not concept:
            return
        try:
            if len(concept) > MAX_NAME_CHARS:
                raise FactRefused(concept[:40] + "...", f"a concept name of {len(concept):,} characters")
            value = fact_value(shown, attrs.get("format"), attrs.get("scale"), attrs.get("sign"), concept)
        except FactRefused as refused:
            self.dropped.append(str(refused))
            return
        if value is None:
            return
        context = self.contexts.get(attrs.get("contextref") or "", Context(None, None))
        unit = self.units.get(attrs.get("unitref") or "") or attrs.get("unitref")
        unit = unit[:MAX_NAME_CHARS] if unit else unit
        decimals = attrs.get("decimals")
        scale = int(attrs.get("scale") or 0)  # fact_value read it as an int already
        self.facts.append(
            PageFact(
                page=len(self.pages),
                concept=concept,
                value=value,
                shown=" ".join(shown.split()),
                scale=scale,
                unit=unit,
                period_start=context.start,
                period_end=context.end,
                dimensions=context.dimensions,
                decimals=decimals if decimals is None or len(decimals) <= MAX_NAME_CHARS else None,
            )
        )

    def table(self, node: LexborNode, depth: int) -> None:
        """A table's rows as lines (nested tables read as their cells' text)."""
        rows: list[list[Cell]] = []
        for row in _rows(node):
            cells = []
            for cell in row.iter(include_text=False):
                if cell.tag not in ("td", "th"):
                    continue
                attrs = cell.attrs
                style = attrs.get("style")
                if style and _style_flags(style)[0]:
                    continue
                cells.append(
                    Cell(self.cell_text(cell, depth + 1), _span(attrs.get("colspan")), _span(attrs.get("rowspan")))
                )
            rows.append(cells)
        before = self.pages[-1][-TITLE_LINES:]
        for line in table_lines(rows):
            self.pages[-1].append(line)
        found = grid_rows(rows)
        if not found:
            return
        scale, currency = table_units(" ".join([*before, table_header_text(rows)]))
        if currency is None:
            currency = next((c for r in found for text, _ in r.cells if (c := currency_of(text))), None)
        page, number = len(self.pages), self.tables_on_page()
        title = table_title(before)
        for found_row in found:
            figures = tuple(RowCell(text, header) for text, header in found_row.cells)
            self.rows.append(
                TableRow(
                    page, number, len(self.rows), found_row.label, figures, found_row.parents, scale, currency, title
                )
            )

    def tables_on_page(self) -> int:
        """The number the next table of the current page takes (tables of a page numbered from 0)."""
        page = len(self.pages)
        return len({r.table for r in self.rows if r.page == page})

    def cell_text(self, cell: LexborNode, depth: int) -> str:
        """The text of one cell (its facts go to the current page)."""
        outer_line, outer_lines = self.line, self.pages[-1]
        self.line, self.pages[-1] = [], []
        self.in_table += 1
        try:
            self.walk(cell, depth)
            self.end_line()
            return " ".join(self.pages[-1])
        finally:
            self.in_table -= 1
            self.line, self.pages[-1] = outer_line, outer_lines


def _rows(table: LexborNode) -> list[LexborNode]:
    """The table's own rows (directly or in thead/tbody/tfoot), not those of nested tables."""
    rows: list[LexborNode] = []
    for child in table.iter(include_text=False):
        if child.tag == "tr":
            rows.append(child)
        elif child.tag in ("thead", "tbody", "tfoot"):
            rows.extend(r for r in child.iter(include_text=False) if r.tag == "tr")
    return rows


def _span(value: str | None) -> int:
    try:
        return max(1, int(value or 1))
    except ValueError:
        return 1
