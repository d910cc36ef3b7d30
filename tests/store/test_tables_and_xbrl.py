"""The pure parts of HTML filings: table grids and headers, inline XBRL values, units and cover facts."""

from __future__ import annotations

import pytest

from pipeline.store.tables import Cell, grid_rows, is_figure, join_pieces, place, table_lines
from pipeline.store.xbrl import Context, Cover, cover_attributes, cover_from_facts, fact_value, unit_name


def test_cells_spanning_rows_push_the_cells_below_to_the_right() -> None:
    rows = [[Cell("Region", rowspan=2), Cell("2023"), Cell("2022")], [Cell("10"), Cell("9")]]
    assert place(rows) == [[(0, 1, "Region"), (1, 1, "2023"), (2, 1, "2022")], [(1, 1, "10"), (2, 1, "9")]]


def test_currency_signs_and_brackets_join_their_figures() -> None:
    cells = [(0, 1, "Net loss"), (1, 1, "$"), (2, 1, "(1,234"), (3, 1, ")"), (4, 1, "12.5"), (5, 1, "%")]
    assert join_pieces(cells) == [(0, 1, "Net loss"), (2, 2, "$(1,234)"), (4, 2, "12.5%")]


@pytest.mark.parametrize(
    ("text", "figure"),
    [("1,234", True), ("$(12.5)", True), ("—", True), ("45%", True), ("2023", False), ("Net sales", False)],
)
def test_what_counts_as_a_figure(text: str, figure: bool) -> None:
    assert is_figure(text) is figure


def test_headers_once_when_not_repeated_and_year_rows_are_headers() -> None:
    rows = [
        [Cell("(In millions)"), Cell("2023"), Cell("2022")],
        [Cell("ASSETS:")],
        [Cell("Cash"), Cell("$ 10"), Cell("$ 9")],
    ]
    assert table_lines(rows, repeat_headers=False) == ["2023 | 2022", "ASSETS:", "Cash | $ 10 | $ 9"]
    assert table_lines(rows) == ["ASSETS:", "Cash | $ 10 (2023) | $ 9 (2022)"]


def test_a_forms_values_take_the_captions_printed_under_them() -> None:
    rows = [
        [Cell("Delaware"), Cell("12-3456789")],
        [Cell("(State or other jurisdiction of incorporation)"), Cell("(I.R.S. Employer Identification No.)")],
        [Cell("1 Main Street, Springfield"), Cell("10022")],
        [Cell("(Address of principal executive offices)"), Cell("(Zip Code)")],
    ]
    assert table_lines(rows) == [
        "| Delaware (State or other jurisdiction of incorporation) | 12-3456789 (I.R.S. Employer Identification No.)",
        "| 1 Main Street, Springfield (Address of principal executive offices) | 10022 (Zip Code)",
    ]
    # a postcode with its caption is no figure of a statement
    assert grid_rows(rows) == []


def test_a_text_tables_cells_take_their_column_headers_and_invisible_cells_are_empty() -> None:
    rows = [
        [Cell("Title of each class"), Cell("Trading Symbol(s)"), Cell("\u200b"), Cell("Name of each exchange")],
        [Cell("Common Stock"), Cell("ACM"), Cell("\u200b"), Cell("Nasdaq")],
    ]
    assert table_lines(rows) == [
        "Title of each class | Trading Symbol(s) | Name of each exchange",
        "Common Stock | ACM (Trading Symbol(s)) | Nasdaq (Name of each exchange)",
    ]
    # paragraphs laid out in a table are left as they are
    prose = [[Cell("Note"), Cell("Text")], [Cell("1"), Cell("A long paragraph. " * 10)]]
    assert table_lines(prose) == ["Note | Text", "1 | " + ("A long paragraph. " * 10).strip()]


@pytest.mark.parametrize(
    ("shown", "fmt", "scale", "sign", "value"),
    [
        ("81,797", "ixt:num-dot-decimal", "6", None, "81797000000"),
        ("1.26", "ixt:numdotdecimal", None, None, "1.26"),
        ("265", "ixt:num-dot-decimal", "6", "-", "-265000000"),
        ("—", "ixt:fixed-zero", "6", None, "0"),
        ("three", "ixt-sec:numwordsen", "0", None, "3"),
        ("no", "ixt-sec:numwordsen", None, None, "0"),
        ("1.234,5", "ixt:num-comma-decimal", "3", None, "1234500"),
        ("67", None, "-2", None, "0.67"),
        ("", "ixt:num-dot-decimal", "6", None, None),
        ("many", "ixt-sec:numwordsen", None, None, None),
    ],
)
def test_fact_values_follow_format_scale_and_sign(
    shown: str, fmt: str | None, scale: str | None, sign: str | None, value: str | None
) -> None:
    assert fact_value(shown, fmt, scale, sign) == value


def test_units_read_as_text() -> None:
    assert unit_name(("iso4217:USD",)) == "USD"
    assert unit_name(("iso4217:USD",), ("xbrli:shares",)) == "USD/shares"


def test_the_cover_comes_from_dei_facts_and_the_form_facts_context() -> None:
    facts = {
        "dei:DocumentType": ("10-K", "c-1"),
        "dei:EntityRegistrantName": ("  COCA COLA CO ", "c-1"),
        "dei:TradingSymbol": ("KO", "c-1"),
        "dei:DocumentFiscalYearFocus": ("2023", "c-1"),
        "dei:DocumentFiscalPeriodFocus": ("FY", "c-1"),
    }
    cover = cover_from_facts(facts, {"c-1": Context("2023-01-01", "2023-12-31")})
    assert cover == Cover("COCA COLA CO", "10-K", "2023-01-01", "2023-12-31", "2023", "FY", ("KO",))
    assert cover_attributes(cover) == {"form": "10-K", "period_end": "2023-12-31", "fiscal_year": "FY2023"}


def test_without_a_context_the_period_end_date_fact_gives_the_period() -> None:
    facts = {"dei:DocumentType": ("10-Q", "c-9"), "dei:DocumentPeriodEndDate": ("June 30, 2023", "c-9")}
    assert cover_from_facts(facts, {}).period_end == "2023-06-30"
    assert cover_from_facts({"dei:DocumentPeriodEndDate": ("Sometime", "c")}, {}).period_end is None
