"""Answers that carry typed values, as the answer step gives them (pipeline.values.typed): for the tests of every
surface that carries a value (ask, --json, --questions, SSE, the page, history, evaluate) while the program's own
steps may leave them None."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pipeline.intake.scope import Scope
from pipeline.program.events import Completed, Event, Section
from pipeline.program.module import ScopedQA
from pipeline.values.typed import TypedValue

# What an absent value says about itself.
ABSENT_NOTE = "reported in GBP, not the EUR asked for"


def typed(section: Section) -> TypedValue:
    """An answered section's value: a number read from its line, citing the pages its line cites; a section not
    found: the question's own absent value, with why."""
    if section.status != "answered":
        return TypedValue(kind="number", value="N/A", absent=True, note=ABSENT_NOTE)
    return TypedValue(
        kind="number",
        value=285000,
        currency="KES",
        period="2023-03-01",
        as_written=section.answer[:600],
        pages=section.answer_sources,
    )


def with_values(event: Event) -> Event:
    """A completed event whose sections carry typed values and whose answer carries the first one (its trace
    records them as the program records its own); any other event as it is."""
    if not isinstance(event, Completed) or not event.sections:
        return event
    sections = tuple(s.model_copy(update={"value": typed(s)}) for s in event.sections)
    value = sections[0].value
    if event.trace is not None:
        event.trace.sections = [s.model_dump(mode="json") for s in sections]
        event.trace.value = value
    return event.model_copy(update={"sections": sections, "value": value})


class ValuedQA(ScopedQA):
    """The program, its answers carrying typed values (`with_values`)."""

    def stream(self, question: str, scope: Scope) -> Iterator[Event]:
        for event in super().stream(question, scope):
            yield with_values(event)


def valued(program: Any) -> ValuedQA:
    """`program` (a loaded ScopedQA) as a ValuedQA over the same store and settings."""
    return ValuedQA(program.store, program.settings)
