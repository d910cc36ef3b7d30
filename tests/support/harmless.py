"""What "harmless" output means, as assertions: for a terminal, for JSON values and for Markdown."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from markdown_it import MarkdownIt

# What a compromised LM tried to bring in: link and image targets, HTML, field markers, escape codes.
FORBIDDEN = (
    "evil.example",
    "127.0.0.1:9",
    "exfil",
    "d=secret",
    "<script",
    "<img",
    "onerror",
    "[[ ##",
    "\x1b",
    "\x9b",
    "\u202e",
)
# The only escape sequences a terminal may receive: Rich's own styles (SGR) and its status line's cursor
# hiding, line erasing and moving (never a screen clear, a reset or an OSC hyperlink).
_RICH_STYLE = re.compile(r"\x1b\[(?:[0-9;]*m|\?25[lh]|2K|[0-9]*[AG])|\r")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value: keys and values, at any depth."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)


def assert_data_safe(value: Any) -> None:
    """No string in `value` holds a control character or anything the attacker tried to bring in."""
    for text in strings(value):
        assert not _CONTROL.search(text.replace("\n", "")), repr(text[:200])
        for bad in FORBIDDEN:
            assert bad not in text, (bad, text[:300])


def assert_terminal_safe(output: str) -> None:
    """Terminal output holds no escape sequence but Rich's own (so no OSC 8 hyperlink, no screen clear)."""
    plain = _RICH_STYLE.sub("", output)
    assert "\x1b" not in plain, repr(plain[max(0, plain.find("\x1b") - 80) : plain.find("\x1b") + 80])
    assert_data_safe(plain)


def assert_markdown_safe(markdown: str) -> None:
    """`markdown` parsed as CommonMark holds no link, image, autolink, raw HTML or reference definition."""
    env: dict[str, Any] = {}
    tokens = MarkdownIt("commonmark").parse(markdown, env)
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in t.children or []}
    assert not kinds & {"link_open", "image", "html_inline", "html_block"}, kinds
    assert not env.get("references"), env
