"""A catalog of owners in memory, for deriving a question's documents (pipeline.intake.scope.question_scope)
without a store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pipeline.errors import UnknownScopeError


class OwnersCatalog:
    """Entity id -> the documents it owns; `shared` documents are in every entity's scope. Unknown
    entities raise as the store does; every lookup is counted in `calls`."""

    def __init__(self, owned: Mapping[str, Sequence[str]], shared: Sequence[str] = ()) -> None:
        self.owned = {e: list(ids) for e, ids in owned.items()}
        self.shared = list(shared)
        self.calls: list[str] = []

    def entity_document_ids(self, entity_id: str) -> list[str]:
        self.calls.append(entity_id)
        if entity_id not in self.owned:
            raise UnknownScopeError("entity", [entity_id])
        return list(self.owned[entity_id])

    def entity_scope(self, entity_id: str) -> list[str]:
        return [*self.entity_document_ids(entity_id), *self.shared]
