"""Values passed between stages (frozen dataclasses, never bare dicts) and the one strict pydantic base."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict

SearchMode = Literal["bm25", "dense", "hybrid"]


class Strict(BaseModel):
    """The base of every validated model: unknown keys are errors and instances are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class StrictJson(Strict):
    """A Strict model for JSON read from disk or a request: no type coercion, no NaN or infinity."""

    model_config = ConfigDict(strict=True, allow_inf_nan=False)


@dataclass(frozen=True)
class Entity:
    """An owning entity (a property, a company) with every name it goes by."""

    entity_id: str
    slug: str
    name: str
    aliases: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical name followed by its aliases."""
        return (self.name, *self.aliases)


@dataclass(frozen=True)
class Document:
    """A catalogued document; `entity_ids` lists its owners, primary first (both parties of a contract, a
    filing's company and its subsidiaries); `opening` is what its first pages say about it (parties
    clause and first page, capped), which the entity gate reads beside the summary of a document with no
    declared owner; `outside` marks a document no entity owns that lies outside every entity's scope
    (the manifest's default for such a document, a blank form; one it shares, a common annex, is served
    for every entity)."""

    document_id: str
    filename: str
    relpath: str
    title: str
    summary: str
    doc_type: str
    page_count: int
    entity_ids: tuple[str, ...] = ()
    attributes: tuple[tuple[str, str], ...] = ()
    opening: str = ""
    outside: bool = False
    # The manifest asks the entity gate's text rules to judge this document although it has owners
    # (by default the catalog's owners alone decide whose it is).
    text_rules: bool = False
    # The id of the document this one amends (an amendment of an agreement), if any.
    amends: str | None = None

    @property
    def shared(self) -> bool:
        """No entity owns it and the manifest serves it for every entity (a common annex)."""
        return not self.entity_ids and not self.outside


@dataclass(frozen=True)
class Chunk:
    """A piece of one page of one document; `row` is its position in the indexes."""

    row: int
    document_id: str
    page: int
    ordinal: int
    text: str


@dataclass(frozen=True)
class ChunkHit:
    """A retrieved chunk with the fused score and the per-retriever scores behind it."""

    chunk: Chunk
    filename: str
    score: float
    scores: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class DocumentHit:
    """A retrieved document with its fused score."""

    document: Document
    score: float
    scores: dict[str, float] = field(default_factory=dict)


class SourceRef(Strict):
    """A cited page: document id, filename and page, and the document as a reader knows it (`title`: a filing's
    company, form and period, or its title, from pipeline.guards.citations.citation_name; "" when it has none,
    and a citation then shows the file name)."""

    document_id: str
    filename: str
    page: int
    title: str = ""


@dataclass(frozen=True)
class RowCell:
    """One figure cell of a table row: the text as printed ("$81,797", "(1,234)", "12.5%") and the column
    header above it ("Three Months Ended July 1, 2023"; "" when the table has none)."""

    text: str
    header: str = ""


@dataclass(frozen=True)
class TableRow:
    """A row of a table as a reader found it on a page: its label ("Total net sales"), the label rows above
    it that head a block of rows ("Current assets:"), its figure cells with their column headers, and what
    the table says about all its figures: the scale ("million" from "(In millions, except per share)"), the
    currency (ISO code, from "$", "EUR'000", "(in thousands of euros)"), and its title ("CONSOLIDATED
    BALANCE SHEETS"). `table` numbers the tables of a page from 0, `ordinal` the rows of a document."""

    page: int
    table: int
    ordinal: int
    label: str
    cells: tuple[RowCell, ...]
    parents: tuple[str, ...] = ()
    scale: str | None = None
    currency: str | None = None
    title: str = ""
