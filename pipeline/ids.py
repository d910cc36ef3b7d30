"""Deterministic ids and the one canonical-UUID check every guard relies on."""

from __future__ import annotations

import re
import uuid

# The project's own namespace for uuid5 ids (itself a fixed uuid5 of the project name).
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "scoperag")

# Exactly 8-4-4-4-12 lowercase hex; uuid.UUID() would also accept braces, "urn:uuid:",
# upper case and missing hyphens, none of which may reach the store.
_CANONICAL = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def is_canonical_uuid(value: object) -> bool:
    """True only for a str in canonical lowercase hyphenated UUID form."""
    return isinstance(value, str) and _CANONICAL.fullmatch(value) is not None


def document_id(corpus: str, relpath: str) -> str:
    """Stable document id: the same corpus name and relative path give the same id."""
    return str(uuid.uuid5(NAMESPACE, f"doc:{corpus}:{relpath}"))


def entity_id(corpus: str, slug: str) -> str:
    """Stable id of an owning entity (a property, a company) within a corpus."""
    return str(uuid.uuid5(NAMESPACE, f"entity:{corpus}:{slug}"))
