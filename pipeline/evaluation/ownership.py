"""Whether every owned document can be read in its owner's scope, through the tools `ask` uses.

For each entity and each document the catalog gives it, a question in the entity's property scope
reads the document through the scope, the document-id guard, the entity gate and the chunk backstop
(`pipeline.execution.tools.RetrievalTools`); a document that gives no chunk there is a gap. No LM.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.execution.tools import RetrievalTools, SearchSettings
from pipeline.intake.scope import Scope, question_scope
from pipeline.settings import CoreConfig
from pipeline.store import Store


@dataclass(frozen=True)
class OwnershipGap:
    """An owned document its owner's scope does not read, and why."""

    entity: str
    filename: str
    reason: str


def ownership_gaps(store: Store, config: CoreConfig | None = None) -> list[OwnershipGap]:
    """Every (entity, owned document) whose document gives no chunk to a question in the entity's scope."""
    config = config or CoreConfig()
    documents = store.catalog.documents
    gaps: list[OwnershipGap] = []
    for entity in store.catalog.entities.values():
        scope = question_scope(Scope(kind="property", entity_id=entity.entity_id), store)
        tools = RetrievalTools(store, scope, config, SearchSettings(gate_entity_ids=(entity.entity_id,)))
        for document_id in store.entity_document_ids(entity.entity_id):
            document = documents[document_id]
            if document_id not in (scope.allowed or ()):
                gaps.append(OwnershipGap(entity.name, document.filename, "not in the entity's scope"))
                continue
            found = tools.retrieve_chunks({"query": document.title or document.filename, "document_ids": [document_id]})
            if found.value:
                continue
            excluded = [e for e in tools.gate_exclusions if e.document_id == document_id]
            why = ", ".join(excluded[-1].reasons) if excluded else (found.error.message if found.error else "no chunk")
            gaps.append(OwnershipGap(entity.name, document.filename, why))
    return gaps
