"""The document-id guard: only canonical, known, in-scope UUIDs pass; every rejection says why."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Literal

log = logging.getLogger(__name__)

# Exactly 8-4-4-4-12 lowercase hex; uuid.UUID() would also accept braces, "urn:uuid:",
# upper case and missing hyphens, none of which may reach the store.
_CANONICAL = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def is_canonical_uuid(value: object) -> bool:
    """True only for a str in canonical lowercase hyphenated UUID form."""
    return isinstance(value, str) and _CANONICAL.fullmatch(value) is not None


RejectionReason = Literal[
    "not_a_string",
    "not_canonical_uuid",
    "unknown_document",
    "out_of_scope",
    "unresolvable_step_reference",
]

# A reference to every document id an earlier step returned: "<from_step_search_docs>".
STEP_REFERENCE = re.compile(r"<from_step_([a-z0-9_]+)>")


def step_reference(step_id: str) -> str:
    """The reference string that stands for every document id step `step_id` returned."""
    return f"<from_step_{step_id}>"


def referenced_step(value: object) -> str | None:
    """The step id a well-formed reference names, else None."""
    if not isinstance(value, str):
        return None
    match = STEP_REFERENCE.fullmatch(value)
    return match.group(1) if match else None


def looks_like_reference(value: object) -> bool:
    """True for anything written like a step reference, well-formed or not."""
    return isinstance(value, str) and value.strip().startswith("<from_step")


@dataclass(frozen=True)
class IdRejection:
    """A value kept away from the store, shown with repr() so invisible differences show."""

    value: str
    reason: RejectionReason


@dataclass(frozen=True)
class IdFilterResult:
    """Accepted ids in first-seen order without duplicates, and every rejection."""

    accepted: tuple[str, ...]
    rejections: tuple[IdRejection, ...]


def id_problem(
    value: object, known: AbstractSet[str] | None, allowed: AbstractSet[str] | None = None
) -> RejectionReason | None:
    """Why `value` may not reach the store, or None when it may: the one id-validity predicate.

    `known` is the catalog (None: not checked), `allowed` the scope (None: the whole catalog).
    Step references must be resolved before this; one that reaches it is unresolvable.
    """
    if not isinstance(value, str):
        return "not_a_string"
    if looks_like_reference(value):
        return "unresolvable_step_reference"
    if not is_canonical_uuid(value):
        return "not_canonical_uuid"
    if known is not None and value not in known:
        return "unknown_document"
    if allowed is not None and value not in allowed:
        return "out_of_scope"
    return None


def filter_document_ids(
    values: Iterable[object], allowed: AbstractSet[str], known: AbstractSet[str] | None = None
) -> IdFilterResult:
    """Values that are canonical UUIDs inside `allowed` (and `known`, when given).

    `allowed` is the scope; `known` is the catalog, which only sharpens the reason
    (unknown_document vs out_of_scope). Step references must be resolved before this.
    """
    accepted: dict[str, None] = {}
    rejections = []
    for value in values:
        reason = id_problem(value, known, allowed)
        if reason is None:
            accepted[str(value)] = None
        else:
            rejections.append(IdRejection(repr(value), reason))
    for rejection in rejections:
        log.info("rejected document id %s: %s", rejection.value, rejection.reason)
    return IdFilterResult(tuple(accepted), tuple(rejections))


def resolve_step_references(
    values: Sequence[object], step_results: Mapping[str, Sequence[str]]
) -> tuple[list[object], tuple[IdRejection, ...]]:
    """Every reference replaced by all ids its step returned; unknown steps are rejected.

    Other values pass through unchanged for `filter_document_ids` to judge.
    """
    out: list[object] = []
    rejections = []
    for value in values:
        if not looks_like_reference(value):
            out.append(value)
            continue
        step = referenced_step(value)
        if step is None or step not in step_results:
            rejections.append(IdRejection(repr(value), "unresolvable_step_reference"))
            continue
        out.extend(step_results[step])
    return out, tuple(rejections)
