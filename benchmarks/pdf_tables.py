"""PDF tables as rows: the layout reader (`pipeline.store.pdf_tables`) against a text-line heuristic, in one run.

    .venv/bin/python benchmarks/pdf_tables.py                                   # ../shared/data/sec-10q/docs
    .venv/bin/python benchmarks/pdf_tables.py --json benchmarks/results/pdf-tables.json

Correctness: the operands of `datasets/sec-10q/traces/computed_figures.jsonl`, each a (document, page, line
label, period end, printed value) read from the real filings, are the gold. A gold triple counts as read
when a row of that page has the label (case and spacing folded) and a cell with that value under a header
naming that period ("July 1, 2023", "Jul 1, 2023"; a header of years alone names the period's year). Also
counted: rows of that label whose cell under that period holds another value (`wrong`), and triples with
no row of that label at all (`no_label`).

Speed: every page of every PDF, in one process, the readers taking turns file by file: `text` is PDFium's
page text alone (what the index reads anyway), `lines` adds the heuristic over its lines, `layout` adds the
layout reader (its page filter, the words' boxes from PDFium and the rows). Pages/s of each; the machine
may be shared, so compare ratios within one run (the load average is printed).

The text-line heuristic: a line whose last tokens are figures is a row (label, then its figures in order);
the lines above a block's first row are its header, the periods found in them (dates, "Three Months
Ended") given to the columns in order; a row with fewer figures than the block's columns fills them from
the left. It is what `get_text_range()` lines allow without positions.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from measure import log, table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.store.pdf_lines import TRAILING_MARKERS, is_figure  # noqa: E402
from pipeline.types import RowCell, TableRow  # noqa: E402

DEFAULT_DOCS = next(
    (d for d in (r / "shared" / "data" / "sec-10q" / "docs" for r in ROOT.parents[:2]) if d.is_dir()),
    ROOT.parent / "shared" / "data" / "sec-10q" / "docs",
)
GOLD = ROOT / "datasets" / "sec-10q" / "traces" / "computed_figures.jsonl"
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DATE = re.compile(
    r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)[a-z]*\.?\s+(\d{1,2}),?\s+((?:19|20)\d\d)\b", re.I
)
_MONTH_DAY = re.compile(r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)[a-z]*\.?\s+\d{1,2},?", re.I)
_DAY = re.compile(r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)[a-z]*\.?\s+(\d{1,2})", re.I)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_SPAN = re.compile(r"\b(?:three|six|nine|twelve)\s+months\s+ended|\byears?\s+ended|\bquarter\s+ended", re.I)


@dataclass(frozen=True)
class Gold:
    document: str
    page: int
    label: str
    period_end: str
    printed: str


def gold_triples(path: Path) -> list[Gold]:
    """The distinct operands of the computed-figure traces."""
    found: dict[tuple[str, int, str, str, str], Gold] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        for op in json.loads(line)["operands"]:
            gold = Gold(op["document"], op["page"], op["line"], op["period_end"], op["printed"])
            found[(gold.document, gold.page, gold.label, gold.period_end, gold.printed)] = gold
    return sorted(found.values(), key=lambda g: (g.document, g.page, g.label, g.period_end))


def edgar_gold(html: Path, document: str) -> list[Gold]:
    """Gold triples from a filing's inline XBRL: each tagged figure standing in a table row, with the row's
    label (its first cell of text), its period's end as a date and the figure as shown. Page 0: anywhere in
    the document."""
    from selectolax.lexbor import LexborHTMLParser

    from pipeline.store.html import _resources
    from pipeline.store.xbrl import written_date

    tree = LexborHTMLParser(html.read_bytes())
    contexts, _ = _resources(tree)
    found: dict[tuple[str, str, str], Gold] = {}
    for row in tree.css("tr"):
        facts = row.css("ix\\:nonfraction")
        if not facts:
            continue
        texts = [" ".join(cell.text(deep=True).split()) for cell in row.css("td")]
        label = next((t for t in texts if t and re.search(r"[A-Za-z]{2}", t)), "")
        if not label or texts.index(label) > 1:
            continue
        for fact in facts:
            context = contexts.get(fact.attrs.get("contextref") or "")
            end = written_date(context.end) if context is not None else None
            shown = " ".join(fact.text(deep=True).split())
            if end and shown and re.search(r"\d", shown):
                found[(label, end, shown)] = Gold(document, 0, label, end, shown)
    return list(found.values())


def _fold(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.casefold()).split())


def _date_key(month: str, day: str, year: str) -> tuple[int, int, int]:
    return (_MONTHS.index(month[:3].casefold()) + 1, int(day), int(year))


def names_period(header: str, period_end: str) -> bool:
    """Whether a column header names the period ending on `period_end` ("July 1, 2023")."""
    want = _DATE.search(period_end)
    if want is None:
        return False
    key = _date_key(*want.groups())
    dates = [_date_key(*m.groups()) for m in _DATE.finditer(header)]
    if dates:
        return key in dates
    days = _MONTH_DAY.findall(header)
    years = _YEAR.findall(header)
    if len(days) == 1 and len(years) == 1:  # "Year Ended December 31" over "Pension Benefits" over "2023"
        return _date_key(*_DAY.match(days[0]).groups(), years[0]) == key  # type: ignore[union-attr]
    return not days and str(key[2]) in years


def _value(text: str) -> str:
    """A printed figure without currency signs, spaces and brackets (inline XBRL shows no sign)."""
    return re.sub(r"[\s$€£¥()]", "", text)


def score(rows_by_page: dict[tuple[str, int], list[TableRow]], golds: Sequence[Gold]) -> dict[str, Any]:
    """Read, wrong and unlabelled gold triples, with the misses named (a gold of page 0: any page)."""
    labelled: dict[tuple[str, int, str], list[TableRow]] = {}
    for (document, page), rows in sorted(rows_by_page.items()):
        for row in rows:
            label = _fold(TRAILING_MARKERS.sub("", row.label))
            labelled.setdefault((document, page, label), []).append(row)
            labelled.setdefault((document, 0, label), []).append(row)
    read = wrong = no_label = 0
    misses: list[str] = []
    for gold in golds:
        rows = labelled.get((gold.document, gold.page, _fold(TRAILING_MARKERS.sub("", gold.label))), [])
        cells = [c for r in rows for c in r.cells if names_period(c.header, gold.period_end)]
        if any(_value(c.text) == _value(gold.printed) for c in cells):
            read += 1
            continue
        if not rows:
            no_label += 1
        else:
            wrong += 1
        shown = "; ".join(f"{c.text} [{c.header}]" for r in rows[:3] for c in r.cells) or "no row"
        misses.append(f"{gold.document} p{gold.page} {gold.label!r} {gold.period_end} {gold.printed}: {shown}")
    return {"gold": len(golds), "read": read, "wrong": wrong, "no_label": no_label, "misses": misses}


# --- the text-line heuristic ------------------------------------------------------------------------


def _split(line: str) -> tuple[str, list[str]]:
    tokens = line.split()
    values: list[str] = []
    while tokens and (is_figure(tokens[-1]) or tokens[-1] in ("$", ")", "%")):
        token = tokens.pop()
        if token in (")", "%") and tokens:
            tokens[-1] += token
            continue
        if token != "$":
            values.insert(0, token)
    return " ".join(tokens), values


def _periods(header: str, columns: int) -> list[str]:
    """The header text given to `columns` columns in order: dates (or month-days with years), each under
    the spanning phrases ("Three Months Ended") when they divide the columns evenly."""
    dates = [m.group(0) for m in _DATE.finditer(header)]
    if len(dates) != columns:
        days = _MONTH_DAY.findall(header)
        years = _YEAR.findall(_MONTH_DAY.sub(" ", header))
        if years and len(years) == columns:
            per = columns // len(days) if days and columns % len(days) == 0 else 0
            dates = [f"{days[i // per]} {y}" if per else y for i, y in enumerate(years)]
        else:
            dates = [""] * columns
    spans = [m.group(0) for m in _SPAN.finditer(header)]
    if spans and columns % len(spans) == 0:
        per = columns // len(spans)
        return [f"{spans[i // per]} {d}".strip() for i, d in enumerate(dates)]
    return dates


def text_rows(text: str, page: int) -> list[TableRow]:
    """The heuristic's rows of one page's text."""
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    rows: list[TableRow] = []
    header = ""  # the last lines above a block that named periods
    between: list[str] = []  # lines since the last row
    block: list[tuple[str, list[str]]] = []
    table = 0

    def flush() -> None:
        nonlocal table
        if not block:
            return
        counts = sorted(len(v) for _, v in block)
        heads = _periods(header, counts[len(counts) // 2])
        for label, values in block:
            cells = tuple(RowCell(v, heads[i] if i < len(heads) else "") for i, v in enumerate(values))
            rows.append(TableRow(page, table, len(rows), label, cells))
        table += 1
        block.clear()

    for line in lines:
        label, values = _split(line)
        figures = [v for v in values if not _YEAR.fullmatch(v)]
        if figures and re.search(r"[A-Za-z]", label) and len(line) < 160:
            text_above = " ".join(between[-12:])
            if _DATE.search(text_above) or len(_YEAR.findall(text_above)) >= 2:
                flush()
                header = text_above
            between.clear()
            block.append((label, values))
        else:
            between.append(line)
    flush()
    return rows


# --- the runs ---------------------------------------------------------------------------------------


def _read(path: Path, method: str) -> tuple[list[list[TableRow]], int]:
    """Rows per page of one file by `method`, and its page count."""
    import pypdfium2

    from pipeline.store.pdf import page_words
    from pipeline.store.pdf_lines import may_hold_tables
    from pipeline.store.pdf_tables import page_rows

    document = pypdfium2.PdfDocument(path)
    out: list[list[TableRow]] = []
    try:
        for index in range(len(document)):
            page = document[index]
            text_page = page.get_textpage()
            text = text_page.get_text_range()
            if method == "lines":
                out.append(text_rows(text.replace("\r", ""), index + 1))
            elif method == "layout":
                out.append(page_rows(page_words(text_page, text), index + 1) if may_hold_tables(text) else [])
            elif method == "layout-all":
                out.append(page_rows(page_words(text_page, text), index + 1))
            else:
                out.append([])
            text_page.close()
            page.close()
    finally:
        document.close()
    return out, len(out)


METHODS = ("text", "lines", "layout", "layout-all")
EDGAR_TICKERS = ("CSCO", "GD", "HD", "IBM", "JNJ", "KO", "MCD", "NKE", "PG")


def edgar_pdfs(tickers: Sequence[str], out: Path) -> list[tuple[Path, list[Gold]]]:
    """Each ticker's 10-K printed to PDF by headless Chromium (once, kept in `out`), with its gold triples."""
    import shutil
    import subprocess

    from edgar import ARCHIVE, SCRATCH, unpack

    folder = unpack(ARCHIVE, SCRATCH) / "10-K"
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    out.mkdir(parents=True, exist_ok=True)
    found = []
    for ticker in tickers:
        html = next(iter(sorted((folder / ticker).glob("*/primary-document.html"))), None)
        pdf = out / f"{ticker}-10-K.pdf"
        if html is None:
            log(f"{ticker}: no 10-K in {folder}")
            continue
        if not pdf.is_file():
            if browser is None:
                log(f"{ticker}: no PDF at {pdf} and no chromium to print one (apt-get install chromium)")
                continue
            command = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer"]
            subprocess.run([*command, f"--print-to-pdf={pdf}", html.as_uri()], check=True, capture_output=True)
        found.append((pdf, edgar_gold(html, pdf.name)))
    return found


def run(files: Sequence[Path], golds: Sequence[Gold], rounds: int) -> dict[str, Any]:
    """Each method over every page of `files` (in turns, file by file), scored against `golds`."""
    seconds = dict.fromkeys(METHODS, 0.0)
    pages = 0
    rows: dict[str, dict[tuple[str, int], list[TableRow]]] = {m: {} for m in METHODS}
    for _ in range(rounds):
        for path in files:
            for method in METHODS:
                start = time.perf_counter()
                found, count = _read(path, method)
                seconds[method] += time.perf_counter() - start
                for number, page_rows in enumerate(found, start=1):
                    rows[method][(path.name, number)] = page_rows
            pages += count
    out: dict[str, Any] = {"files": len(files), "pages": pages, "rounds": rounds, "methods": {}}
    for method in METHODS:
        measured = score(rows[method], golds)
        measured["seconds"] = round(seconds[method], 3)
        measured["pages_per_s"] = round(pages / seconds[method], 1)
        measured["rows"] = sum(len(r) for r in rows[method].values())
        measured["pages_with_rows"] = sum(1 for r in rows[method].values() if r)
        out["methods"][method] = measured
    return out


def _print(name: str, result: dict[str, Any], load: tuple[float, float], misses: bool) -> None:
    shown = [
        {"method": m, **{k: v for k, v in r.items() if k != "misses"}, "read %": 100 * r["read"] / max(1, r["gold"])}
        for m, r in result["methods"].items()
    ]
    columns = ["method", "gold", "read", "read %", "wrong", "no_label", "rows", "pages_with_rows", "pages_per_s"]
    title = f"{name}: {result['files']} files, {result['pages']} pages, load {load[0]:.1f} -> {load[1]:.1f}"
    print(table(title, shown, columns))
    if misses:
        for method, measured in result["methods"].items():
            for miss in measured["misses"]:
                print(f"{method}: {miss}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--rounds", type=int, default=1, help="passes over the SEC set (timings summed)")
    parser.add_argument("--edgar", nargs="*", default=list(EDGAR_TICKERS), help="10-K tickers to print and score")
    parser.add_argument("--misses", action="store_true", help="print every gold triple a method missed")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if not args.docs.is_dir():
        print(f"no PDF folder at {args.docs}: pass --docs DIR", file=sys.stderr)
        return 2
    results: dict[str, Any] = {"python": platform.python_version()}
    golds = gold_triples(GOLD)
    start = os.getloadavg()[0]
    log(f"SEC 10-Q: {len(golds)} gold triples; reading {args.docs} ({args.rounds} round(s)); load {start:.1f}")
    results["sec-10q"] = run(sorted(args.docs.glob("*.pdf")), golds, args.rounds)
    load = (start, os.getloadavg()[0])
    results["sec-10q"].update(load_start=round(load[0], 2), load_end=round(load[1], 2))
    _print("SEC 10-Q (statements of operations)", results["sec-10q"], load, args.misses)
    if args.edgar:
        printed = edgar_pdfs(args.edgar, ROOT / ".scoperag" / "pdf-tables")
        golds = [g for _, found in printed for g in found]
        start = os.getloadavg()[0]
        log(f"EDGAR 10-K printed to PDF: {len(printed)} files, {len(golds)} gold triples; load {start:.1f}")
        results["edgar-10k"] = run([pdf for pdf, _ in printed], golds, 1)
        load = (start, os.getloadavg()[0])
        results["edgar-10k"].update(load_start=round(load[0], 2), load_end=round(load[1], 2))
        results["edgar-10k"]["tickers"] = [pdf.name.split("-")[0] for pdf, _ in printed]
        _print("EDGAR 10-K printed to PDF (inline XBRL facts in table rows)", results["edgar-10k"], load, args.misses)
    if args.json:
        for result in results.values():
            if isinstance(result, dict):
                for measured in result["methods"].values():
                    measured["misses"] = measured["misses"][:50]
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
