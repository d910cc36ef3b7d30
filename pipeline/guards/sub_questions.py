"""Sub-questions say only what the question says: a sub-question that brings a figure, a date, a reference or
a name the question does not hold (an LM's guess at the answer, "... margin is 1.2%"), or that is only an
instruction about the answer's format ("Answer in EUR billions."), is dropped, and the reason recorded."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.answering.asks import format_only
from pipeline.guards.grounding import proper_names
from pipeline.text import fold, normalise
from pipeline.values.quantities import missing_values


@dataclass(frozen=True)
class DroppedSubQuestion:
    """A sub-question the guard took out, and why."""

    text: str
    reason: str


def introduced(sub_question: str, question: str) -> list[str]:
    """The figures, dates, references and names of `sub_question` that `question` does not hold."""
    found = list(missing_values(sub_question, question))
    asked = normalise(fold(question))
    for name in proper_names(sub_question):
        if any(normalise(fold(w)).strip(".,;:'’s") not in asked for w in name.split()):
            found.append(name)
    return found


def check_sub_questions(sub_questions: Sequence[str], question: str) -> tuple[list[str], list[DroppedSubQuestion]]:
    """The sub-questions that say only what `question` says, and those dropped with the reason."""
    kept: list[str] = []
    dropped: list[DroppedSubQuestion] = []
    for sub_question in sub_questions:
        if format_only(sub_question):
            dropped.append(DroppedSubQuestion(sub_question, "an instruction about the answer's format"))
            continue
        added = introduced(sub_question, question)
        if added:
            reason = f"brings what the question does not say: {', '.join(added[:5])}"
            dropped.append(DroppedSubQuestion(sub_question, reason))
            continue
        kept.append(sub_question)
    return kept, dropped
