"""Entity matching that look-alike letters cannot fool, and "another address" detection.

Text is folded to a skeleton (`pipeline.text.fold`: NFKC, invisible characters and accents
removed, Cyrillic and Greek look-alikes mapped to Latin, case kept) and split into word
tokens; names match as whole token runs, so a name never matches inside a different one that
shares its first word, and a Cyrillic "а" neither hides an asked name nor disguises another.
Which street types, identifiers and locations count as addresses comes from the corpus's
vocabulary.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from pipeline.text import fold
from pipeline.types import Entity
from pipeline.values.name_forms import without_legal_form
from pipeline.vocabulary import AddressVocabulary, IdentifierPattern, Vocabulary

# A word, with a possessive "'s" it carries ("Stremwood's"): the possessive is no word of its own.
_WORD = re.compile(r"[^\W_]+(?:['’][sS](?![^\W_]))?")
_POSSESSIVE = re.compile(r"['’][sS]$")
_APOSTROPHE = re.compile(r"['’]")
# "entity", "configured", "street_pattern", or the name of the corpus identifier pattern that found it.
MentionSource = str
# When two candidate mentions overlap and are equally long, the lower rank wins.
_SOURCE_RANK = {"entity": 0, "configured": 2, "street_pattern": 3}
_IDENTIFIER_RANK = 1


def skeleton(text: str) -> str:
    """Folded, case-folded words joined by single spaces: what entity matching compares."""
    return " ".join(t.folded for t in tokenize(text))


def contains_term(text: str, term: str) -> bool:
    """Whether `term` occurs in `text` as whole words, after folding case, width, accents and punctuation."""
    wanted = skeleton(term)
    return bool(wanted) and f" {wanted} " in f" {skeleton(text)} "


@dataclass(frozen=True)
class Token:
    """One word of folded text: its character span, its cased form and its skeleton."""

    start: int
    end: int
    cased: str
    folded: str


def tokenize(text: str) -> list[Token]:
    """Words of `fold(text)`; punctuation and underscores separate words."""
    return _words(fold(text))


def _words(folded: str) -> list[Token]:
    """The word tokens of already folded text (a possessive "'s" left out of the word's forms)."""
    out = []
    for m in _WORD.finditer(folded):
        word = _POSSESSIVE.sub("", m.group())
        out.append(Token(m.start(), m.end(), word, word.casefold()))
    return out


# Names and patterns are folded once per process, not once per document.
@lru_cache(maxsize=65536)
def phrase_tokens(phrase: str) -> tuple[str, ...]:
    """The skeleton words of a name or pattern."""
    return tuple(t.folded for t in tokenize(phrase))


@lru_cache(maxsize=16384)
def written_variants(entity: Entity) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """(skeleton words, words as written) of each run an entity goes by: each name, and each without a
    leading house number."""
    out: dict[tuple[str, ...], tuple[str, ...]] = {}
    # Each name as written, with its apostrophes left out ("Stremwood's" is also "Stremwoods").
    written = [form for name in entity.names for form in dict.fromkeys((name, _APOSTROPHE.sub("", name)))]
    for name in written:
        tokens = tokenize(name)
        words, cased = tuple(t.folded for t in tokens), tuple(t.cased for t in tokens)
        out.setdefault(words, cased)
        bare = without_legal_form(words)
        out.setdefault(bare, cased[: len(bare)])
        skip = 0
        while skip < len(words) and words[skip].isdigit():
            skip += 1
        if skip < len(words) and any(not w.isdigit() for w in words[skip:]):
            out.setdefault(words[skip:], cased[skip:])
    return tuple((w, c) for w, c in out.items() if w)


def name_variants(entity: Entity) -> tuple[tuple[str, ...], ...]:
    """Skeleton word runs an entity goes by: each name, and each without a leading house number."""
    return tuple(words for words, _ in written_variants(entity))


def needs_case(words: Sequence[str], common: frozenset[str]) -> bool:
    """Whether a name is made only of common words and numbers ("Best Buy", "Target"): it then names
    its entity only when written as the name writes it (or in capitals), never as ordinary text."""
    return all(w in common or w.isdigit() for w in words)


def _as_written(token: str, wanted: str) -> bool:
    return token == wanted or (len(token) > 1 and token.isupper() and token == wanted.upper())


@dataclass(frozen=True)
class Mention:
    """A name or address found in a text, as a token span; `asked` marks the asked entity."""

    label: str
    start: int
    end: int
    source: MentionSource
    asked: bool
    entity_id: str | None = None

    @property
    def length(self) -> int:
        return self.end - self.start

    @property
    def strong(self) -> bool:
        """A catalog entity or a configured location, not a guess from a pattern."""
        return self.source in ("entity", "configured") or self.entity_id is not None


def _runs(words: Sequence[str], phrase: Sequence[str]) -> Iterable[int]:
    """Start positions of `phrase` as a run of whole words in `words`."""
    n = len(phrase)
    if n == 0:
        return
    first = phrase[0]
    for i, word in enumerate(words[: len(words) - n + 1]):
        if word == first and tuple(words[i : i + n]) == tuple(phrase):
            yield i


def identifier_value(raw: str) -> str:
    """An identifier without spaces, case-folded: "2327 / 30" -> "2327/30"."""
    return re.sub(r"\s+", "", raw).casefold()


def find_identifiers(text: str, vocabulary: Vocabulary) -> list[str]:
    """Values of the corpus's identifiers written in `text`, in the order they appear."""
    folded = fold(text)
    found = [
        (m.start(), identifier_value(m.group(1))) for p in vocabulary.identifiers for m in p.regex.finditer(folded)
    ]
    return [value for _, value in sorted(found, key=lambda f: f[0])]


@lru_cache(maxsize=16384)
def entity_identifiers(entity: Entity, identifiers: tuple[IdentifierPattern, ...]) -> frozenset[str]:
    """Identifier values written in the entity's names and aliases (with or without their prefix)."""
    found: set[str] = set()
    for name in entity.names:
        folded = fold(name)
        for pattern in identifiers:
            found.update(identifier_value(m.group(1)) for m in pattern.regex.finditer(folded))
            if pattern.bare_regex is not None:
                found.update(identifier_value(m.group()) for m in pattern.bare_regex.finditer(folded))
    return frozenset(found)


def _rank(source: MentionSource) -> int:
    return _SOURCE_RANK.get(source, _IDENTIFIER_RANK)


def _select(candidates: list[Mention]) -> list[Mention]:
    """Leftmost-longest non-overlapping mentions, ordered by position."""
    chosen: list[Mention] = []
    taken: set[int] = set()
    for m in sorted(candidates, key=lambda c: (-c.length, c.start, _rank(c.source), not c.asked)):
        span = set(range(m.start, m.end))
        if span & taken:
            continue
        taken |= span
        chosen.append(m)
    return sorted(chosen, key=lambda c: (c.start, c.end))


def _name_candidates(
    tokens: Sequence[Token],
    entities: Sequence[Entity],
    asked: bool,
    skip: frozenset[tuple[str, ...]],
    common: frozenset[str],
) -> list[Mention]:
    """Whole-name runs of the entities' names; a name of common words only must be written as named."""
    words = [t.folded for t in tokens]
    out: list[Mention] = []
    for entity in entities:
        for name, cased in written_variants(entity):
            if name in skip:
                continue
            strict = needs_case(name, common)
            out.extend(
                Mention(entity.name, i, i + len(name), "entity", asked, entity.entity_id)
                for i in _runs(words, name)
                if not strict or all(_as_written(tokens[i + j].cased, c) for j, c in enumerate(cased))
            )
    return out


@dataclass(frozen=True)
class MentionScan:
    """Entities named in a text, and the phrases that name several at once (an alias two entities share)."""

    mentions: tuple[Mention, ...]
    # (the phrase as written, the ids of every entity it names)
    ambiguous: tuple[tuple[str, tuple[str, ...]], ...] = ()


def scan_entity_mentions(text: str, entities: Sequence[Entity], vocabulary: Vocabulary) -> MentionScan:
    """Catalog entities named in `text`: names, aliases and identifiers, longest first. A name matches
    only as a whole run of words, and one made only of the corpus's common words only as written. A
    phrase that is a name of several entities ("Norvane" of Norvane LLC and Norvane Limited) names none
    of them and is returned as ambiguous."""
    folded = fold(text)
    tokens = _words(folded)
    owners = {v: e for e in entities for v in entity_identifiers(e, vocabulary.identifiers)}
    found = [m for m in _identifier_candidates(folded, tokens, frozenset(), owners, vocabulary) if m.entity_id]
    names = _name_candidates(tokens, entities, asked=False, skip=frozenset(), common=vocabulary.common_words)
    candidates = [*names, *found]
    by_span: dict[tuple[int, int], dict[str, None]] = {}
    for m in candidates:
        if m.entity_id is not None:
            by_span.setdefault((m.start, m.end), {})[m.entity_id] = None
    mentions, ambiguous = [], []
    for m in _select(candidates):
        ids = tuple(by_span.get((m.start, m.end), ()))
        if len(ids) > 1:
            ambiguous.append((" ".join(t.cased for t in tokens[m.start : m.end]), ids))
        else:
            mentions.append(m)
    return MentionScan(tuple(mentions), tuple(ambiguous))


def find_entity_mentions(text: str, entities: Sequence[Entity], vocabulary: Vocabulary) -> list[Mention]:
    """Catalog entities named in `text` (`scan_entity_mentions`), a phrase naming several left out."""
    return list(scan_entity_mentions(text, entities, vocabulary).mentions)


def shared_names(entities: Sequence[Entity]) -> list[tuple[str, tuple[str, ...]]]:
    """Names (aliases, names without their legal form) that two or more entities go by, with the names of
    those entities: a question using one is asked which entity it means."""
    holders: dict[tuple[str, ...], dict[str, None]] = {}
    for entity in entities:
        for words in name_variants(entity):
            holders.setdefault(words, {})[entity.name] = None
    return [(" ".join(words), tuple(names)) for words, names in holders.items() if len(names) > 1]


@dataclass(frozen=True)
class AddressScan:
    """Mentions of the asked entities and of any other address in one text."""

    asked: tuple[Mention, ...]
    others: tuple[Mention, ...]

    @property
    def other_labels(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.label for m in self.others))


def _identifier_candidates(
    folded: str,
    tokens: Sequence[Token],
    asked_values: frozenset[str],
    owners: dict[str, Entity],
    vocabulary: Vocabulary,
) -> list[Mention]:
    ends = [t.end for t in tokens]
    starts = [t.start for t in tokens]
    out = []
    for pattern in vocabulary.identifiers:
        for m in pattern.regex.finditer(folded):
            value = identifier_value(m.group(1))
            first = bisect.bisect_right(ends, m.start())
            last = bisect.bisect_left(starts, m.end())
            label = f"{pattern.mention_label} {value}"
            if value in asked_values:
                out.append(Mention(label, first, last, pattern.name, True))
                continue
            owner = owners.get(value)
            out.append(
                Mention(
                    owner.name if owner else label, first, last, pattern.name, False, owner.entity_id if owner else None
                )
            )
    return out


def _street_candidates(
    tokens: Sequence[Token],
    addresses: AddressVocabulary,
    asked_names: Sequence[str],
    other_names: Sequence[tuple[str, Entity]],
    shared: frozenset[tuple[str, ...]],
) -> list[Mention]:
    """ "<Head> <street type>" addresses; one that is part of a known name counts as that entity."""
    types, stop = addresses.street_forms, addresses.heads_to_skip
    out = []
    for i in range(1, len(tokens)):
        head = tokens[i - 1]
        if tokens[i].cased not in types or not head.cased[0].isupper() or not head.cased.isalpha():
            continue
        if head.folded in stop:
            continue
        label = f"{head.folded} {tokens[i].folded}"
        if (head.folded, tokens[i].folded) in shared:
            continue
        if any(_contains(name, label) for name in asked_names):
            out.append(Mention(label, i - 1, i + 1, "street_pattern", True))
            continue
        owner = next((e for name, e in other_names if _contains(name, label)), None)
        out.append(
            Mention(
                owner.name if owner else label,
                i - 1,
                i + 1,
                "street_pattern",
                False,
                owner.entity_id if owner else None,
            )
        )
    return out


def scan_addresses(text: str, asked: Sequence[Entity], others: Sequence[Entity], vocabulary: Vocabulary) -> AddressScan:
    """The asked entities and other addresses named in `text` (catalog names, identifiers, the
    vocabulary's configured locations and street pattern).

    A phrase shared by an asked and another entity says nothing and is ignored; a configured
    location that is part of an asked name is not "another" address.
    """
    folded = fold(text)
    tokens = _words(folded)
    words = [t.folded for t in tokens]
    asked_names = {n for e in asked for n in name_variants(e)}
    other_names = {n for e in others for n in name_variants(e)}
    shared = frozenset(asked_names & other_names)
    identifiers = vocabulary.identifiers
    asked_values: frozenset[str] = frozenset().union(*(entity_identifiers(e, identifiers) for e in asked))
    owners = {v: e for e in others for v in entity_identifiers(e, identifiers) if v not in asked_values}
    asked_text = [" ".join(n) for n in asked_names - shared]
    other_text = [(" ".join(n), e) for e in others for n in name_variants(e) if n not in shared]
    common = vocabulary.common_words
    candidates = [
        *_name_candidates(tokens, asked, asked=True, skip=shared, common=common),
        *_name_candidates(tokens, others, asked=False, skip=shared, common=common),
        *_identifier_candidates(folded, tokens, asked_values, owners, vocabulary),
        *_street_candidates(tokens, vocabulary.addresses, asked_text, other_text, shared),
    ]
    for pattern in dict.fromkeys(phrase_tokens(p) for p in vocabulary.addresses.other_locations):
        if not pattern or any(_contains(name, " ".join(pattern)) for name in asked_text):
            continue
        label = " ".join(pattern)
        candidates.extend(Mention(label, i, i + len(pattern), "configured", False) for i in _runs(words, pattern))
    chosen = _select(candidates)
    return AddressScan(tuple(m for m in chosen if m.asked), tuple(m for m in chosen if not m.asked))


def _contains(haystack: str, needle: str) -> bool:
    """Whole-word containment of one skeleton phrase in another."""
    return f" {needle} " in f" {haystack} "


def without_mentions(text: str, entities: Sequence[Entity], vocabulary: Vocabulary) -> str:
    """`text` (folded) with every name of `entities` it holds left out; `text` itself when it names
    none of them or holds nothing else."""
    found = [m for m in find_entity_mentions(text, entities, vocabulary) if m.entity_id]
    if not found:
        return text
    folded = fold(text)
    tokens = _words(folded)
    spans = sorted((tokens[m.start].start, tokens[m.end - 1].end) for m in found)
    kept, at = [], 0
    for start, end in spans:
        kept.append(folded[at:start])
        at = max(at, end)
    kept.append(folded[at:])
    rest = " ".join("".join(kept).split())
    return rest if _words(rest) else text
