"""PDF reading: PDFium first (pages, metadata, empty-password encryption), pypdf as fallback, parallel processes."""

from __future__ import annotations

from pathlib import Path

import pypdfium2
import pytest
from fpdf import FPDF

from pipeline.errors import InputFileError
from pipeline.store import pdf
from pipeline.store.reading import read_source, read_sources

PAGES = ["Valuation of 3 Dik Dik Lane by Knight Frank.", "Market value KSH 45,000,000 as at June 2023."]


def _pdf(path: Path, pages: list[str], title: str | None = None, user_password: str | None = None) -> Path:
    document = FPDF()
    document.set_font("Helvetica", size=11)
    if title:
        document.set_title(title)
    document.set_subject("Valuation report")
    if user_password is not None:
        document.set_encryption(owner_password="owner", user_password=user_password)
    for text in pages:
        document.add_page()
        document.multi_cell(0, 6, text)
    document.output(str(path))
    return path


def test_pages_and_metadata_are_read_with_pdfium(tmp_path: Path) -> None:
    source = read_source(_pdf(tmp_path / "v.pdf", PAGES, title="Valuation"), "v.pdf")
    assert source.pages == tuple(PAGES)  # one entry per page, page 1 first
    assert (source.own.title, source.own.summary) == ("Valuation", "Valuation report")


def test_pdfium_and_pypdf_give_the_same_words(tmp_path: Path) -> None:
    long_page = " ".join(f"clause {i} the tenant shall pay rent of KSH {i},000 monthly" for i in range(60))
    path = _pdf(tmp_path / "long.pdf", [long_page, *PAGES])
    with_pdfium = pdf.read_pdf(path, "long.pdf").pages
    with_pypdf = pdf._read_with_pypdf(path).pages
    assert [page.split() for page in with_pdfium] == [page.split() for page in with_pypdf]
    assert "\r" not in "".join(with_pdfium)


def test_an_empty_user_password_is_no_obstacle(tmp_path: Path) -> None:
    source = read_source(_pdf(tmp_path / "locked.pdf", PAGES, user_password=""), "locked.pdf")
    assert source.pages == tuple(PAGES)


def test_a_real_password_is_named_as_the_problem(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"locked\.pdf: PDF is protected by a password"):
        read_source(_pdf(tmp_path / "locked.pdf", PAGES, user_password="secret"), "locked.pdf")


def test_hidden_characters_in_pdf_metadata_are_stripped(tmp_path: Path) -> None:
    source = read_source(_pdf(tmp_path / "h.pdf", PAGES, title="Valu\u200bation\u202e"), "h.pdf")
    assert source.own.title == "Valuation"
    assert source.hidden == {"zero_width": 1, "bidi": 1}


def test_pypdf_reads_what_pdfium_cannot_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _pdf(tmp_path / "v.pdf", PAGES, title="Valuation")

    def refuse(*args: object, **kwargs: object) -> None:
        raise pypdfium2.PdfiumError("Failed to load document (PDFium: Data format error).")

    monkeypatch.setattr(pypdfium2, "PdfDocument", refuse)
    source = read_source(path, "v.pdf")
    assert source.pages == tuple(PAGES) and source.own.title == "Valuation"


def test_a_file_neither_reader_can_use_names_both_reasons(tmp_path: Path) -> None:
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    with pytest.raises(InputFileError, match=r"broken\.pdf: corrupt or unreadable PDF \(PdfiumError.*; pypdf"):
        read_source(tmp_path / "broken.pdf", "broken.pdf")


def test_parallel_reading_keeps_order_and_carries_errors_across_processes(tmp_path: Path) -> None:
    files = []
    for i in range(4):
        files.append(
            (_pdf(tmp_path / f"d{i}.pdf", [f"Document {i} page one.", f"Document {i} page two."]), f"d{i}.pdf")
        )
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 broken")
    files.insert(2, (tmp_path / "broken.pdf", "broken.pdf"))
    parallel = list(read_sources(files, workers=2))
    sequential = list(read_sources(files, workers=1))
    assert [type(r).__name__ for r in parallel] == ["SourceFile"] * 2 + ["InputFileError"] + ["SourceFile"] * 2
    broken = parallel[2]
    assert isinstance(broken, InputFileError) and broken.path == "broken.pdf" and "PDF" in broken.reason
    assert [r for i, r in enumerate(parallel) if i != 2] == [r for i, r in enumerate(sequential) if i != 2]
    assert [r.pages[1] for r in parallel if not isinstance(r, InputFileError)][-1] == "Document 3 page two."
