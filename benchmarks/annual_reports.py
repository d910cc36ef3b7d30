"""A deterministic synthetic corpus of annual-report shape, for build benchmarks at any size.

Each file is one company's annual report as EDGAR serves it: HTML whose printed pages are marked by
`page-break-after` styles, each page a few paragraphs of prose (English words with Zipf frequencies, the
company's name, years, amounts and percentages) and, on about half the pages, a financial statement table
(row labels, two or three year columns with their header, figures with thousands separators, negatives in
brackets, currency signs). Sizes follow the EDGAR set beside the project (113 filings, 8,415 pages, about
7.5 chunks per page): REPORT_PAGES pages per file on average, PAGE_WORDS words per page.

    .venv/bin/python benchmarks/annual_reports.py OUT_DIR --pages 8415      # one EDGAR set's worth of pages
"""

from __future__ import annotations

import argparse
import html
from pathlib import Path

import numpy as np

SEED = 20251128
REPORT_PAGES = (60, 180)  # inclusive range of pages per report (mean 120)
PAGE_WORDS = (420, 760)  # inclusive range of prose words per page
TABLE_SHARE = 0.5  # share of pages holding a statement table
EDGAR_PAGES = 8_415  # pages of the EDGAR set (README "Results: EDGAR filings at real size")

WORDS = (
    "the of and to in a is that for on with as by are was this be at from or an have has which its it not we our"
    " revenue revenues income net operating company business customers products services market markets segment"
    " segments growth results financial statements cash flows assets liabilities equity debt interest tax taxes"
    " rate rates increase decrease compared prior year years fiscal quarter quarters period periods total gross"
    " margin expense expenses cost costs sales share shares stock dividend dividends capital investments"
    " investment risk risks factors could may would including certain other such these those due primarily"
    " related changes change foreign currency exchange impact impacts management believes future expected"
    " significant material operations international domestic during ended december january june september"
    " agreement agreements credit facility notes senior term loan loans lease leases property plant equipment"
    " goodwill intangible amortization depreciation impairment acquisition acquisitions pension benefit plans"
    " employees compensation research development inventory inventories receivable payable accrued deferred"
    " contingencies litigation regulatory environmental supply chain demand pricing volume mix competition"
    " strategy technology digital platform subscription retail wholesale manufacturing energy healthcare"
).split()
LABELS = (
    "Total net sales|Cost of sales|Gross margin|Research and development|Selling, general and administrative|"
    "Total operating expenses|Operating income|Interest expense|Other income (expense), net|"
    "Income before provision for income taxes|Provision for income taxes|Net income|Basic earnings per share|"
    "Diluted earnings per share|Cash and cash equivalents|Accounts receivable, net|Inventories|"
    "Total current assets|Property, plant and equipment, net|Goodwill|Total assets|Accounts payable|"
    "Accrued expenses|Long-term debt|Total liabilities|Retained earnings|Total shareholders' equity|"
    "Depreciation and amortization|Share-based compensation|Capital expenditures|Dividends paid"
).split("|")
NAMES = "Acme Borealis Cinder Dunmore Elkhart Fairhaven Glenrock Harwick Ironvale Juniper Kestrel Larkspur".split()
# EDGAR's HTML styles every cell and run of text inline: pages weigh ~30 KB there; these styles bring a page
# here to ~20 KB, so that reading costs what it costs on a filing.
CELL = "style='padding:0 0.1in 0 0;text-align:right;vertical-align:bottom;font-family:Times New Roman;font-size:10pt'"
RUN = "style='font-family:Times New Roman;font-size:10pt;font-weight:normal;color:#000000;line-height:120%'"
KINDS = "Industries Holdings Systems Technologies Brands Energy Health Materials Foods Logistics".split()


def company(index: int) -> str:
    """A company name of its own for every index."""
    return f"{NAMES[index % len(NAMES)]} {KINDS[(index // len(NAMES)) % len(KINDS)]} {index // 120 + 1}"


def _prose(rng: np.random.Generator, words: int, name: str, year: int) -> str:
    ranks = np.arange(1, len(WORDS) + 1, dtype=np.float64)
    weights = ranks**-1.0
    picks = rng.choice(len(WORDS), size=words, p=weights / weights.sum())
    out = [WORDS[i] for i in picks]
    for slot in rng.integers(0, words, size=max(1, words // 40)):
        kind = int(rng.integers(0, 4))
        out[slot] = (
            name
            if kind == 0
            else str(year - int(rng.integers(0, 3)))
            if kind == 1
            else f"${int(rng.integers(1, 99_999)):,} million"
            if kind == 2
            else f"{rng.uniform(0, 60):.1f}%"
        )
    sentences, start = [], 0
    while start < len(out):
        size = int(rng.integers(12, 30))
        sentence = " ".join(out[start : start + size])
        sentences.append(f"<span {RUN}>{sentence[:1].upper() + sentence[1:]}.</span>")
        start += size
    return " ".join(sentences)


def _figure(rng: np.random.Generator) -> str:
    value = int(rng.integers(-5_000, 400_000))
    return f"({-value:,})" if value < 0 else f"{value:,}"


def _table(rng: np.random.Generator, year: int) -> str:
    years = [year, year - 1, year - 2][: int(rng.integers(2, 4))]
    rows = rng.choice(len(LABELS), size=int(rng.integers(12, 28)), replace=False)
    head = "".join(f"<th>{y}</th>" for y in years)
    body = "".join(
        f"<tr><td {CELL}><span {RUN}>{html.escape(LABELS[r])}</span></td>"
        + "".join(
            f"<td {CELL}>$</td><td {CELL}>{_figure(rng)}</td>" if i == 0 else f"<td {CELL}>{_figure(rng)}</td>"
            for i in range(len(years))
        )
        + "</tr>"
        for r in rows
    )
    return (
        "<p>(In millions, except per-share amounts)</p>"
        f"<table><tr><td></td><th colspan='2'>Year Ended December 31,</th></tr><tr><td></td>{head}</tr>{body}</table>"
    )


def report(index: int, pages: int, rng: np.random.Generator) -> str:
    """One annual report of `pages` printed pages as HTML."""
    name, year = company(index), 2015 + index % 10
    parts = [
        f"<html><head><title>{name} Annual Report {year}</title></head><body>",
        f"<div style='page-break-after: always'><p>{name}</p><p>Annual Report on Form 10-K for the fiscal year ended "
        f"December 31, {year}</p></div>",
    ]
    for page in range(2, pages + 1):
        words = int(rng.integers(PAGE_WORDS[0], PAGE_WORDS[1] + 1))
        table = _table(rng, year) if rng.random() < TABLE_SHARE else ""
        prose_words = words // 2 if table else words
        paragraphs = "".join(f"<p>{_prose(rng, prose_words // 3, name, year)}</p>" for _ in range(3))
        parts.append(
            f"<div style='page-break-after: always'><p>Item {page % 15 + 1}.</p>{paragraphs}{table}"
            f"<p style='text-align:center'>{page}</p></div>"
        )
    parts.append("</body></html>")
    return "".join(parts)


def write_corpus(out: Path, pages: int, seed: int = SEED) -> tuple[int, int]:
    """Reports totalling at least `pages` pages under `out` (one folder per company); (files, pages) written.
    The same seed and size give the same bytes."""
    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    written = files = 0
    while written < pages:
        count = int(rng.integers(REPORT_PAGES[0], REPORT_PAGES[1] + 1))
        folder = out / f"company-{files:04d}"
        folder.mkdir(exist_ok=True)
        (folder / "annual-report.html").write_text(report(files, count, rng), encoding="utf-8")
        written += count
        files += 1
    return files, written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--pages", type=int, default=EDGAR_PAGES)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    files, pages = write_corpus(args.out, args.pages, args.seed)
    print(f"{files} reports, {pages} pages in {args.out}")


if __name__ == "__main__":
    main()
