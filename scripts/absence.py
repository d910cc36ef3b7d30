"""The absence check of the unanswerable-in-scope examples the trace builders write.

An example asks for a fact that no document in its scope states (a service charge, a break clause, a
segment the company does not report). Each such fact is named by its markers: regular expressions for
the words a document stating it would have to use ("service charge", r"\\d[\\d,]* employees"). A marker
matches whole words of the text as pipeline.text.normalise gives it (NFKC, case-folded, hidden characters
dropped, whitespace collapsed: PDF line breaks fall anywhere).
`require_absent` stops a build, naming the document, page or chunk and the words found, when any marker
occurs in any page of any document in scope as the index reads it (pipeline.store.reading), or, given a
built index, in any of those documents' chunks as its catalog stores them (`index_chunks`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import ExamplesError
from pipeline.store.catalog import Catalog
from pipeline.store.generations import open_generation
from pipeline.text import normalise

EXCERPT_CHARS = 60


def marker_pattern(marker: str) -> re.Pattern[str]:
    """A marker as whole words of normalised text: "parking" does not match "parkings" or "sparking"."""
    if not marker.strip():
        raise ExamplesError("an absence marker is empty: name the words a document stating the fact would use")
    return re.compile(rf"(?<!\w)(?:{marker})(?!\w)")


@dataclass(frozen=True)
class MarkerHit:
    """A marker found in a document: where (page or chunk number, 1-based) and the words around it."""

    document: str
    marker: str
    unit: str
    number: int
    excerpt: str

    def __str__(self) -> str:
        return f"{self.document} {self.unit} {self.number}: {self.marker!r} in ...{self.excerpt}..."


def marker_hits(
    markers: Sequence[str], texts: Mapping[str, Sequence[str]], documents: Iterable[str], unit: str = "page"
) -> list[MarkerHit]:
    """Every (document, text unit, marker) where a marker occurs; ExamplesError for a document without text."""
    patterns = [(m, marker_pattern(m)) for m in markers]
    hits: list[MarkerHit] = []
    for document in sorted(set(documents)):
        if document not in texts:
            raise ExamplesError(f"{document}: no text to check an absent fact against (is it in the corpus?)")
        for number, text in enumerate(texts[document], start=1):
            flat = normalise(text)
            for marker, pattern in patterns:
                found = pattern.search(flat)
                if found:
                    start, end = max(0, found.start() - EXCERPT_CHARS), found.end() + EXCERPT_CHARS
                    hits.append(MarkerHit(document, marker, unit, number, flat[start:end]))
    return hits


def require_absent(
    where: str,
    markers: Sequence[str],
    documents: Iterable[str],
    pages: Mapping[str, Sequence[str]],
    chunks: Mapping[str, Sequence[str]] | None = None,
) -> None:
    """Stop unless no marker occurs in any page (and, given, any index chunk) of `documents`."""
    if not markers:
        raise ExamplesError(f"{where}: an absent fact needs at least one marker")
    scoped = sorted(set(documents))
    if not scoped:
        raise ExamplesError(f"{where}: an absent fact is checked against no document: the scope is empty")
    hits = marker_hits(markers, pages, scoped)
    if chunks is not None:
        hits += marker_hits(markers, chunks, scoped, unit="chunk")
    if hits:
        shown = "\n  ".join(str(h) for h in hits[:5])
        more = f"\n  ... and {len(hits) - 5} more" if len(hits) > 5 else ""
        raise ExamplesError(
            f"{where}: the fact asked is meant to be absent from its scope, but a document in scope states it:\n"
            f"  {shown}{more}\nDrop the example or change the fact asked."
        )


def index_chunks(index_dir: Path) -> dict[str, tuple[str, ...]]:
    """Every document's chunk texts (in catalog order) of the index at `index_dir`, by relative path."""
    _, generation = open_generation(index_dir)
    catalog = Catalog(generation / "catalog.sqlite")
    try:
        return {
            document.relpath: tuple(c.text for c in catalog.chunks(catalog.rows_for_documents([did])))
            for did, document in catalog.documents.items()
        }
    finally:
        catalog.close()
