"""Table rows as the HTML reader finds them (pipeline.store.tables.grid_rows, pipeline.store.html): labels,
figure cells under their column headers, the headings above a block, and the table's title, scale and
currency; stored in the catalog and read back."""

from __future__ import annotations

from pathlib import Path

from pipeline.store.catalog import Catalog, CatalogWriter
from pipeline.store.html import parse_html
from pipeline.store.tables import Cell, grid_rows, table_title
from pipeline.types import Document, RowCell, TableRow

STATEMENT = b"""<html><body>
<p>ACME INC.</p>
<p>CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS (Unaudited)</p>
<p>(In millions, except per share amounts)</p>
<table>
<tr><td></td><td colspan="2">Three Months Ended</td></tr>
<tr><td></td><td>July 1, 2023</td><td>June 25, 2022</td></tr>
<tr><td>Net sales:</td><td></td><td></td></tr>
<tr><td>Products</td><td>$</td><td>60,584</td><td>$</td><td>63,355</td></tr>
<tr><td>Total net sales</td><td>81,797</td><td>82,959</td></tr>
<tr><td>Other income/(expense), net</td><td>(265</td><td>)</td><td>(10</td><td>)</td></tr>
</table>
</body></html>"""


def test_grid_rows_give_labels_cells_headers_and_parents() -> None:
    rows = [
        [Cell(""), Cell("2023", colspan=2), Cell("2022")],
        [Cell("Current assets:")],
        [Cell("Cash"), Cell("$"), Cell("1,000"), Cell("900")],
        [Cell("Total current assets"), Cell("2,000"), Cell("1,800")],
    ]
    found = grid_rows(rows)
    assert [r.label for r in found] == ["Cash", "Total current assets"]
    assert found[0].parents == ("Current assets:",)
    assert found[0].cells[0] == ("$1,000", "2023")


def test_a_table_without_figures_has_no_rows() -> None:
    assert grid_rows([[Cell("Name"), Cell("Role")], [Cell("Ann"), Cell("CEO")]]) == []


def test_html_statement_rows_carry_title_scale_and_currency() -> None:
    document = parse_html(STATEMENT)
    rows = {r.label: r for r in document.rows}
    total = rows["Total net sales"]
    assert total.scale == "million" and total.currency == "USD"
    assert total.title == "CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS (Unaudited)"
    assert total.cells[0] == RowCell("81,797", "Three Months Ended July 1, 2023")
    assert rows["Products"].parents == ("Net sales:",) and rows["Products"].cells[0].text == "$60,584"
    assert rows["Other income/(expense), net"].cells[0].text == "(265)"
    assert [r.ordinal for r in document.rows] == list(range(len(document.rows)))


def test_a_title_is_the_nearest_statement_line_above_the_table() -> None:
    assert table_title(["ACME INC.", "CONSOLIDATED BALANCE SHEETS", "(In millions)"]) == "CONSOLIDATED BALANCE SHEETS"
    assert table_title(["The following table shows our results:"]) == ""


def test_rows_round_trip_through_the_catalog(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    writer = CatalogWriter(path)
    document = Document("d1", "a.html", "a.html", "A", "", "report", 2)
    writer.add_document(document, "metadata", "0" * 64, 0, 0)
    rows = [
        TableRow(1, 0, 0, "Revenue", (RowCell("$5", "2023"),), ("Income:",), "million", "USD", "STATEMENT"),
        TableRow(2, 0, 1, "Assets", (RowCell("7", "2023"), RowCell("6", "2022")), (), None, None, ""),
    ]
    writer.add_rows("d1", rows)
    writer.close()
    catalog = Catalog(path)
    assert catalog.page_rows("d1") == rows
    assert catalog.page_rows("d1", [2]) == rows[1:]
    assert catalog.page_rows("d1", []) == []
