"""Request and response bodies of the HTTP API: every value that crosses the wire is one of these."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from pipeline.export.profiles import NAME_PATTERN
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
    # Answer with this registered profile's program, or the uncompiled one, instead of the one serving (A/B).
    profile: str | None = Field(default=None, pattern=f"^{NAME_PATTERN.pattern}$")
    uncompiled: bool = False

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

    @model_validator(mode="after")
    def _one_program(self) -> QueryRequest:
        if self.profile is not None and self.uncompiled:
            raise ValueError("ask for a profile or for the uncompiled program, not both")
        return self


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
    # questions being answered now: streams and jobs
    active_streams: int
    # whether answers can be labelled here (the server was started with --label-to)
    labels: bool = False
    # the MLflow tracking server whose runs and prompts the page links to (--tracking-uri), if any
    tracking: str | None = None


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


class EntityOut(Strict):
    """An entity documents belong to (a property, a company), as the scope picker lists it."""

    entity_id: str
    name: str
    slug: str


class EntityList(Strict):
    """GET /v1/entities: what the catalog calls its entities, and all of them."""

    kind: str
    entities: list[EntityOut]


class DocumentOut(Strict):
    """A catalogued document, as document search lists it (display text sanitised); `folder` is where it lies in
    the corpus ("" at its top), which tells apart documents of the same name."""

    document_id: str
    filename: str
    folder: str = ""
    title: str
    entities: list[str]
    pages: int


class DocumentList(Strict):
    """GET /v1/documents."""

    documents: list[DocumentOut]


class ScopeOut(Strict):
    """A question's scope: its kind (no_scope, chip, property) and what it held, in words."""

    kind: str
    label: str


class HistoryItem(Strict):
    """One recorded question, as the history lists it."""

    history_id: str
    created_at: str
    question: str
    scope: ScopeOut
    # stopped: at its time bound; running: under way; interrupted: its server ended without closing it (a crash)
    status: Literal["done", "failed", "cancelled", "stopped", "running", "interrupted"]
    lm_calls: int
    tokens: int
    seconds: float
    # the folder of the index it was asked of, when another than this server's (History, "All indexes")
    index: str | None = None


class HistoryList(Strict):
    """GET /v1/history: the latest questions, newest first."""

    entries: list[HistoryItem]


class HistoryDetail(Strict):
    """GET /v1/history/{id}: one question and its whole trace."""

    entry: HistoryItem
    answer: str
    trace: dict[str, Any]


class SourceOut(Strict):
    """A section's source page with a snippet of the chunk kept there."""

    document_id: str
    filename: str
    page: int
    snippet: str


class SectionSources(Strict):
    """The sources of one section of a recorded answer."""

    index: int
    sources: list[SourceOut]


class AnswerSources(Strict):
    """GET /v1/history/{id}/sources: each section's cited pages, and the pages whose chunks were kept for the
    answer without being cited (`read`)."""

    history_id: str
    sections: list[SectionSources]
    read: list[SourceOut] = Field(default_factory=list)


class SegmentOut(Strict):
    """A run of page text; `cited` marks the chunks kept for the answer, and `mark` says how strongly: "kept" (a
    chunk kept for it), "evidence" (a sentence it quotes) or "answer" (where its answer line stands)."""

    text: str
    cited: bool
    mark: Literal["kept", "evidence", "answer"] | None = None


class BoxOut(Strict):
    """A highlighted rectangle on the page image, in fractions of its width and height; `mark` as for text."""

    left: float
    top: float
    width: float
    height: float
    mark: Literal["kept", "evidence", "answer"] = "kept"


class PageView(Strict):
    """GET /v1/history/{id}/pages/{document_id}/{page}: a cited page, its text and (PDF) its image."""

    document_id: str
    filename: str
    page: int
    pages: int
    kind: Literal["pdf", "text"]
    lines: list[list[SegmentOut]]
    image: str | None = None
    boxes: list[BoxOut] = Field(default_factory=list)
    note: str | None = None


class EstimateOut(Strict):
    """Time a running question has left, measured on the last `questions` answered here with the same LM;
    `overdue`: the current stage already took longer than usual (the time left is then a lower bound)."""

    seconds_left: float
    overdue: bool
    questions: int


class JobOut(Strict):
    """A question answered in the background (POST /v1/jobs, GET /v1/jobs/{id}): its progress and, in `events`,
    the events after the `after` the request named (each with its `seq`), the completed answer among them."""

    job_id: str
    question: str
    scope: ScopeOut
    program: str
    # which of the program's steps run by the LM and which by their floors (each named), in words
    steps: str = ""
    status: Literal["running", "done", "failed", "cancelled"]
    cancelling: bool
    stage: str | None
    created_at: str
    elapsed: float
    lm_calls: int
    estimate: EstimateOut | None
    history_id: str | None
    events: list[dict[str, Any]]
    next_seq: int


class JobList(Strict):
    """GET /v1/jobs: running questions and the latest finished ones, newest first (without their events)."""

    jobs: list[JobOut]


class GoldPageIn(Strict):
    """A page named as holding the answer."""

    document_id: str = Field(min_length=36, max_length=36)
    page: int = Field(ge=1, le=100_000)


MAX_FACTS = 10
MAX_FACT_CHARS = 500
MAX_GOLD_PAGES = 20


class LabelRequest(Strict):
    """POST /v1/history/{id}/label: whether the answer was right, the facts a correct answer states and the pages
    holding them, or that the documents in scope do not hold it. `confirm`: the example the preview showed; it is
    saved only while the server still makes exactly that example."""

    verdict: Literal["right", "wrong", "not_found"]
    facts: list[str] = Field(default_factory=list, max_length=MAX_FACTS)
    gold: list[GoldPageIn] = Field(default_factory=list, max_length=MAX_GOLD_PAGES)
    split: Literal["train", "dev", "test"] | None = None
    confirm: dict[str, Any] | None = None

    @field_validator("facts")
    @classmethod
    def _short_facts(cls, value: list[str]) -> list[str]:
        long = [f[:40] for f in value if len(f) > MAX_FACT_CHARS]
        if long:
            raise ValueError(f"a fact may hold at most {MAX_FACT_CHARS} characters; not: {long!r}")
        return [f.strip() for f in value if f.strip()]


class LabelResult(Strict):
    """The example a label makes: previewed (`saved` false) or appended to the traces file at line `line`."""

    example: dict[str, Any]
    case: str
    file: str
    saved: bool
    line: int | None = None


class ModuleOut(Strict):
    """One learned module of a program: its name and how many demos it carries."""

    name: str
    demos: int


class ProfileDetail(Strict):
    """GET /v1/profiles/{name}: a profile, the program behind it and its prompts (prompts.md)."""

    profile: ProfileOut
    run_id: str | None
    exported_at: str
    trainset_hash: str
    lm: str | None
    modules: list[ModuleOut]
    prompts_md: str


class ProfileCheck(Strict):
    """POST /v1/profiles/check: a profile document that passed every check import makes (nothing is written)."""

    name: str
    note: str
    exported_at: str
    modules: list[ModuleOut]


class DiffLine(Strict):
    """One line of a diff: " " unchanged, "-" only in the first, "+" only in the second, "@" a hunk's header."""

    kind: Literal[" ", "-", "+", "@"]
    text: str


class ModuleDiff(Strict):
    """How one module differs between two programs."""

    name: str
    instructions_changed: bool
    demos_a: int
    demos_b: int


class ProfileDiff(Strict):
    """GET /v1/profiles/diff: two profiles' modules compared, and the diff of their prompts.md (demos included)."""

    a: str
    b: str
    modules: list[ModuleDiff]
    lines: list[DiffLine]
