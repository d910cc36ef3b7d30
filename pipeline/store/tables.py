"""An HTML table as rows of text: cells placed on the table's grid (column and row spans), the pieces
a financial statement spreads over cells ("$", "81,797", ")") joined again, and each figure given the
column header above it. Pure functions over cell texts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.values.captions import CAPTION

# Cells that belong to the figure after them ("$", "(") or before them (")", "%").
_PREFIXES = frozenset({"$", "(", "$(", "($", "€", "£", "¥"})
_SUFFIXES = frozenset({")", "%", ")%", "%)", "pts", "bps"})
# A figure: an amount, a percentage, a dash standing for zero.
_FIGURE = re.compile(r"[$€£¥(\-−–]*\s*(?:\d[\d,]*(?:\.\d+)?|\.\d+)\s*(?:[)%]|pts|bps)*|[—–\-]+")
_YEAR = re.compile(r"(?:19|20)\d\d")
# Characters that print nothing (a cell holding only these is empty).
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
HEADER_SEPARATOR = " "
CELL_SEPARATOR = " | "


@dataclass(frozen=True)
class Cell:
    """One table cell: its text and how many columns and rows it spans."""

    text: str
    colspan: int = 1
    rowspan: int = 1


def is_figure(text: str) -> bool:
    """Whether a cell holds a figure (an amount, a percentage, a dash for zero), not a year alone."""
    return bool(_FIGURE.fullmatch(text)) and not _YEAR.fullmatch(text)


def place(rows: Sequence[Sequence[Cell]]) -> list[list[tuple[int, int, str]]]:
    """Each row's non-empty cells as (first column, columns spanned, text), spans taken into account:
    a cell spanning rows takes its columns in the rows below too."""
    taken: dict[tuple[int, int], bool] = {}
    out: list[list[tuple[int, int, str]]] = []
    for r, row in enumerate(rows):
        column = 0
        placed: list[tuple[int, int, str]] = []
        for cell in row:
            while taken.get((r, column)):
                column += 1
            span = max(1, min(cell.colspan, 1000))
            for extra in range(1, max(1, min(cell.rowspan, 1000))):
                for c in range(column, column + span):
                    taken[(r + extra, c)] = True
            text = " ".join(_INVISIBLE.sub("", cell.text).split())
            if text:
                placed.append((column, span, text))
            column += span
        out.append(placed)
    return out


def join_pieces(cells: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """A row's cells with currency signs and brackets joined to their figures ("$", "81,797" ->
    "$81,797"; "(1,234", ")" -> "(1,234)"); a joined cell keeps the columns of its figure."""
    out: list[tuple[int, int, str]] = []
    prefix = ""
    for column, span, text in cells:
        if text in _PREFIXES:
            prefix += text
            continue
        if text in _SUFFIXES and out and not prefix:
            first, _, before = out[-1]
            out[-1] = (first, column + span - first, before + text)
            continue
        out.append((column, span, prefix + text))
        prefix = ""
    if prefix:
        out.append((cells[-1][0], cells[-1][1], prefix))
    return out


@dataclass(frozen=True)
class GridRow:
    """One row of a table with figures, as the answer step reads it: its label, the label-only rows above it
    that head its block ("Current assets:"), and its figure cells with their column headers."""

    label: str
    cells: tuple[tuple[str, str], ...]
    parents: tuple[str, ...] = ()


def _grid(rows: Sequence[Sequence[Cell]]) -> tuple[list[list[tuple[int, int, str]]], int | None]:
    """The table's placed, joined cells per row, and the index of its first row holding a figure."""
    grid = with_captions([join_pieces(cells) for cells in place(rows)])
    first_data = next(
        (i for i, cells in enumerate(grid) if any(is_figure(text) for _, _, text in cells[1:] or cells)), None
    )
    return grid, first_data


def table_header_text(rows: Sequence[Sequence[Cell]]) -> str:
    """The text of the table's rows above its first figure row (its column headers and any note in them)."""
    grid, first_data = _grid(rows)
    above = grid if first_data is None else grid[:first_data]
    return " ".join(text for cells in above for _, _, text in cells)


def grid_rows(rows: Sequence[Sequence[Cell]]) -> list[GridRow]:
    """The rows of a table that hold figures, each with its label (the text left of its first figure), its
    figure cells with the column header above each, and the label-only rows heading its block; a table
    without figures gives none."""
    grid, first_data = _grid(rows)
    if first_data is None:
        return []
    header_rows = [[c for c in cells if c[0] > 0] for cells in grid[:first_data]]
    header_rows = [cells for cells in header_rows if cells]
    out: list[GridRow] = []
    parents: list[str] = []
    for index, cells in enumerate(grid):
        if not cells or (index < first_data and any(column > 0 for column, _, _ in cells)):
            continue  # a header row
        figures = [(column, span, text) for column, span, text in cells if is_figure(text)]
        labels = [text for column, _, text in cells if not is_figure(text) and (not figures or column < figures[0][0])]
        label = " ".join(labels).strip()
        if not figures:
            # a label-only row heads the rows below it ("Current assets:"); a new one at the same place replaces it
            if label:
                parents = [label] if label.endswith(":") or not parents else [*parents[-1:], label][-2:]
            continue
        cells_out = tuple((text, _header(header_rows, column, span)) for column, span, text in figures)
        out.append(GridRow(label, cells_out, tuple(parents)))
        if label.casefold().startswith("total"):
            parents = []
    return out


def table_lines(rows: Sequence[Sequence[Cell]], repeat_headers: bool = True) -> list[str]:
    """The table as lines of text, one per row with any text.

    The rows above the first row holding a figure are its column headers. With headers, each figure
    of a row below is followed by its column's header in brackets ("Net sales | $81,797 (Three Months
    Ended July 1, 2023)") when `repeat_headers`, else the headers stand once as the first line. A table
    without figures is its rows, cells joined.
    """
    grid, first_data = _grid(rows)
    if first_data is None:
        return text_table_lines(grid) if repeat_headers else [_joined(cells) for cells in grid if cells]
    # A header row has a cell right of the row labels; a row of labels alone ("ASSETS:") heads rows, not
    # columns, and stands as a line of its own.
    header_rows = [[c for c in cells if c[0] > 0] for cells in grid[:first_data]]
    header_rows = [cells for cells in header_rows if cells]
    lines: list[str] = []
    if not header_rows:
        return [CELL_SEPARATOR.join(text for _, _, text in cells) for cells in grid if cells]
    if not repeat_headers:
        lines.extend(CELL_SEPARATOR.join(text for _, _, text in cells) for cells in header_rows)
    for index, cells in enumerate(grid):
        if not cells or (index < first_data and any(column > 0 for column, _, _ in cells)):
            continue
        parts = []
        for column, span, text in cells:
            header = _header(header_rows, column, span) if repeat_headers and is_figure(text) else ""
            parts.append(f"{text} ({header})" if header else text)
        lines.append(CELL_SEPARATOR.join(parts))
    return lines


# One or more captions in brackets (pipeline.values.captions), as a row under a form's fields prints them.
_CAPTION = re.compile(rf"(?:{CAPTION}\s*)+")
# What a text table's header cell and its other cells may hold to be read as columns (not paragraphs laid out).
MAX_HEADER_WORDS = 10
MAX_FIELD_WORDS = 16


def _joined(cells: Sequence[tuple[int, int, str]]) -> str:
    return CELL_SEPARATOR.join(text for _, _, text in cells)


def _short(cells: Sequence[tuple[int, int, str]], words: int) -> bool:
    return all(len(text.split()) <= words and not text.endswith(".") for _, _, text in cells)


def with_captions(grid: list[list[tuple[int, int, str]]]) -> list[list[tuple[int, int, str]]]:
    """A form's rows of values each joined with the row of bracketed captions printed under it: every value
    followed by the caption under its columns ("| Delaware (State or other jurisdiction of incorporation)",
    "10022 (Zip Code)"), so that the value says what it is and a postcode is no figure of a statement."""
    out: list[list[tuple[int, int, str]]] = []
    index = 0
    while index < len(grid):
        cells = grid[index]
        below = grid[index + 1] if index + 1 < len(grid) else []
        if cells and below and not _captions(cells) and _captions(below):
            # the row starts with a cell separator: its first value does not run on into the line before it
            (column, span, text), *rest = _captioned(cells, below, brackets=False)
            out.append([(column, span, f"{CELL_SEPARATOR.lstrip()}{text}"), *rest])
            index += 2
            continue
        out.append(cells)
        index += 1
    return out


def _captions(cells: Sequence[tuple[int, int, str]]) -> bool:
    """Whether every cell of a row is a caption in brackets with a word in it ("(Zip Code)")."""
    return bool(cells) and all(_CAPTION.fullmatch(t) and re.search(r"[^\W\d_]{3}", t) for _, _, t in cells)


def text_table_lines(grid: Sequence[Sequence[tuple[int, int, str]]]) -> list[str]:
    """A table without figures as lines. Under a header row of short cells, with short cells below it, each
    cell right of the first column is followed by its column's header in brackets, as figures are ("KHC
    (Trading Symbol)"); other tables stand as their rows' cells joined."""
    rows = [list(cells) for cells in grid if cells]
    captioned = any(" (" in text for _, _, text in rows[0]) if rows else False
    if len(rows) < 2 or len(rows[0]) < 2 or not _short(rows[0], MAX_HEADER_WORDS) or captioned:
        return [_joined(cells) for cells in rows]
    if not all(_short(r, MAX_FIELD_WORDS) for r in rows[1:]):
        return [_joined(cells) for cells in rows]
    header = rows[0]
    return [
        _joined(header),
        *(_joined(_captioned(cells, header, brackets=True, skip_first=True)) for cells in rows[1:]),
    ]


def _captioned(
    cells: Sequence[tuple[int, int, str]],
    captions: Sequence[tuple[int, int, str]],
    *,
    brackets: bool,
    skip_first: bool = False,
) -> list[tuple[int, int, str]]:
    """`cells`, each followed by the caption over the same columns (bracketed when `brackets`: a header's text;
    a caption already is); the first column's cell left bare when `skip_first`."""
    out = []
    for column, span, text in cells:
        caption = next((c for first, width, c in captions if first < column + span and column < first + width), "")
        if caption and not (skip_first and column == cells[0][0]) and caption != text:
            text = f"{text} ({caption})" if brackets else f"{text} {caption}"
        out.append((column, span, text))
    return out


def _header(header_rows: Sequence[Sequence[tuple[int, int, str]]], column: int, span: int) -> str:
    """The header over columns [column, column + span): each header row's cell overlapping them, top
    to bottom, repeats left out."""
    words: list[str] = []
    for cells in header_rows:
        for first, width, text in cells:
            if first < column + span and column < first + width:
                if not words or words[-1] != text:
                    words.append(text)
                break
    return HEADER_SEPARATOR.join(words)


# A line that names a financial statement or reads as a table's title (in capitals).
_TITLE = re.compile(
    r"\b(?:statements?|balance\s+sheets?|income|operations|cash\s+flows?|financial\s+position|results|summary|"
    r"selected\s+financial\s+data|highlights|schedule)\b",
    re.IGNORECASE,
)
MAX_TITLE_CHARS = 200
MAX_TITLE_WORDS = 16


def table_title(lines: Sequence[str]) -> str:
    """The title of a table from the lines printed just above it: the nearest that names a statement or
    stands in capitals, without a scale note; "" when none does."""
    for line in reversed(lines):
        text = " ".join(line.split())
        letters = [c for c in text if c.isalpha()]
        capitals = len(letters) >= 6 and sum(c.isupper() for c in letters) >= 0.8 * len(letters)
        prose = text.endswith((":", ".")) or len(text.split()) > MAX_TITLE_WORDS
        if " | " not in text and not prose and (capitals or _TITLE.search(text)) and not text.startswith("("):
            return text[:MAX_TITLE_CHARS]
    return ""
