"""A question comparing entities by one figure: which of them has the lowest or highest of it.

Two forms are read: the entities in quotes with an extreme ("Which of the companies had the lowest total assets:
"A", "B", "C"?", `quoted_comparison`, part of the question's contract), and entities the question names without
quotes with a comparative ("Which is higher, the monthly rent at Elm Court or at Oak Court?", `entity_comparison`,
given the entities' names).

Pure functions over English question forms.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Literal

Extreme = Literal["lowest", "highest"]

# The extreme a comparison asks for, and the metric after it ("the lowest total assets").
_EXTREME = re.compile(
    r"\b(?P<extreme>lowest|highest|largest|smallest|biggest|greatest|most|least|fewest|maximum|minimum)\b"
    r"(?P<metric>[^?:\"“]*)",
    re.IGNORECASE,
)
# Where a comparison's metric ends: its currency, period or the list of entities.
_METRIC_END = re.compile(
    r"\s+(?:in|at|as\s+of|within|according|among|for|during|of\s+(?:these|those|the)\s+\w+)\b|[,(;]",
    re.IGNORECASE,
)
# A name in quotes ("Acme Inc.", “Acme Inc.”).
QUOTED_NAME = re.compile(r"[\"“]([^\"”]{1,120})[\"”]")
_LOW = frozenset({"lowest", "smallest", "least", "fewest", "minimum", "bottom"})


@dataclass(frozen=True)
class Comparison:
    """A question comparing entities by one figure: which of `names` (as the question quotes them) has the
    lowest or highest `metric`; entities without the figure are left out of the comparison and named."""

    extreme: Extreme
    metric: str
    names: tuple[str, ...]


def quoted_comparison(question: str) -> Comparison | None:
    """The comparison `question` asks for: two or more entities in quotes and an extreme ("the lowest X")."""
    names = tuple(dict.fromkeys(n.strip() for n in QUOTED_NAME.findall(question) if n.strip()))
    m = _EXTREME.search(question)
    if len(names) < 2 or m is None:
        return None
    metric = _METRIC_END.split(m.group("metric"), maxsplit=1)[0]
    metric = " ".join(metric.split()).strip(" ,:") or "value"
    extreme: Extreme = "lowest" if m.group("extreme").casefold() in _LOW else "highest"
    return Comparison(extreme, metric, names)


# A comparative that asks which of two or more named entities ranks first ("Which is higher, ..."): the extreme
# it asks for.
_COMPARATIVE = re.compile(
    r"\b(?P<high>higher|larger|bigger|greater|more|longer|highest|largest|biggest|greatest|most|longest|maximum)\b"
    r"|\b(?P<low>lower|smaller|less|fewer|shorter|cheaper|lowest|smallest|least|fewest|shortest|cheapest|minimum)\b",
    re.IGNORECASE,
)
_WHICH = re.compile(r"^\s*(?:which|who|whose|what)\b", re.IGNORECASE)
# Words around a comparison's metric that are not the metric: the question's lead, "than", articles.
_NOT_METRIC = frozenset(
    "which who whose what one ones of is are was were has have had does do did pays pay charges charge the a an its "
    "their than between among at in for on or and".split()
)


def entity_comparison(
    question: str, entities: Sequence[Sequence[str]], generic: AbstractSet[str] = frozenset()
) -> Comparison | None:
    """The comparison a question asking which of two or more entities it names (each given by all its names, the
    first its own) ranks first, without quotes: "Which is higher, the monthly rent at Elm Court or at Oak
    Court?" -> highest "monthly rent" of Elm Court, Oak Court. None unless it asks "which", names two entities
    or more (not in quotes: a question quoting them is `quoted_comparison`'s to read) and a comparative or
    superlative, and a metric remains once the names are taken off (`generic` words, which name a kind of
    thing, are no metric)."""
    if len(entities) < 2 or not _WHICH.match(question) or len(QUOTED_NAME.findall(question)) >= 2:
        return None  # names in quotes are the quoted comparison's to read (`quoted_comparison`)
    written = sorted({n for names in entities for n in names if n.strip()}, key=len, reverse=True)
    rest = question
    for name in written:
        rest = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", " | ", rest, flags=re.IGNORECASE)
    if rest.count("|") < 2:
        return None
    extreme_at = _COMPARATIVE.search(rest)
    if extreme_at is None:
        return None
    extreme: Extreme = "highest" if extreme_at.group("high") else "lowest"
    before, after = rest[: extreme_at.start()], rest[extreme_at.end() :]
    pieces = [*re.split(r"[|,:;?!.]", after), *reversed(re.split(r"[|,:;?!.]", before))]
    for piece in pieces:
        words = re.findall(r"[A-Za-z][A-Za-z'’-]*", piece)
        while words and (words[0].casefold() in _NOT_METRIC or words[0].casefold() in generic):
            words.pop(0)
        while words and (words[-1].casefold() in _NOT_METRIC or words[-1].casefold() in generic):
            words.pop()
        if words:
            return Comparison(extreme, " ".join(words).casefold(), tuple(names[0] for names in entities))
    return None
