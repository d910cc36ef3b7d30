"""Where an answer stands on a page it cites: the chunks kept for it (shaded lightly), the sentences it quotes as
evidence, and its answer line inside them. Pure functions over text.

Quotes are found by their letters and digits only: the quoted sentence went through sanitising and the page
through its own reading, so spaces, punctuation and markup may differ while the words do not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

Mark = Literal["kept", "evidence", "answer"]
# Stronger marks win where they overlap.
STRENGTH: Mapping[Mark, int] = {"kept": 1, "evidence": 2, "answer": 3}
# A quote with fewer letters and digits than this is not looked for (it would match by chance).
MIN_QUOTE_LETTERS = 3

Span = tuple[int, int]


def letters(text: str) -> tuple[str, list[int]]:
    """`text`'s letters and digits (case-folded), and for each the index of the character it came from."""
    kept: list[str] = []
    where: list[int] = []
    for index, char in enumerate(text):
        for folded in char.casefold():
            if folded.isalnum():
                kept.append(folded)
                where.append(index)
    return "".join(kept), where


def quote_spans(text: str, quotes: Sequence[str], within: Sequence[Span] | None = None) -> list[Span]:
    """Character spans of `text` holding each quote (its first occurrence; inside one of `within` when given);
    a quote that is not there gets none."""
    page, where = letters(text)
    spans: list[Span] = []
    for quote in quotes:
        wanted, _ = letters(quote)
        if len(wanted) < MIN_QUOTE_LETTERS:
            continue
        at = page.find(wanted)
        while at >= 0:
            span = (where[at], where[at + len(wanted) - 1] + 1)
            if within is None or any(a <= span[0] and span[1] <= b for a, b in within):
                spans.append(span)
                break
            at = page.find(wanted, at + 1)
    return spans


def strongest(length: int, marks: Mapping[Mark, Sequence[Span]]) -> list[Mark | None]:
    """For each of `length` characters, the strongest mark whose spans cover it (None: unmarked)."""
    level: list[Mark | None] = [None] * length
    for mark in sorted(marks, key=lambda m: STRENGTH[m]):
        for a, b in marks[mark]:
            for index in range(max(0, a), min(b, length)):
                level[index] = mark
    return level


def pieces(text: str, marks: Mapping[Mark, Sequence[Span]]) -> list[tuple[str, Mark | None]]:
    """`text` cut into runs of characters that carry the same mark."""
    level = strongest(len(text), marks)
    out: list[tuple[str, Mark | None]] = []
    start = 0
    for index in range(1, len(text) + 1):
        if index == len(text) or level[index] != level[start]:
            out.append((text[start:index], level[start]))
            start = index
    return out
