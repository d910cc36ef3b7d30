"""A cited page as the web page shows it: its text with the chunks kept for the answer shaded, the sentences it
quotes and its answer line marked (pipeline.serving.highlights), and a PDF page as a PNG marked the same way.

The text is the page's indexed text (its chunks' words, rebuilt from the catalog), or the original file's
page when the server was given the corpus folder and that page still holds exactly the indexed words (it
then keeps its line breaks, and a PDF page can be drawn). Every piece of text is sanitised
(guards.sanitise) before it leaves the server; the client inserts it as text.
"""

from __future__ import annotations

import io
import logging
import math
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pipeline.errors import InputFileError
from pipeline.guards.sanitise import sanitised_text
from pipeline.serving.highlights import Mark, letters, pieces, quote_spans
from pipeline.store import Store
from pipeline.store.reading import read_source
from pipeline.types import Chunk, Document

log = logging.getLogger(__name__)

MAX_PAGE_CHARS = 200_000  # a page's text beyond this is not shown
MAX_SEGMENT_CHARS = 20_000
SNIPPET_CHARS = 300
RENDER_WIDTH = 1000  # pixels across a rendered PDF page
MAX_RENDER_PIXELS = 3_000_000
# Characters of a chunk (letters and digits only) matched at each end to find it on a rendered page.
MATCH_CHARS = 40
# A kept chunk is shaded lightly, a quoted sentence in yellow, the answer line outlined in orange.
HIGHLIGHT_FILL: dict[Mark, tuple[int, int, int, int]] = {
    "kept": (255, 212, 0, 40),
    "evidence": (255, 212, 0, 120),
    "answer": (255, 140, 0, 140),
}
HIGHLIGHT_LINE: dict[Mark, tuple[int, int, int, int] | None] = {
    "kept": None,
    "evidence": (184, 134, 11, 255),
    "answer": (178, 34, 34, 255),
}
# PDFium is not thread-safe; the server reads and draws PDFs from several request threads.
_PDFIUM = threading.Lock()


@dataclass(frozen=True)
class Segment:
    """A run of display text on one line; `cited` when it lies in a chunk kept for the answer or a quote, `mark`
    the strongest highlight on it."""

    text: str
    cited: bool
    mark: Mark | None = None


@dataclass(frozen=True)
class Box:
    """A highlighted rectangle on a rendered page, as fractions of the page's width and height."""

    left: float
    top: float
    width: float
    height: float
    mark: Mark = "kept"


@dataclass(frozen=True)
class PageContent:
    """One page's display lines, whether its original file matched the index, and why it did not."""

    lines: list[list[Segment]]
    original: Path | None
    note: str | None


def page_chunks(store: Store, document: Document, page: int) -> list[Chunk]:
    """The indexed chunks of one page of `document`, in order."""
    rows = store.catalog.rows_for_documents([document.document_id]).tolist()
    return [c for c in store.catalog.chunks(rows) if c.page == page]


def chunks_at(store: Store, rows: Sequence[int], document_id: str, page: int) -> list[Chunk]:
    """The chunks at `rows` that still lie on that page of that document (a history may be older than the index)."""
    valid = [r for r in rows if 0 <= r < store.catalog.chunk_count]
    return [c for c in store.catalog.chunks(valid) if c.document_id == document_id and c.page == page]


def page_words(chunks: Sequence[Chunk], overlap: int) -> list[str]:
    """The words of one page rebuilt from its chunks (each after the first repeats `overlap` words)."""
    words: list[str] = []
    for number, chunk in enumerate(sorted(chunks, key=lambda c: c.ordinal)):
        split = chunk.text.split()
        words.extend(split if number == 0 else split[overlap:])
    return words


def find_words(words: Sequence[str], wanted: Sequence[str], start: int = 0) -> int | None:
    """Where the run `wanted` first occurs in `words` at or after `start`; None when it does not."""
    if not wanted:
        return None
    first = wanted[0]
    for i in range(start, len(words) - len(wanted) + 1):
        if words[i] == first and list(words[i : i + len(wanted)]) == list(wanted):
            return i
    return None


def cited_spans(text: str, cited: Sequence[Sequence[str]]) -> list[tuple[int, int]]:
    """Character spans of `text` holding each cited word run (merged, in order)."""
    tokens = [m.span() for m in re.finditer(r"\S+", text)]
    words = [text[a:b] for a, b in tokens]
    spans = []
    for run in cited:
        at = find_words(words, run)
        if at is not None:
            spans.append((tokens[at][0], tokens[at + len(run) - 1][1]))
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def display_lines(
    text: str, spans: Sequence[tuple[int, int]], marks: Mapping[Mark, Sequence[tuple[int, int]]] | None = None
) -> list[list[Segment]]:
    """`text` as lines of sanitised segments: the characters inside `spans` (kept chunks) cited, and those inside
    `marks` (quotes, the answer line) cited with that mark."""
    text = text[:MAX_PAGE_CHARS]
    lines: list[list[Segment]] = [[]]
    for piece, mark in pieces(text, {"kept": spans, **(marks or {})}):
        for number, part in enumerate(piece.split("\n")):
            if number:
                lines.append([])
            clean = sanitised_text(part, MAX_SEGMENT_CHARS)
            if clean:
                lines[-1].append(Segment(clean, mark is not None, mark))
    return lines


def snippet(chunks: Sequence[Chunk]) -> str:
    """The first chunk's text as a short sanitised snippet ("" when there is none)."""
    return sanitised_text(chunks[0].text, SNIPPET_CHARS) if chunks else ""


def page_content(
    store: Store,
    corpus: Path | None,
    document: Document,
    page: int,
    cited: Sequence[Chunk],
    quotes: Sequence[str] = (),
    answers: Sequence[str] = (),
) -> PageContent:
    """The page's display lines with `cited` chunks shaded, the `quotes` marked and each of `answers` marked where
    it stands inside a quote; from the original file when it still matches the index."""
    overlap = int(store.manifest.settings.get("chunk_overlap", 0))
    indexed = page_words(page_chunks(store, document, page), overlap)
    runs = [c.text.split() for c in cited]
    original, note = _original_page(corpus, document, page, indexed)
    text = original if original is not None else " ".join(indexed)
    evidence = quote_spans(text, quotes)
    marks: dict[Mark, list[tuple[int, int]]] = {"evidence": evidence, "answer": quote_spans(text, answers, evidence)}
    lines = display_lines(text, cited_spans(text, runs), marks)
    path = _source_path(corpus, document) if original is not None else None
    return PageContent(lines, path, note)


def _source_path(corpus: Path | None, document: Document) -> Path | None:
    """The document's file under `corpus`, never outside it; None when there is none."""
    if corpus is None:
        return None
    root = corpus.resolve()
    path = (root / document.relpath).resolve()
    return path if path.is_relative_to(root) and path.is_file() else None


def _original_page(
    corpus: Path | None, document: Document, page: int, indexed: list[str]
) -> tuple[str | None, str | None]:
    """The original page's text when the file is there and holds exactly the indexed words; else why not."""
    if corpus is None:
        return None, "the indexed text of this page (start the server with --corpus to show the original file)"
    path = _source_path(corpus, document)
    if path is None:
        return None, "the indexed text of this page (its file is not in the corpus folder)"
    stat = path.stat()
    try:
        with _PDFIUM:  # the reader opens PDFs with PDFium too
            pages = _read_pages(str(path), document.relpath, stat.st_mtime_ns, stat.st_size)
    except InputFileError as exc:
        log.warning("cannot read %s: %s", path, exc)
        return None, "the indexed text of this page (its file cannot be read)"
    if page > len(pages) or pages[page - 1].split() != indexed:
        return None, "the indexed text of this page (its file changed after indexing)"
    return pages[page - 1], None


@lru_cache(maxsize=32)
def _read_pages(path: str, relpath: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    """The pages of one file as the index read them (cached per file version)."""
    return read_source(Path(path), relpath).pages


def pdf_boxes(
    path: Path, page: int, cited: Sequence[Chunk], quotes: Sequence[str] = (), answers: Sequence[str] = ()
) -> list[Box]:
    """Where the `cited` chunks, the `quotes` and the `answers` are on page `page` of the PDF at `path`, in that
    order (none when PDFium cannot read it)."""
    import pypdfium2 as pdfium

    with _PDFIUM:
        try:
            pdf = pdfium.PdfDocument(path)
        except pdfium.PdfiumError as exc:
            log.warning("PDFium cannot open %s: %s", path, exc)
            return []
        try:
            pdf_page = pdf[page - 1]
            textpage = pdf_page.get_textpage()
            width, height = pdf_page.get_size()
            marked: list[tuple[str, Mark]] = [
                *((c.text, "kept") for c in cited),
                *((q, "evidence") for q in quotes),
                *((a, "answer") for a in answers),
            ]
            boxes = _boxes(textpage, marked, width, height)
            textpage.close()
            pdf_page.close()
        except pdfium.PdfiumError as exc:
            log.warning("PDFium cannot read page %d of %s: %s", page, path, exc)
            return []
        finally:
            pdf.close()
    return boxes


def render_pdf_page(
    path: Path, page: int, cited: Sequence[Chunk], quotes: Sequence[str] = (), answers: Sequence[str] = ()
) -> bytes:
    """Page `page` of the PDF at `path` as PNG bytes, the `cited` chunks shaded and the `quotes` and `answers`
    highlighted; InputFileError when PDFium cannot draw it."""
    import pypdfium2 as pdfium
    from PIL import Image, ImageDraw

    boxes = pdf_boxes(path, page, cited, quotes, answers)
    with _PDFIUM:
        try:
            pdf = pdfium.PdfDocument(path)
            try:
                pdf_page = pdf[page - 1]
                width, height = pdf_page.get_size()
                scale = min(RENDER_WIDTH / width, math.sqrt(MAX_RENDER_PIXELS / (width * height)))
                image = pdf_page.render(scale=scale).to_pil().convert("RGBA")
                pdf_page.close()
            finally:
                pdf.close()
        except pdfium.PdfiumError as exc:
            raise InputFileError(str(path), f"PDFium cannot draw page {page} ({exc})") from exc
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for box in boxes:
        left, top = box.left * image.width, box.top * image.height
        right, bottom = left + box.width * image.width, top + box.height * image.height
        draw.rectangle(
            (left - 2, top - 2, right + 2, bottom + 2), fill=HIGHLIGHT_FILL[box.mark], outline=HIGHLIGHT_LINE[box.mark]
        )
    out = io.BytesIO()
    Image.alpha_composite(image, overlay).convert("RGB").save(out, "PNG", optimize=True)
    return out.getvalue()


def _boxes(textpage: Any, marked: Sequence[tuple[str, Mark]], width: float, height: float) -> list[Box]:
    """Rectangles covering each marked text on the page, found by its letters (PDFium and the index may
    split words and lines differently); a text that cannot be found gets none."""
    count = textpage.count_chars()
    text = textpage.get_text_range()
    if len(text) != count:  # the text view and the character list disagree: no safe mapping
        return []
    found, where = letters(text)
    boxes = []
    for wanted_text, mark in marked:
        wanted, _ = letters(wanted_text)
        head, tail = wanted[:MATCH_CHARS], wanted[-MATCH_CHARS:]
        start = found.find(head) if head else -1
        end = found.find(tail, start) if start >= 0 else -1
        if start < 0 or end < 0:
            continue
        first, last = where[start], where[end + len(tail) - 1]
        for number in range(textpage.count_rects(first, last - first + 1)):
            left, bottom, right, top = textpage.get_rect(number)
            boxes.append(
                Box(left / width, (height - top) / height, (right - left) / width, (top - bottom) / height, mark)
            )
    return boxes
