"""A figure from a table, without an LM: the row whose label names what is asked, the column of the period
asked, the table's scale and currency applied (pure functions over the rows readers found, TableRow).

A row answers only when its label names the metric (its own words, or the words statements use for the same
metric: `alternatives`), not merely a row near those words; a segment's row does not answer for the total
("Americas" under "Net sales:"), a per-share row only a per-share question, a percentage only a percentage
question, a count (employees, patents) never a money row. The column is the one whose header names the
period asked; with no period asked, or "at the end of the period", the latest column, of the span asked
(three months for a quarter, twelve for a year; the shortest otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from pipeline.answering.terms import held_terms, related
from pipeline.text import STOPWORDS, bm25_tokens, normalise
from pipeline.types import RowCell, TableRow
from pipeline.values.columns import ColumnPeriod, column_period, matches_period
from pipeline.values.money import CODES, currency_of
from pipeline.values.periods import AskedPeriods, Period, period_matches
from pipeline.values.quantities import SCALES

# Stems of words that frame a metric without naming it: what a question says around it ("the amount of",
# "reported", "at the end of fiscal 2023").
FRAMING = frozenset(
    bm25_tokens(
        "amount value figure number total reported report company company's firm group fiscal year years quarter "
        "quarters period periods end ended ending month months week weeks day days date as of at for in the "
        "latest last recent most prior previous annual quarterly much many how what was were is are "
        "did does do according statement statements consolidated financial sheet balance level levels "
        "unaudited audited us dollar dollars euro euros million millions billion billions thousand "
        "thousands figure per large big size level levels record recorded report reported post posted carry carried "
        "hold held incur incurred register registered show showed shown have had disclose disclosed "
        "january february march april may june july august september october november december jan feb mar apr "
        "jun jul aug sep sept oct nov dec first second third fourth 1st 2nd 3rd 4th half date dates one two three four "
        "five six seven eight nine ten eleven twelve"
    )
)
# Label words that do not change what a row is ("Total net sales" is the net sales).
NEUTRAL = frozenset(
    bm25_tokens(
        "total totals consolidated net and of the for in from attributable to common shareholders stockholders "
        "owners parent company inc corporation group ordinary equity holders"
    )
)
_SEGMENT_HINT = frozenset(
    bm25_tokens("segment segments region regions geographic americas europe asia pacific china japan domestic")
)
# Words of the headings that divide a statement into its sections ("Current assets:", "Cash flows from investing
# activities:"): a row under one is the statement's own, not a segment's.
_SECTION_WORDS = frozenset(
    bm25_tokens(
        "cash flows flow provided used from for by operating investing financing activities current noncurrent non "
        "assets liabilities equity shareholders stockholders income expenses expense revenues revenue sales costs "
        "cost operating other comprehensive earnings per share shares basic diluted supplemental disclosure "
        "information adjustments reconcile net to changes in working capital operations continuing discontinued "
        "long term short deferred total balance beginning end of period year loss losses gains gain"
    )
)
# Label words of an outflow a statement prints in brackets but a question asks as an amount ("Purchases of
# property and equipment (1,234)" is capital expenditure of 1,234).
_GAIN = frozenset(bm25_tokens("income earnings profit gain gains"))
_OUTFLOW = frozenset(bm25_tokens("purchases payments additions acquisition acquisitions repurchases expenditures paid"))
# An expense or a cost a reconciliation prints in brackets, as what it takes away ("Research and development expense
# (7,442)"), is asked as an amount too; not a row that nets it against an income ("Other income/(expense), net").
_EXPENSE = frozenset(bm25_tokens("expense expenses cost costs"))
_NETTED = _GAIN | frozenset(bm25_tokens("benefit benefits credit credits"))
_PER_SHARE = re.compile(r"\bper\s+(?:common\s+|ordinary\s+|basic\s+|diluted\s+)?shares?\b|\beps\b", re.IGNORECASE)
_PERCENT_LABEL = re.compile(r"%|\bpercent|\bratio\b|\brate\b|\bbps\b", re.IGNORECASE)
_MARGIN_LABEL = re.compile(r"\bmargin\b", re.IGNORECASE)
_CELL_NUMBER = re.compile(r"^(?P<sign>[-−–])?\(?[-−–]?\s*(?P<digits>\d[\d,]*(?:\.\d+)?|\.\d+)\s*\)?\s*(?P<pct>%)?$")
_DASH = re.compile(r"^[-−–—]+$")
# A title that is a primary statement's own ("CONDENSED CONSOLIDATED BALANCE SHEETS (Unaudited)"), not a note
# that mentions one ("Amounts offset in the consolidated balance sheets").
_STATEMENT_TITLE = re.compile(
    r"^(?:(?:the\s+)?(?:group|company|condensed|consolidated|combined|interim|unaudited|audited|separate)\s+)*"
    r"(?:statements?\s+of\b|balance\s+sheets?\b|income\s+statements?\b|cash\s+flows?\s+statements?\b"
    r"|profit\s+(?:and|or|&)\s+loss\b)",
    re.IGNORECASE,
)
# Words of a column header that only say its period ("Three Months Ended July 1, 2023").
_PERIOD_WORDS = re.compile(
    r"\b(?:three|six|nine|twelve|one|months?|weeks?|ended|ending|year|years|quarter|fiscal|fy|as|of|at|for|the|"
    r"period|periods|jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|"
    r"august|september|october|november|december|unaudited|audited|restated|note|notes|and|to|in)\b|[\d,.'’$€£()-]+",
    re.IGNORECASE,
)
# How much a row's label must name the metric to answer at all.
MIN_LABEL_SCORE = 0.7
# How well a label must name an event by its noun alone: "Cash dividends" (0.65) does, "Dividends received from
# equity investees" (0.53) names another event.
EVENT_NOUN_SCORE = 0.6
# What such a label's score counts for, so that a row naming the event with its verb ("Dividends declared", at
# least CLAIM_ROW_SCORE) ranks first.
EVENT_NOUN_WEIGHT = 0.5
# Where a label's first phrase ends: "Repurchase | of common stock", "Cash dividends | ($1.42 per share)",
# "Share repurchases | - common" ("Acquisitions and divestitures" is one phrase: it names two things).
_PHRASE_END = re.compile(r"\s(?:of|on|to|for|from|by|in|under|with|net|at)\s|\s[-–—]\s|[(,/:;=*\d$€£]", re.IGNORECASE)
_JOINS = frozenset({"and", "or", "&"})
# A verb's past form after the noun ("Cash dividends declared").
_VERB_FORM = re.compile(r"^(?:[a-z]+ed|paid|made|sold|bought|held)$", re.IGNORECASE)
# An amount a label prints in brackets ("Cash dividends ($1.42 per share)", "Dividends ($1.79)/per share*").
_LABEL_AMOUNT = re.compile(r"\([^)]*\d[^)]*\)")


@dataclass(frozen=True)
class MetricAsk:
    """What a question asks of a table: the metric's key terms (stemmed), the terms statements write for it
    (`alternatives`), the periods named, whether it asks for the latest period, the span it asks for in
    months (3 a quarter, 12 a year; None: not said), and what kind of figure it is."""

    terms: tuple[str, ...]
    alternatives: tuple[tuple[str, ...], ...] = ()
    periods: AskedPeriods = field(default_factory=AskedPeriods)
    latest: bool = False
    months: int | None = None
    percent: bool = False
    per_share: bool = False
    count: bool = False
    sources: tuple[str, ...] = ()
    # The stemmed words of the names of the entities in scope (a label naming its own company says no more).
    names: frozenset[str] = frozenset()
    # Any row that names the metric answers, per share or percentage alike (whether it happened, not how much).
    any_kind: bool = False
    # A percentage or an amount alike: "the gross margin" is a sum of money where a statement prints it so.
    percent_or_amount: bool = False
    # The kind of report asked for ("annual", "quarterly"), if any: an annual figure spans twelve months.
    report: str | None = None
    # How well a label must name the metric, and words one of which it must hold (an event's verb: a row
    # "Dividends declared" reports that dividends were declared).
    min_score: float = MIN_LABEL_SCORE
    required: frozenset[str] = frozenset()
    # The event's own noun ("dividend" for "were dividends declared"): a label naming it, and little else, reports
    # the event without its verb ("Cash dividends ($1.42 per share)" in a statement of equity).
    nouns: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Figure:
    """A figure read from a table: where it stands, its row and cell, its value in units (the table's scale
    and the cell's sign applied), its currency, unit and the period of its column, and how well its row named
    the metric."""

    document_id: str
    row: TableRow
    cell: RowCell
    value: Decimal
    currency: str | None
    unit: str | None
    period: ColumnPeriod
    label_score: float

    @property
    def page(self) -> int:
        return self.row.page

    @property
    def as_written(self) -> str:
        """The cell as printed with the scale its table states ("$81,797 million")."""
        scale = f" {self.row.scale}" if self.row.scale and self.unit is None else ""
        return f"{self.cell.text}{scale}"


def metric_terms(question: str, generic: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The stemmed words of `question` that name its metric: no stopword, framing word, period or figure."""
    out = []
    # the corpus's generic words as stems ("party" is "parti" here); function words may name a line item
    # ("Other income", "Income before taxes"): kept
    generic_stems = frozenset(t for w in generic for t in bm25_tokens(w)) | generic
    for term in bm25_tokens(question):
        if term in STOPWORDS or term in FRAMING or term in generic_stems or term.upper() in CODES:
            continue
        if not any(c.isalpha() for c in term):
            continue
        if re.fullmatch(r"(?:fy|q[1-4])\d*|\d+-[a-z]|[a-z]", term):
            continue  # a period ("FY23", "Q2") or a form ("10-K") says which report, not which figure
        out.append(term)
    return tuple(dict.fromkeys(out))


def label_terms(label: str) -> tuple[str, ...]:
    """The stemmed words of a row label that say what the row is (no stopword, no figure)."""
    return tuple(
        dict.fromkeys(
            t for t in bm25_tokens(label) if t not in STOPWORDS and any(c.isalpha() for c in t) and len(t) > 1
        )
    )


def label_score(asked: Sequence[str], label: Sequence[str], names: AbstractSet[str] = frozenset()) -> float:
    """How well a label's terms name the asked terms: the share of asked terms the label holds, times how
    little else it says (neutral words such as "total", "net", "attributable to", and the words of the
    entity's own `names`, do not count against it)."""
    if not asked or not label:
        return 0.0
    held = [a for a in asked if any(related(a, w) for w in label)]
    recall = len(held) / len(asked)
    neutral = NEUTRAL | names
    extra = [w for w in label if w not in neutral and not any(related(a, w) for a in asked)]
    meaningful = [w for w in label if w not in neutral] or list(label)
    precision = 1 - len(extra) / len(meaningful)
    return recall * (0.3 + 0.7 * precision)


def best_label_score(ask: MetricAsk, label: Sequence[str]) -> float:
    """The label's score against the metric's own terms or any of its alternatives (an alternative counts a
    little less than the question's own words)."""
    own = label_score(ask.terms, label, ask.names)
    others = [0.95 * label_score(alt, label, ask.names) for alt in ask.alternatives if alt]
    return max([own, *others])


def noun_forms(ask: MetricAsk, label: str) -> frozenset[str]:
    """The stems `label` may write for the event's nouns: each, and the act it repeats when the label names what
    the question says it is done to ("repurchas" of "share repurchases": "Purchases of common shares", not
    "Purchases of equity investments")."""
    rest = set(ask.terms) - ask.nouns - ask.required
    repeated = {n[2:] for n in ask.nouns if n.startswith("re") and len(n) > 6}
    return frozenset(ask.nouns | repeated) if rest and held_terms(label, rest) == rest else frozenset(ask.nouns)


def names_noun(label: str, nouns: AbstractSet[str]) -> bool:
    """Whether a label's first phrase ends in one of `nouns` (stems), or in it and a verb's past form: "Cash
    dividends", "Cash dividends declared and paid", "Repurchase of common stock"; not a noun that only qualifies
    another or that another joins ("Dividend income", "Acquisition-related costs", "Acquisitions and divestitures")."""
    words = _PHRASE_END.split(f" {label} ", maxsplit=1)[0].split()
    at = next((i for i, w in enumerate(words) if held_terms(w, nouns) and "-" not in w), None)
    if at is None or {w.casefold() for w in words[:at]} & _JOINS:
        return False
    return all(_VERB_FORM.match(w) for w in words[at + 1 :] if w.casefold() not in _JOINS)


def event_label_score(ask: MetricAsk, label: str) -> float:
    """How well a label names the event by its noun (`ask.nouns`), the amount it prints left out: the question's
    other words and the event's verbs do not count against it ("Cash dividends declared on common stock"); 0
    when the noun is not what its first phrase names ("Acquisition-related costs", "Dividend income")."""
    nouns = noun_forms(ask, label)
    if not nouns or not names_noun(label, nouns):
        return 0.0
    bare = label_terms(_PER_SHARE.sub(" ", _LABEL_AMOUNT.sub(" ", label)))
    others = (ask.names | set(ask.terms) | ask.required) - nouns
    return max(label_score((noun,), bare, others) for noun in sorted(nouns))


def cell_value(text: str) -> tuple[Decimal, bool] | None:
    """(value, is a percentage) of a figure cell as printed: "(1,234)" and "-1,234" negative, "—" zero,
    "12.5%"; None for anything else."""
    bare = text.strip()
    for sign in ("$", "€", "£", "¥", "US$", "HK$", "A$", "C$", "S$", "R$"):
        bare = bare.replace(sign, "")
    bare = bare.strip()
    if _DASH.match(bare):
        return Decimal(0), False
    m = _CELL_NUMBER.match(bare)
    if m is None:
        return None
    try:
        number = Decimal(m.group("digits").replace(",", ""))
    except InvalidOperation:
        return None
    negative = (bare.startswith("(") and bare.rstrip("%").endswith(")")) or bare[:1] in "-−–"
    return (-number if negative else number), bool(m.group("pct"))


def _row_kind(row: TableRow) -> tuple[bool, bool]:
    """(per share, percentage) as the row's label and its block's headings say."""
    text = " ".join([*row.parents, row.label])
    # a margin is a percentage unless its table states amounts ("Gross margin $36,413" in millions of dollars)
    margin = bool(_MARGIN_LABEL.search(row.label)) and row.scale is None and row.currency is None
    return bool(_PER_SHARE.search(text)), bool(_PERCENT_LABEL.search(row.label)) or margin


def _column_order(
    columns: Sequence[tuple[RowCell, ColumnPeriod]], ask: MetricAsk, document_matches: bool
) -> list[tuple[RowCell, ColumnPeriod]]:
    """The row's cells, best first for what is asked: a named period's column; else (or when the document
    itself is the period asked) the latest column of the span asked, else the latest of the shortest span;
    columns without a readable period keep their order after those with one (the first is the current
    period in most reports)."""
    named = [p for p in ask.periods.periods if not document_matches]
    if named:
        chosen = [c for c in columns if any(matches_period(c[1], p) for p in named)]
        spans = {c[1].months for c in chosen}
        if ask.months is not None and ask.months in spans:
            return [c for c in chosen if c[1].months == ask.months]
        if ask.months is not None and spans - {None}:
            return []  # the day asked, but only in columns of other spans
        return sorted(chosen, key=lambda c: c[1].months or 0)
    known = [c for c in columns if c[1].known]
    if not known:
        return list(columns)
    spans = {c[1].months for c in known}
    if ask.months is not None and spans - {None} and ask.months not in spans:
        return []  # a row of other spans (twelve months) does not answer a quarter's figure
    wanted = ask.months if ask.months in spans else (min((s for s in spans if s), default=None))
    pool = [c for c in known if c[1].months == wanted] or known
    latest = max(c[1].sort_key() for c in pool)
    return [c for c in pool if c[1].sort_key() == latest]


def header_words(header: str) -> int:
    """How many words a column header says beyond its period: a breakdown's column ("Gross Amounts
    Recognized") says more than the metric's own ("July 1, 2023")."""
    return len(_PERIOD_WORDS.sub(" ", re.sub(r"\([^)]*\)", " ", header)).split())


def row_figures(
    ask: MetricAsk, document_id: str, rows: Sequence[TableRow], document_matches: bool = False
) -> list[Figure]:
    """Every figure of `rows` that may answer `ask`, best first (see the module docstring). `document_matches`:
    the document itself covers the period asked (its attributes say so), so its latest column answers."""
    found: list[tuple[tuple[float, ...], Figure]] = []
    for row in rows:
        per_share, percent_row = _row_kind(row)
        if per_share != ask.per_share and not ask.any_kind:
            continue
        own = label_terms(row.label)
        parents = [t for p in row.parents for t in label_terms(p)]
        score = best_label_score(ask, own)
        by_heading = False
        if len([t for t in own if t not in NEUTRAL]) <= 1:
            # a one-word label says what it is with the headings above it ("Basic" under "Earnings per share:"),
            # or with the nearest alone, when a heading further up belongs to rows before ("Basic" under "Earnings
            # per share" after "Operating costs and expenses:")
            nearest = label_terms(row.parents[-1]) if len(row.parents) > 1 else ()
            heading_score = max(
                best_label_score(ask, tuple(dict.fromkeys([*heads, *own]))) for heads in (parents, nearest)
            )
            # "Products" under "Gross margin:" is a part of the gross margin; "Total gross margin" names it itself
            by_heading = round(heading_score, 3) > round(score, 3)
            score = max(score, heading_score)
        # a label holding the event's verb ("Dividends declared") may name less of the rest
        relaxed = bool(ask.required) and bool(held_terms(row.label, ask.required))
        if score < (ask.min_score if relaxed else MIN_LABEL_SCORE):
            # a label naming the event's noun reports it without the verb ("Cash dividends ($1.42 per share)")
            # only in a primary statement: a note's "Acquisitions" row of goodwill by segment is what an acquisition
            # added to goodwill, maybe in an earlier year
            noun = event_label_score(ask, row.label) if _STATEMENT_TITLE.match(row.title.strip()) else 0.0
            if noun < EVENT_NOUN_SCORE:
                continue
            score = EVENT_NOUN_WEIGHT * noun  # after every row naming the event with its verb
        heading = [t for t in parents if t not in _SECTION_WORDS]
        segment = bool(heading) and not any(related(a, w) for a in ask.terms for w in heading)
        own_terms = set(own)
        outflow = bool(_OUTFLOW & own_terms) or bool(_EXPENSE & own_terms and not own_terms & _NETTED)
        # "Net loss 2,242" answers for net income as -2,242 (unless a loss is what is asked)
        loss = "loss" in own_terms and not own_terms & _GAIN and "loss" not in ask.terms
        segment_hint = any(t in _SEGMENT_HINT for t in [*parents, *label_terms(row.title)])
        columns = [(cell, column_period(cell.header)) for cell in row.cells]
        for rank, (cell, period) in enumerate(_column_order(columns, ask, document_matches)):
            read = cell_value(cell.text)
            if read is None:
                continue
            number, percent_cell = read
            number = abs(number) if outflow else -abs(number) if loss else number
            percent = percent_cell or percent_row
            if ask.percent != percent and not (ask.any_kind or ask.percent_or_amount):
                continue
            currency = currency_of(cell.text) or row.currency
            if ask.count and currency is not None:
                continue
            unit = "%" if percent else "per share" if per_share else None
            scaled = number if unit or (ask.count and row.scale is None) else number * SCALES.get(row.scale or "", 1)
            statement = bool(_STATEMENT_TITLE.match(row.title.strip()))
            source = any(s.split()[-1] in normalise(row.title) for s in ask.sources)
            fit = 2.0 if period.known else 1.0 if header_words(cell.header) == 0 else 0.0
            key = (
                -round(score, 3),
                float(by_heading),
                -fit,
                -float(statement),
                float(segment or segment_hint),
                -float(source),
                float(header_words(cell.header)),
                float(rank),
            )
            figure = Figure(document_id, row, cell, scaled, currency, unit, period, score)
            found.append((key, figure))
    found.sort(key=lambda f: f[0])
    return [f for _, f in found]


def find_figure(
    ask: MetricAsk,
    rows_by_document: Mapping[str, Sequence[TableRow]],
    matching_documents: frozenset[str] = frozenset(),
    document_rank: Mapping[str, int] | None = None,
) -> Figure | None:
    """The best figure over several documents' rows: by label score, then the document's rank (retrieval
    order) and the figure's own order."""
    rank = document_rank or {}
    best: tuple[tuple[float, ...], Figure] | None = None
    for document_id, rows in rows_by_document.items():
        figures = row_figures(ask, document_id, rows, document_id in matching_documents)
        if not figures:
            continue
        top = figures[0]
        key = (-round(top.label_score, 3), float(rank.get(document_id, len(rank))))
        if best is None or key < best[0]:
            best = (key, top)
    return best[1] if best else None


def asked_months(question: str) -> int | None:
    """The span a question asks for: 3 for a quarter, 12 for a year, 6 or 9 for year to date; None when it
    does not say."""
    q = normalise(question)
    if re.search(r"\b(?:quarter|quarterly|three\s+months|q[1-4])\b", q):
        return 3
    if re.search(r"\bsix\s+months|half[- ]year|first\s+half\b", q):
        return 6
    if re.search(r"\bnine\s+months\b", q):
        return 9
    if re.search(r"\b(?:year|annual|fiscal|fy\s?\d{2,4}|twelve\s+months)\b", q):
        return 12
    return None


def document_period_matches(asked: AskedPeriods, held: Sequence[Period]) -> bool:
    """Whether a document's own periods (its attributes) are the periods asked (then its latest column
    answers, whatever calendar its fiscal quarters follow)."""
    return bool(asked.periods) and all(period_matches(a, held) for a in asked.periods)


def reports_event(figure: Figure) -> bool:
    """Whether a row reports that its event happened in the figure's period: any of its cells of that period (or
    of no readable period: a statement of equity's columns are its components) is not zero."""
    for cell in figure.row.cells:
        period = column_period(cell.header)
        if period.known and period.sort_key() != figure.period.sort_key():
            continue
        read = cell_value(cell.text)
        if read is not None and read[0] != 0:
            return True
    return False
