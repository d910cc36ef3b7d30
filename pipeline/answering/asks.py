"""What a question asks for, read by plain rules over English question forms (pure functions): the kind
of answer (an amount, a percentage, a date, a duration, a count, a name, yes or no, or text), its format
instructions ("Answer in EUR billions.", "Round to one decimal place."), which are taken out of the
question and applied by code, and whether it asks for a figure to be computed (a ratio, a margin, a
change, a sum, an average) and from which figures."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pipeline.answering.abbreviations import expand_abbreviations, line_items
from pipeline.intake.parts import AUXILIARIES
from pipeline.text import normalise
from pipeline.values.money import CODES, money_spans

AnswerKind = Literal["amount", "percent", "date", "duration", "count", "name", "yes_no", "text"]
Operation = Literal["ratio", "share", "margin", "difference", "change", "percent_change", "sum", "average"]
Scale = Literal["thousand", "million", "billion"]

_NUMBER_WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "a": 1, "an": 1}
_SCALE_WORDS: dict[str, Scale] = {
    "thousand": "thousand",
    "thousands": "thousand",
    "million": "million",
    "millions": "million",
    "billion": "billion",
    "billions": "billion",
}

# ---- format instructions ---------------------------------------------------------------------

# A sentence of its own that only says how to write the answer ("Answer in EUR millions.",
# "Round your answer to two decimal places.", "Please express it as a percentage.").
_FORMAT_SENTENCE = re.compile(
    r"(?:^|(?<=[.?!])\s+)(?:please\s+)?(?:answer|round|express|give|provide|report|state|present|write|show)\b"
    r"[^.?!]*?\b(?:round(?:ed|ing)?|decimal|places?|units?|percents?|percentages?|thousands?|millions?|billions?|"
    rf"whole\s+numbers?|integers?|dollars?|(?-i:{'|'.join(sorted(CODES))}))\b[^.?!]*(?:[.!]|$)",
    re.IGNORECASE,
)
# The same instruction as a trailing clause: "..., rounded to one decimal place?", "(in EUR millions)".
_FORMAT_CLAUSE = re.compile(
    r",?\s*\((?:in|as)\s+[^()]{1,40}\)|,?\s+(?:rounded|round)\s+to\s+(?:the\s+nearest\s+)?[\w\s-]{1,30}?"
    r"(?:decimal\s+places?|decimal|whole\s+numbers?|integer|percent|million|billion|thousand)s?\b",
    re.IGNORECASE,
)
_DECIMALS = re.compile(
    r"\b(?:to\s+)?(zero|one|two|three|four|five|a|an|\d)\s+(?:decimal\s+places?|decimals?|decimal\s+points?)\b"
    r"|\bnearest\s+(?:whole\s+number|integer|(?:whole\s+)?percent(?:age)?(?:\s+points?)?)\b|\bwhole\s+numbers?\b"
    r"|\b(?:nearest\s+)?(tenth|hundredth)s?\b",
    re.IGNORECASE,
)
_SCALE = re.compile(r"\b(?:in\s+)?(?:units\s+of\s+)?(?:[A-Z]{3}\s+|\$\s*)?(thousands?|millions?|billions?)\b", re.I)
_PERCENT = re.compile(r"\b(?:percents?|percentages?|per\s?cent|in\s+%)\b|%", re.IGNORECASE)
_CURRENCY = re.compile(r"\b([A-Z]{3})\b")


@dataclass(frozen=True)
class FormatRequest:
    """How the question asks the answer to be written: a scale (figures in millions), a number of
    decimal places, as a percentage, in a currency; `text` is the instruction as the question wrote it."""

    text: str
    scale: Scale | None = None
    decimals: int | None = None
    percent: bool = False
    currency: str | None = None


# A piece of a question (between commas, semicolons, brackets or sentence ends) that says only in which
# currency and scale to answer, whatever its words: what is left once its currencies (pipeline.values.money),
# scales and these connecting words are taken off is nothing ("stated in millions of Swiss francs", "in US
# dollars", "State the amount in millions of US dollars", "In Japanese yen (millions)").
_FORMAT_PIECE = re.compile(r"[^,;.?!()]+")
_FORMAT_CONNECTIVES = frozenset(
    """in of as a an the and its your answer answers amount amounts figure figures value values number numbers
    state stated express expressed give given provide provided report reported present presented write written
    show shown put quote quoted please it them units terms denominated measured""".split()
)
_SCALE_WORD = re.compile(r"\b(?:thousands?|millions?|billions?)\b", re.IGNORECASE)


def format_piece(piece: str) -> bool:
    """Whether `piece` only says which currency and scale the answer is in (see _FORMAT_PIECE)."""
    spans = money_spans(piece)
    if not spans and not _SCALE_WORD.search(piece):
        return False
    rest = list(piece)
    for start, end, _ in spans:
        rest[start:end] = " " * (end - start)
    words = re.findall(r"[a-z]+", _SCALE_WORD.sub(" ", "".join(rest)).casefold())
    return bool(spans or words != re.findall(r"[a-z]+", piece.casefold())) and all(
        w in _FORMAT_CONNECTIVES for w in words
    )


def _format_pieces(body: str, found: list[str]) -> str:
    """`body` without its pieces that only name a currency and scale (appended to `found`)."""
    out, last = [], 0
    for m in _FORMAT_PIECE.finditer(body):
        if m.group(0).strip() and format_piece(m.group(0)):
            found.append(m.group(0).strip())
            out.append(body[last : m.start()])
            last = m.end()
    out.append(body[last:])
    text = "".join(out)
    text = re.sub(r"\(\s*\)|,\s*(?=[,.?!;])|^[\s,;.]+", "", text)
    text = re.sub(r"([?!])\s*\.|\.\s*\.", r"\1", re.sub(r"\s+([,.?!;])", r"\1", " ".join(text.split())))
    return text.replace("..", ".")


def split_format(question: str) -> tuple[str, FormatRequest | None]:
    """The question without its format instructions, and what they ask (None when it has none)."""
    found: list[str] = []

    def take(match: re.Match[str]) -> str:
        found.append(match.group(0).strip(" ,"))
        return ""

    body = _format_pieces(" ".join(question.split()), found)
    body = _FORMAT_SENTENCE.sub(take, body)
    body = _FORMAT_CLAUSE.sub(take, body)
    # what taking them off left behind: "the rent?, rounded ..." -> "the rent?"
    body = re.sub(r"([?!.])(?:\s*[.,;])+(?=\s|$)", r"\1", " ".join(body.split()))
    if not found or not body.strip(" ?.!"):
        return question, None
    if body[-1] not in "?.!":
        body += "?" if question.rstrip().endswith("?") or found else ""
    text = " ".join(found)
    return body, read_format(text)


def format_only(text: str) -> bool:
    """Whether `text` is nothing but an instruction about the answer's format ("Answer in EUR billions.?")."""
    rest = _FORMAT_CLAUSE.sub("", _FORMAT_SENTENCE.sub("", text))
    return rest != text and not rest.strip(" ?.!,;:")


def read_format(text: str) -> FormatRequest:
    """What an instruction asks: scale, decimal places, percentage, currency code."""
    decimals: int | None = None
    if (m := _DECIMALS.search(text)) is not None:
        word = (m.group(1) or "").casefold()
        if m.group(2):
            decimals = 1 if m.group(2).casefold() == "tenth" else 2
        elif word:
            decimals = int(word) if word.isdigit() else _NUMBER_WORDS.get(word, 0)
        else:
            decimals = 0
    scale = _SCALE.search(text)
    currency = next((c for c in _CURRENCY.findall(text) if c.isupper()), None)
    currency = currency or next((code for _, _, code in money_spans(text) if code), None)
    return FormatRequest(
        text=text,
        scale=_SCALE_WORDS[scale.group(1).casefold()] if scale else None,
        decimals=decimals,
        percent=bool(_PERCENT.search(text)),
        currency=currency,
    )


# ---- the kind of answer -------------------------------------------------------------------------

# A question about how a figure moved across periods: its answer is the figure in each of them.
_OVER_TIME = re.compile(
    r"\bover\s+time\b|\btrends?\b|\bfluctuat\w*|\bevolv\w*|\bacross\s+(?:the\s+|all\s+)?(?:quarters|periods|years)"
    r"|\beach\s+(?:quarter|period|year)\b|\bhistorical\b|\bover\s+the\s+(?:reported\s+)?(?:quarters|periods|years)\b"
    r"|\bquarter[- ]over[- ]quarter\b|\bfrom\s+period\s+to\s+period\b"
)


def over_time(question: str) -> bool:
    """Whether `question` asks how a figure moved across periods ("How has revenue changed over time?")."""
    return bool(_OVER_TIME.search(normalise(question)))


_AUXILIARY = re.compile(rf"^(?:{AUXILIARIES})\b")
_PERCENT_ASK = re.compile(
    r"\b(?:what|which|by\s+what|how\s+much\s+of\s+a)\s+(?:percentage|percent|per\s?cent|share|proportion|rate|ratio)"
    r"|\bpercentage\b|\bper\s?cent\b|\bmargin\b|%|\bwhat\s+interest\b|\binterest\s+rate\b|\brate\s+of\b"
    # "what effective tax rate", "which growth rate": a rate named at the head of the question
    r"|^(?:what|which)\s+(?:\w+\s+){0,3}?(?:rate|ratio|yield)\b"
)
_DURATION_ASK = re.compile(
    r"\bhow\s+long\b|\bhow\s+many\s+(?:days|weeks|months|years|hours|business\s+days)\b"
    r"|\bhow\s+much\s+(?:notice|time)\b|\bwhat\s+(?:notice|term|period|duration)\b|\bfor\s+how\s+long\b"
)
_DATE_ASK = re.compile(
    r"^when\b|\bwhen\s+(?:is|was|does|did|do|will|must|are|were)\b|\bsince\s+when\b|\b(?:what|which)\s+"
    r"(?:date|day|year|month)\b|\bon\s+what\s+date\b|\bby\s+when\b|\band\s+when\b"
)
_COUNT_ASK = re.compile(r"\bhow\s+many\b|\b(?:what|the)\s+(?:total\s+)?(?:number|count)\s+of\b")
_NAME_ASK = re.compile(
    r"^(?:who|whom|whose)\b|\b(?:and|by|to|from|with)\s+(?:who|whom)\b|\bwho\s+(?:is|was|are|were|signed|owns|holds)\b"
    r"|\b(?:which|what)\s+(?:firm|company|companies|bank|person|party|parties|entity|entities|individual|"
    r"organisation|organization|surveyor|valuer|auditor|agent|lender|buyer|seller|name)\b|\bname\s+of\b"
)
# Nouns of money: a "what is the X" question about one of these asks for an amount.
_AMOUNT_NOUNS = (
    "price|cost|costs|value|amount|fee|fees|charge|charges|rent|deposit|sum|payment|payments|revenue|revenues|"
    "sales|income|expense|expenses|profit|profits|loss|losses|cash|debt|tax|taxes|salary|wage|consideration|"
    "balance|capital|earnings|dividend|dividends|spending|spend|expenditure|expenditures|proceeds|premium|"
    "penalty|fine|compensation|budget|worth|liabilities|assets|equity|ebitda|capex|turnover"
)
_AMOUNT_ASK = re.compile(rf"\bhow\s+much\b|\b(?:{_AMOUNT_NOUNS})\b")
# The first of these a question matches says what kind of answer it asks for (the order settles overlaps:
# "how many days" is a duration before a count, "what percentage" a percent before an amount).
_KIND_ASKS: tuple[tuple[AnswerKind, re.Pattern[str]], ...] = (
    ("duration", _DURATION_ASK),
    ("name", _NAME_ASK),
    ("date", _DATE_ASK),
    ("percent", _PERCENT_ASK),
    ("count", _COUNT_ASK),
    ("yes_no", _AUXILIARY),
    ("amount", _AMOUNT_ASK),
)


def answer_kind(question: str) -> AnswerKind:
    """What kind of value answers `question`, from its question words ("how much notice" -> duration,
    "who" -> name, "is ..." -> yes_no); "text" when nothing narrower applies."""
    q = normalise(question)
    return next((kind for kind, pattern in _KIND_ASKS if pattern.search(q)), "text")


# ---- computed figures ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ComputeRequest:
    """A figure the question asks to be computed: the operation and the figures it is computed from,
    as the question names them (a change or an average names one figure, taken in several periods)."""

    operation: Operation
    operands: tuple[str, ...]
    percent: bool


_LEAD = r"(?:what\s+(?:is|was|were|are)\s+|calculate\s+|compute\s+|determine\s+|find\s+)?(?:the\s+)?"
_END = r"(?=\s+(?:for|in|during|of\s+the|over|at|as\s+of|from|between|reported|in\s+the)\b|[?.,;]|$)"
_PHRASE = r"[a-z][a-z&,'/\- ]{1,80}?"
# A list of line items ("research and development, sales and marketing, and general and administrative"), split
# by abbreviations.line_items; it ends where the question goes on, not at its own commas.
_LIST = r"[a-z][a-z&,'/\- ]{1,200}?\sand\s[a-z&,'/\- ]{1,200}?"
_LIST_END = r"(?=\s+(?:for|in|during|of\s+the|over|at|as\s+of|from|between|reported|in\s+the)\b|[?.;]|$)"
_COMPUTE_PATTERNS: tuple[tuple[Operation, re.Pattern[str]], ...] = (
    (
        "percent_change",
        re.compile(
            rf"\b(?:percentage|percent|%)\s+(?:change|increase|decrease|growth|decline)\s+(?:in|of)\s+(?:the\s+)?"
            rf"(?P<a>{_PHRASE}){_END}|\b(?P<b>{_PHRASE})\s+(?:growth\s+rate|grew\s+by\s+what\s+percent)"
            rf"|\bby\s+what\s+(?:percentage|percent|%)\s+(?:did|has|have|had|does|do)\s+(?:the\s+)?(?P<c>{_PHRASE})\s+"
            rf"(?:(?:chang|increas|decreas|declin)(?:e|ed)|gr[oe]wn?|r(?:ise|isen|ose)|f(?:all|allen|ell)|drop(?:ped)?)\b"
        ),
    ),
    (
        "average",
        re.compile(
            rf"\b(?:average|mean)\s+(?:quarterly\s+|annual\s+|monthly\s+)?(?:of\s+(?:the\s+)?)?(?P<a>{_PHRASE}){_END}"
            rf"|\bon\s+average,?\s+how\s+much\s+(?:did|does|do)\s+(?:the\s+)?[\w'’.&-]+\s+(?:spend|spent|pay|earn|make)\s+"
            rf"(?:on|in|from)\s+(?:the\s+)?(?P<b>{_PHRASE})(?:\s+(?:per|a|each)\s+(?:quarter|year|month|period))?{_END}"
        ),
    ),
    (
        "share",
        re.compile(
            rf"\b(?:{_LEAD})?(?P<a>{_PHRASE})\s+as\s+an?\s+(?:percentage|percent|%|share|proportion|fraction)\s+of\s+"
            rf"(?:the\s+)?(?P<b>{_PHRASE}){_END}"
            rf"|\b(?:what\s+)?(?:percentage|percent|share|proportion|fraction)\s+of\s+(?:the\s+)?(?P<c>{_PHRASE})\s+"
            rf"(?:came|come|comes|was|were|is|did)\s+(?:from|generated\s+by|made\s+up\s+by|accounted\s+for\s+by)\s+"
            rf"(?:the\s+)?(?P<d>{_PHRASE}){_END}"
            rf"|\b(?:what\s+)?(?:percentage|percent|share|proportion|fraction)\s+of\s+(?:its\s+|the\s+)?(?P<e>{_PHRASE})\s+"
            rf"(?:did|does|do|was|is|were)\s+(?:the\s+)?(?P<f>{_PHRASE})\s+(?:represent|account\s+for|make\s+up|"
            rf"constitute|amount\s+to)\b"
            rf"|\b(?P<g>{_PHRASE})\s+(?:relative\s+to|in\s+relation\s+to|as\s+a\s+proportion\s+of)\s+(?:its\s+|the\s+)?"
            rf"(?P<h>{_PHRASE}){_END}"
            rf"|\b(?:what\s+)?(?:percentage|percent|share|proportion|fraction)\s+of\s+(?:its\s+|the\s+)?(?P<i>{_PHRASE})"
            rf"(?:\s+(?:for|in|during)\s+[^?]{{1,80}}?)?\s+(?:was|were|is)\s+(?:the\s+|its\s+)?(?P<j>{_PHRASE}){_END}"
            # "how did its operating expenses compare to its revenue": the expenses as a share of the revenue (never
            # a figure against its own earlier periods: "compare to previous quarters" asks a trend)
            rf"|\bhow\s+(?:did|does|do)\s+(?:the\s+)?(?P<k>{_PHRASE})(?:\s+(?:for|in|during)\s+[^?]{{1,60}}?)?\s+"
            rf"(?:compare\s+(?:to|with|against)|measure\s+up\s+(?:against|to)|stack\s+up\s+against|relate\s+to)\s+"
            rf"(?!(?:the\s+|its\s+)?(?:previous|prior|past|earlier|preceding|last|same)\b)(?:its\s+|the\s+)?"
            rf"(?P<l>{_PHRASE}){_END}"
        ),
    ),
    (
        "ratio",
        re.compile(
            rf"\bratio\s+of\s+(?:the\s+)?(?P<a>{_PHRASE})\s+to\s+(?:the\s+)?(?P<b>{_PHRASE}){_END}"
            rf"|\b(?P<c>{_PHRASE})\s+divided\s+by\s+(?:the\s+)?(?P<d>{_PHRASE}){_END}"
            rf"|\b(?P<e>{_PHRASE})[- ]to[- ](?P<f>{_PHRASE})\s+ratio\b"
            rf"|\bdividing\s+(?:the\s+)?(?P<g>{_PHRASE})\s+by\s+(?:the\s+)?(?P<h>{_PHRASE}){_END}"
        ),
    ),
    (
        "margin",
        re.compile(
            r"\b(?P<a>gross|operating|net|profit|ebitda|pre-tax|pretax|net\s+profit|operating\s+profit|net\s+income|"
            r"operating\s+income)\s+margin\b"
        ),
    ),
    (
        "sum",
        re.compile(
            rf"\b(?:combined|sum\s+of|total\s+of|together|aggregate)\s+(?:the\s+)?(?P<a>{_LIST}){_LIST_END}"
            rf"|\b(?:spend|spent|spending|pay|paid)\s+on\s+(?:the\s+)?(?P<b>{_LIST})\s+(?:together|combined|in\s+total)\b"
        ),
    ),
    (
        "change",
        re.compile(
            rf"\b(?:change|increase|decrease|difference|growth|decline)\s+in\s+(?:the\s+)?(?P<a>{_PHRASE}){_END}"
            rf"|\bhow\s+much\s+(?:did|has|have)\s+(?:the\s+)?(?P<b>{_PHRASE})\s+(?:increase|decrease|grow|decline|"
            rf"change|rise|fall)"
        ),
    ),
)

_RATE = re.compile(r"\brate\b")
# The operand a gross margin question names (compute.margin_from_costs works it out where no row prints it).
GROSS_MARGIN = "gross margin"
# Words that make a "margin" question ask for a percentage, not the margin's amount.
_MARGIN_AMOUNT = re.compile(r"\bmargin\s+(?:amount|in\s+dollars|dollars)\b|\bhow\s+much\s+gross\s+margin\b")


_POSSESSIVE = re.compile(r"^.*\b\w+(?:'s|’s|s')\s+")
_QUESTION_LEAD = re.compile(rf"^{_LEAD}")


# Words that say which period a change compares with (a year before, as a change's prior figure is), not what
# the figure is: "year-over-year revenue growth" is the revenue's.
# "Spending" is a reader's word for an expense a statement prints by its name ("research and development"), and
# "figures" or "numbers" for the figure itself ("its revenue figures").
_READERS_TAIL = re.compile(r"\s+(?:spending|figures|numbers|amounts)$", re.IGNORECASE)
_YEAR_ON_YEAR = re.compile(r"\b(?:year[- ](?:over|on)[- ]year|y-?o-?y)\b", re.IGNORECASE)


def _operand(phrase: str) -> str:
    """An operand as a figure's label: without the question's lead words, a possessive owner, the words that
    say a change is over a year and a closing "spending" ("what was acme's gross margin" -> "gross margin",
    "year-over-year revenue" -> "revenue", "r&d spending" -> "research and development")."""
    phrase = _POSSESSIVE.sub("", _QUESTION_LEAD.sub("", " ".join(phrase.split())))
    return " ".join(_READERS_TAIL.sub(" ", _YEAR_ON_YEAR.sub(" ", phrase)).split()).strip(" ,")


def compute_request(question: str) -> ComputeRequest | None:
    """The computation `question` asks for, or None when it asks for a figure as reported.

    A margin is the named profit as a share of revenue ("operating margin" -> operating income over
    revenue), which a filing may also report itself; the answer step prefers a reported figure. Line items'
    abbreviations are written out first ("R&D" -> "research and development").
    """
    q = normalise(expand_abbreviations(question))
    for operation, pattern in _COMPUTE_PATTERNS:
        m = pattern.search(q)
        if m is None:
            continue
        phrases = tuple(_operand(p) for p in m.groups() if p)
        if operation == "share" and (m.group("c") or m.group("e") or m.group("i")):
            phrases = phrases[::-1]  # "what share of the whole came from the part": the part over the whole
        if operation == "margin":
            if _MARGIN_AMOUNT.search(q):
                return None
            kind = phrases[0]
            named = kind.endswith(("income", "profit"))
            profit = GROSS_MARGIN if kind == "gross" else kind if named else f"{kind} income"
            return ComputeRequest("margin", (profit, "revenue"), percent=True)
        if operation == "sum":
            phrases = tuple(line_items(phrases[0]))
            if len(phrases) < 2:
                continue
        # a ratio the question calls a rate ("effective tax rate") is a percentage
        percent = operation in ("share", "percent_change") or bool(_PERCENT.search(q) or _RATE.search(q))
        if operation == "change" and percent:  # "how much did X grow, in percent": a change relative to before
            operation = "percent_change"
        return ComputeRequest(operation, phrases, percent=percent)
    return None


def names_percent(text: str) -> bool:
    """Whether `text` says "percent" in some form ("gross margin percentage", "as a %")."""
    return bool(_PERCENT.search(text))


def asks_amount(question: str) -> bool:
    """Whether `question` names a figure of money, a percentage or a count ("revenue", "margin", "how many")."""
    q = normalise(question)
    return bool(_AMOUNT_ASK.search(q) or _PERCENT_ASK.search(q) or _COUNT_ASK.search(q))
