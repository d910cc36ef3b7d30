"""Which HTML parser reads the EDGAR filings: lexbor (selectolax) against libxml2 (lxml), side by side.

    .venv/bin/python benchmarks/html_parsers.py --json benchmarks/results/html-parsers.json

On every filing (bytes read beforehand, not timed), in turns so both see the same load:
- parse: the document tree only;
- walk: the tree plus one pass over every element and text node that keeps text, skips hidden
  elements (`display:none`) and breaks lines at block elements: the shape of the reader's work;
- reader: pipeline.store.html.parse_html end to end (lexbor), pages, tables and facts included.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from measure import log, table

ROOT = Path(__file__).resolve().parents[1]
BLOCK = frozenset("div p tr table br hr li h1 h2 h3 h4 h5 h6 td th body".split())


def _hidden(style: str | None) -> bool:
    return style is not None and "none" in style and "display:none" in style.replace(" ", "").lower()


def lxml_walk(data: bytes) -> int:
    import lxml.etree

    out: list[str] = []

    def walk(element: Any) -> None:
        tag = element.tag
        if not isinstance(tag, str) or _hidden(element.get("style")):
            if element.tail:
                out.append(element.tail)
            return
        if tag in BLOCK:
            out.append("\n")
        if element.text:
            out.append(element.text)
        for child in element:
            walk(child)
        if tag in BLOCK:
            out.append("\n")
        if element.tail:
            out.append(element.tail)

    walk(lxml.etree.fromstring(data, lxml.etree.HTMLParser(huge_tree=True)))
    return len("".join(out))


def lexbor_walk(data: bytes) -> int:
    from selectolax.lexbor import LexborHTMLParser, LexborNode

    out: list[str] = []

    def walk(node: LexborNode) -> None:
        for child in node.iter(include_text=True):
            tag = child.tag
            if tag == "-text":
                out.append(child.text_content or "")
                continue
            if tag is None or tag.startswith("-") or _hidden(child.attrs.get("style")):
                continue
            if tag in BLOCK:
                out.append("\n")
            walk(child)
            if tag in BLOCK:
                out.append("\n")

    body = LexborHTMLParser(data).body
    if body is not None:
        walk(body)
    return len("".join(out))


def lxml_parse(data: bytes) -> int:
    import lxml.etree

    return len(lxml.etree.fromstring(data, lxml.etree.HTMLParser(huge_tree=True)))


def lexbor_parse(data: bytes) -> int:
    from selectolax.lexbor import LexborHTMLParser

    return 1 if LexborHTMLParser(data).body is not None else 0


def reader(data: bytes) -> int:
    from pipeline.store.html import parse_html

    return len(parse_html(data).pages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--filings", type=Path, default=ROOT / ".scoperag" / "edgar" / "edgar-filings")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    files = sorted(args.filings.glob("*/*/*/primary-document.html"))
    if not files:
        parser.error(f"no filings under {args.filings}; unpack ../shared/data/edgar-filings/edgar-filings.tar.xz")
    data = [f.read_bytes() for f in files]
    megabytes = sum(len(d) for d in data) / 1e6
    load = os.getloadavg()
    log(f"{len(files)} filings, {megabytes:.0f} MB; load average {load[0]:.2f}")
    runs: dict[str, Callable[[bytes], int]] = {
        "lxml parse": lxml_parse,
        "lexbor parse": lexbor_parse,
        "lxml walk": lxml_walk,
        "lexbor walk": lexbor_walk,
        "reader (lexbor)": reader,
    }
    seconds = dict.fromkeys(runs, 0.0)
    for document in data:  # in turns, file by file
        for name, run in runs.items():
            start = time.perf_counter()
            run(document)
            seconds[name] += time.perf_counter() - start
    rows = [{"run": name, "seconds": s, "MB_per_s": megabytes / s} for name, s in seconds.items()]
    for kind in ("parse", "walk"):
        rows.append({"run": f"lxml / lexbor, {kind}", "ratio": seconds[f"lxml {kind}"] / seconds[f"lexbor {kind}"]})
    print(
        table(
            f"{len(files)} EDGAR filings, {megabytes:.0f} MB, one process",
            rows,
            ["run", "seconds", "MB_per_s", "ratio"],
        )
    )
    log(f"load average {load[0]:.2f} -> {os.getloadavg()[0]:.2f}")
    if args.json:
        record = {
            "benchmark": "html-parsers",
            "files": len(files),
            "megabytes": megabytes,
            "load_average": {"start": load, "end": os.getloadavg()},
            "rows": rows,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
