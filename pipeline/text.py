"""The one text normaliser and stopword list, and the few operations built on them (pure functions).

`normalise` (NFKC, hidden characters removed, case-folded, whitespace collapsed) is what every
comparison of text starts from; `fold` is its case-keeping variant that also maps accents and
look-alike letters to Latin, for entity matching. On top of them: `tokens` (words and
compound numbers), `bm25_tokens` (stemmed index terms), `content_words` (what grounding compares)
and `word_set` (what sub-question coverage compares).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Set as AbstractSet
from functools import cache, lru_cache

import Stemmer

# Words that carry no content: left out of index terms, grounding and coverage, and never the
# head of a "<Head> <street type>" address. Function words only: "shall not" still matches when
# quoted, and prepositions that carry terms ("under clause 4", "after the first year", "before
# completion", "per month") stay index terms and count as claims when grounding an answer.
STOPWORDS = frozenset(
    """a also an and are as at be been being by did do does for from has have how in into is it its of on or
    such than that the their then there these they this those to was were what when where which who whom
    will with""".split()
)

# Characters that render as nothing yet carry or hide text: zero-width joiners and spaces, bidi
# controls (which reorder what a reader sees), Unicode tag characters (invisible ASCII copies)
# and variation selectors (which can encode bytes). One table, by kind, used at ingest, by the
# normaliser and when answers are rendered.
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
_HIDDEN_CODES = frozenset(HIDDEN_TRANSLATION)
_HIDDEN = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi, _ in HIDDEN_CHARACTERS) + "]")

# Look-alikes of Latin letters (after NFKC), each string's letters aligned with the Latin ones.
_LOOKALIKES = (
    ("авеёкмнорстухѕіїјԁһԛԝӏьɡɑı", "abeekmhopctyxsiijdhqwlbgai"),  # Cyrillic and Latin small
    ("АВЕЁКМНОРСТУХЅІЇЈԀҺԚԜӀЬⱭꞬ", "ABEEKMHOPCTYXSIIJDHQWIBAG"),  # Cyrillic and Latin capital
    ("αβεηικνορτυχγωμ", "abeniknoptuxywu"),  # Greek small
    ("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX"),  # Greek capital
)
_CONFUSABLES = str.maketrans("".join(a for a, _ in _LOOKALIKES), "".join(b for _, b in _LOOKALIKES))


def _visible(text: str) -> str:
    """NFKC text without hidden characters: the first step of every normal form."""
    if text.isascii():
        return text
    normal = unicodedata.normalize("NFKC", text)
    # A translation looks every character up in a dict: only a text holding one of them pays for it.
    return normal if _HIDDEN_CODES.isdisjoint(map(ord, set(normal))) else normal.translate(HIDDEN_TRANSLATION)


def normalise(text: str) -> str:
    """NFKC-normalised, case-folded text without hidden characters, runs of whitespace collapsed."""
    return " ".join(_visible(text).casefold().split())


def fold(text: str) -> str:
    """Case-preserving skeleton text: NFKC, no invisibles, no accents, look-alikes in Latin."""
    if text.isascii():  # every step leaves ASCII as it is
        return text
    decomposed = unicodedata.normalize("NFD", _visible(text))
    held = set(decomposed)  # a few dozen distinct characters: checked here, not one by one in the text
    marks = {ord(c): None for c in held if unicodedata.combining(c)}
    if marks:
        decomposed = decomposed.translate(marks)
    if not _CONFUSABLES.keys().isdisjoint(map(ord, held)):
        decomposed = decomposed.translate(_CONFUSABLES)
    return unicodedata.normalize("NFC", decomposed)


@cache
def _token_pattern(joiners: str) -> re.Pattern[str]:
    if not joiners:
        return re.compile(r"[0-9a-z]+")
    return re.compile(rf"[0-9a-z]+(?:[{re.escape(joiners)}][0-9a-z]+)*")


def tokens(text: str, joiners: str = "/.,:-") -> list[str]:
    """Words and numbers of `normalise(text)`; a token keeps `joiners` between its parts, so numbered
    references ("2327/30", "4.2.1") and amounts ("1,200,000") stay whole."""
    return _token_pattern(joiners).findall(normalise(text))


@cache
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def bm25_tokens(text: str) -> list[str]:
    """Stemmed index terms of `text`: compound tokens are kept whole and split into their parts."""
    out: list[str] = []
    for match in tokens(text):
        out.extend(_terms(match))
    return out


def word_terms(text: str) -> list[str]:
    """bm25_tokens of `text` without figures (amounts, dates, numbers): what a page says in words,
    so a table's columns of numbers neither match a question's words nor lengthen the page."""
    return [t for t in bm25_tokens(text) if any(c.isalpha() for c in t)]


@lru_cache(maxsize=500_000)
def _terms(match: str) -> tuple[str, ...]:
    """Index terms of one matched token (cached: a corpus repeats its words endlessly)."""
    parts = re.split(r"[/.,:-]", match)
    words = ([match] if len(parts) > 1 else []) + [p for p in parts if p and p not in STOPWORDS]
    stemmer = _stemmer()
    return tuple(t if not t.isalpha() else stemmer.stemWord(t) for t in words)


def content_words(text: str, ignore: AbstractSet[str] = frozenset()) -> set[str]:
    """Words and numbers of `text` that can carry a claim: no stopword, no `ignore` word, no lone
    letter; numbers lose their thousands commas ("285,000" -> "285000")."""
    return {
        w.replace(",", "")
        for w in tokens(text, "/.,")
        if (len(w) > 1 and w not in STOPWORDS and w not in ignore) or w.isdigit()
    }


def word_set(text: str) -> set[str]:
    """The plain words and numbers of `text` other than stopwords."""
    return set(tokens(text, "")) - STOPWORDS


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


# A sentence ends at . ! ? (or a line break) before an upper-case letter, a digit or a quote,
# unless the word before the stop is a short abbreviation ("No. 12", "Mr. Smith", "U.S.", "cf."); a
# short lower-case word ("is due.") ends its sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(A-Z0-9])|\n+")
_ABBREVIATION = re.compile(r"(?:^|\s)(?:[A-Z][A-Za-z]{0,2}|(?:[A-Za-z]\.)+[A-Za-z]?|vs|etc|cf|pp?|no|art|sec|cl|ch)\.$")
# A clause or list number on its own ("1.", "3.2", "(4)", "(b)") opens the sentence after it.
_NUMBERING = re.compile(r"\(?\d{1,3}(?:\.\d{1,3})*[.)]?|\([a-z]{1,3}\)")
MAX_SENTENCE_CHARS = 400


def split_sentences(text: str, max_chars: int = MAX_SENTENCE_CHARS) -> list[str]:
    """The sentences of `text` in order, whitespace collapsed, none empty, each at most `max_chars` long
    (a longer one is cut into pieces between table cells or at a word boundary); a bare clause number joins the sentence
    after it."""
    pieces: list[str] = []
    current = ""
    for part in _SENTENCE_END.split(text):
        part = " ".join(part.split())
        if not part:
            continue
        current = f"{current} {part}" if current else part
        if not _ABBREVIATION.search(current) and not _NUMBERING.fullmatch(current):
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    out: list[str] = []
    for sentence in pieces:
        while len(sentence) > max_chars:
            # a table's text is cut between its cells when one ends in the second half, else at a word boundary
            cell = sentence.rfind(" | ", max_chars // 2, max_chars)
            cut = cell if cell > 0 else sentence.rfind(" ", 0, max_chars)
            cut = cut if cut > 0 else max_chars
            out.append(sentence[:cut])
            sentence = sentence[cut:].strip()
        if sentence:
            out.append(sentence)
    return out


def cut_text(text: str, limit: int) -> tuple[str, int | None]:
    """(`text` within `limit` characters, its length when it had to be cut, else None): cut at the last
    space in the limit when there is one, and marked with an ellipsis."""
    if len(text) <= limit:
        return text, None
    head = text[: max(0, limit - 1)]
    space = head.rfind(" ")
    head = head[:space] if space > limit // 2 else head
    return f"{head.rstrip()}…", len(text)
