"""A typed value as people read it, the same on every surface (terminal, Markdown, history): the number grouped
with its scale, currency or unit, its kind, period and pages; an absent value with why. Titles reach every page a
section cites, the value's pages included; the SSE frame carries the value as JSON."""

from __future__ import annotations

import json

import pytest

from pipeline.program.events import Completed, Evidence, Section, render_markdown, value_text, with_titles
from pipeline.serving.sse import frame
from pipeline.types import SourceRef
from pipeline.values.typed import TypedValue

A4 = SourceRef(
    document_id="a", filename="primary-document.html", page=4, title="Apple Inc. 10-Q, quarter ended July 1, 2023"
)
A12 = A4.model_copy(update={"page": 12})
B7 = SourceRef(document_id="b", filename="nvda.html", page=7)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (
            TypedValue(kind="number", value=406100000, currency="USD", pages=(A12, A4, A4)),
            "406,100,000 USD (number; pages 4, 12)",
        ),
        (
            TypedValue(kind="number", value=406.1, scale="million", currency="USD", period="2023-07-01", pages=(A4,)),
            "406.1 million USD (number; period 2023-07-01; page 4)",
        ),
        (TypedValue(kind="number", value=-12.5, unit="%"), "-12.5% (number)"),
        (TypedValue(kind="number", value=2.0 / 3, unit="MW"), "0.6667 MW (number)"),
        (
            TypedValue(kind="boolean", value=True, pages=(A4, B7)),
            "True (boolean; Apple Inc. 10-Q, quarter ended July 1, 2023, page 4; nvda.html, page 7)",
        ),
        (
            TypedValue(kind="names", value=["Chief Financial Officer", "General Counsel"]),
            "Chief Financial Officer; General Counsel (names)",
        ),
        (
            TypedValue(kind="number", value="N/A", absent=True, note="reported in GBP, not the EUR asked for"),
            "N/A (absent: reported in GBP, not the EUR asked for)",
        ),
        (TypedValue(kind="boolean", value=False, absent=True), "False (absent: not stated in the documents in scope)"),
        (TypedValue(kind="name", absent=True), "none (absent: not stated in the documents in scope)"),
        (
            TypedValue(kind="date", value="2023-07-01", note="the declaration date"),
            "2023-07-01 (date; the declaration date)",
        ),
    ],
)
def test_value_text(value: TypedValue, text: str) -> None:
    assert value_text(value) == text


def _section() -> Section:
    bare = A4.model_copy(update={"title": ""})
    value = TypedValue(kind="name", value="[Acme](javascript:x) *Inc*", pages=(bare,))
    return Section(
        index=0,
        sub_question="Who?",
        answer="Acme",
        answer_sources=(bare,),
        evidence=(Evidence(text="Acme signed.", source=bare),),
        sources=(bare, B7),
        value=value,
    )


def test_titles_reach_every_page_a_section_cites_its_value_included() -> None:
    titled = with_titles(_section(), lambda document_id: {"a": "Acme 10-K"}.get(document_id, ""))
    pages = [*titled.answer_sources, titled.evidence[0].source, *titled.sources, *titled.value.pages]  # type: ignore[union-attr]
    assert [p.title for p in pages] == ["Acme 10-K", "Acme 10-K", "Acme 10-K", "", "Acme 10-K"]
    assert titled.cited_answer == "Acme [Acme 10-K, page 4]"
    assert titled.cited_evidence == ("Acme signed. [Acme 10-K, page 4]",)


def test_the_markdown_answer_shows_the_value_as_text_and_the_sse_frame_carries_it() -> None:
    from markdown_it import MarkdownIt

    section = with_titles(_section(), lambda document_id: "Acme 10-K")
    markdown = render_markdown([section])
    value_line = next(line for line in markdown.split("\n\n") if line.startswith("Value: "))
    rendered = MarkdownIt().render(value_line)
    assert "<a" not in rendered and "<em>" not in rendered and "[Acme](javascript:x) *Inc* (name; page 4)" in rendered
    done = Completed(answer=markdown, sections=(section,), lm_calls=0, tokens=0, seconds=0.1, value=section.value)
    data = json.loads(frame(done, "s-1", 7).decode().split("data: ", 1)[1])
    assert data["value"] == data["sections"][0]["value"] == json.loads(section.value.model_dump_json())  # type: ignore[union-attr]
    assert data["sections"][0]["value"]["pages"][0]["title"] == "Acme 10-K"
