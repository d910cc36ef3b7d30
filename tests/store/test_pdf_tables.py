"""Tables of PDF pages as rows (pipeline.store.pdf_tables): a statement made here, a real 10-Q page, odd words."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fpdf import FPDF
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.store.pdf_lines import Word, may_hold_tables
from pipeline.store.pdf_tables import MAX_COLUMNS, MAX_WORDS, page_rows
from pipeline.store.reading import read_source
from pipeline.types import RowCell, TableRow
from tests.support.paths import ROOT

SEC_DOCS = ROOT.parent / "shared" / "data" / "sec-10q" / "docs"
# Right edges of the figure columns, the note column's centre and where labels start (points).
COLUMNS = (300.0, 370.0, 460.0, 530.0)
NOTE = 190.0
LEFT = 40.0


def _statement(path: Path) -> Path:
    """An interim statement as an annual report prints it: title, a note of units, a two-level header
    (periods over dates), a note column, parents, a wrapped label, brackets, dashes, a blank cell and a
    footnote marker set as a superscript."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()

    def put(text: str, x: float, y: float, size: float = 9, align: str = "L", style: str = "") -> None:
        pdf.set_font("Helvetica", style, size)
        width = pdf.get_string_width(text)
        left = {"L": x, "R": x - width, "C": x - width / 2}[align]
        pdf.text(left, y, text)

    put("Example Holdings plc", LEFT, 60, 11, style="B")
    put("CONSOLIDATED STATEMENT OF PROFIT OR LOSS", LEFT, 76, 11, style="B")
    put("(in thousands of euros)", LEFT, 90)
    put("Six months ended", (COLUMNS[0] + COLUMNS[1]) / 2 - 15, 112, align="C")
    put("Year ended", (COLUMNS[2] + COLUMNS[3]) / 2 - 15, 112, align="C")
    put("Note", NOTE, 124, align="C")
    for right, date in zip(COLUMNS, ("30 June 2023", "30 June 2022", "31 Dec 2022", "31 Dec 2021"), strict=True):
        put(date, right, 124, align="R")
    y = 142.0

    def row(label: str, figures: tuple[str, ...] = (), note: str = "", indent: float = 0, marker: str = "") -> None:
        nonlocal y
        put(label, LEFT + indent, y)
        if marker:
            put(marker, LEFT + indent + pdf.get_string_width(label) + 1, y - 3, size=5)
        if note:
            put(note, NOTE, y, align="C")
        for right, figure in zip(COLUMNS, figures, strict=False):
            if figure:
                put(figure, right + (4 if figure.endswith(")") else 0), y, align="R")
        y += 13

    row("Revenue:")
    row("Product sales", ("1,234", "1,100", "2,345", "2,001"), note="5", indent=8)
    row("Services", ("567", "498", "1,020", "-"), note="6", indent=8)
    row("Total revenue", ("1,801", "1,598", "3,365", "2,001"), indent=16)
    row("Impairment of goodwill", ("(45)", "", "(45)", ""))
    row("Other operating income of")
    row("discontinued operations", ("(120)", "(95)", "(210)", "(80)"), indent=8)
    row("Net profit", ("1,636", "1,503", "3,110", "1,921"), marker="1")
    y += 20
    put("1 Attributable to the owners of the parent; the Group has no non-controlling interests.", LEFT, y, 7)
    pdf.output(str(path))
    return path


H1, H2 = "Six months ended", "Year ended"
HEADERS = (f"{H1} 30 June 2023", f"{H1} 30 June 2022", f"{H2} 31 Dec 2022", f"{H2} 31 Dec 2021")
TITLE = "CONSOLIDATED STATEMENT OF PROFIT OR LOSS"


def _row(ordinal: int, label: str, figures: tuple[str, ...], parents: tuple[str, ...] = ()) -> TableRow:
    cells = tuple(RowCell(f, h) for f, h in zip(figures, HEADERS, strict=True) if f)
    return TableRow(1, 0, ordinal, label, cells, parents, "thousand", "EUR", TITLE)


def test_a_statement_reads_as_rows_with_headers_parents_and_units(tmp_path: Path) -> None:
    source = read_source(_statement(tmp_path / "statement.pdf"), "statement.pdf")
    assert source.rows == (
        _row(0, "Product sales", ("1,234", "1,100", "2,345", "2,001"), ("Revenue:",)),
        _row(1, "Services", ("567", "498", "1,020", "-"), ("Revenue:",)),
        _row(2, "Total revenue", ("1,801", "1,598", "3,365", "2,001"), ("Revenue:",)),
        _row(3, "Impairment of goodwill", ("(45)", "", "(45)", "")),
        _row(4, "Other operating income of discontinued operations", ("(120)", "(95)", "(210)", "(80)")),
        _row(5, "Net profit", ("1,636", "1,503", "3,110", "1,921")),
    )
    # The page's text is what PDFium gives, tables or not.
    assert "Other operating income of" in source.pages[0]


def test_rows_of_a_document_are_numbered_across_its_pages(tmp_path: Path) -> None:
    first = _statement(tmp_path / "a.pdf")
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.append(str(first))
    writer.append(str(first))
    writer.write(str(tmp_path / "two.pdf"))
    rows = read_source(tmp_path / "two.pdf", "two.pdf").rows
    assert [(r.page, r.table, r.ordinal) for r in rows] == [(1, 0, i) for i in range(6)] + [
        (2, 0, i) for i in range(6, 12)
    ]


@pytest.mark.skipif(not SEC_DOCS.is_dir(), reason=f"the SEC 10-Q PDFs are not at {SEC_DOCS}")
def test_a_real_10q_statement_of_operations() -> None:
    source = read_source(SEC_DOCS / "2023 Q3 AAPL.pdf", "2023 Q3 AAPL.pdf")
    page = [r for r in source.rows if r.page == 4]
    by_label = {r.label: r for r in page}
    total = by_label["Total net sales"]
    assert total.cells[0] == RowCell("81,797", "Three Months Ended July 1, 2023")
    assert total.cells[3] == RowCell("304,182", "Nine Months Ended June 25, 2022")
    assert total.parents == ("Net sales:",)
    assert (total.scale, total.currency) == ("million", "USD")
    assert total.title == "CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS (Unaudited)"
    assert by_label["Other income/(expense), net"].cells[0].text == "(265)"
    assert by_label["Net income"].cells[0] == RowCell("$19,881", "Three Months Ended July 1, 2023")
    assert by_label["Gross margin"].parents == ()
    assert [r.ordinal for r in source.rows] == list(range(len(source.rows)))


def test_a_10q_whose_label_wraps_onto_the_line_of_its_figures() -> None:
    if not SEC_DOCS.is_dir():
        pytest.skip(f"the SEC 10-Q PDFs are not at {SEC_DOCS}")
    rows = read_source(SEC_DOCS / "2023 Q3 AAPL.pdf", "2023 Q3 AAPL.pdf").rows
    labels = {r.label for r in rows}
    assert "Common stock withheld related to net share settlement of equity awards" in labels


def test_prose_pages_are_passed_over_by_the_cheap_test() -> None:
    prose = "Revenue grew 12% to $81.8 billion in the quarter.\nWe expect growth of 5% in 2024."
    assert not may_hold_tables(prose)
    assert may_hold_tables("Revenue 1,234 1,100\nCost 567 498\nProfit 667 602")


def _words(line: float, *texts: tuple[str, float]) -> list[Word]:
    return [Word(text, x, x + 6 * len(text), 700 - 14 * line, 709 - 14 * line) for text, x in texts]


def test_a_year_in_a_header_is_a_header_and_a_label_ending_in_a_year_is_a_label() -> None:
    words = [
        *_words(0, ("2023", 300), ("2022", 380)),
        *_words(1, ("Notes", 40), ("due", 76), ("2030", 100), ("750", 306), ("750", 386)),
        *_words(2, ("Total", 40), ("debt", 76), ("1,500", 294), ("1,250", 374)),
    ]
    rows = page_rows(words, 3)
    assert [(r.label, [(c.text, c.header) for c in r.cells]) for r in rows] == [
        ("Notes due 2030", [("750", "2023"), ("750", "2022")]),
        ("Total debt", [("1,500", "2023"), ("1,250", "2022")]),
    ]


def test_a_page_past_the_limits_gives_no_rows() -> None:
    too_many = [Word("1,234", 10.0 * (i % 50), 10.0 * (i % 50) + 8, i, i + 9) for i in range(MAX_WORDS + 1)]
    assert page_rows(too_many, 1) == []
    wide = [*_words(0, ("Label", 0)), *(w for i in range(MAX_COLUMNS + 1) for w in _words(0, ("9", 60 + 20 * i)))]
    wide += [*_words(1, ("Other", 0)), *(w for i in range(MAX_COLUMNS + 1) for w in _words(1, ("8", 60 + 20 * i)))]
    assert page_rows(wide, 1) == []


_TEXTS = st.sampled_from(
    ["Revenue", "Total", "net", "sales:", "$", "(", ")", "%", "1,234", "(56)", "—", "-", "2023", "July", "1,", "(1)",
     "*", "Note", "5", "12.5%", "$(3)", "in", "millions", "€m", "", " ", "\u00a0", "0", "1 234"]
)  # fmt: skip
_WORD = st.builds(
    lambda text, x, w, y, h: Word(text, x, x + w, y, y + h),
    _TEXTS,
    st.floats(-50, 700, allow_nan=False),
    st.floats(0, 80, allow_nan=False),
    st.floats(-20, 850, allow_nan=False),
    st.floats(-2, 20, allow_nan=False),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_WORD, max_size=120), st.integers(1, 500), st.integers(0, 10_000))
def test_odd_words_never_raise_and_rows_come_from_them(words: list[Word], page: int, first: int) -> None:
    rows = page_rows(words, page, first)
    texts = " ".join(w.text for w in words)
    assert [r.ordinal for r in rows] == list(range(first, first + len(rows)))
    for row in rows:
        assert row.page == page and row.cells and row.label
        for cell in row.cells:
            # A cell joins words ("$" "1,234" ")") and nothing else: each piece between signs is a word's.
            assert all(part in texts for part in re.split(r"[\s$()%]+", cell.text) if part)
    # At most one row per line of words: rows never multiply what the page holds.
    assert len(rows) <= len({(w.bottom, w.top) for w in words})
