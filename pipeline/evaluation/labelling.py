"""Labelling: a recorded question (the history) becomes a LabelledExample appended to a JSONL file.

Catalog ids are turned into what survives an index rebuild: documents into their relative
paths, the property into its slug. Gold documents default to the documents the answer cited.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pipeline.errors import DuplicateExampleError, LabellingError
from pipeline.evaluation.examples import Case, GoldPage, LabelledExample, Split, load_examples, make_example
from pipeline.evaluation.history import HistoryEntry
from pipeline.files import append_locked
from pipeline.guards.sanitise import sanitised_text
from pipeline.store.catalog import Catalog

log = logging.getLogger(__name__)

# Characters a labelled fact keeps (a fact is a figure, a name or a short phrase).
MAX_FACT_CHARS = 500

# Which recorded scope kinds each case may be labelled from (wrong_property: any).
CASE_SCOPES: dict[str, frozenset[str]] = {
    "no_scope": frozenset({"no_scope"}),
    "chip": frozenset({"chip"}),
    "property": frozenset({"property"}),
    "wrong_property": frozenset({"no_scope", "chip", "property"}),
}


def labelled_facts(facts: Sequence[str]) -> tuple[str, ...]:
    """The facts a user gave for a label as they are stored: sanitised as every text a user writes is (no terminal
    escapes, controls, invisible or bidi characters, markup, links or DSPy field markers: the facts reach the fact
    metric and an optimiser's feedback to the reflection LM), at most MAX_FACT_CHARS each, blanks and repeats
    left out."""
    kept = (sanitised_text(fact, MAX_FACT_CHARS) for fact in facts)
    return tuple(dict.fromkeys(fact for fact in kept if fact))


def _relpaths(catalog: Catalog, document_ids: Sequence[str], what: str) -> list[str]:
    """Relative paths of catalog document ids, in order; LabellingError names unknown ids."""
    unknown = [d for d in document_ids if d not in catalog.documents]
    if unknown:
        raise LabellingError(
            f"{what} {unknown} are not in this index's catalog (was the index rebuilt from other files?);"
            " label against the index the question was asked on"
        )
    return [catalog.documents[d].relpath for d in document_ids]


def _as_relpaths(catalog: Catalog, documents: Sequence[str]) -> list[str]:
    """Gold documents given as ids, relative paths or unique file names, as relative paths."""
    by_path = {doc.relpath: doc.relpath for doc in catalog.documents.values()}
    by_name: dict[str, list[str]] = {}
    for doc in catalog.documents.values():
        by_name.setdefault(doc.filename, []).append(doc.relpath)
    out, unknown = [], []
    for ref in documents:
        if ref in catalog.documents:
            out.append(catalog.documents[ref].relpath)
        elif ref in by_path:
            out.append(ref)
        elif len(by_name.get(ref, [])) == 1:
            out.append(by_name[ref][0])
        else:
            unknown.append(ref)
    if unknown:
        raise LabellingError(
            f"gold documents {unknown} match no single document of the catalog; give relative paths"
            " (as in `scoperag search --documents`) or document ids"
        )
    return list(dict.fromkeys(out))


def _scope(entry: HistoryEntry, catalog: Catalog) -> dict[str, Any]:
    """The recorded scope with relative paths and a property slug instead of catalog ids."""
    recorded = entry.trace.scope
    scope: dict[str, Any] = {}
    document_ids = list(recorded.get("document_ids") or ())
    if document_ids:
        scope["document_ids"] = tuple(sorted(set(_relpaths(catalog, document_ids, "scope documents"))))
    entity_id = recorded.get("entity_id")
    if entity_id:
        if entity_id not in catalog.entities:
            raise LabellingError(f"scope property {entity_id} is not in this index's catalog")
        scope["property"] = catalog.entities[entity_id].slug
    return scope


def _cited(entry: HistoryEntry) -> list[tuple[str, int | None]]:
    """(document id, page) of every source the answer's sections cite, first citation first."""
    pairs: list[tuple[str, int | None]] = []
    for section in entry.trace.sections:
        for source in section.get("sources") or ():
            document_id = source.get("document_id")
            if isinstance(document_id, str):
                page = source.get("page")
                pairs.append((document_id, page if isinstance(page, int) and page >= 1 else None))
    return list(dict.fromkeys(pairs))


def example_from_history(
    entry: HistoryEntry,
    catalog: Catalog,
    *,
    case: Case,
    answer_facts: Sequence[str],
    gold_documents: Sequence[str] | None = None,
    gold_pages: Sequence[tuple[str, int]] | None = None,
    forbidden_documents: Sequence[str] = (),
    expect_not_found: bool = False,
    tags: Sequence[str] = (),
    split: Split | None = None,
    corpus: str | None = None,
) -> LabelledExample:
    """The labelled example of a recorded question; LabellingError says why it cannot be one.

    Gold documents default to the documents the answer cited (none when `expect_not_found`), or to the
    documents of `gold_pages` when those are named; gold pages are `gold_pages` ((document id, page) pairs
    someone read), else the cited pages of gold documents. Documents may be given as catalog ids, relative
    paths or unique file names; all are stored as relative paths.
    """
    kind = str(entry.trace.scope.get("kind", "no_scope"))
    if kind not in CASE_SCOPES[case]:
        raise LabellingError(f"the question was asked with a {kind} scope, so it cannot be labelled as {case}")
    cited = _cited(entry)
    if gold_pages is not None:
        _relpaths(catalog, [d for d, _ in gold_pages], "gold pages' documents")
        bad = [(d, p) for d, p in gold_pages if not 1 <= p <= catalog.documents[d].page_count]
        if bad:
            raise LabellingError(f"gold pages {bad} are not pages of their documents")
        if gold_documents is None:
            gold_documents = list(dict.fromkeys(d for d, _ in gold_pages))
    if gold_documents is None:
        gold_ids = [] if expect_not_found else list(dict.fromkeys(d for d, _ in cited))
        gold = _relpaths(catalog, gold_ids, "cited documents")
    else:
        gold = _as_relpaths(catalog, gold_documents)
    named: Sequence[tuple[str, int | None]] = cited if gold_pages is None else gold_pages
    pages = [
        GoldPage(document=catalog.documents[d].relpath, page=page)
        for d, page in named
        if d in catalog.documents and catalog.documents[d].relpath in gold and page is not None
    ]
    scope = _scope(entry, catalog)
    try:
        return make_example(
            corpus=corpus or catalog.meta.get("corpus", "default"),
            case=case,
            question=entry.trace.question,
            scope=scope,
            gold_documents=tuple(gold),
            gold_pages=tuple(dict.fromkeys(pages)),
            answer_facts=labelled_facts(answer_facts),
            forbidden_documents=tuple(_as_relpaths(catalog, forbidden_documents)),
            expect_not_found=expect_not_found,
            expected_plan="one_step" if scope else "two_step",
            tags=tuple(dict.fromkeys((*tags, "from_history"))),
            split=split,
        )
    except ValidationError as exc:
        problems = "; ".join(str(error["msg"]) for error in exc.errors())
        raise LabellingError(f"history entry {entry.history_id} cannot be labelled as {case}: {problems}") from exc


def append_example(path: Path, example: LabelledExample) -> int:
    """Append `example` to a JSONL trace file; returns its line number.

    The file is validated first (ExamplesError names a bad line) and DuplicateExampleError is raised when it
    already holds the example's id. Reading, checking and appending happen under one lock on the file
    (pipeline.files.append_locked), so two processes labelling at once each add their line; the line is appended
    in place to the file a symlink names, keeping its hard links and mode, and a failed write leaves the file as
    it was. The example's facts were sanitised when it was made (make_example).
    """
    line: list[int] = []

    def checked_line(existing: bytes) -> bytes:
        if existing:
            load_examples(path)  # the whole file must be valid before anything is added to it
        for number, raw in enumerate(existing.splitlines(), start=1):
            if raw.strip() and json.loads(raw)["id"] == example.id:
                raise DuplicateExampleError(path, example.id, number)
        separator = b"\n" if existing and not existing.endswith(b"\n") else b""
        line.append((existing + separator).count(b"\n") + 1)
        return separator + (example.model_dump_json(exclude_defaults=True) + "\n").encode("utf-8")

    append_locked(path, checked_line)
    log.info("appended example %s to %s", example.id, path)
    return line[0]
