"""Grounding: an answer line may state only what its evidence states. Every figure, date, reference and
proper name of the line must stand in one of its evidence sentences (figures and dates compared as
values, pipeline.values.quantities), and most of its words too; a figure that code computed is grounded when each
of its operands is. A line that fails is replaced by its best evidence sentence, and the reason recorded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from pipeline.text import STOPWORDS, content_words, fold, normalise
from pipeline.values.quantities import missing_values, value_spans

# Share of a line's content words that its evidence must hold (figures and names must all be there).
MIN_WORD_SHARE = 0.5
_NAME = re.compile(r"(?<![\w'’])[A-Z][\w'’&.-]*(?:\s+(?:of\s+|and\s+|&\s+)?[A-Z][\w'’&.-]*)*")


@dataclass(frozen=True)
class Grounding:
    """Whether a line is grounded in its evidence, and what of it the evidence does not state."""

    grounded: bool
    missing: tuple[str, ...] = ()
    reason: str | None = None


def proper_names(text: str) -> list[str]:
    """Runs of capitalised words in `text` that are not its first word alone or a stopword ("The")."""
    names = []
    for match in _NAME.finditer(text):
        words = [w.rstrip(".,;:") for w in match.group(0).split() if normalise(w).strip(".") not in STOPWORDS]
        if not words or (match.start() == 0 and len(words) == 1):
            continue
        names.append(" ".join(words))
    return names


def restates(line: str, question: str, generic: AbstractSet[str] = frozenset()) -> bool:
    """True when a line says nothing beyond the words of the question it answers (`generic` words, which name a
    kind of thing, say nothing)."""
    words = content_words(line, generic)
    return not words or words <= content_words(question, generic)


def ground_line(
    line: str, evidence: Sequence[str], generic: AbstractSet[str] = frozenset(), question: str | None = None
) -> Grounding:
    """Whether `line` is grounded in the `evidence` sentences: every figure, date and reference stated by
    one of them, every proper name's words found in them, and at least MIN_WORD_SHARE of its other content
    words (`generic` words name a kind of thing and are not claims); given the `question`, a line that only
    restates it is no answer."""
    support = "\n".join(evidence)
    if not line.strip():
        return Grounding(False, (), "empty")
    if question is not None and restates(line, question, generic):
        return Grounding(False, (), "restates the question")
    if not support.strip():
        return Grounding(False, (), "no evidence")
    missing = list(missing_values(line, support))
    folded = normalise(fold(support))
    for name in proper_names(line):
        absent = [w for w in name.split() if normalise(fold(w)).strip(".,;:") not in folded]
        if absent:
            missing.append(name)
    if missing:
        return Grounding(False, tuple(missing), f"not in its evidence: {', '.join(missing[:5])}")
    words = _words_outside_values(line, generic)
    if words:
        held = words & content_words(support, generic)
        if len(held) / len(words) < MIN_WORD_SHARE:
            return Grounding(False, tuple(sorted(words - held)[:5]), "most of its words are not in its evidence")
    return Grounding(True)


def _words_outside_values(text: str, generic: AbstractSet[str]) -> set[str]:
    """The content words of `text` that are not part of a figure or a date."""
    blanked = list(text)
    for start, end in value_spans(text):
        blanked[start:end] = " " * (end - start)
    return {w for w in content_words("".join(blanked), generic) if not any(c.isdigit() for c in w)}
