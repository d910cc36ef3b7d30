"""Typed values the signatures read and write (rendered to and parsed from JSON by DSPy)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

# Bounds that reach the LM only as JSON schema (a grammar for constrained decoding): parsing
# stays lenient, and the program's own checks decide what an out-of-bounds value means.
Score = Annotated[float, WithJsonSchema({"type": "integer", "minimum": 0, "maximum": 10})]
MAX_CHUNKS_PER_GROUP = 20


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ChunkForScoring(_Model):
    """A retrieved chunk shown to the scorer, numbered within its sub-question's group."""

    chunk_index: int
    source: str = Field(description="[filename, page N]")
    text: str


class ScoringGroup(_Model):
    """One sub-question and the chunks retrieved for it."""

    sub_question_index: int
    sub_question: str
    chunks: list[ChunkForScoring]


class GroupScores(_Model):
    """Relevance of each chunk of one group to that group's own sub-question."""

    sub_question_index: int
    scores: list[Score] = Field(
        description="one score 0-10 per chunk, in chunk_index order",
        json_schema_extra={"maxItems": MAX_CHUNKS_PER_GROUP},
    )


class SourceChunk(_Model):
    """A chunk the answer may cite, labelled the way citations must name it."""

    filename: str
    page: int
    text: str


class SectionContext(_Model):
    """A sub-question and the only chunks its section may use and cite."""

    sub_question_index: int
    sub_question: str
    chunks: list[SourceChunk]


class Citation(_Model):
    """A reference to one page of one shown document."""

    filename: str
    page: int


class Bullet(_Model):
    """One statement of a section with the pages that support it."""

    text: str = Field(
        description="a fact the chunks state, with figures, dates and names as written; never the question itself",
        json_schema_extra={"maxLength": 400},
    )
    citations: list[Citation] = Field(default_factory=list, json_schema_extra={"maxItems": 4})


class AnswerSection(_Model):
    """The answer to one sub-question: 1-5 bullets."""

    sub_question_index: int
    bullets: list[Bullet] = Field(json_schema_extra={"minItems": 1, "maxItems": 5})


class NumberedSentence(_Model):
    """One sentence of a chunk the answer may use, numbered within its sub-question's section."""

    sentence_id: int
    source: str = Field(description="[filename, page N]")
    text: str


class SentenceSection(_Model):
    """A sub-question and the numbered sentences of the chunks kept for it."""

    sub_question_index: int
    sub_question: str
    sentences: list[NumberedSentence]


class SectionChoice(_Model):
    """The sentences chosen to answer one sub-question, by id, in the order they should be shown."""

    sub_question_index: int
    sentence_ids: list[int] = Field(
        default_factory=list,
        description="ids of the sentences that state the answer; empty when none does",
        json_schema_extra={"maxItems": 5},
    )
