"""A corpus's own words and patterns, from the `[vocabulary]` of its corpus.toml, stored with its index.

Nothing in `pipeline/` knows a particular corpus: the words that name a kind of entity or
document, the shape of its addresses, its identifiers (registry numbers, contract numbers),
the currency words of its amounts and its extra personal-data terms all come from here.
An empty vocabulary is the generic default: no street pattern, no identifier, no extra word.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from pipeline.text import STOPWORDS, normalise
from pipeline.types import Strict, StrictJson

VOCABULARY_FORMAT: Literal["scoperag-vocabulary/v1"] = "scoperag-vocabulary/v1"

# Kinds the runtime names itself: an identifier pattern may not take one of these names,
# so a literal term or a mention of a corpus identifier is never mistaken for a built-in one.
RESERVED_NAMES = frozenset(
    {"quoted", "error_message", "identifier", "clause", "entity", "configured", "street_pattern"}
)

Words = tuple[str, ...]


# Derived forms are computed from the field values (cached per value), never stored on the model:
# a copy with other values must not carry the old ones.
@lru_cache(maxsize=256)
def _folded(words: Words) -> frozenset[str]:
    return frozenset(normalise(w) for w in words)


@lru_cache(maxsize=256)
def _compiled(pattern: str, groups: int, what: str) -> re.Pattern[str]:
    """`pattern` compiled case-insensitively; ValueError unless it compiles with `groups` capture groups."""
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"{what} {pattern!r} does not compile: {exc}") from None
    if compiled.groups != groups:
        raise ValueError(f"{what} {pattern!r} has {compiled.groups} capture groups; it needs exactly {groups}")
    return compiled


class IdentifierPattern(Strict):
    """An identifier the corpus writes (a registry or contract number): a regex whose one group is the value.

    Patterns match case-insensitively on look-alike-folded text. A value found in an entity's
    names ties the value to that entity; found in a question it is a literal term of this kind.
    """

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")
    pattern: str = Field(min_length=1, max_length=500)
    # How the value is written alone in an entity's name or alias (no capture group).
    bare: str | None = Field(default=None, min_length=1, max_length=500)
    # The word before the value in a mention's label ("contract C-7"); default: the name.
    label: str | None = Field(default=None, min_length=1, max_length=40)

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, name: str) -> str:
        if name in RESERVED_NAMES:
            raise ValueError(f"identifier name {name!r} is reserved; reserved: {', '.join(sorted(RESERVED_NAMES))}")
        return name

    @field_validator("pattern")
    @classmethod
    def _one_group(cls, pattern: str) -> str:
        _compiled(pattern, 1, "identifier pattern")
        return pattern

    @field_validator("bare")
    @classmethod
    def _no_group(cls, bare: str | None) -> str | None:
        if bare is not None:
            _compiled(bare, 0, "bare identifier pattern")
        return bare

    @property
    def regex(self) -> re.Pattern[str]:
        return _compiled(self.pattern, 1, "identifier pattern")

    @property
    def bare_regex(self) -> re.Pattern[str] | None:
        return None if self.bare is None else _compiled(self.bare, 0, "bare identifier pattern")

    @property
    def mention_label(self) -> str:
        return self.label or self.name.replace("_", " ")


@lru_cache(maxsize=256)
def _common(generic: Words, street_types: Words, ordinary: Words) -> frozenset[str]:
    return STOPWORDS | _folded(generic) | _folded(street_types) | _folded(ordinary)


@lru_cache(maxsize=256)
def _street_forms(street_types: Words) -> frozenset[str]:
    return frozenset(v for t in street_types for v in (t.title(), t.upper()))


@lru_cache(maxsize=256)
def _heads(head_stopwords: Words) -> frozenset[str]:
    return STOPWORDS | _folded(head_stopwords)


class AddressVocabulary(Strict):
    """How the corpus writes addresses: "<Head> <street type>" and locations that always mean another entity."""

    # Street-type words of the "<Head> <street type>" pattern; matched capitalised or upper case.
    street_types: Words = ()
    # Head words that make "<Head> <street type>" no address (a kind of street or court, not a name),
    # beside the stopwords.
    head_stopwords: Words = ()
    # Phrases that always name another entity unless part of the asked entity's names.
    other_locations: Words = ()

    @property
    def street_words(self) -> frozenset[str]:
        """The street types, case-folded: words that name a kind of place, never one entity."""
        return _folded(self.street_types)

    @property
    def street_forms(self) -> frozenset[str]:
        """The street types as they are matched: capitalised and upper case."""
        return _street_forms(self.street_types)

    @property
    def heads_to_skip(self) -> frozenset[str]:
        """Case-folded head words that never start an address: the stopwords and the configured ones."""
        return _heads(self.head_stopwords)


class Vocabulary(Strict):
    """Everything the runtime knows about one corpus's language."""

    # Words that name a kind of entity or document but never one entity ("contract", "company").
    generic_words: Words = ()
    # Currency and unit words an amount may be written with or without ("EUR", "euros").
    units: Words = ()
    # Personal-data terms beyond the generic ones (passport, phone number, ...): "tax number".
    pii_terms: Words = ()
    identifiers: tuple[IdentifierPattern, ...] = ()
    addresses: AddressVocabulary = AddressVocabulary()
    # Words of entity names that the corpus also writes as ordinary lower-case words ("best", "health",
    # "target"): a name made only of such (or generic) words matches only as written ("Best Buy", not
    # "the best buy"), and such a word never names an entity on its own. Computed at index time from
    # the corpus text (pipeline/store/name_words.py) and added to any listed here.
    ordinary_words: Words = ()
    # Words of entity names that documents of no entity using them also write ("Texas" of "Texas
    # Instruments", "Technologies"): such a word never names an entity on its own. Computed at index time.
    shared_name_words: Words = ()

    @model_validator(mode="after")
    def _distinct_identifier_names(self) -> Vocabulary:
        names = [p.name for p in self.identifiers]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"identifier patterns named twice: {', '.join(twice)}")
        return self

    @property
    def generic(self) -> frozenset[str]:
        """The generic words, case-folded."""
        return _folded(self.generic_words)

    @property
    def unit_words(self) -> frozenset[str]:
        """The unit words, case-folded."""
        return _folded(self.units)

    @property
    def common_words(self) -> frozenset[str]:
        """Case-folded words that never tell one entity from ordinary text: the stopwords, the generic
        words, the street types and the corpus's ordinary words."""
        return _common(self.generic_words, self.addresses.street_types, self.ordinary_words)

    @property
    def not_alone(self) -> frozenset[str]:
        """Case-folded name words that never name an entity on their own: the common words and the
        words other organisations' documents share."""
        return self.common_words | _folded(self.shared_name_words)


class StoredVocabulary(StrictJson):
    """The vocabulary as the catalog keeps it: versioned JSON."""

    format: Literal["scoperag-vocabulary/v1"]
    vocabulary: Vocabulary


def dump_vocabulary(vocabulary: Vocabulary) -> str:
    """The catalog form of `vocabulary`: versioned JSON, keys sorted."""
    stored = StoredVocabulary(format=VOCABULARY_FORMAT, vocabulary=vocabulary)
    return json.dumps(stored.model_dump(mode="json", exclude_none=True), sort_keys=True)


def load_vocabulary(text: str) -> Vocabulary:
    """The vocabulary in its catalog form; ValueError names what is wrong."""
    try:
        return StoredVocabulary.model_validate_json(text).vocabulary
    except ValidationError as exc:
        raise ValueError(f"stored vocabulary is invalid: {exc.errors()[0]['msg']}") from None
