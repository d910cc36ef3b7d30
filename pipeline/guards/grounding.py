"""Grounding: an answer line may state only what its evidence states, in the same sense.

Every figure of the line must be stated by one of its evidence sentences with the same number, sign, scale,
currency and period (pipeline.values.figures: "EUR -2,500", "(2,500)", "2,500 million", "GBP 2,500" or "2,500 per
year" are not "EUR 2,500 per month"); every date and reference as a value, every proper name's
words, every number word ("twice", "half", "million") and most of its other words must be there too. The line
may not add a negation its evidence lacks ("shall not pay"), name a party role (landlord, tenant, buyer, ...)
that the sentence stating its figure does not name, make another party the one who acts ("The Landlord shall
pay" on "The Tenant shall pay to the Landlord"), say its figure fell, rose, is waived, is received or is a bound
("up to", "at least") where its evidence does not, or write digits its evidence does not write (fullwidth,
Arabic-Indic). A figure that code computed is grounded when each of its
operands is. A line that fails is replaced by its best evidence sentence, and the reason recorded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from pipeline.text import STOPWORDS, content_words, fold, normalise
from pipeline.values.figures import Passage, read_figures, unstated
from pipeline.values.quantities import missing_values, value_spans

# Share of a line's content words that its evidence must hold (figures and names must all be there).
MIN_WORD_SHARE = 0.5
_NAME = re.compile(r"(?<![\w'’])[A-Z][\w'’&.-]*(?:\s+(?:of\s+|and\s+|&\s+)?[A-Z][\w'’&.-]*)*")
# Words that state a number or a multiple without digits: a line may use them only as its evidence does.
NUMBER_WORDS = frozenset(
    "twice thrice double doubled triple tripled treble trebled quadruple quadrupled half halved halves dozen dozens"
    " hundred hundreds thousand thousands million millions billion billions trillion trillions".split()
)
# Words that say the figure moved, is waived, flows the other way or is a bound: a line may use one of a kind only
# where its evidence uses one of that kind too ("fell by $5 million" on "revenue was $5 million", "is waived",
# "receive" on "pay", "up to" on an amount due).
MEANING_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a fall", re.compile(r"\b(?:fell|falls?|falling|decreas\w*|declin\w*|dropp?\w*|reduc\w*|down\s+by|lower\s+by)\b")),
    ("a rise", re.compile(r"\b(?:rose|rises?|rising|risen|increas\w*|grew|grow\w*|up\s+by|higher\s+by)\b")),
    ("a waiver", re.compile(r"\b(?:waiv\w*|exempt\w*|excus\w*|forgiv\w*|forgone|free\s+of)\b")),
    ("a receipt", re.compile(r"\b(?:receiv\w*|receipts?|collect\w*)\b")),
    (
        "an upper bound",
        re.compile(r"\b(?:up\s+to|at\s+most|no\s+more\s+than|not\s+more\s+than|not\s+exceed\w*|maximum|capped)\b"),
    ),
    ("a lower bound", re.compile(r"\b(?:at\s+least|no\s+less\s+than|not\s+less\s+than|minimum)\b")),
)
# A negation: "not", "never", "no" (not "No. 5", "NO: 1160/88"), "n't", "cannot", "without", ...
_NEGATION = re.compile(
    r"\b(?:not|never|neither|nor|none|nothing|nobody|cannot|without|no(?![.:]?\s*\d)(?!\.\s))\b|n[’']t\b", re.I
)
# Words within which a negation must stand before the word it negates, in the evidence as in the line.
NEGATION_REACH = 4
# The parties a contract names by their role: whoever the line says pays, receives or owes must be the one its
# evidence says does.
ROLES = frozenset(
    "landlord tenant lessor lessee licensor licensee sublessor sublessee subtenant buyer seller purchaser vendor"
    " borrower lender creditor debtor employer employee contractor subcontractor guarantor mortgagor mortgagee"
    " chargor chargee assignor assignee grantor grantee franchisor franchisee insurer insured trustee beneficiary"
    " payer payee transferor transferee supplier occupier occupant".split()
)
_ROLE = re.compile(r"\b(" + "|".join(sorted(ROLES, key=len, reverse=True)) + r")s?\b", re.I)
# What a party does when it is the one acting: a modal or a verb of paying, owing, receiving or undertaking.
_ACTS = re.compile(
    r"^(?:shall|will|must|may|should|pays?|paid|paying|owes?|owed|receives?|received|agrees?|agreed|undertakes?|"
    r"covenants?|gives?|gave|provides?|provided|bears?|bore|reimburses?|reimbursed|deposited|"
    r"is|are|was|were)$",
    re.I,
)
_IS_ACTING = re.compile(r"^(?:to|liable|responsible|entitled|required|obliged|due|bound)$", re.I)


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
    line: str,
    evidence: Sequence[str | Passage],
    generic: AbstractSet[str] = frozenset(),
    question: str | None = None,
) -> Grounding:
    """Whether `line` is grounded in the `evidence` sentences (each a Passage when its table's note or its
    passage's currency is known): every figure stated by one of them in the same sense, every date and
    reference, proper name and number word found in them, no negation or party role they lack, the same party
    acting, and at least MIN_WORD_SHARE of its other content words (`generic` words name a kind of thing and are
    not claims); given the `question`, a line that only restates it is no answer."""
    passages = [e if isinstance(e, Passage) else Passage(e) for e in evidence]
    support = "\n".join(p.text for p in passages)
    if not line.strip():
        return Grounding(False, (), "empty")
    if question is not None and restates(line, question, generic):
        return Grounding(False, (), "restates the question")
    if not support.strip():
        return Grounding(False, (), "no evidence")
    other_digits = sorted(_foreign_digits(line) - _foreign_digits(support))
    if other_digits:
        return Grounding(
            False, tuple(other_digits), f"writes digits its evidence does not write: {''.join(other_digits)}"
        )
    missing = list(missing_values(line, support, figures_too=False))
    stating: set[int] = set()
    claims = read_figures(line)
    for claim in claims:
        why, where = unstated(claim, passages)
        if why:
            missing.append(why)
        stating.update(where)
    folded = normalise(fold(support))
    for name in proper_names(line):
        absent = [w for w in name.split() if normalise(fold(w)).strip(".,;:") not in folded]
        if absent:
            missing.append(name)
    support_words = set(re.findall(r"[a-z]+", folded))
    missing += sorted(w for w in _number_words(line) if w not in support_words)
    if missing:
        return Grounding(False, tuple(missing), f"not in its evidence: {', '.join(missing[:5])}")
    # what the line says of who does what is read in the sentences that state its figures
    around = [passages[i].text for i in sorted(stating)] or [p.text for p in passages]
    for check in (added_negation, changed_party, changed_meaning):
        problem = check(line, around)
        if problem:
            return Grounding(False, (problem,), problem)
    # a currency code next to a figure was checked with the figure (its table's note may be what states it)
    currencies = {c.currency.casefold() for c in claims if c.currency}
    words = _words_outside_values(line, generic) - currencies
    if words:
        held = words & content_words(support, generic)
        if len(held) / len(words) < MIN_WORD_SHARE:
            return Grounding(False, tuple(sorted(words - held)[:5]), "most of its words are not in its evidence")
    return Grounding(True)


def _foreign_digits(text: str) -> set[str]:
    """The digits of `text` that are not ASCII (fullwidth, Arabic-Indic, ...): a line may write only those its
    evidence writes, so a figure never reads one way to code and another to a person."""
    return {c for c in text if c.isdigit() and not c.isascii()}


def changed_meaning(line: str, evidence: Sequence[str]) -> str | None:
    """Why `line` says of its figures what its evidence does not: that they fell or rose, are waived, are received
    rather than paid, or are a bound (MEANING_WORDS), where no evidence sentence says so; None otherwise."""
    said = normalise(fold(line))
    held = normalise(fold(" ".join(evidence)))
    for kind, pattern in MEANING_WORDS:
        found = pattern.search(said)
        if found is not None and not pattern.search(held):
            return f"states {kind} its evidence does not ({found.group(0)})"
    return None


def _number_words(text: str) -> set[str]:
    """The number words of `text` outside its figures ("twice", "half", a "million" that scales no figure)."""
    blanked = list(text)
    for start, end in value_spans(text):
        blanked[start:end] = " " * (end - start)
    return {w for w in re.findall(r"[a-z]+", normalise("".join(blanked))) if w in NUMBER_WORDS}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+(?:['’]t)?", normalise(fold(text)))


def _negated(words: Sequence[str]) -> list[str | None]:
    """For each negation among `words`, the first content word after it (None when none follows)."""
    out: list[str | None] = []
    for i, word in enumerate(words):
        if _NEGATION.fullmatch(word) or word.endswith(("n't", "n’t")):
            following = words[i + 1 : i + 1 + NEGATION_REACH]
            after = [w for w in following if w not in STOPWORDS and not _NEGATION.fullmatch(w)]
            out.append(after[0] if after else None)
    return out


def added_negation(line: str, evidence: Sequence[str]) -> str | None:
    """Why `line` negates what its evidence does not ("shall not pay" on "shall pay"), or None: each negation of
    the line needs one in the evidence, standing within NEGATION_REACH words before the same word."""
    line_words = [w for w in re.split(r"\s+", _plain(line)) if w]
    wanted = _negated(line_words)
    if not wanted:
        return None
    evidence_words = [[w for w in re.split(r"\s+", _plain(text)) if w] for text in evidence]
    for word in wanted:
        found = False
        for words in evidence_words:
            for i, w in enumerate(words):
                if not (_NEGATION.fullmatch(w) or w.endswith(("n't", "n’t"))):
                    continue
                found = word is None or any(_same_word(word, x) for x in words[i + 1 : i + 2 + NEGATION_REACH])
                if found:
                    break
            if found:
                break
        if not found:
            return f"adds a negation its evidence lacks{f' (not {word})' if word else ''}"
    return None


def _plain(text: str) -> str:
    """`text` normalised, punctuation but apostrophes and the "No." of a number turned into spaces."""
    return re.sub(r"[^\w'’.]+|\.(?!\s*\d)", " ", normalise(fold(text)))


def _same_word(a: str, b: str) -> bool:
    """Whether two words are one word inflected ("pay", "pays", "paid" share their first letters)."""
    a, b = a.strip(".'’"), b.strip(".'’")
    return a == b or (len(a) >= 3 and len(b) >= 3 and a[:3] == b[:3] and abs(len(a) - len(b)) <= 3)


def roles(text: str) -> set[str]:
    """The party roles `text` names, singular and case-folded ("Landlord", "tenants" -> landlord, tenant)."""
    return {m.group(1).casefold() for m in _ROLE.finditer(text)}


def acting(text: str) -> set[str]:
    """The roles `text` says act: a role followed within two words by a modal or a verb of paying, owing,
    receiving or undertaking ("the Tenant shall pay", "Tenant hereby agrees"), or named by "by" ("paid by the
    Tenant")."""
    words = re.findall(r"[\w'’]+", text)
    found: set[str] = set()
    for i, word in enumerate(words):
        role = _ROLE.fullmatch(word)
        if role is None:
            continue
        following = words[i + 1 : i + 3]
        for j, w in enumerate(following):
            if _ACTS.match(w):
                if w.casefold() in ("is", "are", "was", "were"):
                    rest = following[j + 1 : j + 2] or words[i + 2 + j : i + 3 + j]
                    if not (rest and _IS_ACTING.match(rest[0])):
                        break
                found.add(role.group(1).casefold())
                break
        before = [w.casefold() for w in words[max(0, i - 2) : i]]
        if "by" in before:
            found.add(role.group(1).casefold())
    return found


def changed_party(line: str, evidence: Sequence[str]) -> str | None:
    """Why `line` gives a party role its evidence does not ("The Landlord pays ..." where the sentence names only
    the Tenant, or names the Tenant as the one who pays), or None."""
    named = roles(line)
    if not named:
        return None
    present = set().union(*(roles(text) for text in evidence)) if evidence else set()
    absent = sorted(named - present)
    if absent:
        return f"names a party its evidence does not: {absent[0]}"
    acts = acting(line)
    if acts:
        evidence_acts = set().union(*(acting(text) for text in evidence))
        other = sorted(acts - evidence_acts)
        if other:
            return f"makes the {other[0]} the party that acts, which its evidence does not"
    return None


def _words_outside_values(text: str, generic: AbstractSet[str]) -> set[str]:
    """The content words of `text` that are not part of a figure or a date."""
    blanked = list(text)
    for start, end in value_spans(text):
        blanked[start:end] = " " * (end - start)
    return {w for w in content_words("".join(blanked), generic) if not any(c.isdigit() for c in w)}
