"""Which leadership positions changed: officers' titles read from statements of appointment and departure (pure
functions).

A question asking which positions or roles changed ("Which leadership positions changed at Acme in the reporting
period? Give me the title of the position.") is answered by the titles that sentences stating a change hold: a
sentence counts when it says someone was appointed, named, elected, promoted, hired, joined, succeeded, resigned,
retired, stepped down or left, and a title is a run of capitalised words ending in the head of an office ("Chief
Financial Officer", "Executive Vice President", "Non-Executive Chairman", "Managing Director", "General Counsel")
or an officer's acronym ("CFO"). A heading, a slogan or the company's name holds no change verb or no office
head: it is never a title. Titles and change verbs are the grammar of corporate offices, a closed class, not the
wording of one set.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.answering.sentences import OfferedSentence

# A question about positions that changed: it names offices and a change.
_ASKS = re.compile(
    r"\b(?:positions?|roles?|titles?|offices?|posts?|executives?|officers?|leadership|management|directors?)\b",
    re.IGNORECASE,
)
_ASKS_CHANGE = re.compile(
    r"\bchang\w*|\bnew\b|\bappoint\w*|\bleft\b|\bdepart\w*|\bturnover\b|\bjoin\w*|\bresign\w*|\bretir\w*",
    re.IGNORECASE,
)
# A question asking for people ("the names of all new executives", "who joined"), not their offices.
_NAMES_OF_PEOPLE = re.compile(r"\bnames?\s+of\b|\bwho\b", re.IGNORECASE)
# A statement that someone took up or left an office.
_CHANGE = re.compile(
    r"\b(?:appoint(?:ed|s|ment)?|nam(?:ed|ing)|elect(?:ed|ion)|promot(?:ed|ion)|hired|join(?:ed|s|ing)|"
    r"succeed(?:ed|s)?|successor|replac(?:ed|es|ing)|resign(?:ed|s|ation)|retir(?:ed|es|ement)|"
    r"step(?:ped|s)?\s+down|depart(?:ed|ure|s)?|left\s+the\s+company|assum(?:ed|es)\s+the\s+(?:role|position)|"
    r"became|took\s+over|transition(?:ed)?)\b",
    re.IGNORECASE,
)
_HEAD = (
    r"(?:Officer|President|Chair(?:man|woman|person)?|Director|Secretary|Treasurer|Counsel|Controller|Partner|"
    r"Head\s+of\s+[A-Z][\w&]*(?:\s+(?:and\s+)?[A-Z][\w&]*)*)"
)
_WORD = r"(?:[A-Z][\w&'’-]*|and|of|for|&)"
# A title: capitalised words (and "and", "of", "&" between them) ending in an office's head; or an acronym.
_TITLE = re.compile(rf"\b(?:{_WORD}\s+){{0,6}}{_HEAD}\b|\b(?:CEO|CFO|COO|CTO|CIO|CRO|CLO|CHRO|CCO)\b")
# The words a title starts with: what comes before the first of them in a run of capitals is a person's or a
# company's name ("Julian Viggars Chief Investment Officer", "TransUnion's Regional President").
_STARTS = re.compile(
    r"\b(?:Chief|Executive|Senior|Vice|President|Chair(?:man|woman|person)?|Non-[Ee]xecutive|Independent|"
    r"Managing|General|Group|Deputy|Interim|Acting|Regional|Company|Finance|Financial|Head|Director|Secretary|"
    r"Treasurer|Controller|Global|Lead|Corporate)\b"
)
_ACRONYMS = {
    "CEO": "Chief Executive Officer",
    "CFO": "Chief Financial Officer",
    "COO": "Chief Operating Officer",
    "CTO": "Chief Technology Officer",
    "CIO": "Chief Information Officer",
    "CRO": "Chief Risk Officer",
    "CLO": "Chief Legal Officer",
    "CHRO": "Chief Human Resources Officer",
    "CCO": "Chief Compliance Officer",
}
# Sentences read, best-ranked first.
TITLES_READ = 40


@dataclass(frozen=True)
class FoundTitle:
    """A title and the sentence stating the change it rests on."""

    title: str
    sentence: OfferedSentence


def asks_titles(question: str, kind_words: Sequence[str] = ()) -> bool:
    """Whether `question` asks which positions changed (its words, or an instruction asking for a title)."""
    if _NAMES_OF_PEOPLE.search(question):
        return False
    titled = any("title" in w.casefold() or "position" in w.casefold() for w in kind_words)
    return bool(_ASKS.search(question)) and (titled or bool(_ASKS_CHANGE.search(question)))


def titles_in(text: str) -> list[str]:
    """The titles `text` holds, in order, each once (acronyms written out)."""
    found: list[str] = []
    for m in _TITLE.finditer(text):
        run = m.group(0)
        start = _STARTS.search(run)
        run = run[start.start() :] if start else run
        # "Executive Vice President and General Counsel" is one office held together: kept whole
        title = _ACRONYMS.get(run.strip(" ,&"), run.strip(" ,&"))
        if title and title.casefold() not in {f.casefold() for f in found}:
            found.append(title)
    return found


def changed_titles(sentences: Sequence[OfferedSentence], company_names: Sequence[str] = ()) -> list[FoundTitle]:
    """The titles of the sentences that state a change of office (see the module docstring), in sentence order,
    each once; a title that is one of the company's own names is none."""
    names = {n.casefold() for n in company_names}
    out: list[FoundTitle] = []
    seen: set[str] = set()
    for sentence in sentences[:TITLES_READ]:
        if not _CHANGE.search(sentence.text):
            continue
        # a title inside a company name the sentence writes ("Acme Director Holdings") is that name
        named = [n for n in names if n in sentence.text.casefold()]
        for title in titles_in(sentence.text):
            key = title.casefold()
            if key in seen or key in names or any(key in n for n in named):
                continue
            seen.add(key)
            out.append(FoundTitle(title, sentence))
    return out
