"""Deterministic guards: the document-id guard and the entity gate."""

from pipeline.guards.entity_gate import (
    BackstopResult,
    ChunkExclusion,
    DocumentVerdict,
    Exclusion,
    GateResult,
    chunk_backstop,
    gate,
    gate_inputs,
    judge_document,
)
from pipeline.guards.ids import (
    IdFilterResult,
    IdRejection,
    filter_document_ids,
    referenced_step,
    resolve_step_references,
    step_reference,
)

__all__ = [
    "BackstopResult",
    "ChunkExclusion",
    "DocumentVerdict",
    "Exclusion",
    "GateResult",
    "IdFilterResult",
    "IdRejection",
    "chunk_backstop",
    "filter_document_ids",
    "gate",
    "gate_inputs",
    "judge_document",
    "referenced_step",
    "resolve_step_references",
    "step_reference",
]
