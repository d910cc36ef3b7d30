"""The entity gate (seed 002): no document or chunk about another property gets through.

Where the catalog declares a document's owners, the catalog decides: the document is an asked
entity's if and only if that entity owns it (the pair rule below still holds), and its chunks are
not judged by what they name. The text rules that follow judge documents with no declared owner,
and owned documents of a corpus whose manifest asks for them (`ownership = "text"`).

A document is judged on its summary and opening (parties clause, title block and first page),
never on its filename alone:
- hard exclusion, never relaxed: the summary does not name the asked entity but names
  another address (catalog entity, or from the corpus's vocabulary: a configured location, a
  "<Head> <street type>" address, an identifier such as a registry number); or
  the summary names no address at all and the filename or title names only another one; or
  the document belongs to another pair (the question names two entities that own a document
  together, and this one is owned by one of them with someone else); or no entity owns it and
  the manifest does not share it (a blank form lies outside every entity's scope unless the
  question's scope selects it);
- soft exclusion (entity required in the summary): the summary names no address at all and
  the catalog ties the document to a different entity; or the summary names the asked
  entity but another address more prominently (unless the catalog lists the asked entity
  among the document's owners: one document genuinely about two entities);
- a summary that names no address and belongs to no other entity (a generic annex) is kept,
  ranked after documents whose summary names the entity.
When the summary does not name the asked entity, the opening may: a document it names there (and
no other entity more often; the co-owners of a document the asked entity owns are its other
parties, not "another" entity) counts as naming it, unless the catalog gives it to another entity
only. When every document would be excluded, soft exclusions come back ranked:
entity in the filename, then neither, then (only if configured) prominence losers.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Literal

from pipeline.entities import AddressScan, Mention, scan_addresses, tokenize
from pipeline.settings import EntityGateConfig
from pipeline.text import fold
from pipeline.types import ChunkHit, Document, Entity
from pipeline.vocabulary import Vocabulary

log = logging.getLogger(__name__)

ExclusionReason = Literal[
    "entity_not_in_summary",
    "other_address_in_summary",
    "other_address_in_filename",
    "other_address_more_prominent",
    "owned_by_other_entity",
    "another_pair",
    "owned_by_no_entity",
]
ChunkExclusionReason = Literal["entity_not_in_chunk", "other_address_in_chunk"]


@dataclass(frozen=True)
class DocumentVerdict:
    """Everything the gate found about one document and what it decided, with the evidence."""

    document_id: str
    filename: str
    entity_in_summary: bool
    entity_in_filename: bool
    other_addresses: tuple[str, ...]
    reasons: tuple[ExclusionReason, ...]
    hard: bool
    entity_in_opening: bool = False
    # Where the asked entity (or another) was found: "summary: ...", "opening: ...", "owners: ...".
    evidence: tuple[str, ...] = ()
    # The catalog declares an asked entity among its owners and decides alone (no text rule judged it).
    owner: bool = False

    @property
    def keep(self) -> bool:
        return not self.reasons

    @property
    def tier(self) -> int:
        """Relaxation rank: owner by the catalog, or entity in summary or opening; in filename only;
        nowhere; losing on prominence."""
        if "other_address_more_prominent" in self.reasons:
            return 3
        if self.owner or self.entity_in_summary or self.entity_in_opening:
            return 0
        return 1 if self.entity_in_filename else 2


@dataclass(frozen=True)
class Exclusion:
    """A document kept out of the results, with why."""

    document_id: str
    filename: str
    reasons: tuple[ExclusionReason, ...]
    other_addresses: tuple[str, ...]


@dataclass(frozen=True)
class GateResult:
    """Documents kept (best first), documents excluded, and any relaxed back in."""

    kept: tuple[Document, ...]
    exclusions: tuple[Exclusion, ...]
    relaxed: tuple[str, ...]
    verdicts: tuple[DocumentVerdict, ...]

    @property
    def kept_ids(self) -> tuple[str, ...]:
        return tuple(d.document_id for d in self.kept)


def gate_inputs(
    entity_ids: Sequence[str], entities: Mapping[str, Entity]
) -> tuple[tuple[Entity, ...], tuple[Entity, ...]]:
    """(asked entities, every other catalog entity) for the given asked ids."""
    asked = tuple(entities[e] for e in dict.fromkeys(entity_ids) if e in entities)
    wanted = {e.entity_id for e in asked}
    return asked, tuple(e for e in entities.values() if e.entity_id not in wanted)


def pair_documents(asked_ids: Sequence[str], owned: Callable[[str], Sequence[str]]) -> frozenset[str]:
    """Documents two or more of the asked entities own together (`owned`: an entity's document ids)."""
    if len(asked_ids) < 2:
        return frozenset()
    counts = Counter(d for e in dict.fromkeys(asked_ids) for d in set(owned(e)))
    return frozenset(d for d, n in counts.items() if n >= 2)


def _dominant_other(scan: AddressScan) -> str | None:
    """Another address that outweighs the asked entity: more mentions, or as many and earlier.

    A guessed address (street pattern, unknown identifier) must be mentioned more often to win,
    because a summary about the asked entity may name a nearby address in passing.
    """
    count, first = len(scan.asked), scan.asked[0].start
    for label in scan.other_labels:
        found = [m for m in scan.others if m.label == label]
        strong = any(m.strong for m in found)
        if len(found) > count or (len(found) == count and strong and found[0].start < first):
            return label
    return None


# Characters of text shown either side of a mention in the gate's evidence.
_EVIDENCE_CHARS = 60


def _snippet(text: str, mention: Mention) -> str:
    """The words around `mention` in `text` (folded), for the trace."""
    tokens = tokenize(text)
    if not tokens or mention.start >= len(tokens):
        return ""
    start = tokens[mention.start].start
    end = tokens[min(mention.end, len(tokens)) - 1].end
    folded = fold(text)
    return " ".join(folded[max(0, start - _EVIDENCE_CHARS) : end + _EVIDENCE_CHARS].split())


def _without(scan: AddressScan, entity_ids: AbstractSet[str]) -> AddressScan:
    """`scan` without the other mentions of the given entities (a document's co-owners)."""
    return AddressScan(scan.asked, tuple(m for m in scan.others if m.entity_id not in entity_ids))


def judge_document(
    document: Document,
    asked: Sequence[Entity],
    others: Sequence[Entity],
    config: EntityGateConfig,
    vocabulary: Vocabulary,
    pair_documents: AbstractSet[str] = frozenset(),
    selected: AbstractSet[str] = frozenset(),
) -> DocumentVerdict:
    """The gate's verdict on one document, from its summary and opening (its filename and catalog
    owners only decide when neither names an address). `pair_documents` are the documents two or more
    asked entities own together; `selected` the ids the question's scope selects (a chip)."""
    asked_ids = {e.entity_id for e in asked}
    owners = set(document.entity_ids)
    owned_by_asked = bool(asked_ids & owners)
    owned_by_other = bool(owners) and not owned_by_asked
    co_owners = owners - asked_ids if owned_by_asked else set()
    if owners and not document.text_rules:
        return _by_owners(document, owned_by_asked, bool(co_owners), len(owners & asked_ids), pair_documents)
    summary = scan_addresses(document.summary, asked, others, vocabulary)
    name = scan_addresses(f"{document.filename}\n{document.title}", asked, others, vocabulary)
    in_summary, in_name = bool(summary.asked), bool(name.asked)
    evidence: list[str] = []
    if summary.asked:
        evidence.append(f"summary: {_snippet(document.summary, summary.asked[0])}")
    in_opening = False
    if not in_summary and document.opening and not owned_by_other:
        opening = _without(scan_addresses(document.opening, asked, others, vocabulary), co_owners)
        # Both parties of a contract are named once in its parties clause: only another entity named
        # more often than the asked one outweighs it there.
        most = max((sum(m.label == label for m in opening.others) for label in opening.other_labels), default=0)
        in_opening = bool(opening.asked) and most <= len(opening.asked)
        if in_opening:
            evidence.append(f"opening: {_snippet(document.opening, opening.asked[0])}")
    if owners:
        evidence.append(f"owners: {len(owners)} in the catalog, {len(owners & asked_ids)} asked")
    in_description = in_summary or in_opening
    # With no summary at all, the filename is the only description there is (seed 002, 1).
    filename_stands_in = in_name and not document.summary.strip()
    others_found = summary.other_labels
    reasons: tuple[ExclusionReason, ...] = ()
    hard = False
    if not owners and document.document_id in selected:
        evidence.append("owned by no entity; selected by the question's scope")
        others_found = ()
    elif not owners and document.outside:
        reasons, hard = ("owned_by_no_entity",), True
        evidence.append("owned by no entity and not shared by the manifest")
    elif pair_documents and owned_by_asked and co_owners and document.document_id not in pair_documents:
        reasons, hard = ("another_pair",), True
        evidence.append("owned by one asked entity with another; the asked entities own documents together")
    elif not in_description and others_found:
        reasons, hard = ("entity_not_in_summary", "other_address_in_summary"), True
    elif not in_description and not in_name and name.others:
        reasons, hard, others_found = (
            ("entity_not_in_summary", "other_address_in_filename"),
            True,
            name.other_labels,
        )
    elif not in_description and config.require_entity_in_summary and owned_by_other and not filename_stands_in:
        # The catalog's relationships come from the corpus manifest: a document it gives to
        # another entity only, whose summary does not name the asked one, is never relaxed back.
        reasons, hard = ("entity_not_in_summary", "owned_by_other_entity"), True
    elif in_summary and others_found and config.prominence_check and not owned_by_asked:
        dominant = _dominant_other(summary)
        if dominant is not None:
            reasons, others_found = ("other_address_more_prominent",), (dominant, *others_found)
    return DocumentVerdict(
        document.document_id,
        document.filename,
        in_summary,
        in_name,
        tuple(dict.fromkeys(others_found)),
        reasons,
        hard,
        in_opening,
        tuple(evidence),
    )


def _by_owners(
    document: Document, owned_by_asked: bool, co_owned: bool, asked_owners: int, pair_documents: AbstractSet[str]
) -> DocumentVerdict:
    """The verdict on a document whose owners the catalog declares: whose it is is what the catalog says,
    whatever its summary or opening names (a party's NDA naming only the other party is still its own;
    a report naming its largest customer is still not the customer's)."""
    evidence = [f"owners: {len(document.entity_ids)} in the catalog, {asked_owners} asked; the catalog decides"]
    reasons: tuple[ExclusionReason, ...] = ()
    if not owned_by_asked:
        reasons = ("owned_by_other_entity",)
    elif pair_documents and co_owned and document.document_id not in pair_documents:
        reasons = ("another_pair",)
        evidence.append("owned by one asked entity with another; the asked entities own documents together")
    return DocumentVerdict(
        document.document_id,
        document.filename,
        entity_in_summary=False,
        entity_in_filename=False,
        other_addresses=(),
        reasons=reasons,
        hard=bool(reasons),
        evidence=tuple(evidence),
        owner=owned_by_asked and not reasons,
    )


def _relaxable(verdict: DocumentVerdict, config: EntityGateConfig) -> bool:
    if verdict.hard or verdict.keep:
        return False
    return config.relax_prominence_exclusions or "other_address_more_prominent" not in verdict.reasons


def gate(
    documents: Sequence[Document],
    asked: Sequence[Entity],
    others: Sequence[Entity],
    config: EntityGateConfig,
    vocabulary: Vocabulary,
    doc_type_hint: AbstractSet[str] = frozenset(),
    pair_documents: AbstractSet[str] = frozenset(),
    selected: AbstractSet[str] = frozenset(),
) -> GateResult:
    """Documents about the asked entities, best first; every exclusion logged with its reason.

    With no asked entity the gate is inactive and only the document-type hint reorders.
    """
    hint = {h.casefold() for h in doc_type_hint}
    if not asked:
        ordered = sorted(documents, key=lambda d: d.doc_type.casefold() not in hint)
        return GateResult(tuple(ordered), (), (), ())
    verdicts = [judge_document(d, asked, others, config, vocabulary, pair_documents, selected) for d in documents]
    keep = {v.document_id for v in verdicts if v.keep}
    relaxed: list[str] = []
    if not keep and config.relax_when_all_excluded:
        relaxed = [v.document_id for v in verdicts if _relaxable(v, config)]
        if relaxed:
            log.warning("entity gate would exclude every document; relaxed %d soft exclusions", len(relaxed))
        keep = set(relaxed)
    by_id = {v.document_id: v for v in verdicts}
    position = {d.document_id: i for i, d in enumerate(documents)}
    kept = sorted(
        (d for d in documents if d.document_id in keep),
        key=lambda d: (by_id[d.document_id].tier, d.doc_type.casefold() not in hint, position[d.document_id]),
    )
    exclusions = tuple(
        Exclusion(v.document_id, v.filename, v.reasons, v.other_addresses)
        for v in verdicts
        if v.document_id not in keep
    )
    for e in exclusions:
        log.info(
            "entity gate excluded %s (%s): %s; other addresses %s",
            e.document_id,
            e.filename,
            ", ".join(e.reasons),
            list(e.other_addresses),
        )
    for v in verdicts:
        if v.document_id in keep:
            log.debug(
                "entity gate kept %s (%s): %s",
                v.document_id,
                v.filename,
                "; ".join(v.evidence) or "entity in " + ("filename" if v.entity_in_filename else "neither"),
            )
    return GateResult(tuple(kept), exclusions, tuple(relaxed), tuple(verdicts))


@dataclass(frozen=True)
class ChunkExclusion:
    """A chunk kept away from the answer: it names another address and not the asked entity."""

    document_id: str
    filename: str
    page: int
    row: int
    reasons: tuple[ChunkExclusionReason, ...]
    other_addresses: tuple[str, ...]


@dataclass(frozen=True)
class BackstopResult:
    """Chunks that may be shown and cited, and the ones dropped."""

    kept: tuple[ChunkHit, ...]
    exclusions: tuple[ChunkExclusion, ...]


def chunk_backstop(
    hits: Sequence[ChunkHit],
    asked: Sequence[Entity],
    others: Sequence[Entity],
    vocabulary: Vocabulary,
    owned: AbstractSet[str] = frozenset(),
) -> BackstopResult:
    """`hits` without the chunks that name another address but not the asked entity. Chunks of the
    documents in `owned` (the catalog gives them to an asked entity and decides alone) are kept whatever
    they name: a contract's pages name its other party."""
    if not asked:
        return BackstopResult(tuple(hits), ())
    kept, dropped = [], []
    for hit in hits:
        if hit.chunk.document_id in owned:
            kept.append(hit)
            continue
        scan = scan_addresses(hit.chunk.text, asked, others, vocabulary)
        if scan.asked or not scan.others:
            kept.append(hit)
            continue
        dropped.append(
            ChunkExclusion(
                hit.chunk.document_id,
                hit.filename,
                hit.chunk.page,
                hit.chunk.row,
                ("entity_not_in_chunk", "other_address_in_chunk"),
                scan.other_labels,
            )
        )
        log.info(
            "chunk backstop dropped %s page %d (%s): names %s",
            hit.filename,
            hit.chunk.page,
            hit.chunk.document_id,
            list(scan.other_labels),
        )
    return BackstopResult(tuple(kept), tuple(dropped))
