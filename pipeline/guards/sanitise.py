"""The one sanitising step for text an LM or a user wrote, and the hard caps on what they can make the
program show or store.

`sanitise` is applied to every such string before it is rendered or stored as display text
(questions, sub-questions, bullets, profile notes, what the trace records, a document's title and
summary). It parses Markdown with markdown-it (CommonMark) and keeps text, emphasis, code spans and list
numbers only: links keep their text and lose their target, images keep their alt text, autolinks, raw
HTML, reference definitions and bare URLs go, and so do URI schemes, e-mail addresses and anything shaped
like an HTML tag that CommonMark reads as text (in code spans too). Terminal escape sequences, C0/C1
controls and invisible characters (bidi, zero width, tags) are removed first, DSPy field markers are
defused, whitespace collapses to one line, and the result is cut at a cap. It runs until nothing
changes, so its output sanitises to itself: parsed again it holds no link, image or HTML, whatever
escapes or entities the input used to hide them.

The escapes it is built from (field markers, controls) and the other direction, `markdown_literal` (a file
name or title written into Markdown, escaped so that it renders as exactly its own text), live in
`pipeline.escapes`, where the answering code may call them too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from markdown_it import MarkdownIt
from markdown_it.token import Token

from pipeline.escapes import characters, defuse_field_markers, drop, field_markers, strip_controls, valid_text

# ---- hard caps (the prompts ask for less; these hold whatever comes back) -------------------------

MAX_QUESTION_CHARS = 2000
MAX_SUB_QUESTIONS = 5
MAX_SUB_QUESTION_CHARS = 1000  # under the store's query limit (execution.steps.Step.query)
MAX_NOTE_CHARS = 2000
MAX_RECORD_CHARS = 500  # one intervention's target or reason
MAX_ANSWER_BYTES = 64 * 1024
MAX_TRACE_BYTES = 512 * 1024
# Removals listed per string; the rest are counted in one last entry.
MAX_REMOVALS_LISTED = 20
# Input beyond this many times the cap is not parsed at all (markdown-it is linear but not free).
_PARSE_FACTOR = 4
_MAX_PASSES = 6
# Items of a decomposition read at most (duplicates and blanks included).
_MAX_SUB_QUESTIONS_READ = 10 * MAX_SUB_QUESTIONS

# Anything that names a place to go: a URL with "//" or "www.", any other URI scheme followed by text (mailto:,
# javascript:, xmpp:, "https:evil.example"; "Total:285,000" and "Term: 3" are not schemes), a protocol-relative
# "//host", and e-mail addresses (GFM renderers link them). Each match may start only where a run of the
# characters it is made of starts, so a long run is scanned once, not once per character.
_URL = re.compile(
    # a run of scheme characters holding a letter, then "://" (possessive: a long run is scanned once);
    # "x_http://" too: GFM links what follows "_"
    r"(?<![a-z0-9.+-])(?=[a-z0-9.+-]*[a-z])[a-z0-9.+-]*+://\S*"
    r"|\bwww\.\S+"
    r"|(?<![\w.+-])[.+-]*[a-z][a-z0-9+.-]*:(?![\s\d])\S+"  # not inside a word: "sub_question:What" is no scheme
    r"|(?<![\w:/])//[^\s/]\S*",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"(?<![\w.!#$%&'*+=?^`{|}~-])[\w.!#$%&'*+=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+")
# Anything shaped like an HTML tag, comment or declaration, whether or not CommonMark reads it as HTML
# ("<img src=x onerror=a=1>" is text to CommonMark, a tag to a browser's innerHTML); an opener left
# without its ">" loses its "<", so no later text can close it into a tag.
_TAG = re.compile(r"<[A-Za-z/!?][^<>]*>")
_TAG_OPENER = re.compile(r"<(?=[A-Za-z/!?])")
# When passes do not settle (never seen), what is left loses every character that opens a link or a tag.
_OPENERS = re.compile(r"[\[\]<>]")


@dataclass(frozen=True)
class Sanitised:
    """Display-safe text, what was removed from it (kind: size), and its length before a cut (None: not cut)."""

    text: str
    removed: tuple[str, ...] = ()
    cut_from: int | None = None


def sanitise(text: str, max_chars: int) -> Sanitised:
    """`text` safe to render or store as display text, at most `max_chars` characters (cut with "…").

    Its output is a fixed point: sanitising it again returns it unchanged.
    """
    removed: list[str] = []
    cut_from = len(text) if len(text) > max_chars * _PARSE_FACTOR else None
    current = valid_text(text[: max_chars * _PARSE_FACTOR])
    for _ in range(_MAX_PASSES):
        cleaned = _one_pass(current, removed)
        if len(cleaned) > max_chars:
            cut_from = cut_from or len(cleaned)
            cleaned = cleaned[: max_chars - 1].rstrip() + "…"
        if cleaned == current:
            break
        current = cleaned
    else:
        removed.append("unsettled: brackets removed")
        current = _OPENERS.sub("", current)
    return Sanitised(current, _listed(removed), cut_from)


def sanitise_question(text: str) -> Sanitised:
    """A user's question as it is recorded and planned from: as asked (spacing and line breaks too) when
    it fits MAX_QUESTION_CHARS and sanitising finds nothing to remove, else sanitised (one line, capped).
    What sanitising would change without removing anything (spacing, list markers, entities) is harmless."""
    clean = sanitise(text, MAX_QUESTION_CHARS)
    if clean.removed or clean.cut_from is not None or len(text) > MAX_QUESTION_CHARS:
        return clean
    return Sanitised(valid_text(text))


def sanitised_text(text: str, max_chars: int) -> str:
    """Only the text of `sanitise(text, max_chars)`."""
    return sanitise(text, max_chars).text


def _listed(removed: list[str]) -> tuple[str, ...]:
    if len(removed) <= MAX_REMOVALS_LISTED:
        return tuple(removed)
    return (*removed[: MAX_REMOVALS_LISTED - 1], f"more: {len(removed) - MAX_REMOVALS_LISTED + 1} removals")


def _one_pass(text: str, removed: list[str]) -> str:
    text = strip_controls(text.replace("\t", " ").replace("\r", " ").replace("\n", " "), removed)
    # Line breaks were removed above, so only the first line's block syntax (a list number, a
    # heading, a quote) is left to parse; inline syntax is parsed everywhere.
    text = _markdown_text(text, removed)
    markers = field_markers(text)
    if markers:
        removed.append(f"field_marker: {markers} defused")
        text = defuse_field_markers(text)
    return " ".join(text.split())


def _any_link(url: str) -> bool:
    return True


@cache
def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark")
    # CommonMark leaves a link with a javascript:, vbscript:, file: or data: target unparsed, so it
    # would survive as literal "[text](target)"; every target is parsed here, and every one dropped.
    parser.validateLink = _any_link  # type: ignore[method-assign]
    return parser


def _markdown_text(text: str, removed: list[str]) -> str:
    """The text of `text` read as CommonMark: text, emphasis markers, code spans and list numbers."""
    env: dict[str, object] = {}
    tokens = _parser().parse(text, env)
    references = env.get("references")
    if isinstance(references, dict) and references:
        removed.extend(f"link: a definition of {characters(len(str(label)))}" for label in references)
    parts: list[str] = []
    for token in tokens:
        if token.type == "inline":
            parts.append(_inline_text(token.children or [], removed))
        elif token.type == "list_item_open" and token.info:  # an ordered list's number ("2024." is text)
            parts.append(token.info + token.markup)
        elif token.type in ("code_block", "fence"):
            parts.append(_inert(token.content, removed))
        elif token.type == "html_block":
            removed.append(f"html: {characters(len(token.content))}")
    return " ".join(parts)


def _inline_text(children: Sequence[Token], removed: list[str]) -> str:
    out: list[str] = []
    in_autolink = False
    for token in children:
        kind = token.type
        if kind == "link_open":
            in_autolink = token.markup == "autolink"
            removed.append(f"{'url' if in_autolink else 'link'}: {characters(len(str(token.attrs.get('href', ''))))}")
        elif kind == "link_close":
            in_autolink = False
        elif in_autolink:
            continue
        elif kind == "image":
            removed.append(f"image: {characters(len(str(token.attrs.get('src', ''))))}")
            out.append(_inline_text(token.children or [], removed))
        elif kind == "html_inline":
            removed.append(f"html: {characters(len(token.content))}")
        elif kind in ("softbreak", "hardbreak"):
            out.append(" ")
        elif kind == "code_inline":
            code = _inert(token.content, removed)
            out.append(token.markup + code + token.markup if code.strip() else "")
        elif kind in ("em_open", "em_close", "strong_open", "strong_close"):
            out.append(token.markup)
        else:
            out.append(_inert(token.content, removed))
    return "".join(out)


def _inert(text: str, removed: list[str]) -> str:
    """`text` without HTML-shaped tags, URLs, URI schemes and e-mail addresses (what went is recorded)."""
    text = drop(_TAG_OPENER, "html", drop(_TAG, "html", text, removed), removed)
    return drop(_EMAIL, "email", drop(_URL, "url", text, removed), removed)


# ---- sub-questions ------------------------------------------------------------------------------------


class SubQuestions(NamedTuple):
    """The sub-questions to answer, whether they fell back to the question, what sanitising removed
    from them, and what the caps cut."""

    items: list[str]
    fell_back: bool
    removed: tuple[str, ...] = ()
    cut: tuple[str, ...] = ()


def clean_sub_questions(raw: object, question: str) -> SubQuestions:
    """1..5 distinct non-blank sanitised sub-questions; ([question], True) when there are none.

    Each is sanitised and cut at MAX_SUB_QUESTION_CHARS; reading stops at the fifth distinct one (an
    output of 100,000 items costs no more than one of five). Sub-questions are shown to the later LM
    calls, so field markers in them are defused like document text.
    """
    items = raw if isinstance(raw, list) else []
    seen: dict[str, str] = {}  # case-folded -> as written (the first spelling wins)
    removed: list[str] = []
    cut: list[str] = []
    for position, item in enumerate(items):
        if len(seen) == MAX_SUB_QUESTIONS or position == _MAX_SUB_QUESTIONS_READ:
            cut.append(f"{len(items)} sub-questions given: reading stopped at item {position + 1}")
            break
        if not isinstance(item, str):
            continue
        clean = sanitise(item, MAX_SUB_QUESTION_CHARS)
        if clean.cut_from is not None:
            cut.append(f"sub-question {position + 1} of {clean.cut_from} characters cut to {MAX_SUB_QUESTION_CHARS}")
        removed.extend(clean.removed)
        if clean.text:
            seen.setdefault(clean.text.casefold(), clean.text)
    cleaned = list(seen.values())
    if cleaned:
        return SubQuestions(cleaned, False, tuple(removed), tuple(cut))
    fallback = sanitise(question, MAX_SUB_QUESTION_CHARS)
    if fallback.cut_from is not None:
        cut.append(f"the question of {fallback.cut_from} characters cut to {MAX_SUB_QUESTION_CHARS}")
    return SubQuestions([fallback.text], True, tuple(removed), tuple(cut))


_INLINE_CITATION = re.compile(r"\[[^\[\]]{1,300}?,\s*(?:page|p\.)\s*\d+\s*\]", re.IGNORECASE)


def strip_inline_citations(text: str) -> str:
    """Bullet text without bracketed page references the LM wrote itself (only checked ones are shown)."""
    # No leading \s*: on a long run of spaces it backtracks quadratically; whitespace collapses instead.
    return " ".join(_INLINE_CITATION.sub("", text).split())


def display_record(text: str) -> str:
    """`text` as the trace records it for display: sanitised and cut at MAX_RECORD_CHARS."""
    return sanitised_text(text, MAX_RECORD_CHARS)
