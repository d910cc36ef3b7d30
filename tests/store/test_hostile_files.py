"""Hostile HTML and inline XBRL files (issue 36, D3 and D4): every reader has a bound, one bad fact never fails a
file and one bad file never fails a build.

The probe's files: 200,000 nested <div> (the parser's cost grew faster than the square of the depth), a 29 MB
line (cut into screenfuls by re-slicing the rest: quadratic), an XBRL scale of 999999999 (decimal.InvalidOperation
stopped the build) and 200 facts at scale 900000 (a 19 KB file made a 173 MB index). How long each takes is
measured in benchmarks/hostile_files.py, never asserted here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pipeline.cli.main import main
from pipeline.errors import FactRefused, InputFileError
from pipeline.store import html as html_reader
from pipeline.store import open_store, reading
from pipeline.store.html import (
    MAX_PARSE_DEPTH,
    SCREEN_CHARS,
    ReadingBound,
    parse_html,
    read_html,
    screenfuls,
)
from pipeline.store.html_nesting import flatten_nesting
from pipeline.store.reading import read_or_error
from pipeline.store.xbrl import MAX_SCALE, MAX_VALUE_DIGITS, fact_value
from tests.support.hostile_files import PROBE_DEPTH, nested_divs, one_line, write_hostile, xbrl_scale

# ---- XBRL: a scale out of range or a value of too many digits drops the fact, never the file (D3) ----------


@pytest.mark.parametrize(
    ("scale", "why"),
    [
        ("999999999", "scale 999999999 is outside"),
        ("900000", "scale 900000 is outside"),
        (str(-MAX_SCALE - 1), f"is outside -{MAX_SCALE}..{MAX_SCALE}"),
        ("9" * 5000, "is no integer"),  # more digits than Python reads as an int
        ("six", "is no integer"),
        ("x", "is no integer"),
    ],
)
def test_a_fact_whose_scale_is_no_reporting_scale_is_refused(scale: str, why: str) -> None:
    with pytest.raises(FactRefused, match=why):
        fact_value("1,234", None, scale, None, "us-gaap:Revenues")


def test_reporting_scales_and_sizes_are_kept_and_a_value_of_too_many_digits_refused() -> None:
    assert fact_value("1,234", None, "9", None) == "1234000000000"
    assert fact_value("12.5", None, "-2", None) == "0.125"
    assert fact_value("9" * 20, None, "9", None) == "9" * 20 + "0" * 9
    with pytest.raises(FactRefused, match=f"more than {MAX_VALUE_DIGITS} digits"):
        fact_value("9" * 20, None, str(MAX_SCALE), None)
    with pytest.raises(FactRefused, match="digits is longer"):
        fact_value("9" * 100_000, None, None, None)


def test_a_file_with_bad_facts_keeps_its_text_and_good_facts_and_says_what_it_dropped() -> None:
    document = parse_html(xbrl_scale("900000", facts=200))
    assert [f.concept for f in document.facts] == ["us-gaap:NetIncomeLoss"]
    assert document.facts[0].value == "42000000"
    assert "Net income 42 million" in document.pages[0]
    (note,) = document.notes
    assert note.startswith("dropped 200 inline XBRL facts (us-gaap:Revenues: scale 900000 is outside")
    assert sum(len(f.value) for f in document.facts) < 100  # no 900,000-digit value stored


def test_a_fact_with_a_giant_concept_name_is_dropped() -> None:
    name = "us-gaap:" + "X" * 10_000
    html = f'<html><body><p><ix:nonFraction name="{name}" unitRef="usd">5</ix:nonFraction></p></body></html>'
    document = parse_html(html.encode())
    assert document.facts == () and "a concept name of 10,008 characters" in document.notes[0]


# ---- HTML: nesting capped before the parser, screenfuls by position, pages and time bounded (D4) ------------


def _depth(text: str) -> int:
    depth = deepest = 0
    for closing in re.findall(r"<(/?)div\b", text):
        depth += -1 if closing else 1
        deepest = max(deepest, depth)
    return deepest


def test_nesting_past_the_cap_is_taken_out_before_the_parser_and_its_text_kept() -> None:
    text = nested_divs(PROBE_DEPTH).decode()
    flat, count = flatten_nesting(text, MAX_PARSE_DEPTH)
    assert _depth(text) == PROBE_DEPTH and _depth(flat) == MAX_PARSE_DEPTH
    assert count == PROBE_DEPTH - MAX_PARSE_DEPTH and "deep text" in flat
    document = parse_html(nested_divs(PROBE_DEPTH))
    assert document.pages == ("deep text",)
    assert document.notes == (f"{count:,} elements nested deeper than {MAX_PARSE_DEPTH} were read as text",)


def test_flattening_leaves_a_document_within_the_cap_as_it_is() -> None:
    html = (
        "<html><body><!-- <div><div> --><script>if (a<b && c>d) {}</script>"
        "<p>one<p>two<br><img src=x><div style='page-break-before:always'><table><tr><td>1<td>2</table></div>"
        "</body></html>"
    )
    assert flatten_nesting(html, 4) == (html, 0)  # unclosed <p>, <td>, void tags, comments and scripts never count
    deep = "<div>" * 3 + "<span>x</span>" + "</div>" * 3
    assert flatten_nesting(deep, 2) == ("<div><div> " + " x " + " </div></div>", 2)


def _screenfuls_by_slicing(text: str, size: int) -> list[str]:
    """The cut as it was (the rest sliced off at every page): what the linear cut must equal."""
    pages: list[str] = []
    rest = text.strip()
    while len(rest) > size:
        cut = rest.rfind("\n", size * 2 // 3, size)
        if cut < 0:
            cut = rest.rfind(" ", size // 2, size)
        if cut < 0:
            cut = size
        pages.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    if rest:
        pages.append(rest)
    return pages


@pytest.mark.parametrize(
    "text",
    [
        "  word " * 2000,
        ("a line of text\n" * 40 + "x" * 5000 + "\n") * 5,
        "y" * 9001,
        "\n\n  " + "short lines\n\n\n" * 900 + "   ",
    ],
)
def test_screenfuls_are_cut_by_position_as_they_were_by_slicing(text: str) -> None:
    assert screenfuls(text, 300) == _screenfuls_by_slicing(text, 300)
    assert screenfuls(text, SCREEN_CHARS) == _screenfuls_by_slicing(text, SCREEN_CHARS)


def test_a_file_of_more_pages_than_the_bound_is_skipped_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(html_reader, "MAX_PAGES", 3)
    path = tmp_path / "long.html"
    path.write_bytes(one_line(5 * SCREEN_CHARS))
    with pytest.raises(ReadingBound, match=r"pages \(screen\) is more than 3"):
        parse_html(path.read_bytes())
    skipped = read_or_error(path, "long.html")
    assert isinstance(skipped, InputFileError) and skipped.path == "long.html"
    assert "more than 3; split the file first" in skipped.reason


def test_a_file_still_being_read_after_its_time_is_skipped_by_name(tmp_path: Path) -> None:
    path = tmp_path / "slow.html"
    path.write_bytes(("<html><body>" + "<p>row</p>" * 10_000 + "</body></html>").encode())
    with pytest.raises(InputFileError, match=r"slow.html: still reading after 0 s \(limit per file\)"):
        read_html(path, "slow.html", seconds=0.0)
    assert len(read_html(path, "slow.html").pages) >= 1  # within the default bound it reads


def test_a_reader_error_no_reader_foresaw_skips_that_file_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def parser_bug(path: Path, relpath: str) -> object:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(reading, "read_html", parser_bug)
    path = tmp_path / "odd.html"
    path.write_text("<html><body>x</body></html>")
    skipped = read_or_error(path, "odd.html")
    assert isinstance(skipped, InputFileError)
    assert skipped.reason == "could not be read (RecursionError: maximum recursion depth exceeded)"


def test_a_folder_holding_the_probes_files_indexes_every_other_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "corpus"
    write_hostile(source)  # the probe's sizes: 200,000 nested <div>, a 29 MB line, the XBRL scales
    (source / "lease.md").write_text("# Lease\n\nThe Tenant shall pay rent of KSH 285,000 per month.\n")
    (source / "report.htm").write_bytes(xbrl_scale("6", facts=3))
    out = tmp_path / "index"
    assert main(["index", str(source), "--out", str(out), "--embedder", "hash", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["skipped"] == ["one-line.html"]
    store = open_store(out)
    indexed = sorted(d.relpath for d in store.catalog.documents.values())
    others = ["lease.md", "nested.html", "report.htm", "scale-900000.htm", "scale-999999999.htm", "scale-digits.htm"]
    assert indexed == others
    report_id = next(d for d, doc in store.catalog.documents.items() if doc.relpath == "report.htm")
    assert len(store.catalog.page_facts(report_id, 1)) == 4  # its three facts and the good one
    assert sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) < 5_000_000
