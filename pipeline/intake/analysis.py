"""Intake: what a question contains, found by pure functions before any planning or LM.

Literal terms (quoted strings, error messages, identifiers, clause numbers, and the corpus's
own identifiers), catalog entities named (look-alike letters folded), periods named, ambiguity (an acronym
with several meanings, a word shared by several entities) and complexity signals. What is
particular to a corpus (its identifiers, generic nouns, personal-data terms) comes from its
vocabulary.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from pipeline.entities import name_variants, phrase_tokens, scan_entity_mentions, tokenize
from pipeline.settings import PlannerConfig
from pipeline.text import normalise
from pipeline.types import Entity
from pipeline.values.name_forms import LEGAL_FORMS, without_legal_form
from pipeline.values.periods import AskedPeriods, find_periods
from pipeline.vocabulary import Vocabulary

# "quoted", "error_message", "identifier", "clause", or the name of the corpus identifier pattern
# that found the term (pipeline.vocabulary reserves the built-in names).
LiteralKind = str

_QUOTED = re.compile(r"\"([^\"\n]{2,200})\"|“([^”\n]{2,200})”|`([^`\n]{2,200})`|(?<!\w)'([^'\n]{3,200})'(?!\w)")
_ERROR = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception)\b(?::[^\n?!]{1,160}?(?=\.\s|\.$|[?!\n]|$))?"
    r"|\b(?:ERR|E)_[A-Z0-9_]{2,}\b|\bHTTP [45]\d\d\b"
)
_UUID_LIKE = re.compile(
    r"[{(]?(?:urn:uuid:)?[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{12}[})]?"
)
_CODE = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)+\b")
_CLAUSE = re.compile(
    r"\b(?:clause|section|article|paragraph|schedule|annex|rule|regulation)\s+(?:\d+(?:\.\d+)*[a-z]?|[A-Z])\b"
    r"|\b\d+\.\d+\.\d+\b",
    re.IGNORECASE,
)
_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")

_SMALL_TALK = {
    "hi",
    "hello",
    "hey",
    "thanks",
    "thank you",
    "good morning",
    "good afternoon",
    "good evening",
    "bye",
    "goodbye",
    "who are you",
    "what can you do",
    "help",
    "ok",
    "okay",
}
_ARITHMETIC = re.compile(r"^(?:what is|what's|calculate|compute)?\s*[\d\s.,+\-*/x×÷()%^=]+\??$")
_SYNTHESIS = re.compile(
    r"\b(?:compare|comparison|compared|versus|vs\.?|contrast|differences?|between|across|each of"
    r"|all (?:the )?documents|summari[sz]e all|trend|overall)\b"
)
_CONCEPTUAL = re.compile(
    r"^(?:how (?:does|do|is|are)|why|explain|describe|what is the purpose|give an overview|overview)\b"
)
_POLICY = re.compile(
    r"\b(?:policy|policies|regulation|regulations|allowed|permitted|prohibited|forbidden|must|required to"
    r"|obliged|is it legal|compliance|compliant|entitled to|terms and conditions)\b"
)
_TROUBLE = re.compile(r"\b(?:error|exception|traceback|stack trace|fails? with|crash(?:es|ed)?)\b")
_PII_TERMS = (
    "passport",
    "national id",
    "id number",
    "identity number",
    "phone number",
    "telephone number",
    "mobile number",
    "email address",
    "bank account",
    "account number",
    "date of birth",
    "home address",
)


@lru_cache(maxsize=64)
def _phrases(phrases: tuple[str, ...], prefix: str = "") -> re.Pattern[str] | None:
    """A pattern matching `prefix` then any of `phrases`, as whole words of normalised text (None: no phrase)."""
    alternatives = sorted({re.escape(normalise(p)) for p in phrases if p.strip()}, key=len, reverse=True)
    return re.compile(rf"\b{prefix}(?:{'|'.join(alternatives)})\b") if alternatives else None


def _mentions(text: str, phrases: tuple[str, ...], prefix: str = "") -> bool:
    """Whether normalised `text` holds `prefix` followed by one of `phrases`."""
    pattern = _phrases(phrases, prefix)
    return pattern is not None and pattern.search(text) is not None


@dataclass(frozen=True)
class LiteralTerm:
    """A string the search must keep exactly as written."""

    text: str
    kind: LiteralKind


@dataclass(frozen=True)
class Intake:
    """Signals the planner rules read; no decision is taken here."""

    question: str
    literal_terms: tuple[LiteralTerm, ...]
    entity_ids: tuple[str, ...]
    # word -> ids of the entities it could mean, when no full name was given
    ambiguous_entities: tuple[tuple[str, tuple[str, ...]], ...]
    # acronym -> its known meanings, when the question does not say which
    ambiguous_acronyms: tuple[tuple[str, tuple[str, ...]], ...]
    retrieval_intent: Literal["none", "documents"]
    answerability: Literal["reasoning_only", "needs_documents"]
    requires_synthesis: bool
    conceptual: bool
    policy_lookup: bool
    troubleshooting: bool
    pii_request: bool
    doc_type_hint: frozenset[str]
    subquestions: tuple[str, ...]
    # Years, quarters and days the question names ("FY2018", "Q2 2023", "as of December 31, 2021"),
    # and whether it asks for the latest report.
    periods: AskedPeriods = field(default_factory=AskedPeriods)
    # A name several entities go by, as written -> their ids ("Norvane" of Norvane LLC and Norvane Limited)
    ambiguous_names: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def literal_texts(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.text for t in self.literal_terms))


def find_literal_terms(question: str, vocabulary: Vocabulary) -> tuple[LiteralTerm, ...]:
    """Quoted strings, error messages, identifiers, clause numbers and the corpus's identifiers
    (each of the kind its pattern is named), in order found."""
    found: list[tuple[int, LiteralTerm]] = []
    for m in _QUOTED.finditer(question):
        text = next(g for g in m.groups() if g)
        found.append((m.start(), LiteralTerm(text.strip(), "quoted")))
    for m in _ERROR.finditer(question):
        found.append((m.start(), LiteralTerm(m.group().strip(), "error_message")))
    for m in _UUID_LIKE.finditer(question):
        found.append((m.start(), LiteralTerm(m.group(), "identifier")))
    for m in _CODE.finditer(question):
        if not _UUID_LIKE.search(m.group()):
            found.append((m.start(), LiteralTerm(m.group(), "identifier")))
    for m in _CLAUSE.finditer(question):
        found.append((m.start(), LiteralTerm(m.group(), "clause")))
    for pattern in vocabulary.identifiers:
        for m in pattern.regex.finditer(question):
            found.append((m.start(), LiteralTerm(m.group().strip(), pattern.name)))
    terms: dict[str, LiteralTerm] = {}
    # whitespace as the question's goal writes it (runs of spaces and line breaks as one space)
    found = [(at, LiteralTerm(" ".join(t.text.split()), t.kind)) for at, t in found if t.text.split()]
    for _, term in sorted(found, key=lambda p: p[0]):
        if not any(term.text in t for t in terms):
            terms[term.text] = term
    return tuple(terms.values())


def _word_owners(entities: Sequence[Entity], vocabulary: Vocabulary) -> dict[str, tuple[str, ...]]:
    """Distinctive name word -> ids of the entities whose names use it: no stopword, generic noun or
    street type, and no word the corpus also writes as an ordinary word or in other organisations'
    documents ("best", "health", "Technologies"): those never name an entity on their own."""
    common = vocabulary.not_alone | LEGAL_FORMS
    owners: dict[str, dict[str, None]] = {}
    for entity in entities:
        for name in entity.names:
            for word in phrase_tokens(name):
                if len(word) > 2 and not word.isdigit() and word not in common:
                    owners.setdefault(word, {})[entity.entity_id] = None
    return {w: tuple(ids) for w, ids in owners.items()}


def find_ambiguous_entities(
    question: str, entities: Sequence[Entity], named: Collection[str], vocabulary: Vocabulary
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Words shared by two or more entities' names, when none of those entities is named."""
    owners = _word_owners(entities, vocabulary)
    words = sorted({t.folded for t in tokenize(question)})
    return tuple((w, owners[w]) for w in words if len(owners.get(w, ())) > 1 and not set(owners[w]) & set(named))


@lru_cache(maxsize=16)
def _name_runs(entities: tuple[Entity, ...]) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Every run of two or more consecutive words of an entity's names -> the ids of the entities whose
    names hold it ("pacific leju" of "Shanghai Pacific Leju Information Co.")."""
    owners: dict[tuple[str, ...], dict[str, None]] = {}
    for entity in entities:
        for words in name_variants(entity):
            for start in range(len(words)):
                for end in range(start + 2, len(words) + 1):
                    owners.setdefault(words[start:end], {})[entity.entity_id] = None
    return {run: tuple(ids) for run, ids in owners.items()}


@lru_cache(maxsize=16)
def _acronyms(entities: tuple[Entity, ...]) -> dict[str, tuple[str, ...]]:
    """The initials of each name of three or more words (its legal form left out) -> the entities'
    ids ("HRI" of "Halcyon Resorts International Inc.")."""
    owners: dict[str, dict[str, None]] = {}
    for entity in entities:
        for name in entity.names:
            words = without_legal_form(phrase_tokens(name))
            if len(words) >= 3:
                owners.setdefault("".join(w[0] for w in words).upper(), {})[entity.entity_id] = None
    return {acronym: tuple(ids) for acronym, ids in owners.items()}


def find_partial_entities(
    question: str, entities: Sequence[Entity], named: Collection[str], vocabulary: Vocabulary
) -> tuple[str, ...]:
    """Entities named by part of their name, unique in the catalog: a run of two or more of their name's
    words that no other name holds ("Pacific Leju"), a word only their names use ("Halcyon"), or the
    initials of their name ("HRI"). A word or run must be written as a proper noun (capitalised), since a
    lower-case word is ordinary text ("alpha" no, "Alpha" yes); initials in capitals."""
    tokens = tokenize(question)
    words = [t.folded for t in tokens]
    runs = _name_runs(tuple(entities))
    common = vocabulary.not_alone | LEGAL_FORMS
    found: list[str] = []
    covered: set[int] = set()
    for start in range(len(tokens)):
        for end in range(len(tokens), start + 1, -1):
            ids = runs.get(tuple(words[start:end]), ())
            run = words[start:end]
            if len(ids) == 1 and tokens[start].cased[:1].isupper() and any(w not in common for w in run):
                found.append(ids[0])
                covered.update(range(start, end))
                break
    owners = _word_owners(entities, vocabulary)
    # a name word in capitals ("MGM") names the one entity whose name holds it, even when other organisations'
    # documents write it too
    capitals = _word_owners(entities, vocabulary.model_copy(update={"shared_name_words": ()}))
    acronyms = _acronyms(tuple(entities))
    for i, t in enumerate(tokens):
        if i in covered:
            continue
        if len(owners.get(t.folded, ())) == 1 and t.cased[:1].isupper():
            found.append(owners[t.folded][0])
        elif len(t.cased) > 1 and t.cased.isupper() and len(capitals.get(t.folded, ())) == 1:
            found.append(capitals[t.folded][0])
        elif t.cased.isupper() and len(acronyms.get(t.cased, ())) == 1 and t.folded not in owners:
            found.append(acronyms[t.cased][0])
    return tuple(dict.fromkeys(e for e in found if e not in named))


def find_ambiguous_acronyms(
    question: str, glossary: Mapping[str, Sequence[str]]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Acronyms with several known meanings, none of which the question spells out."""
    lowered = normalise(question)
    out = []
    for acronym in dict.fromkeys(_ACRONYM.findall(question)):
        meanings = tuple(glossary.get(acronym, ()))
        if len(meanings) > 1 and not any(normalise(m) in lowered for m in meanings):
            out.append((acronym, meanings))
    return tuple(out)


def doc_type_hint(question: str, doc_types: Collection[str], synonyms: Mapping[str, Sequence[str]]) -> frozenset[str]:
    """Catalog document types the question asks for, by their own name or a configured synonym."""
    folded = [t.folded for t in tokenize(question)]
    words = {w.removesuffix("s") for w in folded}
    text = " ".join(folded)
    found = set()
    for doc_type in doc_types:
        parts = phrase_tokens(doc_type.replace("_", " "))
        if parts and (f" {' '.join(parts)} " in f" {text} " or parts[0] in words):
            found.add(doc_type)
    for word, types in synonyms.items():
        if normalise(word).removesuffix("s") in words:
            found.update(t for t in types if t in doc_types)
    return frozenset(found)


def _synthesis(text: str, vocabulary: Vocabulary) -> bool:
    """Whether normalised `text` asks to compare or combine, "all the <generic noun>" included."""
    return bool(_SYNTHESIS.search(text)) or _mentions(text, vocabulary.generic_words, prefix="all (?:the )?")


def _subquestions(question: str) -> tuple[str, ...]:
    parts = [p.strip() for p in question.split("?") if p.strip()]
    return tuple(f"{p}?" for p in parts) if len(parts) > 1 else ()


def _no_retrieval(text: str) -> tuple[bool, bool]:
    """(needs no documents, is pure reasoning) for small talk and arithmetic."""
    bare = re.sub(r"[^\w\s+\-*/().,%^=×÷]", "", text).strip()
    if bare in _SMALL_TALK:
        return True, False
    if _ARITHMETIC.match(text) and re.search(r"\d\s*[-+*/x×÷^%]\s*\d", text):
        return True, True
    return False, False


def _names_entity(text: str, entities: Sequence[Entity], vocabulary: Vocabulary) -> bool:
    """Whether `text` (a quoted string) is a catalog entity's name, whole or as people shorten it (an
    identifier of the corpus's own patterns, a registry or title number, stays a term to match)."""
    if any(pattern.regex.search(text) for pattern in vocabulary.identifiers):
        return False
    scan = scan_entity_mentions(text, entities, vocabulary)
    found = [m.entity_id for m in scan.mentions if m.entity_id]
    return bool(found or scan.ambiguous or find_partial_entities(text, entities, (), vocabulary))


def analyse_question(
    question: str,
    entities: Sequence[Entity],
    doc_types: Collection[str],
    config: PlannerConfig,
    vocabulary: Vocabulary,
    context: str = "",
) -> Intake:
    """Everything the planner rules need to know about `question`, in the corpus's vocabulary; `context` (a
    long prompt's preamble: "You are reviewing Acme's annual report.") adds the entities it names."""
    text = normalise(question)
    scan = scan_entity_mentions(question, entities, vocabulary)
    named = tuple(dict.fromkeys(m.entity_id for m in scan.mentions if m.entity_id))
    named = (*named, *find_partial_entities(question, entities, named, vocabulary))
    if context.strip():
        around = scan_entity_mentions(context, entities, vocabulary)
        named = (*named, *(m.entity_id for m in around.mentions if m.entity_id and m.entity_id not in named))
        named = (*named, *find_partial_entities(context, entities, named, vocabulary))
    # a name in quotes ("for "Acme Corp"") names an entity: the quotes mark the name, not a term to match
    literal = tuple(
        t
        for t in find_literal_terms(question, vocabulary)
        if t.kind != "quoted" or not _names_entity(t.text, entities, vocabulary)
    )
    ambiguous_names = tuple((phrase, ids) for phrase, ids in scan.ambiguous if not set(ids) & set(named))
    # a word of a shared name is asked about once, as the name
    in_names = {w for phrase, _ in ambiguous_names for w in phrase_tokens(phrase)}
    shared_words = find_ambiguous_entities(question, entities, named, vocabulary)
    no_retrieval, reasoning_only = _no_retrieval(text)
    no_retrieval = no_retrieval and not literal and not named
    errors = any(t.kind == "error_message" for t in literal)
    subquestions = _subquestions(question)
    return Intake(
        question=" ".join(question.split()),
        literal_terms=literal,
        entity_ids=named,
        ambiguous_entities=tuple((w, ids) for w, ids in shared_words if w not in in_names),
        ambiguous_acronyms=find_ambiguous_acronyms(question, config.acronym_glossary),
        retrieval_intent="none" if no_retrieval else "documents",
        answerability="reasoning_only" if reasoning_only and no_retrieval else "needs_documents",
        requires_synthesis=_synthesis(text, vocabulary) or len(named) > 1 or len(subquestions) > 1,
        conceptual=bool(_CONCEPTUAL.match(text)) and not literal,
        policy_lookup=bool(_POLICY.search(text)),
        troubleshooting=errors or bool(_TROUBLE.search(text)),
        pii_request=_mentions(text, (*_PII_TERMS, *vocabulary.pii_terms)),
        doc_type_hint=doc_type_hint(question, doc_types, config.doc_type_synonyms),
        subquestions=subquestions,
        periods=find_periods(question),
        ambiguous_names=ambiguous_names,
    )
