"""Progress events of one question (seed 003 order), shared by the CLI and the HTTP server.

Each stage's event is sent as the stage starts (`decomposing`, `retrieving`, `filtering`, `generating`);
`decomposed` carries the sub-questions once known, `generating_subquestion` each section once parsed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Literal

from pydantic import Field

from pipeline.escapes import citation_label, markdown_literal, short_name
from pipeline.intake.scope import ScopeNote
from pipeline.program.trace import QuestionTrace
from pipeline.types import SourceRef, Strict
from pipeline.values.typed import TypedValue


class Evidence(Strict):
    """A sentence quoted beneath an answer line, and the page it is quoted from."""

    text: str
    source: SourceRef


class Section(Strict):
    """One sub-question's answer: the answer line and the pages it is cited to, the evidence sentences
    quoted beneath it, every page the section cites, how the line was made; or a line saying the
    documents in scope do not state it (status "not_found", nothing cited); or its error."""

    index: int
    sub_question: str
    answer: str = ""
    answer_sources: tuple[SourceRef, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    sources: tuple[SourceRef, ...] = ()
    status: Literal["answered", "not_found", "error"] = "answered"
    # "extracted" (a span of a sentence), "written" (by the LM, grounded), "sentence" (a whole sentence),
    # "computed" (worked out by code from quoted figures; `formula` shows how)
    basis: Literal["extracted", "written", "sentence", "computed"] | None = None
    formula: str | None = None
    error: str | None = None
    # The answer typed as the question asked for it (a number in units, true/false, a name, the question's
    # own absent value when nothing in scope states it); the line above stays the human form.
    value: TypedValue | None = None

    @property
    def cited_answer(self) -> str:
        """The answer line with its citations inline: "EUR 2,500 per month [contract.pdf, page 2]"."""
        return " ".join([self.answer, *dict.fromkeys(cite(s) for s in self.answer_sources)])

    @property
    def cited_evidence(self) -> tuple[str, ...]:
        """Each evidence sentence with its citation inline."""
        return tuple(f"{e.text} {cite(e.source)}" for e in self.evidence)


def cite(source: SourceRef) -> str:
    """The inline form of a citation: [name, page N], the document named as a reader knows it (its title, else
    its file name), escaped as Markdown text."""
    return citation_label(source.title or source.filename, source.page)


def with_titles(section: Section, title: Callable[[str], str]) -> Section:
    """`section` with every page it cites (answer line, evidence, sources, typed value) naming its document as
    `title(document_id)` gives it (pipeline.guards.citations.citation_name)."""

    def named(source: SourceRef) -> SourceRef:
        return source.model_copy(update={"title": title(source.document_id)})

    update: dict[str, object] = {
        "answer_sources": tuple(named(s) for s in section.answer_sources),
        "evidence": tuple(e.model_copy(update={"source": named(e.source)}) for e in section.evidence),
        "sources": tuple(named(s) for s in section.sources),
    }
    if section.value is not None:
        update["value"] = section.value.model_copy(update={"pages": tuple(named(s) for s in section.value.pages)})
    return section.model_copy(update=update)


def value_text(value: TypedValue) -> str:
    """A typed value as one line of plain text: "406,100,000 EUR (number; period 2023-07-01; page 4)", "True
    (boolean; pages 4, 12)", "N/A (absent: reported in GBP, not the EUR asked for)"."""
    shown = _shown_value(value)
    if value.absent:
        return f"{shown or 'none'} (absent: {value.note or 'not stated in the documents in scope'})"
    details: list[str] = [value.kind]
    if value.period:
        details.append(f"period {value.period}")
    if value.pages:
        details.append(_pages_text(value.pages))
    if value.note:
        details.append(value.note)
    return f"{shown} ({'; '.join(details)})"


def _shown_value(value: TypedValue) -> str:
    """The value itself as a reader reads it: a number grouped in thousands with its scale, currency and unit."""
    raw = value.value
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return value.display
    number = f"{raw:,.0f}" if float(raw).is_integer() else f"{raw:,.4f}".rstrip("0").rstrip(".")
    if value.unit == "%":
        return f"{number}%"
    return " ".join(part for part in (number, value.scale, value.currency, value.unit) if part)


def _pages_text(pages: Sequence[SourceRef]) -> str:
    """ "page 4", "pages 4, 12" (one document), or each document's name with its pages."""
    by_document: dict[str, list[int]] = {}
    names: dict[str, str] = {}
    for source in pages:
        by_document.setdefault(source.document_id, []).append(source.page)
        names[source.document_id] = short_name(source.title or source.filename)

    def listed(numbers: list[int]) -> str:
        ordered = sorted(set(numbers))
        return ("page " if len(ordered) == 1 else "pages ") + ", ".join(str(n) for n in ordered)

    if len(by_document) == 1:
        return listed(next(iter(by_document.values())))
    return "; ".join(f"{names[d]}, {listed(numbers)}" for d, numbers in by_document.items())


class Decomposing(Strict):
    """Sent as the question's first step starts: splitting it into sub-questions (and HyDE, if planned);
    `lm` says whether the step calls the LM or runs its floor."""

    phase: Literal["decomposing"] = "decomposing"
    lm: bool = True


class Decomposed(Strict):
    phase: Literal["decomposed"] = "decomposed"
    sub_questions: tuple[str, ...]


class Retrieving(Strict):
    phase: Literal["retrieving"] = "retrieving"


class Filtering(Strict):
    """Sent as the scoring step starts; `lm` says whether it calls the LM or runs its floor."""

    phase: Literal["filtering"] = "filtering"
    lm: bool = True


class Generating(Strict):
    """Sent as the answer step starts: one LM call (or the floor) gives every section its answer line."""

    phase: Literal["generating"] = "generating"
    lm: bool = True


class GeneratingSubquestion(Strict):
    phase: Literal["generating_subquestion"] = "generating_subquestion"
    index: int
    sub_question: str


class Completed(Strict):
    """The answer; the last event of a question that was answered (or asked back, or refused)."""

    phase: Literal["completed"] = "completed"
    answer: str
    sections: tuple[Section, ...]
    strategy: str = "retrieve_then_answer"
    # Questions for the user: blocking ones come instead of an answer, others with it.
    clarifying_questions: tuple[str, ...] = ()
    # The tool loop's message when steps were given up or it stopped early.
    notice: str | None = None
    # Whose documents the scope selected when they are not the named entity's own: "other_entity"
    # (nothing was read, the answer is the note's message) or "no_entity" (read, the answer says so).
    scope_note: ScopeNote | None = None
    # The entities a question with no scope named, whose documents alone were searched (an implicit
    # entity scope); () when the scope was given or the question named none.
    implicit_scope: tuple[str, ...] = ()
    lm_calls: int
    # of lm_calls, those answered from DSPy's cache (their tokens and model time were not spent)
    cached_calls: int = 0
    tokens: int
    seconds: float
    history_id: str | None = None
    # The question's answer typed as it asked for it: its one section's value, or the result of comparing
    # the sections' values (a comparison across entities); None for a question of several parts.
    value: TypedValue | None = None
    # The question's record, for whoever ran the stream; never serialised (not sent to clients).
    trace: QuestionTrace | None = Field(default=None, exclude=True, repr=False)


class Failed(Strict):
    """The question failed; `message` is safe to show (the detail stays in the trace)."""

    phase: Literal["error"] = "error"
    message: str
    trace: QuestionTrace | None = Field(default=None, exclude=True, repr=False)


Event = Annotated[
    Decomposing | Decomposed | Retrieving | Filtering | Generating | GeneratingSubquestion | Completed | Failed,
    Field(discriminator="phase"),
]


def render_markdown(sections: Sequence[Section]) -> str:
    """The answer as Markdown: per sub-question a heading, the answer line, its typed value, its formula when
    computed, and the evidence quoted beneath it."""
    parts = []
    for section in sections:
        lines = [f"## {section.index + 1}. {section.sub_question}"]
        if section.status == "error":
            lines.append(section.error or "")
        else:
            lines.append(f"**{section.cited_answer}**" if section.status == "answered" else section.answer)
            if section.value is not None:
                lines.append(f"Value: {markdown_literal(value_text(section.value))}")
            if section.formula:
                lines.append(f"Computed: {section.formula}")
            lines.extend(f"> {quote}" for quote in section.cited_evidence)
        parts.append("\n\n".join(lines))
    return "\n\n".join(parts)


def cap_answer(sections: Sequence[Section], max_bytes: int) -> tuple[list[Section], int]:
    """`sections` with evidence quotes dropped from the last section backwards until `render_markdown` of them
    is at most `max_bytes` of UTF-8; and how many quotes were dropped."""
    kept = list(sections)
    dropped = 0
    while len(render_markdown(kept).encode("utf-8")) > max_bytes:
        last = next((i for i in reversed(range(len(kept))) if kept[i].evidence), None)
        if last is None:
            break
        kept[last] = kept[last].model_copy(update={"evidence": kept[last].evidence[:-1]})
        dropped += 1
    return kept, dropped
