"""Which words of the entities' names the corpus also uses for other things, counted at index time.

A name word the corpus writes in lower case ("to the best of", "health care", "new technologies")
is an ordinary word; one that documents owned by none of the entities using it also write ("Texas"
of "Texas Instruments" in another company's filing) belongs to other organisations too. Neither
tells one entity apart on its own (pipeline.vocabulary: ordinary_words, shared_name_words).
"""

from __future__ import annotations

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

    def add(self, pages: Sequence[str], owners: Sequence[str]) -> None:
        """Count one document's pages; `owners` are the ids of the entities it belongs to."""
        if not self._users:
            return
        text = "\n".join(pages)
        folded = fold(text)
        tokens = tokenize(text)
        words = [t.folded for t in tokens]
        where: dict[str, list[int]] = {}
        for i, word in enumerate(words):
            if word in self._users:
                where.setdefault(word, []).append(i)
        lower: set[str] = set()
        for word, found in where.items():
            if any(_ordinary(folded, tokens[i]) for i in found):
                lower.add(word)
            # Written inside a full name of an entity using it, the word is that entity's mention.
            if not self._users[word] & set(owners) and any(not self._in_name(words, i, word) for i in found):
                self._foreign[word] += 1
        self._lower.update(lower)

    def _in_name(self, words: Sequence[str], at: int, word: str) -> bool:
        return any(
            tuple(words[at - index : at - index + len(name)]) == name
            for name, index in self._runs[word]
            if at - index >= 0
        )

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
