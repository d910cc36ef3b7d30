"""A question's scope in words, as the page lists it: the whole collection, an entity, or the chosen documents."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pipeline.guards.sanitise import sanitised_text
from pipeline.serving.schemas import ScopeOut
from pipeline.store.catalog import Catalog

MAX_LABEL_CHARS = 200
NAMED_DOCUMENTS = 3


def scope_out(catalog: Catalog, scope: Mapping[str, Any], implicit: Sequence[str] = ()) -> ScopeOut:
    """The kind of a recorded scope and a label naming what it held (ids the catalog no longer knows are counted,
    not named)."""
    kind = str(scope.get("kind", "no_scope"))
    entities = catalog.entities
    if kind == "property":
        entity = entities.get(str(scope.get("entity_id")))
        label = entity.name if entity is not None else "an entity this index no longer holds"
    elif kind == "chip":
        ids = [str(d) for d in scope.get("document_ids") or ()]
        names = [catalog.documents[d].filename for d in ids if d in catalog.documents]
        shown = ", ".join(names[:NAMED_DOCUMENTS]) + (" …" if len(names) > NAMED_DOCUMENTS else "")
        label = f"{len(ids)} document{'' if len(ids) == 1 else 's'}: {shown}" if shown else f"{len(ids)} documents"
    else:
        named = [entities[e].name for e in implicit if e in entities]
        label = "Whole collection" + (f" (the question names {', '.join(named)})" if named else "")
    return ScopeOut(kind=kind, label=sanitised_text(label, MAX_LABEL_CHARS))
