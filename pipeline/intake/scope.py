"""Document scope, decided in code before any LM (seed 000): nothing, selected documents (a chip),
or one property; and the document ids each scope allows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Literal, Protocol

from pydantic import model_validator

from pipeline.guards.entity_gate import pair_documents
from pipeline.guards.ids import is_canonical_uuid
from pipeline.types import Document, Entity, Strict

ScopeKind = Literal["no_scope", "chip", "property"]


class Scope(Strict):
    """What the user put in scope: nothing, selected documents (a chip), or one property."""

    kind: ScopeKind
    document_ids: tuple[str, ...] = ()
    # The property of a property scope; optional on a chip (the property it was picked from).
    entity_id: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Scope:
        if self.kind == "chip" and not self.document_ids:
            raise ValueError("a chip scope needs at least one document id")
        bad = [d for d in self.document_ids if not is_canonical_uuid(d)]
        if bad:
            raise ValueError(f"document ids must be canonical UUIDs: {bad!r}")
        if self.kind != "chip" and self.document_ids:
            raise ValueError(f"a {self.kind} scope carries no document ids")
        if self.kind == "property" and not self.entity_id:
            raise ValueError("a property scope needs an entity id")
        if self.kind == "no_scope" and self.entity_id:
            raise ValueError("no_scope carries no entity id")
        return self


NO_SCOPE = Scope(kind="no_scope")


class ScopeCatalog(Protocol):
    """What deriving a question's documents needs from the catalog (Store satisfies it)."""

    def entity_scope(self, entity_id: str) -> list[str]: ...

    def entity_document_ids(self, entity_id: str) -> list[str]: ...


class QuestionScope(Strict):
    """The documents one question may read, derived once at intake and carried as this one value from
    the plan to the store calls and the citation check: the chip's ids, a property's documents, an
    implicit entity scope (a question with no scope that names entities reads their documents), or
    None for the whole catalog."""

    scope: Scope
    document_ids: tuple[str, ...] | None = None
    # The entities an implicit entity scope was derived from; () for any other scope.
    implicit_entity_ids: tuple[str, ...] = ()

    @property
    def allowed(self) -> frozenset[str] | None:
        """The ids the question may read, as a set; None means the whole catalog."""
        return None if self.document_ids is None else frozenset(self.document_ids)

    @property
    def implicit(self) -> bool:
        return bool(self.implicit_entity_ids)


def entity_scope_ids(entity_ids: Sequence[str], catalog: ScopeCatalog) -> tuple[str, ...]:
    """The documents of an implicit scope of `entity_ids`, in catalog order: one entity's own (and the
    shared ones); for several, the documents two or more of them own together, else all of theirs."""
    named = tuple(dict.fromkeys(entity_ids))
    together = pair_documents(named, catalog.entity_document_ids)
    if together:
        ordered = [d for e in named for d in catalog.entity_scope(e) if d in together]
        owned = {d for e in named for d in catalog.entity_document_ids(e)}
        shared = [d for d in catalog.entity_scope(named[0]) if d not in owned]
        return tuple(dict.fromkeys([*ordered, *shared]))
    return tuple(dict.fromkeys(d for e in named for d in catalog.entity_scope(e)))


def question_scope(scope: Scope, catalog: ScopeCatalog, named: Sequence[str] = ()) -> QuestionScope:
    """The documents a question in `scope` naming the entities `named` may read: the chip's; the
    property's (the documents it owns, and those the manifest shares with every entity); with no
    scope, the named entities' (an implicit entity scope), else the whole catalog."""
    if scope.kind == "chip":
        return QuestionScope(scope=scope, document_ids=scope.document_ids)
    if scope.kind == "property" and scope.entity_id is not None:
        return QuestionScope(scope=scope, document_ids=tuple(catalog.entity_scope(scope.entity_id)))
    if named:
        ids = tuple(dict.fromkeys(named))
        return QuestionScope(scope=scope, document_ids=entity_scope_ids(ids, catalog), implicit_entity_ids=ids)
    return QuestionScope(scope=scope)


def gate_entity_ids(scope: Scope, mentioned: Sequence[str]) -> tuple[str, ...]:
    """Entities the gate protects: the ones the question names, else the scope's property.

    A question that names only other entities than its scope's property is about them: the
    gate then keeps nothing of the scope's own documents (they are about another entity),
    and the answer says the documents in scope do not cover it.
    """
    named = tuple(dict.fromkeys(mentioned))
    if scope.entity_id is None:
        return named
    if not named or scope.entity_id in named:
        return (scope.entity_id,)
    return named


class ScopeSource(Protocol):
    """What resolving a scope needs from the store (Store satisfies it)."""

    def check_document_ids(self, document_ids: Sequence[str]) -> list[str]: ...

    def resolve_entity(self, name_or_id: str) -> Entity: ...


def resolve_scope(
    source: ScopeSource, document_ids: Sequence[str] | None = None, property_ref: str | None = None
) -> Scope:
    """The scope of a request, checked against the catalog; UnknownScopeError names bad input.

    Selected documents win over a property (the chip keeps the property for the gate).
    """
    entity_id = source.resolve_entity(property_ref).entity_id if property_ref else None
    if document_ids:
        checked = source.check_document_ids(list(dict.fromkeys(document_ids)))
        return Scope(kind="chip", document_ids=tuple(checked), entity_id=entity_id)
    if entity_id is not None:
        return Scope(kind="property", entity_id=entity_id)
    return NO_SCOPE


class ScopeNote(Strict):
    """What the answer must say about whose documents the scope selected, decided in code.

    `other_entity`: every selected document belongs to other entities than the ones the question
    names: the answer says whose they are, with no citation. `no_entity`: the
    selection holds documents no entity owns (a blank form), read as selected, and the answer says
    they are not the named entity's.
    """

    kind: Literal["other_entity", "no_entity"]
    asked: tuple[str, ...]
    about: tuple[str, ...] = ()
    document_ids: tuple[str, ...] = ()
    message: str


def _listed(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _theirs(document: Document, wanted: AbstractSet[str], together: AbstractSet[str]) -> bool:
    """Whether the asked entities may read `document` by its owners: one of them owns it (and, when they
    own documents together, it is one of those or has no other owner), or it is shared with every entity."""
    owners = set(document.entity_ids)
    if not owners:
        return not document.outside
    if not wanted & owners:
        return False
    return not together or document.document_id in together or owners <= wanted


def scope_note(
    scoped_ids: Sequence[str] | None,
    asked_ids: Sequence[str],
    documents: Mapping[str, Document],
    entities: Mapping[str, Entity],
    entity_kind: str = "entity",
    together: AbstractSet[str] = frozenset(),
) -> ScopeNote | None:
    """The note a scoped question needs when its selected documents are not the asked entities' own:
    all another entity's, or another pair's where the asked entities own documents together
    (`together`) (`other_entity`), or some owned by no entity (`no_entity`); None otherwise (no scope,
    no entity asked, or a selected document the asked entities may read)."""
    asked = [entities[e] for e in dict.fromkeys(asked_ids) if e in entities]
    selected = [documents[d] for d in scoped_ids or () if d in documents]
    if not asked or not selected:
        return None
    wanted = {e.entity_id for e in asked}
    if any(_theirs(d, wanted, together) for d in selected):
        return None
    asked_names = tuple(e.name for e in asked)
    unowned = tuple(d for d in selected if not d.entity_ids)
    if unowned:
        files = _listed([d.filename for d in unowned])
        message = (
            f"The selected document {files} belongs to no {entity_kind}: it is not {_listed(asked_names)}'s;"
            " the answer comes from it as selected."
        )
        return ScopeNote(
            kind="no_entity",
            asked=asked_names,
            document_ids=tuple(d.document_id for d in unowned),
            message=message,
        )
    owners = [entities[e].name for d in selected for e in d.entity_ids if e in entities]
    about = tuple(dict.fromkeys(owners))
    message = (
        f"The selected documents are about {_listed(about)}, not {_listed(asked_names)}."
        f" Select {_listed(asked_names)}'s documents, or ask about {_listed(about)}."
    )
    return ScopeNote(
        kind="other_entity",
        asked=asked_names,
        about=about,
        document_ids=tuple(d.document_id for d in selected),
        message=message,
    )
