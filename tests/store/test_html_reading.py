"""HTML filings: printed pages from page-break styles (screenfuls without them), tables as rows with their
column headers, hidden XBRL blocks left out, inline XBRL facts kept per page, the cover page's title, summary
and period; and the same through read_source and an index build."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.errors import InputFileError
from pipeline.store import html as html_reader
from pipeline.store import open_store
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder
from pipeline.store.html import parse_html, screenfuls
from pipeline.store.reading import read_source

# A filing's header as EDGAR writes it: hidden, with the contexts, units and hidden cover facts.
HEADER = """
<div style="display:none"><ix:header>
  <ix:hidden>
    <ix:nonNumeric name="dei:DocumentFiscalYearFocus" contextRef="c-1">2023</ix:nonNumeric>
    <ix:nonNumeric name="dei:DocumentFiscalPeriodFocus" contextRef="c-1">Q3</ix:nonNumeric>
    <ix:nonFraction name="us-gaap:HiddenFigure" contextRef="c-1" unitRef="usd" scale="6">999</ix:nonFraction>
  </ix:hidden>
  <ix:resources>
    <xbrli:context id="c-1"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier></xbrli:entity>
      <xbrli:period><xbrli:startDate>2022-09-25</xbrli:startDate><xbrli:endDate>2023-07-01</xbrli:endDate>
      </xbrli:period></xbrli:context>
    <xbrli:context id="c-2"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier></xbrli:entity>
      <xbrli:period><xbrli:startDate>2023-04-02</xbrli:startDate><xbrli:endDate>2023-07-01</xbrli:endDate>
      </xbrli:period></xbrli:context>
    <xbrli:context id="c-3"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier>
      <xbrli:segment><xbrldi:explicitMember dimension="srt:ProductOrServiceAxis">aapl:IPhoneMember
      </xbrldi:explicitMember>
      </xbrli:segment></xbrli:entity>
      <xbrli:period><xbrli:instant>2023-07-01</xbrli:instant></xbrli:period></xbrli:context>
    <xbrli:unit id="usd"><xbrli:measure>iso4217:USD</xbrli:measure></xbrli:unit>
    <xbrli:unit id="usdPerShare"><xbrli:divide><xbrli:unitNumerator><xbrli:measure>iso4217:USD</xbrli:measure>
      </xbrli:unitNumerator><xbrli:unitDenominator><xbrli:measure>xbrli:shares</xbrli:measure>
      </xbrli:unitDenominator></xbrli:divide></xbrli:unit>
  </ix:resources>
</ix:header></div>
"""

COVER = """
<div style="text-align:center">FORM <ix:nonNumeric name="dei:DocumentType" contextRef="c-1">10-Q</ix:nonNumeric></div>
<div>For the quarterly period ended <ix:nonNumeric name="dei:DocumentPeriodEndDate" contextRef="c-1"
  format="ixt:date-monthname-day-year-en">July 1, 2023</ix:nonNumeric></div>
<div><ix:nonNumeric name="dei:EntityRegistrantName" contextRef="c-1">Acme Widgets Inc.</ix:nonNumeric></div>
<div>Trading symbol <ix:nonNumeric name="dei:TradingSymbol" contextRef="c-1">ACME</ix:nonNumeric></div>
"""

STATEMENT = """
<div>CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS</div>
<table>
  <tr><td></td><td colspan="3">Three Months Ended</td><td colspan="3">Nine Months Ended</td></tr>
  <tr><td></td><td colspan="3">July 1, 2023</td><td colspan="3">July 1, 2023</td></tr>
  <tr><td>Net sales</td>
    <td>$</td><td><ix:nonFraction name="us-gaap:Revenues" contextRef="c-2" unitRef="usd" scale="6"
      decimals="-6" format="ixt:num-dot-decimal">81,797</ix:nonFraction></td><td></td>
    <td>$</td><td><ix:nonFraction name="us-gaap:Revenues" contextRef="c-1" unitRef="usd" scale="6"
      decimals="-6" format="ixt:num-dot-decimal">298,085</ix:nonFraction></td><td></td></tr>
  <tr><td>Other income (expense)</td>
    <td></td><td>(<ix:nonFraction name="us-gaap:OtherIncome" contextRef="c-2" unitRef="usd" scale="6"
      sign="-" format="ixt:num-dot-decimal">265</ix:nonFraction></td><td>)</td>
    <td></td><td><ix:nonFraction name="us-gaap:OtherIncome" contextRef="c-1" unitRef="usd" scale="6"
      format="ixt:fixed-zero">—</ix:nonFraction></td><td></td></tr>
  <tr><td>Diluted earnings per share</td>
    <td>$</td><td><ix:nonFraction name="us-gaap:EarningsPerShareDiluted" contextRef="c-2" unitRef="usdPerShare"
      decimals="2" format="ixt:num-dot-decimal">1.26</ix:nonFraction></td><td></td><td></td><td></td><td></td></tr>
</table>
"""


def _filing(*pages: str, header: str = HEADER) -> bytes:
    body = '<hr style="page-break-after:always"/>'.join(pages)
    head = "<?xml version='1.0' encoding='ASCII'?><html><head><title>acme-20230701</title></head>"
    return f"{head}<body>{header}{body}</body></html>".encode()


# ---- page breaks ----------------------------------------------------------------------------


def test_page_break_styles_mark_the_printed_pages() -> None:
    document = parse_html(
        b"<html><body><p>one</p><hr style='page-break-after:always'>"
        b"<div style='PAGE-BREAK-BEFORE: always'>two</div>"
        b"<p>still two</p><div style='break-before: page'>three</div><p style='break-after:page'>three too</p>"
        b"<p>four</p></body></html>"
    )
    assert document.pages == ("one", "two\nstill two", "three\nthree too", "four")
    assert document.paged_by == "page breaks"


def test_breaks_in_a_row_and_trailing_breaks_make_no_empty_page() -> None:
    document = parse_html(
        b"<body><p>one</p><hr style='page-break-after:always'><div style='page-break-before:always'></div>"
        b"<div style='page-break-before:always'>two</div><hr style='page-break-after:always'></body>"
    )
    assert document.pages == ("one", "two")


def test_a_file_without_page_breaks_is_paged_by_screenfuls_and_says_so() -> None:
    paragraphs = "".join(f"<p>Paragraph {i} {'word ' * 60}</p>" for i in range(40))
    document = parse_html(f"<body>{paragraphs}</body>".encode())
    assert document.paged_by == "screen" and document.attributes["paged_by"] == "screen"
    assert len(document.pages) > 1
    assert all(len(page) <= html_reader.SCREEN_CHARS for page in document.pages)
    assert all(page.startswith("Paragraph") for page in document.pages)  # cut at line ends
    assert " ".join(" ".join(document.pages).split()) == " ".join(
        " ".join(f"Paragraph {i} {'word ' * 60}" for i in range(40)).split()
    )


def test_a_short_file_without_breaks_is_one_page() -> None:
    document = parse_html(b"<body><p>Just a note.</p></body>")
    assert document.pages == ("Just a note.",) and document.paged_by == "page breaks"


def test_screenfuls_cut_a_line_longer_than_a_screen_at_spaces() -> None:
    pages = screenfuls("word " * 1000, 300)
    assert all(len(p) <= 300 for p in pages) and " ".join(pages).split() == ["word"] * 1000


# ---- hidden content -------------------------------------------------------------------------


def test_the_hidden_xbrl_header_and_hidden_elements_are_left_out() -> None:
    document = parse_html(_filing("<p>Visible text</p><div style='display: none'>secret words</div>"))
    text = "\n".join(document.pages)
    assert text == "Visible text"
    assert "2022-09-25" not in text and "999" not in text and "secret" not in text
    assert all(f.concept != "us-gaap:HiddenFigure" for f in document.facts)  # not printed on any page


def test_scripts_styles_and_the_sgml_wrapper_are_no_text() -> None:
    document = parse_html(
        b"<DOCUMENT>\n<TYPE>10-Q\n<SEQUENCE>1\n<FILENAME>x10q.htm\n<DESCRIPTION>10-Q\n<TEXT>\n"
        b"<HTML><HEAD><TITLE>10-Q</TITLE><style>p {color: red}</style></HEAD><BODY>"
        b"<script>var x = 1;</script><P>Quarterly report</P></BODY></HTML>\n</TEXT>\n</DOCUMENT>"
    )
    assert document.pages == ("Quarterly report",)


def test_a_file_that_is_no_utf8_is_read_as_windows_1252() -> None:
    document = parse_html("<body><p>Café revenue – €12 million</p></body>".encode("cp1252"))
    assert document.pages == ("Café revenue – €12 million",)


# ---- tables ---------------------------------------------------------------------------------


def test_tables_are_rows_with_their_column_headers() -> None:
    document = parse_html(_filing(STATEMENT))
    lines = document.pages[0].splitlines()
    assert lines[0] == "CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS"
    assert lines[1] == (
        "Net sales | $81,797 (Three Months Ended July 1, 2023) | $298,085 (Nine Months Ended July 1, 2023)"
    )
    assert lines[2] == (
        "Other income (expense) | (265) (Three Months Ended July 1, 2023) | — (Nine Months Ended July 1, 2023)"
    )
    assert lines[3] == "Diluted earnings per share | $1.26 (Three Months Ended July 1, 2023)"


def test_a_table_without_figures_is_its_rows() -> None:
    document = parse_html(
        b"<body><table><tr><td>Item 1.</td><td>Business</td></tr>"
        b"<tr><td>Item 1A.</td><td>Risk Factors</td></tr></table></body>"
    )
    assert document.pages == ("Item 1. | Business\nItem 1A. | Risk Factors",)


# ---- inline XBRL facts ----------------------------------------------------------------------


def test_inline_xbrl_facts_are_kept_with_their_page_value_unit_and_period() -> None:
    document = parse_html(_filing("<p>Cover</p>", STATEMENT))
    facts = {(f.concept, f.period_start): f for f in document.facts}
    quarter = facts[("us-gaap:Revenues", "2023-04-02")]
    assert (quarter.page, quarter.value, quarter.shown, quarter.scale, quarter.unit) == (
        2,
        "81797000000",
        "81,797",
        6,
        "USD",
    )
    assert (quarter.period_end, quarter.dimensions, quarter.decimals) == ("2023-07-01", (), "-6")
    assert facts[("us-gaap:OtherIncome", "2023-04-02")].value == "-265000000"  # sign="-"
    assert facts[("us-gaap:OtherIncome", "2022-09-25")].value == "0"  # ixt:fixed-zero
    assert facts[("us-gaap:EarningsPerShareDiluted", "2023-04-02")].unit == "USD/shares"


def test_a_fact_in_a_dimensional_context_carries_its_dimensions() -> None:
    document = parse_html(
        _filing(
            '<p>iPhone <ix:nonFraction name="us-gaap:Revenues" contextRef="c-3" unitRef="usd" scale="9">'
            "39.7</ix:nonFraction></p>"
        )
    )
    (fact,) = document.facts
    assert fact.dimensions == ("srt:ProductOrServiceAxis=aapl:IPhoneMember",)
    assert (fact.value, fact.period_start, fact.period_end) == ("39700000000", None, "2023-07-01")


# ---- cover page ------------------------------------------------------------------------------


def test_the_cover_page_gives_title_summary_and_period_attributes() -> None:
    document = parse_html(_filing(COVER, STATEMENT))
    assert document.title == "Acme Widgets Inc. Form 10-Q for the quarterly period ended July 1, 2023"
    assert document.summary == (
        "Quarterly report on Form 10-Q of Acme Widgets Inc. (ACME) for the period ended July 1, 2023, "
        "fiscal year 2023 Q3."
    )
    assert document.attributes == {
        "form": "10-Q",
        "period_end": "2023-07-01",
        "fiscal_year": "FY2023",
        "fiscal_period": "2023 Q3",
    }


def test_without_cover_facts_the_html_title_stands() -> None:
    document = parse_html(b"<html><head><title>Board minutes, 3 May</title></head><body><p>x</p></body></html>")
    assert document.title == "Board minutes, 3 May" and document.summary is None and document.attributes == {}


# ---- through read_source and a build ---------------------------------------------------------


def test_read_source_reads_html_with_its_cover_and_facts(tmp_path: Path) -> None:
    path = tmp_path / "acme.html"
    path.write_bytes(_filing(COVER, STATEMENT))
    source = read_source(path, "acme.html")
    assert source.own.title == "Acme Widgets Inc. Form 10-Q for the quarterly period ended July 1, 2023"
    assert source.own.type == "10-Q" and dict(source.own.attributes)["period_end"] == "2023-07-01"
    assert len(source.pages) == 2 and len(source.facts) == 5 and source.paged_by == "page breaks"


def test_an_oversized_html_file_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.htm"
    path.write_bytes(b"<p>" + b"x" * 200 + b"</p>")
    monkeypatch.setattr(html_reader, "MAX_BYTES", 100)
    with pytest.raises(InputFileError, match=r"big\.htm: HTML file of 207 bytes exceeds 100"):
        read_source(path, "big.htm")


def test_an_index_build_keeps_pages_titles_and_facts_per_page(tmp_path: Path) -> None:
    source = tmp_path / "corpus"
    source.mkdir()
    (source / "acme-10q.html").write_bytes(_filing(COVER, STATEMENT))
    for name in ("memo.txt", "letter.txt", "minutes.txt"):  # BM25 needs a corpus where words are rare
        (source / name).write_text(f"A {name} about the office move and the parking rules.", encoding="utf-8")
    report = build_index(source, tmp_path / "index", HashEmbedder(32))
    assert (report.documents, report.pages, report.skipped, report.screen_paged) == (4, 5, (), ())
    store = open_store(tmp_path / "index", HashEmbedder(32))
    document = next(d for d in store.catalog.documents.values() if d.filename == "acme-10q.html")
    assert document.title.startswith("Acme Widgets Inc. Form 10-Q") and document.doc_type == "10-Q"
    assert dict(document.attributes)["fiscal_period"] == "2023 Q3"
    on_page_two = store.catalog.page_facts(document.document_id, page=2)
    assert {f.concept for f in on_page_two} == {
        "us-gaap:Revenues",
        "us-gaap:OtherIncome",
        "us-gaap:EarningsPerShareDiluted",
    }
    assert store.catalog.page_facts(document.document_id, page=1) == []
    hits = store.search_chunks("Net sales Three Months Ended", k=1, mode="bm25")
    assert hits[0].chunk.document_id == document.document_id and hits[0].chunk.page == 2
    assert "$81,797 (Three Months Ended July 1, 2023)" in hits[0].chunk.text
