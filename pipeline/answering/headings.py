"""Headings of a document's sections and the bodies they head (pure functions).

A heading ("6. Governing law.", "ARTICLE IV", "Confidential Information.") names what its section is about and
states nothing: it is never an answer line, and a question naming it is answered from its section's body, the
sentences after it up to the next heading ("This Agreement is governed by the laws of the State of Delaware").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# A section number before a heading's title: "6.", "4.2", "IV.", "(a)", "Section 6", "ARTICLE IV".
_NUMBER = re.compile(
    r"^(?:(?:section|article|clause|schedule|exhibit|annex|appendix|part)\s+)?"
    r"(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.?|\(?[a-z]\)|[A-Z]\.)(?=\s|$)\s*",
    re.IGNORECASE,
)
# Words a heading's title is made of: words with no figure, a hyphen, an ampersand or an apostrophe inside.
_TITLE_WORD = re.compile(r"^[A-Za-z][A-Za-z'’&/-]*$")
# Words that make a short line a statement, not a title ("Payment is due.").
_VERBS = frozenset(
    "is are was were be been shall will may must can could should would has have had does do did means".split()
)
# Small words a title in capitals writes in lower case ("Limitation of Liability").
_SMALL = frozenset("of and or the a an to for in on by with as at from its their".split())
# A legal form ending a line: a company's name ("Acme Holdings Inc."), not a title.
_LEGAL_FORM = re.compile(
    r"\b(?:inc|ltd|llc|llp|lp|plc|corp|co|gmbh|ag|sa|nv|bv|pty|limited|incorporated|corporation)\.?$", re.I
)
# At most this many words in a heading's title.
MAX_TITLE_WORDS = 6
# A line in capitals is a title up to this many words ("MUTUAL NON-DISCLOSURE AGREEMENT").
MAX_CAPITALS_WORDS = 10


def heading_title(text: str) -> str:
    """`text` without its section number and closing punctuation ("6. Governing law." -> "Governing law")."""
    return _NUMBER.sub("", text.strip(), count=1).strip().rstrip(".:;—–-").strip()


def is_heading(text: str) -> bool:
    """Whether `text` (a whole sentence, or an answer line) is only a heading: a few title words after a section
    number ("6. Governing law.", "Section 4.2 Term"), a line in capitals ("MUTUAL NON-DISCLOSURE AGREEMENT"), or
    a capitalised phrase closed by a full stop or colon ("Confidential Information."); never a line that states
    something (a verb, a figure, a company's legal form: "Acme Holdings Inc.")."""
    stripped = text.strip()
    number = _NUMBER.match(stripped)
    title = heading_title(stripped)
    words = title.split()
    if not words or any(not _TITLE_WORD.match(w) for w in words):
        return False
    if any(w.casefold() in _VERBS for w in words) or _LEGAL_FORM.search(title):
        return False
    if title.isupper() and len(words) <= MAX_CAPITALS_WORDS:
        return True
    if len(words) > MAX_TITLE_WORDS or not words[0][0].isupper():
        return False
    if number is not None and number.end() > 0:
        return True
    closed = stripped.endswith((".", ":"))
    return closed and all(w[0].isupper() or w.casefold() in _SMALL for w in words)


def section_bodies(sentences: Sequence[str]) -> list[str]:
    """Per sentence of one passage (in order), the heading it falls under: "" for a heading itself and for a
    sentence before any heading; a body sentence runs to the next heading."""
    out: list[str] = []
    current = ""
    for sentence in sentences:
        if is_heading(sentence):
            current = heading_title(sentence)
            out.append("")
        else:
            out.append(current)
    return out
