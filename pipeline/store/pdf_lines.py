"""The words of a PDF page as lines (pure functions over words with boxes): words grouped by baseline, cut
into phrases where a column gap stands between them, and each line's label (the words left of its
figures) and figure cells ("$" joined to "60,584", "(1,234" to ")"; footnote markers dropped).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

# A figure as statements print it: "81,797", "(1,234)", "-12.5", "12.5%", "1.27", "—" (zero).
_NUMBER = r"\d{1,3}(?:[,.\u00a0\u202f]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?|[.,]\d+"
_FIGURE = re.compile(rf"[(]?[-−–]?[$€£¥]?\s?[(]?(?:{_NUMBER})\s?[)]?\s?%?[)]?|[—–−-]{{1,3}}")
YEAR = re.compile(r"(?:19|20)\d\d")
_SIGNS = frozenset({"$", "€", "£", "¥", "US$", "(", "$(", "($"})
_SUFFIXES = frozenset({")", "%", ")%", "%)"})
# A footnote marker: "(1)", "(a)", "*", "†", superscript digits; stripped from labels, never a figure.
MARKER = re.compile(r"\((?:\d{1,2}|[a-z]|[ivx]{1,4})\)|\*{1,3}|[†‡§]+|[¹²³⁴⁵⁶⁷⁸⁹⁰]+")
TRAILING_MARKERS = re.compile(rf"(?:\s*(?:{MARKER.pattern}))+$")
MARKER_TEXT = re.compile(rf"\d{{1,2}}|[a-z]|{MARKER.pattern}")
_FIGURES_PER_TABLE_PAGE = 6


@dataclass(frozen=True)
class Word:
    """A word on a page: its text and box in PDF units (y grows upwards; `bottom` and `top` from the font's
    bounds, so that words of one line share them whatever their glyphs)."""

    text: str
    x0: float
    x1: float
    bottom: float
    top: float
    size: float = field(init=False, compare=False, repr=False)  # top - bottom, read many times

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", self.top - self.bottom)


@dataclass
class Cell:
    text: str
    x0: float  # with its currency sign
    fx0: float  # the figure alone
    x1: float
    figure: bool


@dataclass
class Line:
    words: list[Word]
    bottom: float
    top: float
    phrases: list[list[Word]] = field(default_factory=list)
    label: str = ""
    label_x0: float = 0.0
    label_x1: float = 0.0
    cells: list[Cell] = field(default_factory=list)

    @property
    def x0(self) -> float:
        return self.words[0].x0

    @property
    def x1(self) -> float:
        return max(w.x1 for w in self.words)

    @property
    def height(self) -> float:
        return self.top - self.bottom

    @property
    def is_data(self) -> bool:
        """Whether the line holds a figure that is not a year (a row of a table, not its header)."""
        return any(c.figure and not YEAR.fullmatch(c.text) for c in self.cells)

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


def is_figure(text: str) -> bool:
    """Whether `text` is a figure as a table prints it ("81,797", "(1,234)", "12.5%", "$1.27", "—")."""
    return bool(_FIGURE.fullmatch(text))


def may_hold_tables(text: str) -> bool:
    """Whether a page's text has enough figures standing apart to hold a table: a cheap test that spares
    prose pages the layout reading."""
    count = 0
    for line in text.splitlines():
        figures = sum(1 for token in line.split() if _FIGURE.fullmatch(token) and not YEAR.fullmatch(token))
        if figures >= 2:
            count += figures
            if count >= _FIGURES_PER_TABLE_PAGE:
                return True
    return False


def page_lines(words: Sequence[Word]) -> list[Line]:
    """Words grouped into lines (top to bottom) by the overlap of their heights, each line's words left to
    right and cut into phrases and cells."""
    lines: list[Line] = []
    for word in sorted(words, key=lambda w: (-w.top, w.x0)):
        if word.size <= 0 or not word.text.strip():
            continue
        line = lines[-1] if lines else None
        if line is not None:
            overlap = min(line.top, word.top) - max(line.bottom, word.bottom)
            if overlap >= 0.5 * min(line.height, word.size):
                line.words.append(word)
                continue
        lines.append(Line([word], word.bottom, word.top))
    for line in lines:
        line.words.sort(key=lambda w: w.x0)
        sizes = sorted(w.size for w in line.words)
        main = sizes[len(sizes) // 2]
        bottoms = sorted(w.bottom for w in line.words if w.size >= 0.75 * main)
        baseline = bottoms[len(bottoms) // 2]
        # Footnote markers: a smaller font set above the line's baseline, or marks ("2", "a") in a smaller
        # font that a line took in from between two lines.
        line.words = [
            w
            for w in line.words
            if not (w.size < 0.75 * main and (w.bottom > baseline + 0.15 * main or MARKER_TEXT.fullmatch(w.text)))
        ]
        if not line.words:
            continue
        line.bottom = min(w.bottom for w in line.words)
        line.top = max(w.top for w in line.words)
        _split(line, main)
    sizes = sorted(w.size for line in lines for w in line.words)
    body = sizes[len(sizes) // 2] if sizes else 0.0
    # A line of footnote markers alone, set small between two lines of a row ("2" over two figures).
    return [
        line
        for line in lines
        if line.words and not all(w.size < 0.75 * body and MARKER_TEXT.fullmatch(w.text) for w in line.words)
    ]


def _split(line: Line, size: float) -> None:
    """The line's phrases (words closer than a column gap) and, from the first phrase that starts with a
    figure or a currency sign, its cells; what stands left of them is the label."""
    gap = 0.8 * size
    phrases: list[list[Word]] = []
    for word in line.words:
        if phrases and word.x0 - phrases[-1][-1].x1 < gap:
            phrases[-1].append(word)
        else:
            phrases.append([word])
    line.phrases = phrases
    label: list[Word] = []
    cells: list[Cell] = []
    sign = ""
    sign_x0 = 0.0
    for phrase in phrases:
        if not cells and not sign and not all(_cell_word(w.text) for w in phrase):
            label.extend(phrase)  # words, or a label that starts with a figure ("5.25% Notes due 2030")
            continue
        for position, word in enumerate(phrase):
            text = word.text
            if cells and position > 0 and _joins(cells[-1], text):
                cells[-1].text += text if text in _SUFFIXES else " " + text
                cells[-1].x1 = word.x1
            elif cells and position > 0 and MARKER.fullmatch(text):
                continue  # a footnote marker after a figure
            elif text in _SIGNS:
                sign, sign_x0 = sign + text, (sign_x0 if sign else word.x0)
            else:
                bare = TRAILING_MARKERS.sub("", text)
                text = sign + (bare if bare and is_figure(bare) else text)
                cells.append(Cell(text, sign_x0 if sign else word.x0, word.x0, word.x1, is_figure(text)))
                sign = ""
    line.cells = [c for c in cells if c.text.strip()]
    if label:
        line.label = TRAILING_MARKERS.sub("", " ".join(w.text for w in label)).strip()
        line.label_x0 = label[0].x0
        line.label_x1 = label[-1].x1


def _cell_word(text: str) -> bool:
    return is_figure(text) or text in _SIGNS or text in _SUFFIXES or MARKER.fullmatch(text) is not None


def _joins(cell: Cell, text: str) -> bool:
    """Whether a word standing close after a cell belongs to it: a closing bracket or percent sign, or the
    next group of a figure printed with spaces between thousands ("1 234")."""
    return text in _SUFFIXES or (bool(re.fullmatch(r"\d{3}(?:[.,]\d+)?", text)) and bool(re.search(r"\d$", cell.text)))
