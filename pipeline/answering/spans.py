"""Spans of one sentence that can answer a question, by kind (pure functions): an amount with its currency
and unit ("EUR 2,500 per month"), a percentage, a date, a duration ("3 months"), a count, a name
("Peter Otieno Ochieng"), or, for other questions, the stretch of the sentence around its key terms.

Each candidate has a tier: 0 when the sentence labels it with what the question asks about (a field
"Monthly rent: EUR 2,500", a table row "Tenure | Freehold", a definition 'Grace Kamau (the "Landlord")',
'dated March 3, 2000 (the "Effective Date")' for a question naming the defined term: the value it defines
ranks first, pipeline.answering.definitions) or its own words name it ("EUR 2,500 per month" for "monthly
rent"), 1 when a label holds other key terms
of the question, 2 when only its place near the key terms speaks for it (3: a bare small number asked as an
amount). A value the question itself states is never a candidate.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from pipeline.answering.asks import AnswerKind
from pipeline.answering.definitions import definitions, names_term
from pipeline.answering.terms import held_terms, key_terms
from pipeline.text import STOPWORDS, normalise, split_sentences
from pipeline.values.quantities import (
    Quantity,
    figures_outside_dates,
    find_days,
    find_quantities,
    in_digits,
    missing_values,
)

_TIME_UNIT = (
    r"(?:business\s+|working\s+|calendar\s+|clear\s+)?(?:days?|weeks?|months?|years?|hours?|minutes?|quarters?)"
)
_CURRENCY_BEFORE = re.compile(r"(?:(?<![A-Za-z])[A-Z]{2,4}\.?|[$€£¥]|US\$)\s?$")
_UNIT_AFTER = re.compile(
    r"^(?:\s?(?:thousand|million|billion|trillion|bn|mn)\b)?"
    r"(?:\s?(?:per|a|each|every)\s+(?:calendar\s+)?(?:month|year|annum|week|day|quarter|square\s+\w+|acre|hectare|unit)\b"
    r"|\s?(?:ha|acres?|hectares?|sq\.?\s?(?:ft|m)|square\s+(?:feet|metres|meters)|shares?)\b)?",
    re.IGNORECASE,
)
_DURATION = re.compile(rf"^\s?['’]?s?\s?{_TIME_UNIT}['’]?", re.IGNORECASE)
_SCALE_NOTE = re.compile(r"\(?\bin\s+(thousands|millions|billions)\b", re.IGNORECASE)
# A run of capitalised words (initials, "&", "of", "and" inside), as a name is written.
_NAME_TOKEN = re.compile(r"^(?:[A-Z][\w'’.&-]*|&|of|and|de|van|von|der|la|le|du)$")
# "P.O.", "U.K.": an abbreviation of initials ends a name rather than continuing it.
_ABBREVIATION = re.compile(r"^(?:[A-Z]\.){2,}$")
_CONNECTORS = frozenset({"&", "of", "and", "de", "van", "von", "der", "la", "le", "du"})
# A colon that ends a label ("Land area: 0.1012 ha"), and the words a label is made of (no figures).
_COLON = re.compile(r"(?<=\S):\s+")
_LABEL_WORD = re.compile(r"^[A-Za-z][A-Za-z'’/&.-]*$")
MAX_LABEL_WORDS = 5
# A defined term after a name: 'Grace Kamau of P.O. Box 1 (the "Landlord")', 'Acme Ltd ("Buyer")'.
_DEFINED = re.compile(
    r"\(\s*(?:the\s+|hereinafter\s+(?:called\s+|referred\s+to\s+as\s+)?(?:the\s+)?)?[\"“'‘]?([^()\"”'’]{1,40})[\"”'’]?\s*\)",
    re.I,
)
# A table row: a label of words, then only cells ("Total net sales $ 117,154 $ 123,945", "Margin 44.3 % 43.7 %").
_CELL_TEXT = r"(?:[$€£¥]\s?)?\(?[-−–]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)\)?(?:\s?%)?"
_TABLE_ROW = re.compile(
    rf"^(?P<label>[A-Za-z][^\d]*?[A-Za-z)])\s+(?P<first>{_CELL_TEXT})(?:\s+(?:{_CELL_TEXT}|[-−–—]))*\s*$"
)
# The label score of a value whose own words name what is asked: above any label's (at most 2).
SELF_DESCRIBED = 3.0
# The label score of the value a clause defines a term the question names as: above every other.
DEFINED_VALUE = 4.0
# A text answer is this stretch of words around the key terms.
WINDOW_WORDS = 30
# A field value is at most this many words (a longer run is the rest of a paragraph).
MAX_FIELD_WORDS = 20


@dataclass(frozen=True)
class Candidate:
    """A span that may answer: its text, its tier (see the module docstring), how well its label holds the
    question's terms (fields only), and how far it stands from the key terms."""

    text: str
    tier: int
    label_score: float = 0.0
    distance: int = 0


def scale_note(chunk_text: str) -> str | None:
    """The scale a table states for its figures ("(In millions, except ...)" -> "million"), if any."""
    m = _SCALE_NOTE.search(chunk_text)
    return m.group(1).casefold().rstrip("s") if m else None


def candidates(
    text: str,
    kind: AnswerKind,
    terms: Sequence[str],
    question: str,
    scale: str | None = None,
    rarity: dict[str, int] | None = None,
    focus: Sequence[str] = (),
) -> list[Candidate]:
    """Every span of `text` that may answer a question of `kind` with key `terms` (in question order), best
    first: by tier, label, then distance from the key term fewest sentences hold (`rarity`). A field is
    tier 0 when its label holds a `focus` term (what the question asks about), else tier 1; it is written
    with its label ("Land area: 0.1012 ha")."""
    wanted = frozenset(terms)
    asked = frozenset(focus) or wanted
    avoid = frozenset(re.findall(r"[0-9a-z]+", normalise(question)))
    anchor = _anchor(text, wanted, rarity or {})
    found = defined_values(text, kind, question, wanted, scale)
    for label, start, end in fields(text):
        held = held_terms(label, wanted)
        if not held:
            continue
        value_text = _trimmed(text[start:end])
        value = typed_spans(value_text, kind, wanted, avoid, scale, 0)
        on_focus = held_terms(label, asked)
        # a field answers a question with no value kind only when it names most of what is asked
        names_it = 2 * len(held_terms(f"{label} {value_text}", asked)) >= len(asked)
        span = value[0] if value else (value_text if kind in ("text", "yes_no") and names_it else None)
        if span and not _stated_by(span, question, avoid):
            label_words = max(1, len(re.findall(r"\w+", label)))
            score = len(on_focus) / len(asked) + len(held) / label_words
            # a value of the kind asked for stands alone; any other value says what it is with its label
            text_ = span if value else f"{label.strip()}: {span}"
            found.append(Candidate(text_, 0 if on_focus else 1, score, abs(start - anchor)))
    if kind == "name":
        found.extend(Candidate(span, 0) for span in _defined_names(text, wanted, avoid))
    for span in typed_spans(text, kind, wanted, avoid, scale, anchor):
        if not _stated_by(span, question, avoid):
            # a value whose own words say what it is ("EUR 2,500 per month" for "monthly rent") ranks with
            # the best-labelled fields
            own = held_terms(span, asked)
            tier, score = (0, SELF_DESCRIBED) if own else (2, 0.0)
            if kind == "amount" and _bare(span):
                tier = 3
            found.append(Candidate(span, tier, score, _distance(text, span, anchor)))
    if kind in ("text", "yes_no") and not found:
        found.append(Candidate(window(text, wanted), 2))
    return sorted(found, key=lambda c: (c.tier, -c.label_score, c.distance))


def defined_values(
    text: str, kind: AnswerKind, question: str, terms: AbstractSet[str], scale: str | None = None
) -> list[Candidate]:
    """The values `text` defines terms the question names as ('3 March 2000 (the "Effective Date")' for "What is
    the effective date?"), each as the kind asked for when it holds one (the date of "made as of 3 March 2000",
    the duration of "remains in force for two (2) years"), else whole for a question with no value kind. A term
    counts when the question writes it and every word of it is a key term (`terms`): a corpus's generic words
    ("the Agreement") name no value asked for."""
    out: list[Candidate] = []
    for definition in definitions(text):
        words = key_terms(definition.term)
        asked = held_terms(" ".join(terms), words)
        if not words or not names_term(question, definition.term) or len(asked) < len(words):
            continue
        typed = typed_spans(definition.value, kind, frozenset(), frozenset(), scale, 0)
        if typed:
            out.append(Candidate(typed[0], 0, DEFINED_VALUE))
        elif kind in ("text", "date"):
            # a date clause may write its date in words a date reader does not take ("the date of signature")
            out.append(Candidate(definition.value, 0, DEFINED_VALUE))
    return out


def _trimmed(value: str) -> str:
    """A field's value up to a parenthesis or its sentence's end ("1160/88 (the "Site"), on ..." -> "1160/88")."""
    sentences = split_sentences(value)
    cut = re.split(r"\s\(", sentences[0] if sentences else value, maxsplit=1)[0]
    return cut.strip(" ,;|.") or value.strip(" ,;|")


def _bare(span: str) -> bool:
    """An amount with no currency, scale or unit and under 1,000: more likely a count or a clause number."""
    figures = find_quantities(span)
    plain = len(span.split()) == 1 and not re.search(r"[$€£¥]", span)
    return plain and bool(figures) and abs(figures[0].value) < 1000


def _stated_by(span: str, question: str, avoid: AbstractSet[str]) -> bool:
    """Whether the question itself states the span (its figures and dates, or all its words)."""
    if missing_values(span, "") and not missing_values(span, question):
        return True
    words = re.findall(r"[0-9a-z]+", normalise(span))
    return bool(words) and all(w in avoid or w in STOPWORDS for w in words)


def _distance(text: str, span: str, anchor: int) -> int:
    """How far `span` starts from the anchor; a span before it counts double."""
    position = text.find(span)
    return position - anchor if position >= anchor else 2 * (anchor - position) + 1


def fields(text: str) -> list[tuple[str, int, int]]:
    """(label, value start, value end) of each labelled value: a table row "label | value", or "Label: value"
    pairs, each value running to the next label (a label right after another is part of its value:
    "Title number: REG. NO: 2327/30")."""
    if " | " in text:
        cells = text.split(" | ")
        if len(cells) >= 2 and cells[0].strip():
            start = len(cells[0]) + 3
            return [(cells[0], start, len(text))]
    row = _TABLE_ROW.match(text)
    if row is not None:  # "Total net sales 117,154 123,945": the label and its first column
        return [(row.group("label"), row.start("first"), row.end("first"))]
    found = [found_label for colon in _COLON.finditer(text) if (found_label := _label_before(text, colon)) is not None]
    out: list[tuple[str, int, int]] = []
    i = 0
    while i < len(found):
        label, start, value_start = found[i]
        j = i + 1
        # a label directly after another (empty value) belongs to the value
        while j < len(found) and not text[value_start : found[j][1]].strip():
            j += 1
        end = found[j][1] if j < len(found) else len(text)
        value = text[value_start:end]
        if value.strip() and len(value.split()) <= MAX_FIELD_WORDS:
            out.append((label, value_start, end))
        i = j
    return out


def _label_before(text: str, colon: re.Match[str]) -> tuple[str, int, int] | None:
    """(label, label start, value start) of the label a colon ends: the words before it from the last one
    with a capital ("Date of search", "Land area"), extended left over abbreviations in capitals ("REG. NO")."""
    words = list(re.finditer(r"\S+", text[: colon.start()]))[-MAX_LABEL_WORDS:]
    kept: list[re.Match[str]] = []
    for word in reversed(words):
        if not _LABEL_WORD.match(word.group(0)):
            break
        kept.insert(0, word)
    capitals = [i for i, w in enumerate(kept) if w.group(0)[0].isupper()]
    if not capitals:
        return None
    first = capitals[-1]
    while first > 0 and (kept[first - 1].group(0).isupper() or _ABBREVIATION.match(kept[first - 1].group(0))):
        first -= 1
    start = kept[first].start()
    return text[start : colon.start()], start, colon.end()


def typed_spans(
    text: str, kind: AnswerKind, terms: AbstractSet[str], avoid: AbstractSet[str], scale: str | None, anchor: int
) -> list[str]:
    """The spans of `text` that are values of `kind`, in order of position (none for text and yes/no)."""
    if kind == "date":
        return [text[s:e].strip(" ,;") for s, e, _ in find_days(text)]
    if kind in ("amount", "percent", "count", "duration"):
        return _figure_spans(text, figures_outside_dates(text), kind, scale)
    if kind == "name":
        return name_runs(text, avoid)
    return []


def _anchor(text: str, terms: AbstractSet[str], rarity: dict[str, int]) -> int:
    """Where in `text` the rarest key term it holds first ends (0 when it holds none)."""
    best: tuple[int, int] | None = None
    for match in re.finditer(r"[0-9A-Za-z][0-9A-Za-z'’.-]*", text):
        held = held_terms(match.group(0), terms)
        if held:
            rank = min(rarity.get(t, 0) for t in held)
            if best is None or rank < best[0]:
                best = (rank, match.end())
    return best[1] if best else 0


def _unwrapped(span: str) -> str:
    """`span` without the punctuation around it: a parenthesis that wraps it whole or is left unmatched at an end
    ("3) years" of "(3) years"), never one it needs ("three (3) years", "(3) million")."""
    span = span.strip(" ,;'’")
    while span[:1] == "(" and span[-1:] == ")" and span[1:-1].count("(") == span[1:-1].count(")"):
        span = span[1:-1].strip(" ,;'’")
    if span.count("(") != span.count(")"):
        span = span.strip("()").strip(" ,;'’")
    return span


def _figure_spans(text: str, figures: Sequence[Quantity], kind: AnswerKind, scale: str | None) -> list[str]:
    """Figures of `kind` with their currency before and unit after them ("EUR 2,500 per month")."""
    spans: list[str] = []
    for before_it, figure in zip([None, *figures], figures, strict=False):
        start, end = figure.start, figure.end
        # a duration repeating in parentheses the number written before it ("three (3) years") is read with it (an
        # amount is its figure: the words repeat it)
        repeated = (
            kind == "duration"
            and before_it is not None
            and not in_digits(before_it)
            and before_it.value == abs(figure.value)
        )
        if (
            before_it is not None
            and repeated
            and figure.text.startswith("(")
            and not text[before_it.end : start].strip()
        ):
            start = before_it.start
        after = text[end:]
        if kind == "percent":
            if not figure.percent:
                continue
            unit = _UNIT_AFTER.match(after)
            if unit is not None:
                end += unit.end()
        elif kind == "duration":
            unit = _DURATION.match(after)
            if unit is None:
                continue
            end += unit.end()
        elif figure.percent or (kind == "amount" and not in_digits(figure)):
            continue  # an amount is written in figures (its words, when a document adds them, repeat it)
        elif kind == "count":
            if figure.value != figure.value.to_integral_value():
                continue
        else:
            before = _CURRENCY_BEFORE.search(text[:start].rstrip("( "))
            if before is not None:
                start = text.rfind(before.group(0).strip(), 0, start)
            unit = _UNIT_AFTER.match(after)
            if unit is not None:
                end += unit.end()
        span = _unwrapped(text[start:end])
        if kind == "amount" and scale and not re.search(r"(?:thousand|million|billion|bn|mn)\b", span, re.I):
            span = f"{span.replace('$ ', '$')} {scale}"
        spans.append(span)
    return spans


def name_runs(text: str, avoid: AbstractSet[str]) -> list[str]:
    """Runs of at least two capitalised words that are not the question's own words, a label ("Tenant:"),
    a date, or an amount written in words."""
    runs: list[str] = []
    current: list[re.Match[str]] = []

    def close() -> None:
        while current and current[-1].group(0).strip(",;").casefold() in _CONNECTORS:
            current.pop()
        # a heading or keyword in capitals before a name ("BETWEEN Grace Kamau") is not part of it
        while len(current) > 1 and (current[0].group(0).casefold() in _CONNECTORS or current[0].group(0).isupper()):
            if all(m.group(0).isupper() for m in current):
                break
            current.pop(0)
        if len(current) > 1:
            run = text[current[0].start() : current[-1].end()].strip(" ,;()\"'“”")
            names = [normalise(m.group(0).strip(",;.")) for m in current]
            own = all(n in avoid or n in STOPWORDS for n in names)
            if not own and not any(q.text for q in find_quantities(run) if not q.text[:1].isdigit()):
                runs.append(run)
        current.clear()

    dates = [(start, end) for start, end, _ in find_days(text)]
    for match in re.finditer(r"\S+", text):
        token = match.group(0)
        bare = token.strip(",;()\"'“”")
        in_date = any(start <= match.start() < end for start, end in dates)
        if not bare or bare.endswith(":") or not _NAME_TOKEN.match(bare) or _ABBREVIATION.match(bare) or in_date:
            close()
            continue
        current.append(match)
        if token.endswith((",", ";", ")")):
            close()
    close()
    return runs


def _defined_names(text: str, terms: AbstractSet[str], avoid: AbstractSet[str]) -> list[str]:
    """Names a definition gives a key term: the first name (not in capitals, when one is not) between the
    previous definition and 'the "Landlord"'."""
    out: list[str] = []
    boundary = 0
    for definition in _DEFINED.finditer(text):
        if held_terms(definition.group(1), terms):
            runs = name_runs(text[boundary : definition.start()], avoid)
            mixed = [r for r in runs if not r.isupper()]
            if runs:
                out.append(mixed[0] if mixed else runs[-1])
        boundary = definition.end()
    return out


def window(text: str, terms: AbstractSet[str], size: int = WINDOW_WORDS) -> str:
    """The stretch of at most `size` words of `text` that starts a few words before its first key term."""
    parts = text.split()
    if len(parts) <= size:
        return text
    first = next((i for i, w in enumerate(parts) if held_terms(w, terms)), 0)
    start = max(0, min(first - 3, len(parts) - size))
    return " ".join(parts[start : start + size])
