"""The demo corpus's documents as files: Markdown with front matter, or a PDF with one logical page per page.

Both are byte-identical on every run: PDFs carry a fixed creation date.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from demo_templates import Doc
from fpdf import FPDF

PDF_DATE = datetime(2024, 1, 1, tzinfo=UTC)
PAGE_BREAK = "<!-- pagebreak -->"


def yaml_str(value: str) -> str:
    """A YAML double-quoted scalar (JSON string syntax is valid YAML)."""
    return json.dumps(value, ensure_ascii=False)


def render_markdown(doc: Doc) -> bytes:
    """Front matter, then the pages separated by a page-break comment line."""
    header = [
        "---",
        f"title: {yaml_str(doc.title)}",
        f"type: {doc.type}",
        f"summary: {yaml_str(doc.summary)}",
        "---",
    ]
    pages = []
    for page in doc.pages:
        lines: list[str] = []
        for kind, value in page:
            if kind == "h1":
                lines.append(f"# {value}")
            elif kind == "h2":
                lines.append(f"## {value}")
            elif kind == "p":
                lines.append(str(value))
            elif kind == "ul":
                lines.append("\n".join(f"- {item}" for item in value))  # type: ignore[attr-defined]
            elif kind == "kv":
                rows = ["| Item | Detail |", "| --- | --- |"]
                rows += [f"| {k} | {v} |" for k, v in value]  # type: ignore[attr-defined]
                lines.append("\n".join(rows))
            else:
                raise ValueError(f"unknown block kind {kind!r} in {doc.path}")
        pages.append("\n\n".join(lines))
    body = f"\n\n{PAGE_BREAK}\n\n".join(pages)
    return ("\n".join(header) + "\n\n" + body + "\n").encode("utf-8")


class _DemoPdf(FPDF):
    def __init__(self, total_pages: int) -> None:
        super().__init__(format="A4")
        self.total_pages = total_pages

    def footer(self) -> None:
        self.set_y(-12)
        self.set_font("Helvetica", "I", 8)
        self.cell(0, 5, f"Page {self.page_no()} of {self.total_pages}", align="C")


def _latin1(text: str, doc: Doc) -> str:
    try:
        text.encode("latin-1")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{doc.path}: PDF text must be latin-1 (core fonts): {text!r}") from exc
    return text


def render_pdf(doc: Doc) -> bytes:
    """A PDF with one logical page per PDF page, title and subject (= summary) in the metadata."""
    pdf = _DemoPdf(len(doc.pages))
    pdf.set_creation_date(PDF_DATE)
    pdf.set_compression(True)
    pdf.set_title(_latin1(doc.title, doc))
    pdf.set_subject(_latin1(doc.summary, doc))
    pdf.set_author("scoperag demo corpus (fictional)")
    pdf.set_creator("scripts/make_demo_corpus.py")
    pdf.set_auto_page_break(auto=True, margin=18)
    pdf.set_margins(18, 18, 18)
    for number, page in enumerate(doc.pages, start=1):
        pdf.add_page()
        for kind, value in page:
            if kind == "h1":
                pdf.set_font("Helvetica", "B", 14)
                pdf.multi_cell(0, 7, _latin1(str(value), doc), new_x="LMARGIN", new_y="NEXT")
                pdf.ln(2)
            elif kind == "h2":
                pdf.ln(1)
                pdf.set_font("Helvetica", "B", 11)
                pdf.multi_cell(0, 6, _latin1(str(value), doc), new_x="LMARGIN", new_y="NEXT")
            elif kind == "p":
                pdf.set_font("Helvetica", "", 10)
                pdf.multi_cell(0, 5, _latin1(str(value), doc), new_x="LMARGIN", new_y="NEXT")
                pdf.ln(1.5)
            elif kind == "ul":
                pdf.set_font("Helvetica", "", 10)
                for item in value:  # type: ignore[attr-defined]
                    pdf.set_x(pdf.l_margin + 4)
                    pdf.multi_cell(0, 5, _latin1(f"- {item}", doc), new_x="LMARGIN", new_y="NEXT")
                pdf.ln(1.5)
            elif kind == "kv":
                for key, val in value:  # type: ignore[attr-defined]
                    pdf.set_font("Helvetica", "B", 10)
                    pdf.cell(62, 5, _latin1(f"{key}:", doc))
                    pdf.set_font("Helvetica", "", 10)
                    pdf.multi_cell(0, 5, _latin1(str(val), doc), new_x="LMARGIN", new_y="NEXT")
                pdf.ln(1.5)
            else:
                raise ValueError(f"unknown block kind {kind!r} in {doc.path}")
        if pdf.page_no() != number:
            raise ValueError(f"{doc.path}: logical page {number} overflowed onto PDF page {pdf.page_no()}")
    return bytes(pdf.output())
