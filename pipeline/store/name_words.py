"""Which words of the entities' names the corpus also uses for other things, counted at index time.

A name word the corpus writes in lower case ("to the best of", "health care", "new technologies")
is an ordinary word; one that documents owned by none of the entities using it also write ("Texas"
of "Texas Instruments" in another company's filing) belongs to other organisations too. Neither
tells one entity apart on its own (pipeline.vocabulary: ordinary_words, shared_name_words).
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from pipeline.entities import Token, name_variants, tokenize
from pipeline.text import fold
from pipeline.types import Entity
from pipeline.vocabulary import Vocabulary

# A word counts as ordinary, or as shared, once this many documents use it so.
MIN_DOCUMENTS = 2
# Characters next to a word that make it part of a web or e-mail address ("www.acme.com", "ir@acme").
_ADDRESS_MARKS = "./@"


class NameWordCounter:
    """Counts, document by document, how the corpus uses the words of its entities' names."""

    def __init__(self, entities: Iterable[Entity], vocabulary: Vocabulary) -> None:
        common = vocabulary.common_words
        self._users: dict[str, set[str]] = {}
        # word -> (name run, position of the word in it) of every name that uses it
        self._runs: dict[str, list[tuple[tuple[str, ...], int]]] = {}
        for entity in entities:
            for name in name_variants(entity):
                for index, word in enumerate(name):
                    if len(word) > 1 and not word.isdigit() and word not in common:
                        self._users.setdefault(word, set()).add(entity.entity_id)
                        self._runs.setdefault(word, []).append((name, index))
        self._lower: Counter[str] = Counter()
        self._foreign: Counter[str] = Counter()
        # Any name word as a whole word (case-folded text is searched, so the words need no case).
        alternatives = "|".join(re.escape(w) for w in sorted(self._users, key=len, reverse=True))
        self._pattern = re.compile(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])")
        self._longest = max((len(name) for runs in self._runs.values() for name, _ in runs), default=0)

    @property
    def digest(self) -> str:
        """What the counts depend on besides the text: the entities' name words, their users and runs."""
        shape = sorted((w, sorted(self._users[w]), sorted(self._runs[w])) for w in self._users)
        return hashlib.sha256(repr(shape).encode()).hexdigest()

    def add(self, pages: Sequence[str], owners: Sequence[str]) -> None:
        """Count one document's pages; `owners` are the ids of the entities it belongs to."""
        self.record(*self.observe(pages, owners))

    def record(self, ordinary: Iterable[str], foreign: Iterable[str]) -> None:
        """Count one document's observations (from `observe`, possibly made by an earlier build)."""
        self._lower.update(set(ordinary))
        self._foreign.update(set(foreign))

    def observe(self, pages: Sequence[str], owners: Sequence[str]) -> tuple[set[str], set[str]]:
        """(the name words the pages write as ordinary words, those they use for others while none of the
        entities using them is among `owners`): one document's part of the counts.

        Only occurrences that can still change a count are looked at: a word already found in lower
        case (and outside a name, or owned here) needs no more, and a line is split into words only
        when one of its name words may be ordinary or foreign there. A 100-page filing holds thousands
        of name words; splitting all of it took seconds per document. Folding and words stop at line
        ends, and case folding keeps them, so the counts are those of the whole text.
        """
        if not self._users:
            return set(), set()
        lines = [fold(line) for line in "\n".join(pages).split("\n")]
        lowered = [line.casefold() for line in lines]
        text = "\n".join(lowered)
        starts = list(itertools.accumulate((len(line) + 1 for line in lowered), initial=0))
        owned = set(owners)
        lower: set[str] = set()
        foreign: set[str] = set()
        counted: set[int] = set()
        for match in self._pattern.finditer(text):
            word = match.group()
            wants_foreign = word not in foreign and not self._users[word] & owned
            if word in lower and not wants_foreign:
                continue
            number = bisect.bisect_right(starts, match.start()) - 1
            line = lines[number]
            if number in counted:
                continue
            if not wants_foreign and line.isascii():  # the match is the word as written
                offset = match.start() - starts[number]
                written = line[offset : offset + len(word)]
                if not (written[:1].islower() and written == word):
                    continue
            counted.add(number)
            self._count_line(lines, number, owned, lower, foreign)
        return lower, foreign

    def _count_line(
        self, lines: Sequence[str], number: int, owned: set[str], lower: set[str], foreign: set[str]
    ) -> None:
        """Add to `lower` the name words line `number` writes as ordinary words, and to `foreign` those it
        uses outside a name of an entity using them when none of those owns the document."""
        folded = lines[number]
        tokens = tokenize(folded)
        words: list[str] | None = None
        shift = 0
        for position, token in enumerate(tokens):
            word = token.folded
            if word not in self._users:
                continue
            if _ordinary(folded, token):
                lower.add(word)
            if word in foreign or self._users[word] & owned:
                continue
            if words is None:
                before, after = self._context(lines, number)
                words, shift = [*before, *(t.folded for t in tokens), *after], len(before)
            if not self._in_name(words, shift + position, word):
                foreign.add(word)

    def _context(self, lines: Sequence[str], number: int) -> tuple[list[str], list[str]]:
        """The last and first words of the lines before and after line `number`: as many as the longest
        name has (a name may run over a line end)."""
        before: list[str] = []
        for line in reversed(lines[max(0, number - self._longest) : number]):
            before = [t.folded for t in tokenize(line)] + before
            if len(before) >= self._longest:
                break
        after: list[str] = []
        for line in lines[number + 1 : number + 1 + self._longest]:
            after += [t.folded for t in tokenize(line)]
            if len(after) >= self._longest:
                break
        return before[-self._longest :] if self._longest else [], after[: self._longest]

    def _in_name(self, words: Sequence[str], at: int, word: str) -> bool:
        return any(
            tuple(words[at - index : at - index + len(name)]) == name
            for name, index in self._runs[word]
            if at - index >= 0
        )

    def too_common(self, entities: Iterable[Entity]) -> list[tuple[str, str]]:
        """(word, entity name) of each short name people write for an entity, the first word of one of its names
        ("MGM" of MGM Resorts International, "Texas" of Texas Instruments), that other organisations' documents
        also write: such a word names its entity alone only in capitals, and the build says so."""
        shared = {w for w, n in self._foreign.items() if n >= MIN_DOCUMENTS}
        out: list[tuple[str, str]] = []
        for entity in entities:
            for words in name_variants(entity):
                if words and words[0] in shared:
                    out.append((words[0], entity.name))
        return sorted(set(out))

    def vocabulary(self, base: Vocabulary) -> Vocabulary:
        """`base` with the counted ordinary and shared name words added to the ones it lists."""
        ordinary = {w for w, n in self._lower.items() if n >= MIN_DOCUMENTS}
        shared = {w for w, n in self._foreign.items() if n >= MIN_DOCUMENTS}
        return base.model_copy(
            update={
                "ordinary_words": tuple(sorted({*base.ordinary_words, *ordinary})),
                "shared_name_words": tuple(sorted({*base.shared_name_words, *shared})),
            }
        )


def _ordinary(folded: str, token: Token) -> bool:
    """A lower-case word of running text, not part of a web or e-mail address."""
    if not token.cased[:1].islower() or token.cased != token.folded:
        return False
    before = folded[token.start - 1 : token.start]
    after = folded[token.end : token.end + 2]
    in_address = (
        (before != "" and before in _ADDRESS_MARKS)
        or after[:1] in ("/", "@")
        or (after[:1] == "." and after[1:2].isalpha())
    )
    return not in_address
