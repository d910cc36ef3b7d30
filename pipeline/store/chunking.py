"""Splitting pages into overlapping word windows that never cross a page boundary."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class PageChunk:
    """Text of one chunk, its 1-based page and its ordinal within the document."""

    page: int
    ordinal: int
    text: str


def chunk_pages(pages: tuple[str, ...] | list[str], size: int = 120, overlap: int = 30) -> list[PageChunk]:
    """Chunks of at most `size` words, consecutive chunks of a page sharing `overlap` words."""
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError(f"need size > 0 and 0 <= overlap < size, got size={size}, overlap={overlap}")
    chunks: list[PageChunk] = []
    step = size - overlap
    for page_number, page in enumerate(pages, start=1):
        words = page.split()
        if not words:
            continue
        start = 0
        while True:
            window = words[start : start + size]
            chunks.append(PageChunk(page=page_number, ordinal=len(chunks), text=" ".join(window)))
            if start + size >= len(words):
                break
            start += step
    return chunks


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def extractive_summary(pages: tuple[str, ...] | list[str], max_chars: int = 360) -> str:
    """The document's first substantive sentences, up to `max_chars` (deterministic)."""
    text = " ".join(line.strip("#*>- \t") for page in pages for line in page.splitlines() if line.strip())
    summary = ""
    for sentence in _SENTENCE_END.split(text):
        sentence = " ".join(sentence.split())
        if len(sentence.split()) < 4:
            continue
        candidate = f"{summary} {sentence}".strip()
        if len(candidate) > max_chars:
            break
        summary = candidate
    return summary or " ".join(text.split())[:max_chars]
