"""A "yes" checked against the statement it stands on (pure functions).

Whoever says yes to a yes/no question, the LM judge or the claims floor, says it of one sentence; the yes stands
only when that sentence states the event the question asks about:

- it holds the event's verb and its object, in some form (pipeline.answering.terms.held_terms: "terminate" in
  "Termination", "paid" for "pay"): "Allow the Tenant quiet enjoyment of the house" holds neither "sublet" of "Is
  the tenant allowed to sublet the house?";
- no negation stands just before the verb or the object unless the question has one too ("Not sublet, assign or
  part with possession ...", "The deposit bears no interest");
- what the question says is absent ("without notice", "no deposit") is absent in the sentence too ("... by giving
  3 months' written notice" is no yes to "Can the landlord terminate the agreement without notice?");
- no condition ("if", "unless", "provided that", "subject to") governs the verb or the object (a few words before
  or after them) and no mere possibility ("may", "could", "would") stands before the verb, where the question has
  none: a question asking whether something can be done ("Can ...", "Is ... allowed to") is answered by a
  sentence saying it may be.

The event is read from the question's own words: after its auxiliary ("does", "can", "is", ...) and its subject, a
permission's frame ("allowed to", "able to") set aside, the verb and the head of the noun phrase after it; "were
there any share buybacks" asks about a thing, "is subletting allowed" about the act its subject names. A question
read no other way is checked for negations and conditions only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.answering.terms import QUESTION_WORDS, held_terms
from pipeline.text import STOPWORDS, bm25_tokens

_AUXILIARIES = frozenset(
    "is are was were do does did has have had can could may might must shall should will would".split()
)
_BE = frozenset({"is", "are", "was", "were"})
# Auxiliaries and frames that ask whether something may be done: a "may" in the sentence answers them.
_PERMISSION = frozenset(
    {"can", "could", "may", "might", "allowed", "permitted", "able", "entitled", "free", "possible"}
)
_DETERMINERS = frozenset(
    "the a an any its their his her this that these those some either each every our your all no".split()
)
_PREPOSITIONS = frozenset(
    "on in at of for to with without by from during under over into onto about after before since until within upon"
    " against between through per than as".split()
)
_CONJUNCTIONS = frozenset({"and", "or", "but", "nor"})
# Words that frame what follows them with "to" ("allowed to sublet", "required to pay"): the event is after "to".
_FRAMES = frozenset(
    "allowed permitted able entitled free required obliged obligated bound expected supposed going".split()
)
# Verbs that say a report speaks of the event ("Did Acme mention any mergers?", "announce a buyback plan"): what
# the report calls the event is its object, and a statement of the event need not write the verb.
_REPORTING = frozenset(
    "mention mentioned report reported announce announced disclose disclosed state stated note noted say said"
    " describe described discuss discussed indicate indicated reveal revealed highlight highlighted".split()
)
# A predicate that only says whether its subject may happen ("Is subletting allowed?"): the subject is the event.
_PERMISSION_PREDICATES = frozenset({"allowed", "permitted", "possible", "permissible", "prohibited", "forbidden"})
_NEGATORS = frozenset({"not", "no", "never", "none", "neither", "nor", "without", "cannot", "nothing"})
# Words that negate what the question asks about although they are no negator ("Is subletting prohibited?").
_NEGATING = frozenset({"prohibited", "forbidden", "banned", "barred"})
_CONDITION = re.compile(
    r"\b(?:if|unless|provided\s+(?:that|always)|providing|subject\s+to|only\s+(?:if|when|where)|in\s+the\s+event|"
    r"on\s+condition|so\s+long\s+as|as\s+long\s+as|except|conditional(?:ly)?)\b",
    re.IGNORECASE,
)
_POSSIBILITY = re.compile(r"\b(?:may|might|could|would)\b", re.IGNORECASE)
# Words a negator or a "may" reaches forward over to the word it governs ("did not repurchase", "may repurchase").
NEGATION_REACH = 4
# Words before the event's verb or object (and after them) a condition governs it over: "if the meter is separate",
# "subject to the Landlord's consent, the Tenant may sublet"; a condition further off is about something else.
CONDITION_REACH = 8
CONDITION_AFTER = 6
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_TIME_CLAUSE = re.compile(
    r"\s(?:since|during|as\s+of|over\s+the|throughout|within|in\s+the\s+(?:last|past|first))\s", re.I
)


@dataclass(frozen=True)
class AskedEvent:
    """What a yes/no question asks happened: the stems of its verb and of its object (None where the question
    names none or was not read), the words it says are absent ("without notice": notic), whether it is negated
    itself, and whether it asks about a possibility or a condition."""

    verb: str | None
    object: str | None
    absent: tuple[str, ...] = ()
    negated: bool = False
    possible: bool = False
    conditional: bool = False
    # other heads the object names as alternatives ("mergers or acquisitions": merger beside acquisit)
    alternatives: tuple[str, ...] = ()


def _stem(word: str) -> str | None:
    stems = bm25_tokens(word)
    return stems[0] if stems else None


def _content(word: str) -> bool:
    lower = word.casefold()
    return lower not in STOPWORDS and lower not in QUESTION_WORDS and lower not in _DETERMINERS


def asked_event(question: str) -> AskedEvent:
    """The event a yes/no question asks about (see the module docstring)."""
    words = _WORD.findall(_TIME_CLAUSE.split(question, maxsplit=1)[0])
    lower = [w.casefold() for w in words]
    negated = any(w in _NEGATORS or w.endswith(("n't", "n’t")) or w in _NEGATING for w in lower)
    absent = tuple(
        stem
        for i, w in enumerate(lower[:-1])
        if w in ("without", "no") and (stem := _stem(_next_content(lower, i + 1) or "")) is not None
    )
    conditional = bool(_CONDITION.search(question))
    possible = bool(set(lower) & _PERMISSION)
    start = next((i for i, w in enumerate(lower) if w in _AUXILIARIES), None)
    if start is None:
        return AskedEvent(None, None, absent, negated, possible, conditional)
    verb, head = _verb_and_object(words, lower, start)
    after = lower.index(lower[start]) if start is not None else 0
    alternatives = tuple(
        stem
        for i, w in enumerate(lower[after:-1], start=after)
        if lower[i + 1] == "or" and _content(w) and (stem := _stem(w)) is not None and stem not in (head, verb)
    )
    # a compound's other words name the event too ("a share buyback plan": the buyback, not only the plan)
    alternatives += tuple(s for s in _compound(lower, head) if s not in alternatives)
    return AskedEvent(verb, head, absent, negated, possible, conditional, alternatives=alternatives)


def _next_content(lower: Sequence[str], i: int) -> str | None:
    """The first word from `i` that is not a determiner (the noun "without" or "no" governs)."""
    while i < len(lower) and lower[i] in _DETERMINERS:
        i += 1
    return lower[i] if i < len(lower) and _content(lower[i]) else None


def _verb_and_object(words: Sequence[str], lower: Sequence[str], start: int) -> tuple[str | None, str | None]:
    """The stems of the verb and the object of the clause after the auxiliary at `start`."""
    auxiliary, i = lower[start], start + 1
    if i < len(lower) and lower[i] == "there":  # "were there any share buybacks": a thing, no verb
        return None, _stem(_noun_head(lower, i + 1) or "")
    i, subject = _subject(words, lower, i)
    while i < len(lower) and (lower[i] in ("not", "also", "ever", "already", "still") or lower[i].endswith("ly")):
        i += 1
    if i + 1 < len(lower) and lower[i] in _FRAMES and lower[i + 1] == "to":
        i += 2
    elif auxiliary in _BE:  # "were dividends declared", "is the deposit refundable", "is subletting allowed"
        predicate = lower[i] if i < len(lower) else None
        if predicate is None or predicate in _PERMISSION_PREDICATES:
            return _stem(subject or ""), None
        return (_stem(predicate) if _content(predicate) else None), _stem(subject or "")
    if i >= len(lower) or not _content(lower[i]) or lower[i] in _PREPOSITIONS:
        return None, None
    if lower[i] in _REPORTING:  # "did Acme mention any mergers": the mergers are the event
        return None, _stem(_noun_head(lower, i + 1) or "")
    verb = _stem(lower[i])
    i += 1
    if i < len(lower) and lower[i] in _PREPOSITIONS and lower[i] not in ("without", "to"):  # "pay for electricity"
        i += 1
    return verb, _stem(_noun_head(lower, i) or "")


def _subject(words: Sequence[str], lower: Sequence[str], i: int) -> tuple[int, str | None]:
    """Where the subject after the auxiliary ends, and its head: a determiner, then a name in capitals or one word
    ("the landlord", "Acme Widgets"), and an "of" phrase after it ("the board of directors")."""
    if i < len(lower) and lower[i] in _DETERMINERS:
        i += 1
    head = None
    if i < len(words) and words[i][:1].isupper():
        while i < len(words) and (words[i][:1].isupper() or (lower[i] in ("of", "and") and i + 1 < len(words))):
            head = lower[i]
            i += 1
    elif i < len(lower):
        head = lower[i]
        i += 1
    if i + 1 < len(lower) and lower[i] == "of":
        i += 1
        if i < len(lower) and lower[i] in _DETERMINERS:
            i += 1
        head = lower[i] if i < len(lower) else head
        i += 1
    return i, head


def _compound(lower: Sequence[str], head: str | None) -> tuple[str, ...]:
    """The stems of the content words just before the object's head in the question ("share buyback" before
    "plan"), up to a determiner, a preposition or an auxiliary."""
    if head is None:
        return ()
    at = next((i for i, w in enumerate(lower) if _stem(w) == head), None)
    found: list[str] = []
    i = (at or 0) - 1
    while at is not None and i >= 0 and _content(lower[i]) and lower[i] not in _PREPOSITIONS | _AUXILIARIES:
        if (stem := _stem(lower[i])) is not None and lower[i] not in _CONJUNCTIONS and lower[i] not in _REPORTING:
            found.append(stem)
        i -= 1
    # "changes to its dividend policy", "new ESG initiatives in ...": what the head is of names the event too
    j = (at or 0) + 1
    if at is not None and j < len(lower) and lower[j] in ("to", "of", "in"):
        j += 1
        while j < len(lower) and lower[j] in _DETERMINERS:
            j += 1
        while j < len(lower) and _content(lower[j]) and lower[j] not in _PREPOSITIONS | _CONJUNCTIONS:
            if (stem := _stem(lower[j])) is not None:
                found.append(stem)
            j += 1
    return tuple(found)


def _noun_head(lower: Sequence[str], i: int) -> str | None:
    """The last content word of the noun phrase from `i` (past its determiners), up to a preposition: "any share
    buybacks during" -> "buybacks", "audit or inspection rights in" -> "rights"; None when none."""
    while i < len(lower) and lower[i] in _DETERMINERS:
        i += 1
    head = None
    while i < len(lower) and lower[i] not in _PREPOSITIONS:
        if _content(lower[i]) and lower[i] not in _CONJUNCTIONS:
            head = lower[i]
        i += 1
    return head


def yes_refused(question: str, statement: str) -> str | None:
    """Why `statement` cannot be the "yes" to the yes/no `question` (see the module docstring); None when it can."""
    event = asked_event(question)
    words = [w.casefold() for w in _WORD.findall(statement)]
    text = " ".join(words)
    for part, stems in (("verb", (event.verb,)), ("object", (event.object, *event.alternatives))):
        wanted = frozenset(s for s in stems if s is not None)
        if stems[0] is not None and not held_terms(text, wanted):
            return f"the statement does not hold the event's {part} ({stems[0]})"
    for stem in event.absent:
        if not _negated_at(words, stem):
            return f"the question asks for it without {stem}; the statement does not say so"
    if not event.negated:
        for stem in (s for s in (event.verb, event.object) if s is not None):
            if _negated_at(words, stem):
                return f"the statement negates the event ({stem})"
    anchors = [stem for stem in (event.verb, event.object) if stem is not None]
    if not event.conditional and (found := _near(words, anchors, _CONDITION, CONDITION_REACH, CONDITION_AFTER)):
        return f"the statement makes it conditional ({found}), which the question does not"
    if not event.possible and (found := _near(words, anchors[:1], _POSSIBILITY, NEGATION_REACH)):
        return f"the statement says only that it {found} happen"
    return None


def _near(
    words: Sequence[str], anchors: Sequence[str], pattern: re.Pattern[str], before: int, after: int = 0
) -> str | None:
    """The words `pattern` finds within `before` words before (or `after` words after) a word of `words` holding
    one of `anchors` (the whole statement when there are none), as found; None when it finds none there."""
    if not anchors:
        found = pattern.search(" ".join(words))
        return found.group(0) if found else None
    wanted = frozenset(anchors)
    for i, word in enumerate(words):
        if not held_terms(word, wanted):
            continue
        around = " ".join(words[max(0, i - before) : i + 1 + after])
        if (found := pattern.search(around)) is not None:
            return found.group(0)
    return None


def _negated_at(words: Sequence[str], stem: str) -> bool:
    """Whether a negator stands within NEGATION_REACH words before a word of `words` holding `stem`."""
    wanted = frozenset({stem})
    for i, word in enumerate(words):
        if not held_terms(word, wanted):
            continue
        before = words[max(0, i - NEGATION_REACH) : i]
        if any(w in _NEGATORS or w.endswith(("n't", "n’t")) for w in before):
            return True
    return False
