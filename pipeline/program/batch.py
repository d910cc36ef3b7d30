"""Many questions through one loaded program (`scoperag ask --questions`): each question answered and handed on
with its last event, and the answer line written for it (pipeline.program.question_file reads the questions,
pipeline.program.answer_file keeps the answers)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pipeline.errors import ScopeRagError
from pipeline.program.events import Completed, Failed
from pipeline.program.question_file import Asked


def answer_record(asked: Asked, final: Completed | Failed, history_id: str | None) -> dict[str, Any]:
    """One line of the answer file: the question's id and text, then exactly what `ask --json` prints for it
    (typed values included), or the error event of a question that failed."""
    if isinstance(final, Completed):
        body = json.loads(final.model_copy(update={"history_id": history_id}).model_dump_json())
    else:
        body = {**json.loads(final.model_dump_json()), "history_id": history_id}
    return {"id": asked.id, "question": asked.question, **body}


def ask_each(program: Any, on_answer: Callable[[Asked, Completed | Failed], None]) -> Callable[[Asked], None]:
    """The function that answers one question with `program` and hands its last event to `on_answer` (a question
    the program cannot run, such as one whose scope went stale, ends as a failed answer)."""

    def one(asked: Asked) -> None:
        final: Completed | Failed | None = None
        try:
            for event in program.stream(asked.question, asked.scope):
                if isinstance(event, Completed | Failed):
                    final = event
        except ScopeRagError as exc:
            final = Failed(message=str(exc))
        on_answer(asked, final if final is not None else Failed(message="the program ended without an answer"))

    return one
