"""One section's answer before the guards: what the answer step reads for a sub-question, the floors that
answer it without an LM, and the evidence an answer line rests on (pure functions)."""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from pipeline.answering.asks import (
    AnswerKind,
    ComputeRequest,
    FormatRequest,
    answer_kind,
    compute_request,
    over_time,
)
from pipeline.answering.compute import Computation, compute, expression_for, find_operands
from pipeline.answering.floors import Draft, sentence_line, span_line, support, trend_line
from pipeline.answering.sentences import OfferedSentence, offered_sentences
from pipeline.answering.terms import focus_terms, held_terms, ordered_terms
from pipeline.deadline import Deadline
from pipeline.errors import ArithmeticRefused
from pipeline.intake.parts import question_parts
from pipeline.settings import AnswerStep
from pipeline.text import bm25_tokens
from pipeline.types import ChunkHit
from pipeline.values.quantities import missing_values

# Nouns that say which kind of name a question asks for ("which firm", "what company"), not what it is about.
CLASS_NOUNS = frozenset(
    bm25_tokens(
        "firm firms company companies person people party parties entity entities individual organisation "
        "organization name"
    )
)


@dataclass(frozen=True)
class SectionInputs:
    """What the answer step reads for one sub-question: its offered sentences (best match first), the kind
    of answer it asks for, its key terms, the words of the question a name may not be made of, and the
    computation it asks for (None: a figure as reported)."""

    index: int
    sub_question: str
    sentences: tuple[OfferedSentence, ...]
    kind: AnswerKind
    terms: tuple[str, ...]
    focus: tuple[str, ...]
    request: ComputeRequest | None
    # it asks how a figure moved across periods: the answer lists it per document
    over_time: bool = False

    @property
    def empty(self) -> bool:
        return not self.sentences


def section_inputs(
    index: int,
    sub_question: str,
    chunks: Sequence[ChunkHit],
    ranking_query: str,
    max_chars: int,
    generic: AbstractSet[str] = frozenset(),
    asked: str | None = None,
) -> SectionInputs:
    """The inputs of sub-question `index`, from the chunks kept for it; sentences are ranked against
    `ranking_query` (the sub-question without the names every kept document's owner carries); key terms come
    from `asked` (the sub-question without any entity's name: a name says which document, not what is asked;
    default the ranking query)."""
    sentences = offered_sentences(chunks, max_chars, ranking_query) if chunks else []
    asked = ranking_query if asked is None else asked
    kind = answer_kind(question_parts(sub_question)[0])
    # "which firm", "what company": the kind of name asked for, which the name itself does not write
    ignored = generic | CLASS_NOUNS if kind == "name" else generic
    terms = ordered_terms(asked, ignored)
    first = question_parts(asked)[0]
    # a yes/no question names what it asks about after its verb: all its terms are the focus
    focus = ordered_terms(first, ignored) if kind == "yes_no" else None
    return SectionInputs(
        index=index,
        sub_question=sub_question,
        sentences=tuple(sentences),
        kind=kind,
        terms=tuple(terms),
        focus=tuple(focus or focus_terms(first, ignored)),
        request=compute_request(sub_question),
        over_time=over_time(sub_question),
    )


def lists_periods(inputs: SectionInputs) -> bool:
    """Whether the span floor answers with a figure per period (trend_line) before its one best span: a question
    about how an amount, percentage or count moved over time."""
    return inputs.over_time and inputs.kind in ("amount", "percent", "count")


def floor_draft(inputs: SectionInputs, step: AnswerStep, deadline: Deadline | None = None) -> Draft | None:
    """The answer line without an LM: the best-ranked sentence ("sentence") or the span of the kind asked
    for ("span"); None when nothing was offered. Past `deadline` DeadlinePassed stops it."""
    if step == "sentence":
        return sentence_line(inputs.sentences)
    if lists_periods(inputs):
        listed = trend_line(inputs.sentences, inputs.kind, inputs.terms, inputs.sub_question, inputs.focus, deadline)
        if listed is not None:
            return listed
    return span_line(inputs.sentences, inputs.kind, inputs.terms, inputs.sub_question, inputs.focus, deadline)


def support_of(inputs: SectionInputs, deadline: Deadline | None = None) -> float:
    """How well the offered sentences support an answer (pipeline.answering.spans.support)."""
    return support(inputs.sentences, inputs.kind, frozenset(inputs.focus), deadline)


def floor_computation(
    inputs: SectionInputs, request: FormatRequest | None, deadline: Deadline | None = None
) -> Computation | None:
    """The computed figure with its operands read as table rows; None when an operand is not found."""
    asked = inputs.request
    if asked is None:
        return None
    operands = find_operands(asked, inputs.sentences, deadline)
    if not operands:
        return None
    percent = asked.percent or bool(request and request.percent)
    try:
        return compute(
            asked.operation, expression_for(asked.operation, len(operands), percent), operands, percent, request
        )
    except ArithmeticRefused:
        return None


def evidence_for(
    draft: Draft, inputs: SectionInputs, limit: int, extra: Sequence[OfferedSentence] = ()
) -> list[OfferedSentence]:
    """The 1 to `limit` sentences an answer line rests on, most direct first: the sentences the draft names
    (those offered, in its order), then `extra` ones, then offered sentences that state every figure and date
    of the line and hold a key term of the sub-question (corroboration), best-ranked first."""
    by_id = {s.sentence_id: s for s in inputs.sentences}
    picked = [by_id[i] for i in dict.fromkeys(draft.evidence) if i in by_id]
    picked += [s for s in extra if s not in picked]
    if draft.basis != "sentence" and _has_values(draft.text):
        terms = frozenset(inputs.terms)
        for sentence in inputs.sentences:
            if len(picked) >= limit:
                break
            if sentence in picked or missing_values(draft.text, sentence.text):
                continue
            if not terms or held_terms(sentence.text, terms):
                picked.append(sentence)
    return picked[:limit]


def _has_values(text: str) -> bool:
    """Whether `text` states a figure, a date or a reference (what corroboration compares)."""
    return bool(missing_values(text, ""))
