"""What every way of asking shares (a stream, a job): the question's limits checked, its scope resolved and the
program chosen, or the 422 that says what is wrong."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi.responses import JSONResponse

from pipeline.errors import UnknownScopeError
from pipeline.export.choice import every_step_by_the_lm, steps_words
from pipeline.intake.scope import Scope, resolve_scope
from pipeline.program.module import ScopedQA
from pipeline.serving.profile_routes import profile_program
from pipeline.serving.schemas import ErrorItem, ErrorResponse, QueryRequest
from pipeline.serving.state import ServingState


@dataclass(frozen=True)
class Prepared:
    """A question ready to run: its scope, the program that answers it, that program in words and which of its
    steps run by the LM (pipeline.export.choice.steps_words)."""

    scope: Scope
    program: ScopedQA
    program_label: str

    @property
    def steps(self) -> str:
        return steps_words(self.program.settings.program.steps)


def prepare(state: ServingState, body: QueryRequest) -> Prepared | JSONResponse:
    """The question's scope and program, or a 422 naming the problem (404 for an unknown profile, raised).

    Loading a profile's program reads its export: call this from a worker thread."""
    if len(body.question) > state.limits.max_question_chars:
        limit = state.limits.max_question_chars
        return unprocessable("string_too_long", ["body", "question"], f"at most {limit} characters", None)
    try:
        scope = resolve_scope(state.store, document_ids=body.document_ids, property_ref=body.property)
    except UnknownScopeError as exc:
        field = "document_ids" if exc.kind == "document id" else "property"
        return unprocessable("unknown_scope", ["body", field], str(exc), exc.values)
    current = state.current
    if body.uncompiled:  # the LM's own prompts on every step, not the floors of the program serving now
        uncompiled = ScopedQA(state.store, every_step_by_the_lm(current.program.settings))
        return Prepared(scope, uncompiled, "Uncompiled program")
    if body.profile is not None:
        return Prepared(scope, profile_program(state, body.profile), f"Profile {body.profile}")
    label = "The program serving now" + (f" (profile {current.profile})" if current.profile else "")
    return Prepared(scope, current.program, label)


def unprocessable(kind: str, loc: list[str | int], msg: str, value: Any) -> JSONResponse:
    """A 422 in FastAPI's validation-error shape."""
    item = ErrorItem(type=kind, loc=loc, msg=msg, input=value)
    return JSONResponse(ErrorResponse(detail=[item]).model_dump(mode="json"), status_code=422)
