"""What a document says about itself on its first pages, read at index time (pure functions).

Real files carry metadata that is no title: an accession or filing number, a form code alone
("10-K"), the file's own name, a hash, nothing. A document's title and summary then come from its
first pages: the organisations its title block names (a line that is a company's name) or its
parties clause ("between A and B"), its form or heading, and the period it covers ("for the
quarterly period ended June 25, 2022", "dated as of 3 March 2021"). The opening (parties clause
and first page) is kept for the entity gate, which reads more than the summary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pipeline.values.periods import find_dates

# Pages read for names, form and period; and how much of the opening the catalog keeps.
FIRST_PAGES = 2
OPENING_CHARS = 2000
MAX_NAMES = 3
_MAX_NAME_WORDS = 8
_MAX_PARTY_CHARS = 120

# Legal forms that end an organisation's name ("Acme Inc.", "BOREAL CORPORATION", "Acme GmbH").
_LEGAL_FORM = (
    r"inc|incorporated|corp|corporation|company|co|llc|l\.l\.c|ltd|limited|plc|lp|l\.p|llp|n\.v|s\.a|ag|gmbh"
    r"|se|sas|b\.v|bv|pty|holdings|group"
)
_NAME_LINE = re.compile(rf"(?:the\s+)?[\w][\w.&'’,\- ]{{0,80}}?\b(?:{_LEGAL_FORM})\.?", re.IGNORECASE)
_FORM_LINE = re.compile(r"FORM\s+[0-9A-Z][\w-]{0,9}")
_BETWEEN = re.compile(r"\bbetween\s+(?P<first>.{2,300}?)\s*,?\s+and\s+(?P<second>.{2,300}?)(?:[.;:]\s|$)", re.I)
# "between A, a company registered in England and Wales, and B": when the first party's description
# follows a comma, the parties are parted by ", and", since the description may hold an "and" itself.
_BETWEEN_DESCRIBED = re.compile(
    r"\bbetween\s+(?P<first>.{2,120}?,\s+(?:a|an|the|with|having|whose|located|organized|organised|incorporated"
    r"|registered)\b(?:(?![.;:]\s).){0,250}?),\s+and\s+(?P<second>.{2,300}?)(?:[.;:]\s|$)",
    re.I,
)
# 'Orbis Apparel, Inc. (the "Company") and Jane Roe (the "Consultant")': two parties each with a defined term.
_DEFINED_PARTIES = re.compile(
    r"(?P<first>[A-Z0-9](?:(?![.;:]\s+[A-Z])[^()\"“”\n]){1,150}?)\s*\((?:the\s+|hereinafter\s+)?[\"“][^\"”]{1,40}[\"”]\)"
    r"\s*,?\s+and\s+(?P<second>[A-Z0-9](?:(?![.;:]\s+[A-Z])[^()\"“”\n]){1,150}?)\s*\((?:the\s+|hereinafter\s+)?[\"“]"
)
# Words that open a clause's object, never a party's name ("between this Agreement and ...").
_CLAUSE_WORDS = frozenset({"this", "these", "that", "those", "such", "any", "each", "its", "their", "said", "all"})
_PARENTHESES = re.compile(r"\([^)]{0,120}\)")
# Where a party's description starts: ", a Delaware corporation", ", with offices at", " located at".
_DESCRIPTOR = re.compile(
    r",\s+(?:a|an|the|with|having|whose|located|organized|organised|incorporated|registered)\b"
    r"|\s+(?:located|organized|organised|incorporated|registered|residing|with\s+(?:its\s+)?offices?)\b",
    re.I,
)
# A party left blank on a form: underscores, dots, brackets ("[COMPANY NAME]"), or nothing.
_BLANK = re.compile(r"[\s_.\-…]*|\[[^\]]*\][\s_.,]*|_{2,}.*|\.{3,}.*")
_PERIOD_CUE = re.compile(
    r"(?:(?:fiscal\s+)?(?:quarterly\s+period|quarter|fiscal\s+year|year|period|(?:three|six|nine|twelve)\s+months)"
    r"\s+ended|dated(?:\s+as\s+of)?|effective(?:\s+date)?(?:\s+(?:of|as\s+of))?|as\s+of)\s*:?\s*$",
    re.IGNORECASE,
)
# How far before a date its cue may start ("For the quarterly period ended June 25, 2022").
_CUE_WINDOW = 45
_HEX_OR_UUID = re.compile(r"[0-9a-f]{16,}|[0-9a-f]{8}(?:-?[0-9a-f]{4}){3}-?[0-9a-f]{12}", re.IGNORECASE)
_FILE_NAME = re.compile(r"\.(?:pdf|docx?|txt|md|rtf|html?|xlsx?|pptx?)\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{3,}")


@dataclass(frozen=True)
class DocumentProfile:
    """Names, form, period and opening of a document, from its first pages."""

    names: tuple[str, ...] = ()
    parties: tuple[str, ...] = ()
    # A party of the parties clause left blank (a form or template that names no counterparty).
    blank_party: bool = False
    form: str | None = None
    period: str | None = None
    period_end: str | None = None
    opening: str = ""

    @property
    def description(self) -> str:
        """One line saying what the document is: form or heading, whose, and its period ("" when nothing found)."""
        parts = []
        if self.form:
            parts.append(self.form)
        if len(self.parties) >= 2:
            parts.append(f"between {self.parties[0]} and {self.parties[1]}")
        elif self.parties or self.names:
            parts.insert(0, (self.parties or self.names)[0])
        if self.period:
            parts.append(self.period)
        return ", ".join(parts)


def is_title(text: str | None, relpath: str) -> bool:
    """Whether metadata text describes the document: not empty, not the file's name, not an identifier
    (accession or filing number, hash, UUID) and not a code alone ("10-K"): at least two words of three
    or more letters."""
    if not text or not text.strip():
        return False
    squeezed = re.sub(r"[\W_]+", "", text).casefold()
    path = Path(relpath)
    if squeezed in {re.sub(r"[\W_]+", "", n).casefold() for n in (path.name, path.stem)}:
        return False
    if _HEX_OR_UUID.fullmatch(text.strip()) or (_FILE_NAME.search(text) and len(text.split()) <= 6):
        return False
    return len(_WORD.findall(_HEX_OR_UUID.sub(" ", text))) >= 2


def _lines(pages: tuple[str, ...]) -> list[str]:
    return [" ".join(line.split()) for page in pages[:FIRST_PAGES] for line in page.splitlines() if line.strip()]


def _name_lines(lines: list[str]) -> list[str]:
    """Lines that are an organisation's name, in order: capitalised, short, ending in a legal form."""
    out = []
    for line in lines:
        name = line.strip(" ,;:")
        if len(name.split()) > _MAX_NAME_WORDS or not (name[:1].isupper() or name[:1].isdigit()):
            continue
        if _NAME_LINE.fullmatch(name):
            out.append(name)
    return out


def _party(raw: str) -> str | None:
    """A party's name from its stretch of the parties clause (None: left blank)."""
    text = _PARENTHESES.sub(" ", raw)
    cut = _DESCRIPTOR.search(text)
    name = " ".join((text[: cut.start()] if cut else text).split()).strip(" ,;:\"'“”")
    if _BLANK.fullmatch(name) or not any(c.isalpha() for c in name):
        return None
    return name[:_MAX_PARTY_CHARS]


def _is_party(name: str | None) -> bool:
    """Whether a stretch of a "between" clause reads as a party (a name, or a blank left for one), not
    as things a clause sets side by side ("the terms contained in a Protocol", "this Agreement")."""
    if name is None:
        return True
    words = name.split()
    first = words[0].strip("\"'“”(")
    return (
        bool(first)
        and (first[0].isupper() or first[0].isdigit())
        and first.casefold() not in _CLAUSE_WORDS
        and len(words) <= _MAX_NAME_WORDS + 4
    )


def _parties(text: str) -> tuple[tuple[str, ...], bool, str]:
    """(named parties, whether one is blank, the clause) of the parties clause in `text`: the first
    "by and between A and B", "between A and B" or 'A (the "Company") and B (the "Consultant")' whose
    two sides read as parties."""
    between = sorted((m for p in (_BETWEEN_DESCRIBED, _BETWEEN) for m in p.finditer(text)), key=lambda m: m.start())
    for m in [*between, *_DEFINED_PARTIES.finditer(text)]:
        found = [_party(m.group("first")), _party(m.group("second"))]
        if all(_is_party(p) for p in found):
            return tuple(p for p in found if p), None in found, m.group(0)
    return (), False, ""


def _period(text: str) -> tuple[str | None, str | None]:
    """(phrase, ISO day) of the first date announced as the period or date of the document."""
    for start, end, day in find_dates(text):
        cue = _PERIOD_CUE.search(text[max(0, start - _CUE_WINDOW) : start])
        if cue is not None:
            return f"{cue.group(0).strip().rstrip(':')} {text[start:end]}", day.isoformat()
    return None, None


def profile_document(pages: tuple[str, ...]) -> DocumentProfile:
    """The document's names (title-block name lines, else the parties clause), form or heading,
    period and opening, from its first pages."""
    lines = _lines(pages)
    text = " ".join(lines)
    parties, blank, clause = _parties(text)
    names = tuple(dict.fromkeys([*_name_lines(lines), *parties]))[:MAX_NAMES]
    form = next((line for line in lines if _FORM_LINE.fullmatch(line)), None) or _heading(lines)
    period, period_end = _period(text)
    first = " ".join(pages[0].split()) if pages else ""
    opening = first if clause and clause in first else f"{clause} {first}".strip()
    return DocumentProfile(names, parties, blank, form, period, period_end, opening[:OPENING_CHARS])


def _heading(lines: list[str]) -> str | None:
    """The first upper-case line of at least two words that is not a name (a document's title)."""
    for line in lines[:15]:
        words = _WORD.findall(line)
        if len(words) >= 2 and len(line.split()) <= 10 and line.isupper() and not _NAME_LINE.fullmatch(line):
            return line
    return None
