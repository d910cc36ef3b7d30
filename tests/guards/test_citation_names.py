"""A citation names its document as a reader knows it: a filing's company, form and period from the catalog, else
its title, else its file name; short, on one line, and escaped where it is written into Markdown. An indexed
EDGAR-style filing called primary-document.html is cited by its company, form and quarter end."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.escapes import MAX_CITATION_NAME, citation_label, markdown_literal, short_name
from pipeline.guards.citations import citation_name
from pipeline.intake.scope import Scope
from pipeline.program.events import Completed, cite
from pipeline.program.module import ScopedQA
from pipeline.settings import ProgramSettings, Settings, StepChoices
from pipeline.store import open_store
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder
from pipeline.types import Document, Entity, SourceRef
from tests.store.test_html_reading import COVER, HEADER, STATEMENT

ACME = Entity(entity_id="e-acme", slug="acme", name="Acme Widgets Inc.")


def _document(
    title: str = "", filename: str = "primary-document.html", owners: tuple[str, ...] = ("e-acme",), **attributes: str
) -> Document:
    return Document(
        document_id="d-1",
        filename=filename,
        relpath=f"10-Q/ACME/1/{filename}",
        title=title,
        summary="",
        doc_type="10-Q",
        page_count=3,
        entity_ids=owners,
        attributes=tuple(attributes.items()),
    )


@pytest.mark.parametrize(
    ("attributes", "named"),
    [
        (
            {"form": "10-Q", "period_end": "2023-07-01", "fiscal_year": "FY2023", "fiscal_period": "2023 Q3"},
            "Acme Widgets Inc. 10-Q, quarter ended July 1, 2023",
        ),
        (
            {"form": "10-K", "period_end": "2024-09-28", "fiscal_year": "FY2024"},
            "Acme Widgets Inc. 10-K, year ended September 28, 2024",
        ),
        ({"form": "20-F", "period_end": "2023-12-31"}, "Acme Widgets Inc. 20-F, period ended December 31, 2023"),
    ],
)
def test_a_filing_is_named_by_its_company_form_and_period(attributes: dict[str, str], named: str) -> None:
    document = _document("ACME WIDGETS INC Form 10-Q for the quarterly period ended July 1, 2023", **attributes)
    assert citation_name(document, {ACME.entity_id: ACME}) == named


def test_without_an_owner_form_or_date_the_title_names_the_document_and_without_a_title_nothing_does() -> None:
    entities = {ACME.entity_id: ACME}
    titled = "Lease Agreement - 14 Banda Lane"
    assert citation_name(_document(titled, owners=(), form="10-Q", period_end="2023-07-01"), entities) == titled
    assert citation_name(_document(titled, form="10-Q", period_end="July 2023"), entities) == titled
    assert citation_name(_document(titled), entities) == titled
    assert citation_name(_document(""), entities) == ""
    assert citation_name(_document("primary-document.html"), entities) == ""  # a title that is the file name
    # a title an index build made from a file name (sanitised: its link gone) says no more than the name
    hostile = "rent](https:evil.example) ![p](https:evil.example?d=secret) [y.md"
    assert citation_name(_document("rent]( p [y", filename=hostile), entities) == ""
    assert citation_name(_document("Lease Agreement", filename="lease.pdf"), entities) == "Lease Agreement"


def test_a_long_or_multi_line_title_is_one_short_line() -> None:
    long = "Annual Report and Accounts of the Northern Mineral Holdings Group for the Financial Year " * 3
    name = citation_name(_document(long), {})
    assert len(name) <= MAX_CITATION_NAME and name.endswith("…") and " " not in name[-2:]
    assert long.startswith(name[:-1])
    assert short_name("Lease\n\tAgreement \x1b[31m- 14\u200b Banda Lane") == "Lease Agreement - 14 Banda Lane"


def test_the_label_escapes_a_title_as_markdown_text_and_cuts_it() -> None:
    from markdown_it import MarkdownIt

    hostile = "Rent](https://evil.example) <b>x</b> *y*"
    label = citation_label(hostile, 3)
    assert label == f"[{markdown_literal(hostile)}, page 3]"
    rendered = MarkdownIt().render(label)
    assert "<a" not in rendered and "<b>" not in rendered and "<em>" not in rendered
    assert len(citation_label("x" * 500, 1)) < MAX_CITATION_NAME + 20
    source = SourceRef(document_id="d", filename="primary-document.html", page=4)
    assert cite(source) == f"[{markdown_literal('primary-document.html')}, page 4]"  # no title: the file name
    assert cite(source.model_copy(update={"title": "Acme Widgets Inc. 10-Q"})) == "[Acme Widgets Inc. 10-Q, page 4]"


def test_an_indexed_filing_is_cited_by_company_form_and_quarter_never_by_its_file_name(tmp_path: Path) -> None:
    corpus = tmp_path / "filings"
    filing = corpus / "10-Q" / "ACME" / "0000000001-23-000001" / "primary-document.html"
    filing.parent.mkdir(parents=True)
    pages = (COVER, STATEMENT)
    body = '<hr style="page-break-after:always"/>'.join(pages)
    filing.write_text(f"<html><head><title>acme-20230701</title></head><body>{HEADER}{body}</body></html>")
    for name in ("memo.txt", "letter.txt", "minutes.txt"):  # BM25 needs a corpus where words are rare
        (corpus / name).write_text(f"A {name} about the office move and the parking rules.", encoding="utf-8")
    (tmp_path / "corpus.toml").write_text(
        'format = "scoperag-corpus/v1"\nname = "filings"\nentity_kind = "company"\n\n'
        '[[entities]]\nslug = "acme"\nname = "Acme Widgets Inc."\naliases = ["Acme"]\n\n'
        '[[documents]]\npath = "*/ACME/*/primary-document.html"\nentities = ["acme"]\n',
        encoding="utf-8",
    )
    build_index(corpus, tmp_path / "index", HashEmbedder(32), manifest_path=tmp_path / "corpus.toml")
    store = open_store(tmp_path / "index", HashEmbedder(32))
    floors = StepChoices(decompose="question", score="keep_all", answer="span", abstain="support", compute="rows")
    program = ScopedQA(store, Settings(program=ProgramSettings(steps=floors)))
    acme = store.resolve_entity("acme")
    events = list(
        program.stream("What were net sales for the three months?", Scope(kind="property", entity_id=acme.entity_id))
    )
    done = events[-1]
    assert isinstance(done, Completed) and done.sections
    cited = [s for section in done.sections for s in (*section.answer_sources, *section.sources)]
    assert cited and all(s.filename == "primary-document.html" for s in cited)
    assert {s.title for s in cited} == {"Acme Widgets Inc. 10-Q, quarter ended July 1, 2023"}
    assert "primary-document" not in done.answer  # the Markdown answer
    assert "[Acme Widgets Inc. 10-Q, quarter ended July 1, 2023, page 2]" in done.answer
