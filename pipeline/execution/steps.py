"""The plan shapes a scope allows (seed 000), built in code: chip -> one retrieve_chunks step on the
selected ids; property -> one step on the ids the catalog relates to the property; no scope ->
retrieve_docs then retrieve_chunks on "<from_step_search_docs>". `normalise_plan` repairs a plan
that came from an LM.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from pipeline.guards.ids import looks_like_reference, referenced_step, step_reference
from pipeline.intake.scope import EntityResolver, Scope, allowed_document_ids
from pipeline.types import Strict

log = logging.getLogger(__name__)

ToolName = Literal["retrieve_docs", "retrieve_chunks"]
SEARCH_DOCS_STEP = "search_docs"
SEARCH_CHUNKS_STEP = "search_chunks"
SEARCH_DOCS_REF = step_reference(SEARCH_DOCS_STEP)
MAX_PLAN_STEPS = 6


class PlanStep(Strict):
    """One tool call of a plan; document_ids may hold "<from_step_ID>" references."""

    step_id: str = Field(pattern=r"^[a-z0-9_]{1,40}$")
    tool: ToolName
    query: str = Field(min_length=1, max_length=2000)
    document_ids: tuple[str, ...] = ()
    k: int | None = Field(default=None, ge=1, le=100)

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query is blank")
        return value


class Plan(Strict):
    """Steps in execution order with distinct ids."""

    steps: tuple[PlanStep, ...] = Field(min_length=1, max_length=MAX_PLAN_STEPS)

    @model_validator(mode="after")
    def _distinct_ids(self) -> Plan:
        ids = [s.step_id for s in self.steps]
        if len(set(ids)) != len(ids):
            raise ValueError(f"step ids repeat: {ids}")
        return self


def two_step_plan(query: str) -> Plan:
    """The fixed no-scope plan: find documents, then chunks of every document found."""
    return Plan(
        steps=(
            PlanStep(step_id=SEARCH_DOCS_STEP, tool="retrieve_docs", query=query),
            PlanStep(
                step_id=SEARCH_CHUNKS_STEP,
                tool="retrieve_chunks",
                query=query,
                document_ids=(SEARCH_DOCS_REF,),
            ),
        )
    )


def _scope_ids(scope: Scope, resolver: EntityResolver) -> tuple[str, ...]:
    """The ids a chip or property scope reads, in order (the chip's, else the property's)."""
    return scope.document_ids if scope.kind == "chip" else tuple(resolver(scope.entity_id or ""))


def build_plan(scope: Scope, query: str, resolver: EntityResolver) -> Plan:
    """The plan for `scope`, built in code: no LM decides which documents may be read."""
    if scope.kind == "no_scope":
        return two_step_plan(query)
    ids = _scope_ids(scope, resolver)
    return Plan(steps=(PlanStep(step_id=SEARCH_CHUNKS_STEP, tool="retrieve_chunks", query=query, document_ids=ids),))


PlanFixAction = Literal[
    "replaced_from_chip",
    "replaced_from_property",
    "rewritten_two_step",
    "cleared_search_ids",
    "rewritten_for_scope",
    "unparseable_plan",
]


@dataclass(frozen=True)
class PlanFix:
    """One repair the normaliser made, with the offending values (repr) it removed."""

    step_id: str
    action: PlanFixAction
    removed: tuple[str, ...] = ()


@dataclass(frozen=True)
class NormalisedPlan:
    """A plan whose every document id is in scope or a reference to an earlier step."""

    plan: Plan
    fixes: tuple[PlanFix, ...]


def _id_ok(value: str, earlier: set[str], allowed: frozenset[str] | None) -> bool:
    if looks_like_reference(value):
        return referenced_step(value) in earlier
    return allowed is not None and value in allowed


def _valid_ids(step: PlanStep, earlier: set[str], allowed: frozenset[str] | None) -> bool:
    return bool(step.document_ids) and all(_id_ok(v, earlier, allowed) for v in step.document_ids)


def _query(plan: Plan) -> str:
    chunk_steps = [s for s in plan.steps if s.tool == "retrieve_chunks"]
    return (chunk_steps or list(plan.steps))[0].query


def normalise_plan(plan: Plan, scope: Scope, resolver: EntityResolver) -> NormalisedPlan:
    """`plan` with invalid document ids replaced from the scope, or the canonical plan.

    chip -> the selected ids; property -> the property's ids from `resolver`; no scope ->
    the fixed two steps unless every chunk step already reads an earlier step. Ids given to
    retrieve_docs are cleared (the executor restricts that search to the scope). Idempotent.
    """
    allowed = allowed_document_ids(scope, resolver)
    fixes: list[PlanFix] = []
    steps: list[PlanStep] = []
    earlier: set[str] = set()
    for step in plan.steps:
        if step.tool == "retrieve_docs" and step.document_ids:
            fixes.append(PlanFix(step.step_id, "cleared_search_ids", tuple(map(repr, step.document_ids))))
            step = step.model_copy(update={"document_ids": ()})
        elif step.tool == "retrieve_chunks" and not _valid_ids(step, earlier, allowed):
            if scope.kind == "no_scope":
                return _rewritten(plan, "rewritten_two_step", two_step_plan(_query(plan)), fixes)
            removed = tuple(repr(v) for v in step.document_ids if not _id_ok(v, earlier, allowed))
            action: PlanFixAction = "replaced_from_chip" if scope.kind == "chip" else "replaced_from_property"
            fixes.append(PlanFix(step.step_id, action, removed))
            step = step.model_copy(update={"document_ids": _scope_ids(scope, resolver)})
        steps.append(step)
        earlier.add(step.step_id)
    if not any(s.tool == "retrieve_chunks" for s in steps):
        rebuilt = build_plan(scope, _query(plan), resolver)
        action = "rewritten_two_step" if scope.kind == "no_scope" else "rewritten_for_scope"
        return _rewritten(plan, action, rebuilt, fixes)
    for fix in fixes:
        log.info("plan step %s: %s, removed %s", fix.step_id, fix.action, list(fix.removed))
    return NormalisedPlan(Plan(steps=tuple(steps)), tuple(fixes))


def _rewritten(original: Plan, action: PlanFixAction, rebuilt: Plan, fixes: list[PlanFix]) -> NormalisedPlan:
    removed = tuple(repr(v) for s in original.steps for v in s.document_ids)
    fix = PlanFix("*", action, removed)
    log.info("plan rewritten (%s); dropped ids %s", action, list(removed))
    return NormalisedPlan(rebuilt, (*fixes, fix))


def parse_plan(raw: object, scope: Scope, resolver: EntityResolver, question: str) -> NormalisedPlan:
    """A plan from untrusted (LM) data, normalised; unparseable data gives the scope's plan."""
    try:
        plan = Plan.model_validate(raw)
    except ValidationError as exc:
        log.info("unparseable plan replaced by the scope's plan: %s", exc.error_count())
        return NormalisedPlan(build_plan(scope, question, resolver), (PlanFix("*", "unparseable_plan"),))
    return normalise_plan(plan, scope, resolver)
