"""Request and response bodies of the HTTP API: every value that crosses the wire is one of these."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from pipeline.guards.ids import is_canonical_uuid
from pipeline.guards.sanitise import MAX_QUESTION_CHARS
from pipeline.types import Strict

MAX_DOCUMENT_IDS = 100
MAX_PROPERTY_CHARS = 200


class QueryRequest(Strict):
    """POST /v1/query: a question and at most one scope (documents win over a property)."""

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    document_ids: list[str] | None = Field(default=None, max_length=MAX_DOCUMENT_IDS)
    property: str | None = Field(default=None, min_length=1, max_length=MAX_PROPERTY_CHARS)

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question is blank")
        return value

    @field_validator("document_ids")
    @classmethod
    def _canonical(cls, value: list[str] | None) -> list[str] | None:
        bad = [d for d in value or () if not is_canonical_uuid(d)]
        if bad:
            shown = ", ".join(repr(d[:80]) for d in bad[:10])
            raise ValueError(f"document ids must be canonical lowercase UUIDs; not: {shown}")
        return value


class ErrorItem(Strict):
    """One problem with a request, in FastAPI's validation-error shape."""

    type: str
    loc: list[str | int]
    msg: str
    input: Any = None


class ErrorResponse(Strict):
    """Any 4xx/5xx body: `detail` is a message or a list of problems."""

    detail: str | list[ErrorItem]


class ProgramInfo(Strict):
    """Which compiled program answers questions (`uncompiled` when none was loaded)."""

    profile: str | None = None
    created_at: str
    run_id: str | None = None
    trainset_hash: str
    lm: str | None = None


class HealthResponse(Strict):
    """GET /v1/health."""

    status: Literal["ok"] = "ok"
    index: str
    documents: int
    program: ProgramInfo | Literal["uncompiled"]
    lm: str
    active_streams: int


class ProfileOut(Strict):
    """One registered prompt profile (its export directory stays private to the server)."""

    name: str
    created_at: str
    note: str
    active: bool


class ProfileList(Strict):
    """GET /v1/profiles."""

    active: str | None
    profiles: list[ProfileOut]


class ActivatedResponse(Strict):
    """POST /v1/profiles/{name}/activate: the profile and the program now serving."""

    profile: ProfileOut
    program: ProgramInfo
