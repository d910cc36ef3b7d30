"""Progress events of one question (seed 003 order), shared by the CLI and the HTTP server.

Each stage's event is sent as the stage starts (`decomposing`, `retrieving`, `filtering`, `generating`);
`decomposed` carries the sub-questions once known, `generating_subquestion` each section once parsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import Field

from pipeline.intake.scope import ScopeNote
from pipeline.program.trace import QuestionTrace
from pipeline.types import Strict


class SourceRef(Strict):
    """A cited page: document id, filename and page."""

    document_id: str
    filename: str
    page: int


class Section(Strict):
    """One sub-question's answer: bullets with inline citations, its sources, or its error."""

    index: int
    sub_question: str
    bullets: tuple[str, ...] = ()
    sources: tuple[SourceRef, ...] = ()
    status: Literal["answered", "no_information", "error"] = "answered"
    error: str | None = None


class Decomposing(Strict):
    """Sent as the question's first LM step starts: splitting it into sub-questions (and HyDE, if planned)."""

    phase: Literal["decomposing"] = "decomposing"


class Decomposed(Strict):
    phase: Literal["decomposed"] = "decomposed"
    sub_questions: tuple[str, ...]


class Retrieving(Strict):
    phase: Literal["retrieving"] = "retrieving"


class Filtering(Strict):
    phase: Literal["filtering"] = "filtering"


class Generating(Strict):
    """Sent as the answer step starts: one LM call writes (or chooses) every section."""

    phase: Literal["generating"] = "generating"


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
    """The answer as Markdown: one `## Sub-question N:` section per sub-question."""
    parts = []
    for section in sections:
        lines = [f"## Sub-question {section.index + 1}: {section.sub_question}"]
        if section.status == "error":
            lines.append(f"- {section.error}")
        else:
            lines.extend(f"- {bullet}" for bullet in section.bullets)
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def cap_answer(sections: Sequence[Section], max_bytes: int) -> tuple[list[Section], int]:
    """`sections` with bullets dropped from the last section backwards until `render_markdown` of them
    is at most `max_bytes` of UTF-8; and how many bullets were dropped."""
    kept = list(sections)
    dropped = 0
    while len(render_markdown(kept).encode("utf-8")) > max_bytes:
        last = next((i for i in reversed(range(len(kept))) if kept[i].bullets), None)
        if last is None:
            break
        kept[last] = kept[last].model_copy(update={"bullets": kept[last].bullets[:-1]})
        dropped += 1
    return kept, dropped
