"""A question comparing entities ("Which of the companies had the lowest total assets: "A", "B", "C"?", "Which is
higher, the monthly rent at Elm Court or at Oak Court?"): one sub-question per entity, each retrieved and
answered inside that entity's own documents only (its documents in the question's scope), the typed figures
compared by code (pipeline.answering.comparisons). A sub-question of any other question that names one entity of a
scope holding several is retrieved and answered inside that entity's documents the same way (`named_part`).

No chunk of one entity reaches another's sub-question: each part has its own scope, its own retrieval and its
own citation check.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from pipeline.answering.comparisons import Compared, compare, named_entity, outcome_line, outcome_value, plural
from pipeline.execution.rounds import Clock, QuestionRetrieval
from pipeline.intake.contract import Comparison
from pipeline.intake.planner import plan_in_scope
from pipeline.intake.scope import QuestionScope, Scope
from pipeline.program.events import Section
from pipeline.program.question_run import QuestionRun
from pipeline.program.trace import record_retrieval, record_tool_loop
from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.types import ChunkHit


class Program(Protocol):
    """What a comparison needs of the program (pipeline.program.module.ScopedQA): its store, settings and
    clock, and its scoring and answer steps, run once per entity."""

    store: Store
    settings: Settings
    clock: Clock

    @property
    def doc_types(self) -> frozenset[str]: ...

    def score_step(
        self, run: QuestionRun, sub_questions: Sequence[str], groups: list[list[ChunkHit]]
    ) -> list[list[ChunkHit]]: ...

    def answer_sections(
        self,
        run: QuestionRun,
        sub_questions: Sequence[str],
        kept: list[list[ChunkHit]],
        retrieved: Sequence[Sequence[ChunkHit]] | None = None,
        section_allowed: Sequence[Collection[str] | None] | None = None,
    ) -> list[Section]: ...


@dataclass(frozen=True)
class Part:
    """One quoted entity: its name as quoted, the entity it names, its sub-question and its documents in scope."""

    quoted: str
    entity_id: str | None
    sub_question: str
    document_ids: tuple[str, ...]


def comparison_parts(program: Program, comparison: Comparison, scope: QuestionScope) -> list[Part]:
    """The parts of a comparison: each quoted name resolved to an entity and that entity's documents inside
    the question's scope (the whole catalog when it has none)."""
    catalog = program.store.catalog
    entities = list(catalog.entities.values())
    allowed = scope.allowed
    parts = []
    for quoted in comparison.names:
        entity_id = named_entity(quoted, entities, catalog.vocabulary)
        if entity_id is None:
            parts.append(Part(quoted, None, "", ()))
            continue
        name = catalog.entities[entity_id].name
        owned = program.store.entity_scope(entity_id)
        documents = tuple(d for d in owned if allowed is None or d in allowed)
        parts.append(Part(quoted, entity_id, f"What was the {comparison.metric} of {name}?", documents))
    return parts


def named_part(program: Program, sub_question: str, scope: QuestionScope) -> Part | None:
    """The one entity of a scope holding several entities' documents that `sub_question` names, with its documents
    in the scope: that sub-question is retrieved and answered inside them only. None when the scope holds one
    entity's documents, or the sub-question names none of its entities or several."""
    catalog = program.store.catalog
    allowed = scope.allowed
    if scope.implicit_entity_ids:
        present = set(scope.implicit_entity_ids)
    elif allowed is None:
        present = set(catalog.entities)
    else:
        present = {e for d in allowed if d in catalog.documents for e in catalog.documents[d].entity_ids}
    if len(present) < 2:
        return None
    entity_id = named_entity(sub_question, list(catalog.entities.values()), catalog.vocabulary)
    if entity_id is None or entity_id not in present:
        return None
    documents = tuple(d for d in program.store.entity_scope(entity_id) if allowed is None or d in allowed)
    return Part(catalog.entities[entity_id].name, entity_id, sub_question, documents) if documents else None


def part_retrieval(program: Program, run: QuestionRun, part: Part, arrived: float) -> QuestionRetrieval:
    """The retrieval of one part: planned and run inside its entity's documents only (a chip of them)."""
    chip = Scope(kind="chip", document_ids=part.document_ids, entity_id=part.entity_id)
    config = program.settings.core
    _, plan, scoped = plan_in_scope(part.sub_question, chip, program.store, program.doc_types, config.planner)
    return QuestionRetrieval(
        program.store, scoped, plan, config, clock=program.clock, started=arrived, deadline=run.deadline
    )


def compared_sections(
    program: Program, run: QuestionRun, comparison: Comparison, arrived: float
) -> tuple[list[str], list[Section]]:
    """The sub-questions and sections of a comparison: one section per entity with documents in scope, each
    answered inside them, then the comparison's own section (its line and typed value)."""
    parts = comparison_parts(program, comparison, run.scope)
    asked = [p for p in parts if p.document_ids]
    trace = run.trace
    runs: list[QuestionRun] = []
    groups: list[list[ChunkHit]] = []
    for index, part in enumerate(asked):
        retrieval = part_retrieval(program, run, part, arrived)
        part_run = replace(run, plan=retrieval.plan, scope=retrieval.scope)
        result = retrieval.retrieve(part.sub_question)
        record_retrieval(trace, index, result)
        record_tool_loop(trace, retrieval)
        runs.append(part_run)
        groups.append(list(result.chunks))
    sub_questions = [p.sub_question for p in asked]
    kept = program.score_step(run, sub_questions, groups) if asked else []
    sections: list[Section] = []
    for index, (part_run, sub_question) in enumerate(zip(runs, sub_questions, strict=True)):
        (section,) = program.answer_sections(part_run, [sub_question], [kept[index]], [groups[index]])
        sections.append(section.model_copy(update={"index": index}))
    values = {p.quoted: s.value for p, s in zip(asked, sections, strict=True)}
    outcome = compare(
        [Compared(p.quoted, p.entity_id, values.get(p.quoted)) for p in parts], comparison.extreme, run.contract
    )
    line = outcome_line(outcome, comparison.extreme, comparison.metric, plural(program.store.catalog.entity_kind))
    value = outcome_value(outcome, run.contract)
    picked = outcome.winner.quoted if outcome.winner else None
    winner = next((s for p, s in zip(asked, sections, strict=True) if p.quoted == picked), None)
    summary = Section(
        index=len(sections),
        sub_question=trace.question,
        answer=line,
        answer_sources=winner.answer_sources if winner else (),
        sources=winner.answer_sources if winner else (),
        status="answered" if winner else "not_found",
        basis="computed" if winner else None,
        value=value,
    )
    return [*sub_questions, trace.question], [*sections, summary]


def comparison_of(run: QuestionRun) -> Comparison | None:
    """The comparison the question's contract asks for, if any."""
    return run.contract.comparison if run.contract is not None else None
