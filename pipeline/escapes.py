"""The escapes that keep data inert where it is written, for the code that writes it and for the guards alike.

A document's text shown to an LM has its DSPy field markers defused (`defuse_field_markers`); text bound for
a terminal loses escape sequences, controls and invisible characters (`strip_controls`); a file name or a
title written into Markdown is escaped to render as exactly its own text (`markdown_literal`), and a citation
label is built from that (`citation_label`). They live outside `guards/` so that the answering code, which
renders sentences for the LM, and the guards, which check what it drafted, both call the one copy without
either package importing the other. `sanitise` (guards) builds on them.
"""

from __future__ import annotations

import re

from pipeline.text import _HIDDEN

# A citation names its document in at most this many characters (a title is text the document wrote).
MAX_CITATION_NAME = 80

_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """`text` with lone surrogates (which UTF-8, JSON and pydantic refuse) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


# DSPy's ChatAdapter delimits fields with "[[ ## name ## ]]"; document text must never be able
# to open or close a field, so such markers are defused before text is shown to an LM.
_FIELD_MARKER = re.compile(r"\[\[\s*##(.*?)##\s*\]\]", re.DOTALL)
# Half a marker ("[[ ##" or "## ]]"): text joined to it later (a quote, the next field) could complete it.
_MARKER_HALF = re.compile(r"\[\[\s*##|##\s*\]\]")


def field_markers(text: str) -> int:
    """How many DSPy field markers, whole or half, `text` holds (what `defuse_field_markers` rewrites)."""
    return len(_FIELD_MARKER.findall(text)) + len(_MARKER_HALF.findall(_FIELD_MARKER.sub("", text)))


def defuse_field_markers(text: str) -> str:
    """`text` with every DSPy field marker, and every half of one, rewritten so no adapter can parse it."""
    whole = _FIELD_MARKER.sub(lambda m: f"( #{m.group(1)}# )", text)
    return _MARKER_HALF.sub(lambda m: "( #" if m.group(0).startswith("[") else "# )", whole)


# Terminal control: ESC and C1 sequences (CSI, OSC incl. OSC 8 hyperlinks, DCS/PM/APC strings, two-byte
# escapes such as ESC c), then any C0/C1 control or DEL left over. Tab and newlines become spaces later.
_ESCAPE_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI ... final byte
    r"|(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC/DCS/SOS/PM/APC strings
    r"|\x1b[ -/]*[0-~]?"  # two-byte escapes (ESC c, ESC ( B), or a lone ESC
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]+")  # all but tab and newline


def characters(count: int) -> str:
    """`count` characters in words, as a removal is recorded ("1 character", "3 characters")."""
    return f"{count} character" if count == 1 else f"{count} characters"


def drop(pattern: re.Pattern[str], kind: str, text: str, removed: list[str]) -> str:
    """`text` without the matches of `pattern`; each is recorded in `removed` as "kind: N characters"."""

    def note(match: re.Match[str]) -> str:
        removed.append(f"{kind}: {characters(len(match.group(0)))}")
        return ""

    return pattern.sub(note, text)


def strip_controls(text: str, removed: list[str] | None = None) -> str:
    """`text` without terminal escape sequences, controls other than tab and newline, or invisible
    characters (bidi, zero width, tags); what went is appended to `removed`. Part of `sanitise`, and
    the last step before anything reaches a terminal."""
    sink = removed if removed is not None else []
    text = drop(_ESCAPE_SEQUENCE, "control", text, sink)
    text = drop(_CONTROL, "control", text, sink)
    return drop(_HIDDEN, "invisible", text, sink)


# What can open Markdown syntax inside a line: escapes, code, emphasis, links and images, HTML, entities,
# strikethrough, and the autolinks GFM renderers make of "scheme://", "www." and e-mail addresses; "_"
# only where it can open or close emphasis (not inside a word, as in "offer_letter.md").
_MARKDOWN_ACTIVE = re.compile(
    r"[\\`*\[\]<>~:@]|&(?=[#A-Za-z])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|(?<=\bwww)\.", re.IGNORECASE
)


def markdown_literal(text: str) -> str:
    """`text` (a file name, a title: data) as Markdown that renders as exactly that text, on one line: every
    character that could make a link, an image, HTML, emphasis, code or an autolink is backslash-escaped.

    Every place that writes a name or a title into Markdown calls this (a citation label is one)."""
    line = " ".join(strip_controls(" ".join(valid_text(text).split())).split())  # line breaks become spaces
    return _MARKDOWN_ACTIVE.sub(lambda match: "\\" + match.group(0), line)


def short_name(text: str) -> str:
    """`text` on one line without control characters, cut at a word to MAX_CITATION_NAME characters ("..."
    marks a cut)."""
    line = " ".join(strip_controls(valid_text(text)).split())
    if len(line) <= MAX_CITATION_NAME:
        return line
    cut = line[: MAX_CITATION_NAME - 1]
    words = cut.rsplit(" ", 1)[0] if " " in cut[MAX_CITATION_NAME // 2 :] else cut
    return words.rstrip(" ,;:-") + "…"


def citation_label(name: str, page: int) -> str:
    """The inline form of a citation: [name, page N], where `name` is the document as a reader knows it (its
    `citation_name`, else its file name), cut to MAX_CITATION_NAME characters and escaped as Markdown text (a
    name is data: `rent](https:x).md` must not make a link)."""
    return f"[{markdown_literal(short_name(name))}, page {page}]"
