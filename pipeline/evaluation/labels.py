"""Label resolution: a labelled example's document references (relative paths or ids) and slugs turned
into catalog ids."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.evaluation.examples import LabelledExample
from pipeline.intake.scope import Scope, resolve_scope
from pipeline.store import Store


@dataclass(frozen=True)
class ResolvedExample:
    """A labelled example with relative paths and slugs turned into catalog ids. `left_out` names the
    gold or forbidden documents the index build skipped, with why: the example is scored without them."""

    example: LabelledExample
    scope: Scope
    gold: frozenset[str]
    gold_pages: dict[str, frozenset[int] | None]
    forbidden: frozenset[str]
    left_out: tuple[str, ...] = ()


def resolve_example(example: LabelledExample, store: Store) -> ResolvedExample:
    """Catalog ids for the example's documents (each named by relative path or by document id) and
    scope; UnknownDocumentError names every reference that is neither, and the forms it takes. A gold or
    forbidden document the build skipped is left out and named in `left_out`; a skipped document in
    the scope is an error (SkippedDocumentError), since the question cannot be asked as labelled."""
    skipped = store.catalog.skipped
    left_out = {p: skipped[p] for p in [*example.gold_documents, *example.forbidden_documents] if p in skipped}
    references = [*example.scope.document_ids, *example.gold_documents, *example.forbidden_documents]
    references += [p.document for p in example.gold_pages]
    references = [r for r in references if r not in left_out or r in example.scope.document_ids]
    by_path = dict(zip(references, store.document_ids_for(references, f"example {example.id}"), strict=True))
    scope = resolve_scope(
        store,
        document_ids=[by_path[p] for p in example.scope.document_ids] or None,
        property_ref=example.scope.property,
    )
    gold_documents = [p for p in example.gold_documents if p not in left_out]
    pages: dict[str, set[int] | None] = {by_path[p]: set() for p in gold_documents}
    for gold_page in example.gold_pages:
        if gold_page.document in left_out:
            continue
        doc = by_path[gold_page.document]
        current = pages.get(doc, set())
        pages[doc] = None if gold_page.page is None or current is None else {*current, gold_page.page}
    return ResolvedExample(
        example=example,
        scope=scope,
        gold=frozenset(by_path[p] for p in gold_documents),
        gold_pages={d: (frozenset(p) if p else None) for d, p in pages.items()},
        forbidden=frozenset(by_path[p] for p in example.forbidden_documents if p not in left_out),
        left_out=tuple(f"{path} left out: skipped when the index was built ({why})" for path, why in left_out.items()),
    )
