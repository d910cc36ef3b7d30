"""PDF text by page: PDFium (pypdfium2) first, pypdf only for files PDFium cannot open; table rows from
PDFium's layout of the words (pipeline.store.pdf_tables)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import InputFileError
from pipeline.store.pdf_lines import Word, may_hold_tables
from pipeline.store.pdf_tables import page_rows
from pipeline.types import TableRow

log = logging.getLogger(__name__)

# Real filings carry arrays beyond pypdf's default 100k-element guard (a limit against
# malicious files); raised, not removed, and every other limit stays at its default.
PDF_MAX_ARRAY_ELEMENTS = 5_000_000

# PDFium ends lines with CRLF and marks a hyphen it found at a line break with U+FFFE;
# pypdf writes "\n" and "-", and the text stays the same whichever reader produced it.
_PDFIUM_TEXT = str.maketrans({"\r": None, "\ufffe": "-"})


@dataclass(frozen=True)
class PdfRead:
    """What a PDF gives: its pages' text (page 1 first), its title and subject, and its tables' rows."""

    pages: tuple[str, ...]
    title: str | None
    subject: str | None
    rows: tuple[TableRow, ...] = ()


def read_pdf(path: Path, relpath: str) -> PdfRead:
    """Pages, metadata and table rows of a PDF; InputFileError names the file when neither reader can
    use it (pypdf, the fallback, reads no tables).

    An encrypted file opens when its user password is empty (the usual "no copying" PDFs).
    """
    import pypdfium2

    try:
        return _read_with_pdfium(path)
    except pypdfium2.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise InputFileError(relpath, "PDF is protected by a password; index an unprotected copy") from exc
        first = f"{type(exc).__name__}: {exc}"
    log.info("%s: PDFium could not read it (%s); trying pypdf", relpath, first)
    try:
        return _read_with_pypdf(path)
    except InputFileError as exc:
        raise InputFileError(relpath, f"corrupt or unreadable PDF ({first}; {exc.reason})") from exc


def _read_with_pdfium(path: Path) -> PdfRead:
    import pypdfium2

    document = pypdfium2.PdfDocument(path)
    try:
        pages = []
        rows: list[TableRow] = []
        for index in range(len(document)):
            page = document[index]
            text_page = page.get_textpage()
            text = text_page.get_text_range()
            pages.append(text.translate(_PDFIUM_TEXT).strip())
            if may_hold_tables(text):
                rows.extend(page_rows(page_words(text_page, text), index + 1, len(rows)))
            text_page.close()
            page.close()
        meta = document.get_metadata_dict(skip_empty=True)
    finally:
        document.close()
    return PdfRead(tuple(pages), meta.get("Title") or None, meta.get("Subject") or None, tuple(rows))


def page_words(text_page: Any, text: str) -> list[Word]:
    """The words of a PDFium text page (`text` its whole text) with their boxes: a word's left and right
    from its first and last character, its height from the font's bounds (loose boxes), so that the words
    of one line share a baseline band whatever their glyphs."""
    import pypdfium2.raw as pdfium_c

    aligned = len(text) == text_page.count_chars()
    handle = text_page.raw  # the raw handle: each call then skips pypdfium2's conversion
    rect = pdfium_c.FS_RECTF()
    words: list[Word] = []
    for match in re.finditer(r"\S+", text):
        first, last = match.start(), match.end() - 1
        if not aligned:  # characters PDFium added or left out of the text: map text indices to characters
            first = pdfium_c.FPDFText_GetCharIndexFromTextIndex(handle, first)
            last = pdfium_c.FPDFText_GetCharIndexFromTextIndex(handle, last)
            if first < 0 or last < first:
                continue
        if not pdfium_c.FPDFText_GetLooseCharBox(handle, first, rect):
            continue
        x0, bottom, top = rect.left, rect.bottom, rect.top
        if not pdfium_c.FPDFText_GetLooseCharBox(handle, last, rect):
            continue
        words.append(Word(match.group().translate(_PDFIUM_TEXT), x0, max(x0, rect.right), bottom, top))
    return words


def _read_with_pypdf(path: Path) -> PdfRead:
    from pypdf import PdfReader, apply_configuration
    from pypdf.errors import PyPdfError

    try:
        with apply_configuration(array_maximum_element_count=PDF_MAX_ARRAY_ELEMENTS):
            reader = PdfReader(path)
            pages = tuple((page.extract_text() or "").strip() for page in reader.pages)
            meta = reader.metadata
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, RecursionError) as exc:
        raise InputFileError(str(path), f"pypdf {type(exc).__name__}: {exc}") from exc
    title = (meta.title or None) if meta else None
    summary = (meta.subject or None) if meta else None
    return PdfRead(pages, title, summary)
