"""A question's own parts, without an LM (the floors of decomposition): the question as it is, or split
into the questions it asks itself: on "?", and on "and" before a question word ("When was X inspected and
by which firm?" -> "When was X inspected?", "By which firm was X inspected?")."""

from __future__ import annotations

import re

# "and" (or a comma) before a question phrase starts a second question.
_SECOND = re.compile(
    r"(?:,\s*|\s+)(?:and|&)\s+(?=(?:who|whom|whose|what|when|where|which|how|why|since\s+when|"
    r"(?:by|to|from|at|on|in|for|with|under)\s+(?:what|which|whom|when|how)|is|are|was|were|does|do|did|has|have)\b)",
    re.IGNORECASE,
)
_WH = re.compile(r"^(?:who|whom|whose|what|when|where|which|how|why)\b\s*", re.IGNORECASE)
# The verbs that open a yes/no question or stand in for a question's own verb.
AUXILIARIES = "is|are|was|were|does|do|did|has|have|had|can|could|will|would|must|may|might|should|shall"
_AUXILIARY = re.compile(rf"^(?:{AUXILIARIES})\b", re.I)
_HAS_VERB = re.compile(rf"\b(?:{AUXILIARIES})\b", re.I)
# A second part this short and without a verb of its own is a question phrase ("and by which firm").
MAX_BARE_WORDS = 4


def question_parts(question: str) -> list[str]:
    """The questions `question` asks, each ending in "?": its "?"-separated questions, each split once more
    on "and" before a question word; a bare second phrase ("and by which firm") takes the first part's
    words after its question word ("By which firm was X inspected?"). At least one part."""
    parts: list[str] = []
    for piece in (p.strip() for p in question.split("?")):
        if not piece:
            continue
        pieces = _SECOND.split(piece, maxsplit=1)
        first = pieces[0].strip()
        parts.append(f"{first}?")
        if len(pieces) > 1 and pieces[1].strip():
            second = pieces[1].strip()
            if len(second.split()) <= MAX_BARE_WORDS and not _HAS_VERB.search(second):
                rest = _WH.sub("", first)
                borrowed = rest != first and _AUXILIARY.match(rest)
                second = f"{second} {rest}" if borrowed else f"{second} ({first})"
            parts.append(f"{second[0].upper()}{second[1:]}?")
    return parts or [question]
