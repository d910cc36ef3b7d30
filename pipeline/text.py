"""Text normalisation and the BM25 tokenizer (pure functions)."""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache

import Stemmer

# Words too common to help ranking; kept short on purpose so that legal phrasing such as
# "shall not" still matches when quoted.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
        "what",
        "which",
        "who",
        "whom",
        "how",
        "when",
        "where",
        "does",
        "do",
        "did",
    ]
)

# Compound tokens first (parcel numbers "2327/30", clause numbers "4.2.1", amounts
# "1,200,000"), then plain words; compounds are also split into their parts.
_TOKEN = re.compile(r"[0-9a-z]+(?:[/.,:-][0-9a-z]+)*")


def normalise(text: str) -> str:
    """NFKC-normalised, case-folded text with runs of whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@cache
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def bm25_tokens(text: str) -> list[str]:
    """Stemmed index terms of `text`; compound literals are kept whole and split."""
    out: list[str] = []
    for match in _TOKEN.findall(normalise(text)):
        out.extend(_terms(match))
    return out


@lru_cache(maxsize=500_000)
def _terms(match: str) -> tuple[str, ...]:
    """Index terms of one matched token (cached: a corpus repeats its words endlessly)."""
    parts = re.split(r"[/.,:-]", match)
    words = ([match] if len(parts) > 1 else []) + [p for p in parts if p and p not in STOPWORDS]
    stemmer = _stemmer()
    return tuple(t if not t.isalpha() else stemmer.stemWord(t) for t in words)


# Characters that render as nothing yet carry or hide text: zero-width joiners and spaces, bidi
# controls (which reorder what a reader sees), Unicode tag characters (invisible ASCII copies)
# and variation selectors (which can encode bytes). One table, by kind, used at ingest, by the
# entity matcher and when answers are rendered.
HIDDEN_CHARACTERS: tuple[tuple[int, int, str], ...] = (
    (0x00AD, 0x00AD, "format"),  # soft hyphen
    (0x034F, 0x034F, "format"),  # combining grapheme joiner
    (0x061C, 0x061C, "bidi"),  # Arabic letter mark
    (0x115F, 0x1160, "filler"),  # Hangul fillers
    (0x180E, 0x180E, "format"),  # Mongolian vowel separator
    (0x200B, 0x200D, "zero_width"),
    (0x200E, 0x200F, "bidi"),  # left-to-right / right-to-left marks
    (0x202A, 0x202E, "bidi"),  # embeddings and overrides
    (0x2060, 0x2065, "zero_width"),  # word joiner, invisible operators
    (0x2066, 0x2069, "bidi"),  # isolates
    (0x206A, 0x206F, "format"),  # deprecated format characters
    (0x3164, 0x3164, "filler"),
    (0xFE00, 0xFE0F, "variation_selector"),
    (0xFEFF, 0xFEFF, "zero_width"),  # byte order mark / zero-width no-break space
    (0xFFA0, 0xFFA0, "filler"),
    (0xE0000, 0xE007F, "tag"),
    (0xE0100, 0xE01EF, "variation_selector"),
)
HIDDEN_TRANSLATION = dict.fromkeys(c for lo, hi, _ in HIDDEN_CHARACTERS for c in range(lo, hi + 1))
_HIDDEN = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi, _ in HIDDEN_CHARACTERS) + "]")


def hidden_kind(char: str) -> str:
    """The kind of hidden character `char` is ("zero_width", "bidi", "tag", ...)."""
    code = ord(char)
    return next(kind for lo, hi, kind in HIDDEN_CHARACTERS if lo <= code <= hi)


def strip_hidden(text: str) -> tuple[str, dict[str, int]]:
    """`text` without hidden characters, and how many of each kind were removed."""
    found: dict[str, int] = {}
    for match in _HIDDEN.finditer(text):
        kind = hidden_kind(match.group(0))
        found[kind] = found.get(kind, 0) + 1
    return (_HIDDEN.sub("", text), found) if found else (text, found)
