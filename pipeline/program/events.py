"""Progress events of one question (seed 003 order), shared by the CLI and the HTTP server.

Each stage's event is sent as the stage starts (`decomposing`, `retrieving`, `filtering`, `generating`);
`decomposed` carries the sub-questions once known, `generating_subquestion` each section once parsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import Field

from pipeline.guards.citations import citation_label
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
    """The inline form of a citation: [filename, page N] (the name escaped as Markdown text)."""
    return citation_label(source.filename, source.page)


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
    """The answer as Markdown: per sub-question a heading, the answer line, its formula when computed, and
    the evidence quoted beneath it."""
    parts = []
    for section in sections:
        lines = [f"## {section.index + 1}. {section.sub_question}"]
        if section.status == "error":
            lines.append(section.error or "")
        else:
            lines.append(f"**{section.cited_answer}**" if section.status == "answered" else section.answer)
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
