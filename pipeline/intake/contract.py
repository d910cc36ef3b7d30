"""The question's contract: what its instructions ask of the answer, read before anything is searched.

Questions over reports carry instructions beside what they ask: the value to give when nothing states it
("If data is not available, return 'N/A'", "If there is no mention, return False"), the currency, unit and
scale ("(in EUR)", "(%)", "Answer in GBP millions"), the period ("at the end of the period", "within the
last period"), a role preamble ("You are a financial analyst..."), definitions ("FCF is defined as ..."),
where to look ("use the cash flow statement") and the kind of answer ("Give me the title of the
position"). They are read here into one typed `Contract` and taken off the question: they are never
searched for, never literal terms and never sub-questions. What remains (`question`) is what is planned,
decomposed and retrieved; the answer step honours the rest. A comparison across entities ("Which of the
companies had the lowest total assets: "A", "B", "C"?") is read into a `Comparison`.

Pure functions over English question forms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from pipeline.answering.asks import FormatRequest, answer_kind, asks_amount, format_piece, over_time, split_format
from pipeline.intake.comparison import QUOTED_NAME, quoted_comparison

# re-exported: the program reads both kinds of comparison where it reads the contract
from pipeline.intake.comparison import Comparison as Comparison
from pipeline.intake.comparison import entity_comparison as entity_comparison
from pipeline.values.money import CODES, currency_of
from pipeline.values.typed import Plain, Scale, ValueKind

# "If data is not available, return 'N/A'", "If there is no mention, return False", "If not mentioned,
# answer None", "Return 'N/A' if the data is not disclosed."
_ABSENT_VALUE = (
    r"(?P<value>'[^']{1,20}'|\"[^\"]{1,20}\"|“[^”]{1,20}”|‘[^’]{1,20}’"
    r"|(?i:false|true|none|null|nil|n/a|na|zero|not\s+available|unknown)\b|\d+)"
)
_CONDITION = (
    r"if\s+(?:the\s+)?(?:data|information|value|figure|answer|it|this|that|there\s+is\s+no|there\s+are\s+no|no|none|"
    r"not|nothing|(?:annual\s+)?(?:report|document|filing|company|statement)s?\s+(?:does|do)\s+not)[^.?!]{0,120}?"
)
_RETURN = r"(?:return|answer|respond\s+with|reply\s+with|reply|say|write|output|give|state|use)"
_ABSENT_PATTERNS = (
    re.compile(
        rf"(?:^|(?<=[.?!])\s+|,\s*|\s+)(?:{_CONDITION}),?\s*(?:then\s+)?(?:please\s+)?{_RETURN}\s*:?\s*"
        rf"{_ABSENT_VALUE}\s*(?:[.!]|$)",
        re.IGNORECASE,
    ),
    re.compile(
        rf"(?:^|(?<=[.?!)])\s+)(?:please\s+)?{_RETURN}\s*:?\s*{_ABSENT_VALUE}\s+(?:{_CONDITION})[^.?!]*(?:[.!]|$)",
        re.IGNORECASE,
    ),
)
# Any other clause telling what to answer when the value is missing, in whatever words: an answering verb (or
# "or" opening the clause) with a quoted value or an unquoted N/A, False or None, in a clause that says the value
# may be missing ("where it is not reported, say 'N/A'", "answer False if the filing says nothing about it"), or
# with a quoted absent value ('N/A', 'None').
_QUOTED_ANSWER = re.compile(
    rf"(?:^|(?<=[.?!;])\s+|[;,]\s*)(?P<clause>(?:[^.?!;]{{0,120}}?\b{_RETURN}|or)\s*:?\s*"
    r"(?P<value>'[^']{1,20}'|\"[^\"]{1,20}\"|“[^”]{1,20}”|‘[^’]{1,20}’|(?i:n/a|false|none|null)\b)"
    r"[^.?!;]{0,120}?)\s*(?:[.!;]|$)",
    re.IGNORECASE,
)
_MISSING_CUE = re.compile(
    r"\b(?:not|no|none|nothing|missing|unavailable|absent|lacks?|silent|without)\b|n['’]t\b", re.IGNORECASE
)
_ABSENT_WORDS = frozenset({"n/a", "na", "none", "null", "nil", "not available", "unknown", "false"})
# "If data for the company is not available, exclude it from the comparison."
_EXCLUDE = re.compile(
    r"(?:^|(?<=[.?!])\s+)if\s+[^.?!]{0,120}?(?:not\s+available|missing|not\s+disclosed|not\s+reported)[^.?!]*?,?\s*"
    r"(?:exclude|ignore|omit|skip|leave\s+out)\b[^.?!]*(?:[.!]|$)",
    re.IGNORECASE,
)
# A role preamble or a note on where to look, as a sentence of its own.
_PREAMBLE = re.compile(
    r"^(?:you\s+are\b|assume\s+(?:that\s+)?you\b|act\s+as\b|imagine\s+(?:that\s+)?you\b|as\s+an?\s+[\w\s-]{1,40}?,"
    r"|your\s+(?:only\s+)?(?:resource|source|task|job|goal)s?\b|please\s+answer\b|answer\s+the\s+following\b"
    r"|give\s+a\s+response\b|base\s+your\b|rely\s+on\b|relying\s+on\b|using\s+(?:only\s+)?the\b|use\s+(?:only\s+)?the\b"
    r"|refer\s+to\b|only\s+use\b|consider\s+only\b|focus\s+on\b|note\s*:|context\s*:|here\s+is\s+the\s+question\b"
    r"|here'?s\s+the\s+question\b|the\s+question\s+is\b|by\s+(?:primarily\s+)?using\b"
    r"|(?:the\s+)?(?:question|task|query)\s*$)",
    re.IGNORECASE,
)
# A definition: "FCF is defined as ...", "Define EBITDA as ...", "Definition: ...", "where X = ...".
_DEFINITION = re.compile(
    r"\b(?:is|are)\s+(?:here\s+)?defined\s+as\b|^define\b|^definitions?\s*:|\bis\s+calculated\s+as\b"
    r"|\bis\s+computed\s+as\b|^where\s+\w[\w\s]{0,40}=|\bhere\s+is\s+defined\b",
    re.IGNORECASE,
)
# What the answer should be, as an instruction of its own: "Give me the title of the position.", "Give every
# symbol."
_KIND_INSTRUCTION = re.compile(
    r"^(?:please\s+)?(?:give|provide|return|state|answer\s+with|reply\s+with|respond\s+with|list)\s+(?:me\s+|us\s+)?"
    r"(?:only\s+|just\s+)?(?:the|a|an|their|its|(?P<every>every|each|all(?:\s+of)?(?:\s+the)?))\s+"
    r"(?P<what>[\w\s'-]{1,40}?)(?:\s+only)?\s*[.!]?$",
    re.IGNORECASE,
)
# "Answer True or False.", "Reply with yes or no.": a yes/no question's kind, said outright.
_BOOLEAN_INSTRUCTION = re.compile(
    r"(?:^|(?<=[.?!)])\s+)(?:please\s+)?(?:answer|reply|respond|return)\s+(?:with\s+|only\s+)?"
    r"(?:(?:true|yes)\s+or\s+(?:false|no)|a\s+boolean)\b[^.?!]*(?:[.!]|$)",
    re.IGNORECASE,
)
# "(within the last period or at the end of the last period)", "at the end of the period", "in the last
# reporting period": the latest period the documents cover.
_LATEST = re.compile(
    r",?\s*\(?\s*(?:(?:with)?in|for|during|at\s+the\s+end\s+of|as\s+(?:of|at)\s+the\s+end\s+of)\s+the\s+"
    r"(?:(?:last|latest|most\s+recent|current|reporting|reported)\s+(?:reporting\s+|fiscal\s+|financial\s+)?"
    r"(?:period|year)|(?:reporting\s+)?period)(?!\s+(?:ended|ending|of|from)\b)"
    # "the period listed in the annual report": the report's own period
    r"(?:\s+(?:listed|reported|shown|covered|presented|stated|given)(?:\s+(?:in|by)\s+the\s+(?:annual\s+|quarterly\s+)?"
    r"(?:report|filing|statements?))?)?"
    r"(?:\s+(?:or|and)\s+(?:at\s+the\s+end\s+of|in|within)\s+the\s+(?:last|latest)\s+"
    r"(?:reporting\s+)?period)?\s*\)?(?=[\s,.?!;:]|$)"
    r"|,?\s*\(?\s*at\s+(?:the\s+)?period[- ]end\s*\)?(?=[\s,.?!;:]|$)",
    re.IGNORECASE,
)
_REPORT_REFERENCE = re.compile(
    r"^(?:according\s+to|based\s+on|per|from|in)\s+(?:the|its|their)\s+(?:latest\s+|most\s+recent\s+)?"
    r"(?:annual|quarterly|financial)?\s*(?:report|filing|statements?|\d+-[a-z])s?\s*,\s*"
    r"|\s+(?:in|within|from)\s+(?:the|its|their)\s+(?:latest\s+|most\s+recent\s+)?(?:annual|quarterly)\s+"
    r"(?:report|filing)s?(?=\s*[?.!]|$)",
    re.IGNORECASE,
)
# A unit in brackets after a metric: "(%)", "(TB)", "(MW)", "(in EUR)", "(GBP)", "(in EUR millions)".
_BRACKET_UNIT = re.compile(r"\s+\(\s*(?:in\s+|as\s+)?(?P<unit>%|[A-Za-z$€£¥][\w$€£¥ .'’/-]{0,30}?)\s*\)")
_INLINE_CURRENCY = re.compile(
    rf"\s+in\s+(?P<code>{'|'.join(sorted(CODES))})\b(?:\s+(?P<scale>thousands?|millions?|billions?))?", re.IGNORECASE
)
_SCALE_WORDS: dict[str, Scale] = {"thousand": "thousand", "million": "million", "billion": "billion"}
# What a bracket after a metric may name as its unit: a percentage, a unit in capitals or its symbol ("TB",
# "MW", "GWh", "m2"), or a unit word ("tonnes", "employees", "per share").
_UNIT_WORDS = re.compile(
    r"^(?:%|percent|per\s?cent|percentage|[A-Z][A-Za-z]{0,3}\d?|[a-z]{1,3}\d?|per\s+share|"
    r"(?:metric\s+)?(?:tonnes?|tons?)|units?|people|persons|employees|shares|days|years|months|hours|"
    r"(?:square\s+)?(?:feet|metres|meters|kilometres|kilometers|miles)|litres|liters|barrels|boe|"
    r"(?:kilo|mega|giga|tera)?(?:watts?|watt-hours|bytes))$"
)
_NAMES_ASK = re.compile(
    r"\b(?:names?\s+of\s+(?:all\s+|the\s+)?|list\s+(?:of\s+)?(?:all\s+|the\s+)?|which\s+(?:\w+\s+){0,3}?"
    r"(?:positions|products|executives|members|directors|officers|subsidiaries|people|persons|individuals|roles|"
    r"titles|services|brands|markets|countries|segments|symbols|tickers|exchanges)\b|what\s+(?:are|were)\s+(?:the\s+)?"
    r"(?:\w+\s+){0,3}?(?:names|products|positions|executives|members|directors|officers|subsidiaries|brands|titles|"
    r"symbols|tickers|exchanges))",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^(?:what|which|who|whom|whose|when|where|how|why|did|does|do|is|are|was|were|has|have|had|can|could|will|"
    r"would|should|calculate|compute|determine|find|list|name)\b",
    re.IGNORECASE,
)
# A question asking what a document says or how something works: its answer is text, whatever nouns it holds.
_OPEN_ASK = re.compile(
    r"\b(?:say|says|said|state|stated|mention|mentions)\s+about\b|^(?:describe|explain|summari[sz]e|discuss|why|how\s+"
    r"(?:does|do|did|is|are|was|were|has|have|will|would|can|could|should))\b",
    re.IGNORECASE,
)
# A lead this short before a colon names the question's topic ("Acme annual report: revenue in 2023?"): it stays.
MAX_TOPIC_WORDS = 6
# "On which exchange(s) ...", "Which subsidiaries ...": several names asked for.
_PLURAL_ASK = re.compile(r"^(?:on\s+|in\s+|at\s+)?(?:which|what)\s+(?:\w+\s+){0,2}\w+\(s\)", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.?!])\s+(?=[A-Z\"“(])")


@dataclass(frozen=True)
class Contract:
    """What a question asks of its answer (see the module docstring). `question` is the question proper;
    `instructions` every piece taken off it, as written (the trace shows them)."""

    question: str
    kind: ValueKind
    absent: Plain = None
    currency: str | None = None
    unit: str | None = None
    scale: Scale | None = None
    decimals: int | None = None
    period: Literal["latest"] | None = None
    context: tuple[str, ...] = ()
    instructions: tuple[str, ...] = ()
    comparison: Comparison | None = None
    format: FormatRequest | None = None
    # Where the question says to look ("the cash flow statement"), from its preamble.
    sources: tuple[str, ...] = field(default_factory=tuple)
    # The kind of report the question names ("annual report": annual; "quarterly report": quarterly), if any.
    report: Literal["annual", "quarterly"] | None = None

    @property
    def has_absent(self) -> bool:
        """Whether the question names its own absent value."""
        return self.absent is not None


def read_contract(text: str) -> Contract:
    """The contract of `text` (see the module docstring): the question proper and what its instructions ask."""
    text = " ".join(text.split())
    report = _report_kind(text)
    taken: list[str] = []
    absent: Plain = None
    for pattern in _ABSENT_PATTERNS:
        for m in pattern.finditer(text):
            absent = _absent_value(m.group("value"))
        text, pieces = _cut(pattern, text)
        taken += pieces
    text, pieces, quoted = _cut_quoted_answers(text)
    taken += pieces
    absent = quoted if quoted is not None and absent is None else absent
    text, pieces = _cut(_EXCLUDE, text)
    taken += pieces
    text, pieces = _cut(_BOOLEAN_INSTRUCTION, text)
    taken += pieces
    if pieces and absent is None:
        absent = False
    context: list[str] = []
    kept: list[str] = []
    kind_words: list[str] = []
    for sentence in _sentences(text):
        lead, colon, rest = sentence.partition(":")
        if colon and rest.strip() and _PREAMBLE.match(lead.strip()) and not _asks(rest):
            context.append(sentence)
            continue
        long_lead = len(lead.split()) > MAX_TOPIC_WORDS and not QUOTED_NAME.search(lead)
        if (
            colon
            and rest.strip()
            and (_PREAMBLE.match(lead.strip()) or (long_lead and _asks(rest) and not _asks(lead)))
        ):
            context.append(f"{lead.strip()}:")
            sentence = rest.strip()
        if (_DEFINITION.search(sentence) and not sentence.rstrip().endswith("?")) or (
            _PREAMBLE.match(sentence) and not _asks(sentence)
        ):
            context.append(sentence)
        elif (
            (asked := _KIND_INSTRUCTION.match(sentence)) is not None
            and not sentence.endswith("?")
            and not format_piece(sentence.rstrip(".!"))
        ):
            taken.append(sentence)
            # "Give every symbol.": all of them, a list
            kind_words.append(f"list {asked.group('what')}" if asked.group("every") else asked.group("what"))
        else:
            kept.append(sentence)
    text = " ".join(kept)
    body, request = split_format(text)
    if request is not None:
        taken.append(request.text)
        text = body
    period: Literal["latest"] | None = None
    text, pieces = _cut(_LATEST, text)
    if pieces:
        period = "latest"
        taken += pieces
    text, pieces = _cut(_REPORT_REFERENCE, text)
    taken += pieces
    currency = request.currency if request else None
    scale: Scale | None = request.scale if request else None
    unit: str | None = "%" if request and request.percent else None
    for m in list(_INLINE_CURRENCY.finditer(text)):
        currency = currency or m.group("code").upper()
        scale = scale or (_SCALE_WORDS[m.group("scale").casefold().rstrip("s")] if m.group("scale") else None)
        taken.append(m.group(0).strip())
    text = _INLINE_CURRENCY.sub("", text)
    kept_brackets: list[str] = []

    def bracket(m: re.Match[str]) -> str:
        nonlocal currency, scale, unit
        inner = m.group("unit").strip()
        found_currency = currency_of(inner)
        found_scale = next((s for w, s in _SCALE_WORDS.items() if re.search(rf"\b{w}s?\b", inner, re.I)), None)
        if found_currency or found_scale:
            currency = currency or found_currency
            scale = scale or found_scale
        elif _UNIT_WORDS.match(inner) and not QUOTED_NAME.search(inner):
            unit = unit or ("%" if inner in ("%", "percent", "per cent", "percentage") else inner)
        else:
            kept_brackets.append(m.group(0))
            return m.group(0)
        taken.append(m.group(0).strip())
        return ""

    text = _BRACKET_UNIT.sub(bracket, text)
    question = _tidy(text)
    comparison = quoted_comparison(question)
    kind = _kind(question, absent, comparison, unit, currency, kind_words)
    if kind != "number" and comparison is None:
        # a currency or scale only means something for a figure; a unit may name the kind of a name ("title")
        currency, scale = None, None
    sources = tuple(_sources(context))
    return Contract(
        question=question,
        kind=kind,
        absent=absent,
        currency=currency,
        unit=unit if kind == "number" or comparison else None,
        scale=scale,
        decimals=request.decimals if request else None,
        period=period,
        context=tuple(context),
        instructions=tuple(p for p in taken if p),
        comparison=comparison,
        format=request,
        sources=sources,
        report=report,
    )


_ANNUAL = re.compile(r"\bannual\s+(?:report|filing|accounts)s?\b", re.IGNORECASE)
_QUARTERLY = re.compile(r"\b(?:quarterly|interim)\s+(?:report|filing|accounts)s?\b", re.IGNORECASE)


def _report_kind(text: str) -> Literal["annual", "quarterly"] | None:
    """The kind of report a question names, when it names one kind only."""
    annual, quarterly = bool(_ANNUAL.search(text)), bool(_QUARTERLY.search(text))
    return "annual" if annual and not quarterly else "quarterly" if quarterly and not annual else None


def _cut(pattern: re.Pattern[str], text: str) -> tuple[str, list[str]]:
    """`text` without `pattern`'s matches, and the matches as written."""
    found: list[str] = []

    def take(m: re.Match[str]) -> str:
        found.append(m.group(0).strip(" ,"))
        return " "

    return " ".join(pattern.sub(take, text).split()), found


def _cut_quoted_answers(text: str) -> tuple[str, list[str], Plain]:
    """`text` without the clauses that say what to answer when the value is missing (_QUOTED_ANSWER), those
    clauses, and the absent value the last of them names (None: no such clause)."""
    found: list[str] = []
    absent: Plain = None

    def take(m: re.Match[str]) -> str:
        nonlocal absent
        value = _absent_value(m.group("value"))
        quoted = m.group("value")[:1] in "'\"“‘"
        # an unquoted N/A or False is an instruction only in a clause saying the value may be missing
        if not _MISSING_CUE.search(m.group("clause")) and not (quoted and str(value).casefold() in _ABSENT_WORDS):
            return m.group(0)
        found.append(m.group("clause").strip(" ,;"))
        absent = value
        return " "

    return " ".join(_QUOTED_ANSWER.sub(take, text).split()), found, absent


def _sentences(text: str) -> list[str]:
    """The sentences of `text`, a question mark or full stop ending each."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def _asks(text: str) -> bool:
    """Whether `text` is worded as a question (a question word or an auxiliary first, or a "?")."""
    stripped = text.strip()
    return stripped.endswith("?") or bool(
        re.match(
            r"^(?:what|which|who|whom|whose|when|where|how|why|did|does|do|is|are|was|were|has|have|had|can|"
            r"could|will|would|should|calculate|compute|determine|find|list|name)\b",
            stripped,
            re.I,
        )
    )


def _absent_value(raw: str) -> Plain:
    """The absent value as the instruction writes it: False / True as booleans, 'N/A' and other words as
    strings, a bare number as a number."""
    value = raw.strip().strip("'\"“”‘’").strip()
    folded = value.casefold()
    if folded == "false":
        return False
    if folded == "true":
        return True
    if re.fullmatch(r"\d+", value):
        return int(value)
    return value or None


def _tidy(text: str) -> str:
    """The question proper with the spaces and punctuation taking instructions off it left behind."""
    text = re.sub(r"\s+([,.?!;:])", r"\1", " ".join(text.split()))
    text = re.sub(r"([,;:])(?=[?.!]|$)", "", text)
    text = re.sub(r"\(\s*\)", "", text).strip(" ,;:")
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    return text


# "Give ...", "Tell me ...", "State ...": a question asked as a request (what a list asks is read as it is).
_IMPERATIVE = re.compile(
    r"^\s*(?:please\s+)?(?:tell\s+me|give(?:\s+me)?|state|provide|report|show(?:\s+me)?|find|identify|indicate|"
    r"specify|get|i\s+(?:need|want)(?:\s+to\s+know)?)\s+(?!(?:me\s+)?(?:all|every|each|the\s+list)\b)",
    re.IGNORECASE,
)


def _as_asked(match: re.Match[str]) -> str:
    """A request's lead as the question it stands for: an embedded question ("Tell me who ...") is that
    question; anything else ("Give the total ...") is what the thing is."""
    rest = match.string[match.end() :]
    return "" if re.match(r"(?:who|whom|whose|what|which|when|where|why|how|whether|if)\b", rest, re.I) else "What is "


def _kind(
    question: str,
    absent: Plain,
    comparison: Comparison | None,
    unit: str | None,
    currency: str | None,
    kind_words: list[str],
) -> ValueKind:
    """The kind of value the question asks for, from its instructions and its question words (an imperative
    read as the question it stands for: "Tell me the auditor" as "What is the auditor")."""
    question = _IMPERATIVE.sub(_as_asked, question, count=1)
    if comparison is not None:
        return "name"
    if isinstance(absent, bool):
        return "boolean"
    if (
        _NAMES_ASK.search(question)
        or _PLURAL_ASK.search(question)
        or any(re.search(r"\b(?:names|titles|list)\b", w, re.I) for w in kind_words)
    ):
        return "names"
    if any(re.search(r"\b(?:name|title)\b", w, re.I) for w in kind_words):
        return "name"
    if over_time(question) and asks_amount(question):
        return "number"  # "Any trends in its revenue over the quarters?": the figures, period by period
    if _OPEN_ASK.search(question):
        return "text"
    asked = answer_kind(question)
    if asked == "yes_no":
        return "boolean"
    if asked in ("amount", "percent", "count") or unit or currency:
        return "number"
    if asked == "date":
        return "date"
    if asked == "name":
        return "name"
    return "text"


_STATEMENTS = re.compile(
    r"\b(?:(?:consolidated\s+)?(?:statements?\s+of\s+(?:cash\s+flows?|income|operations|financial\s+position|"
    r"comprehensive\s+income|changes\s+in\s+(?:shareholders'?|stockholders'?)\s+equity)|cash\s+flows?\s+statements?|"
    r"income\s+statements?|balance\s+sheets?|p&l|profit\s+and\s+loss\s+(?:account|statement)))\b",
    re.IGNORECASE,
)


def _sources(context: list[str]) -> list[str]:
    """The statements the preamble says to use ("the cash flow statement", "the balance sheet")."""
    found = [" ".join(m.group(0).casefold().split()) for line in context for m in _STATEMENTS.finditer(line)]
    return list(dict.fromkeys(found))


def currency_known(code: str | None) -> bool:
    """Whether `code` is an ISO currency code the contract reads."""
    return code is not None and code in CODES


def contract_record(contract: Contract) -> dict[str, object]:
    """The contract as the trace records it (plain JSON)."""
    comparison = contract.comparison
    return {
        "kind": contract.kind,
        "absent": contract.absent,
        "currency": contract.currency,
        "unit": contract.unit,
        "scale": contract.scale,
        "decimals": contract.decimals,
        "period": contract.period,
        "sources": list(contract.sources),
        "instructions": list(contract.instructions),
        "context": list(contract.context),
        "comparison": None
        if comparison is None
        else {"extreme": comparison.extreme, "metric": comparison.metric, "names": list(comparison.names)},
    }


def section_kind(sub_question: str, contract: Contract | None) -> ValueKind:
    """The kind of value one section answers: the contract's when the section asks the question itself, else
    what its own words ask for (with the contract's unit and currency, which apply to every figure asked)."""
    if contract is None:
        return _kind(sub_question, None, None, None, None, [])
    if contract.comparison is not None:
        return "number"
    if " ".join(sub_question.split()) == contract.question:
        return contract.kind
    return _kind(sub_question, contract.absent, None, contract.unit, contract.currency, [])
