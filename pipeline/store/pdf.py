"""PDF text by page: PDFium (pypdfium2) first, pypdf only for files PDFium cannot open."""

from __future__ import annotations

import logging
from pathlib import Path

from pipeline.errors import InputFileError

log = logging.getLogger(__name__)

# Real filings carry arrays beyond pypdf's default 100k-element guard (a limit against
# malicious files); raised, not removed, and every other limit stays at its default.
PDF_MAX_ARRAY_ELEMENTS = 5_000_000

# PDFium ends lines with CRLF and marks a hyphen it found at a line break with U+FFFE;
# pypdf writes "\n" and "-", and the text stays the same whichever reader produced it.
_PDFIUM_TEXT = str.maketrans({"\r": None, "\ufffe": "-"})


def read_pdf(path: Path, relpath: str) -> tuple[tuple[str, ...], str | None, str | None]:
    """(pages, title, subject) of a PDF; InputFileError names the file when neither reader can use it.

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


def _read_with_pdfium(path: Path) -> tuple[tuple[str, ...], str | None, str | None]:
    import pypdfium2

    document = pypdfium2.PdfDocument(path)
    try:
        pages = []
        for index in range(len(document)):
            page = document[index]
            text_page = page.get_textpage()
            pages.append(text_page.get_text_range().translate(_PDFIUM_TEXT).strip())
            text_page.close()
            page.close()
        meta = document.get_metadata_dict(skip_empty=True)
    finally:
        document.close()
    return tuple(pages), meta.get("Title") or None, meta.get("Subject") or None


def _read_with_pypdf(path: Path) -> tuple[tuple[str, ...], str | None, str | None]:
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
    return pages, title, summary
