"""Hostile HTML and inline XBRL files, as an outside probe wrote them to stall or blow up a build (issue 36, D3 and
D4): deep nesting, one very long line, and XBRL scales no report uses. Shared by the store tests (small sizes by
default) and benchmarks/hostile_files.py (the probe's sizes)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

# The probe's sizes: 200,000 nested <div> (2.2 MB), a 29 MB line, 200 facts at scale 900000.
PROBE_DEPTH = 200_000
PROBE_LINE_BYTES = 29_000_000
PROBE_FACTS = 200


def nested_divs(depth: int = PROBE_DEPTH) -> bytes:
    """`depth` nested <div> around one sentence."""
    return f"<html><body>{'<div>' * depth}deep text{'</div>' * depth}</body></html>".encode()


def one_line(size: int = PROBE_LINE_BYTES) -> bytes:
    """One paragraph of `size` bytes with no line end and no page break."""
    words = "revenue grew " * (size // 13)
    return f"<html><body><p>{words}</p></body></html>".encode()


def _fact(index: int, scale: str) -> str:
    return (
        f'<ix:nonFraction name="us-gaap:Revenues" contextRef="c{index}" unitRef="usd" scale="{scale}" '
        f'decimals="-6">{index + 1}</ix:nonFraction>'
    )


def xbrl_scale(scale: str, facts: int = PROBE_FACTS) -> bytes:
    """A statement of `facts` inline XBRL figures, each tagged with `scale`, beside one figure at scale 6."""
    figures = " ".join(_fact(i, scale) for i in range(facts))
    good = '<ix:nonFraction name="us-gaap:NetIncomeLoss" contextRef="c" unitRef="usd" scale="6">42</ix:nonFraction>'
    return f"<html><body><p>Revenues {figures}</p><p>Net income {good} million</p></body></html>".encode()


# name -> (file name, bytes at the probe's size)
HOSTILE: dict[str, tuple[str, Callable[[], bytes]]] = {
    "nested divs (200,000)": ("nested.html", nested_divs),
    "one line (29 MB)": ("one-line.html", one_line),
    "XBRL scale 900000 (200 facts)": ("scale-900000.htm", lambda: xbrl_scale("900000")),
    "XBRL scale 999999999": ("scale-999999999.htm", lambda: xbrl_scale("999999999", 1)),
    "XBRL scale of 5,000 digits": ("scale-digits.htm", lambda: xbrl_scale("9" * 5000, 1)),
}


def write_hostile(folder: Path) -> list[Path]:
    """Every hostile file at the probe's size in `folder`; their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, make in HOSTILE.values():
        path = folder / name
        path.write_bytes(make())
        paths.append(path)
    return paths
