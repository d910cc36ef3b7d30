"""Sanitising LM and user text before it is shown to an LM or rendered: lone surrogates replaced,
sub-questions capped and deduplicated, field markers defused, links, images, HTML, URLs and
invisible characters removed."""

from __future__ import annotations

import re
from collections.abc import Callable

from pipeline.text import _HIDDEN

MAX_SUB_QUESTIONS = 5
MAX_SUB_QUESTION_CHARS = 2000  # the store's query limit (execution.steps.Step.query)
_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """`text` with lone surrogates (which UTF-8, JSON and pydantic refuse) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


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


def clean_sub_questions(raw: object, question: str) -> tuple[list[str], bool]:
    """1..5 distinct non-blank sub-questions; ([question], True) when there are none.

    A sub-question longer than the store accepts as a query is dropped; reading stops at the
    fifth distinct one (an output of 100,000 items costs no more than one of five). Sub-questions
    are shown to the later LM calls, so field markers in them are defused like document text.
    """
    items = raw if isinstance(raw, list) else []
    seen: dict[str, str] = {}  # case-folded -> as written (the first spelling wins)
    for item in items:
        text = defuse_field_markers(valid_text(item.strip())) if isinstance(item, str) else ""
        if text and len(text) <= MAX_SUB_QUESTION_CHARS:
            seen.setdefault(text.casefold(), text)
        if len(seen) == MAX_SUB_QUESTIONS:
            break
    cleaned = list(seen.values())
    return (cleaned, False) if cleaned else ([question], True)


def strip_inline_citations(text: str) -> str:
    """Bullet text without bracketed page references the LM wrote itself (only checked ones are shown)."""
    return re.sub(r"\s*\[[^\[\]]{1,300}?,\s*(?:page|p\.)\s*\d+\s*\]", "", text, flags=re.IGNORECASE).strip()
