"""Label resolution: a labelled example's document references (relative paths or ids) and slugs turned
into catalog ids."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.evaluation.examples import LabelledExample
from pipeline.intake.scope import Scope, resolve_scope
from pipeline.store import Store


@dataclass(frozen=True)
class ResolvedExample:
    """A labelled example with relative paths and slugs turned into catalog ids."""

    example: LabelledExample
    scope: Scope
    gold: frozenset[str]
    gold_pages: dict[str, frozenset[int] | None]
    forbidden: frozenset[str]


def resolve_example(example: LabelledExample, store: Store) -> ResolvedExample:
    """Catalog ids for the example's documents (each named by relative path or by document id) and
    scope; UnknownDocumentError names every reference that is neither, and the forms it takes."""
    references = [*example.scope.document_ids, *example.gold_documents, *example.forbidden_documents]
    references += [p.document for p in example.gold_pages]
    by_path = dict(zip(references, store.document_ids_for(references, f"example {example.id}"), strict=True))
    scope = resolve_scope(
        store,
        document_ids=[by_path[p] for p in example.scope.document_ids] or None,
        property_ref=example.scope.property,
    )
    pages: dict[str, set[int] | None] = {by_path[p]: set() for p in example.gold_documents}
    for gold_page in example.gold_pages:
        doc = by_path[gold_page.document]
        current = pages.get(doc, set())
        pages[doc] = None if gold_page.page is None or current is None else {*current, gold_page.page}
    return ResolvedExample(
        example=example,
        scope=scope,
        gold=frozenset(by_path[p] for p in example.gold_documents),
        gold_pages={d: (frozenset(p) if p else None) for d, p in pages.items()},
        forbidden=frozenset(by_path[p] for p in example.forbidden_documents),
    )
