"""Sanitising LM and user text before it is shown to an LM or rendered: field markers defused,
links, images, HTML, URLs and invisible characters removed."""

from __future__ import annotations

import re
from collections.abc import Callable

from pipeline.text import _HIDDEN

# DSPy's ChatAdapter delimits fields with "[[ ## name ## ]]"; document text must never be able
# to open or close a field, so such markers are defused before text is shown to an LM.
_FIELD_MARKER = re.compile(r"\[\[\s*##(.*?)##\s*\]\]", re.DOTALL)


def defuse_field_markers(text: str) -> str:
    """`text` with every DSPy field marker rewritten so no adapter can parse it as one."""
    return _FIELD_MARKER.sub(lambda m: f"( #{m.group(1)}# )", text)


# Answers are rendered as Markdown: a link, image or raw URL copied from a document could
# exfiltrate data or mislead, and invisible characters could hide text. Only plain text stays.
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]*)\]\((?:[^)]*)\)")
_HTML_TAG = re.compile(r"<\s*/?\s*[a-zA-Z][^>]*>")
_URL = re.compile(r"(?:\b[a-z][a-z0-9+.-]*://|\bwww\.)\S+", re.IGNORECASE)


def plain_answer_text(text: str) -> tuple[str, list[str]]:
    """`text` without links, images, HTML tags, URLs or invisible characters; and what was removed."""
    removed: list[str] = []

    def drop(kind: str) -> Callable[[re.Match[str]], str]:
        def replace(match: re.Match[str]) -> str:
            removed.append(f"{kind}: {match.group(0)[:80]}")
            return match.group(1) if match.groups() else ""

        return replace

    text = _HIDDEN.sub(drop("invisible"), text)
    text = _MD_IMAGE.sub(drop("image"), text)
    text = _MD_LINK.sub(drop("link"), text)
    text = _HTML_TAG.sub(drop("html"), text)
    text = _URL.sub(drop("url"), text)
    return " ".join(text.split()), removed
