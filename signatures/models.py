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


class NumberedSentence(_Model):
    """One sentence of a chunk the answer may use, numbered within its sub-question's section."""

    sentence_id: int
    source: str = Field(description="[filename, page N]")
    text: str


class LineSentences(_Model):
    """A sub-question and the numbered sentences it may be answered from, best match first."""

    sub_question_index: int
    sub_question: str
    sentences: list[NumberedSentence]


class AnswerLine(_Model):
    """The answer to one sub-question: the sentences it comes from, then the answer itself."""

    sub_question_index: int
    sentence_ids: list[int] = Field(
        default_factory=list,
        description="ids of the 1-3 sentences that state the answer, most direct first; empty when none does",
        json_schema_extra={"maxItems": 3},
    )
    answer: str = Field(
        default="",
        description="the answer copied from those sentences, at most 40 words: the amount, name, date, duration, "
        "yes/no or short list asked for, figures and names exactly as written; empty when no sentence answers",
        json_schema_extra={"maxLength": 300},
    )


class OperandChoice(_Model):
    """One figure a computation uses: its name in the expression, and where it is quoted from."""

    name: str = Field(description="a, b, c, ...")
    sentence_id: int
    figure: str = Field(description="the figure exactly as the sentence writes it")


class FigureComputation(_Model):
    """How to compute the figure one sub-question asks for: its operands and an expression over their names."""

    sub_question_index: int
    operands: list[OperandChoice] = Field(default_factory=list, json_schema_extra={"maxItems": 8})
    expression: str = Field(
        default="",
        description="arithmetic over the operand names, e.g. a / b * 100; empty when the sentences lack a figure",
        json_schema_extra={"maxLength": 120},
    )
