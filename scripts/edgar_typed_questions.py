"""The questions of the EDGAR typed set about one filing (scripts/make_edgar_typed.py writes the set): figures
and margins, yes/no questions the XBRL settles, the cover's names, and absent values; each a TypedQuestion with
its expected value and gold pages. Question forms and the concepts that settle each kind are in
scripts/edgar_typed.toml; every choice is drawn by a hash of the filing and the question.
"""

from __future__ import annotations

import hashlib
import logging
import re
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, cast

from selectolax.lexbor import LexborHTMLParser

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # scripts/ is no package: its builders import each other by name

import make_edgar_traces as edgar  # noqa: E402
from absence import marker_hits  # noqa: E402

from pipeline.evaluation.examples import ExpectedValue, GoldPage  # noqa: E402
from pipeline.evaluation.value_metrics import name_key  # noqa: E402
from pipeline.store.xbrl import PageFact  # noqa: E402
from pipeline.text import normalise  # noqa: E402

log = logging.getLogger(__name__)

CONFIG: dict[str, Any] = tomllib.loads((HERE / "edgar_typed.toml").read_text(encoding="utf-8"))
Kind = Literal["number", "boolean", "name", "names", "comparison", "absent"]
KIND_ORDER: tuple[Kind, ...] = ("number", "boolean", "name", "names", "comparison", "absent")
# Figures asked per filing (margins come on top, one per annual report).
NUMBERS_PER_FILING = {"10-K": 5, "10-Q": 4}
# A cover's names are looked for on its first pages.
COVER_PAGES = 5
# More trading symbols than this (a company's notes each have one) make no question a person asks.
MAX_TICKERS = 10
REPORT = {"10-K": "annual report", "10-Q": "quarterly report"}
MONEY_UNITS = {"USD": "(in USD)", "USD/shares": "(in USD per share)"}


@dataclass(frozen=True)
class TypedQuestion:
    """One typed question: what it asks of which filings, the value it expects, the pages that prove it."""

    kind: Kind
    family: str
    question: str
    filings: tuple[edgar.Filing, ...]
    expected: ExpectedValue
    gold_pages: tuple[GoldPage, ...] = ()
    answer_facts: tuple[str, ...] = ()
    # The company asked about (None: a comparison, which names several).
    company: edgar.Company | None = None
    period: str = "report"
    tags: tuple[str, ...] = ()
    # Whether the filings state the expected value (False: the absent value, nothing in scope states it).
    stated: bool = True
    # A comparison's quoted companies of the corpus (each with its filings in scope).
    compared: tuple[edgar.Company, ...] = field(default_factory=tuple)


def stable_hash(*parts: str) -> int:
    """A number from the parts that is the same in every run (sha256, unlike hash())."""
    return int(hashlib.sha256("\x1f".join(parts).encode()).hexdigest(), 16)


def pick(items: Sequence[Any], *salt: str) -> Any:
    """One of `items`, drawn by the stable hash of `salt`."""
    return items[stable_hash(*salt) % len(items)]


def _plain(value: Decimal) -> int | float:
    """A Decimal as JSON writes a number: an int when whole."""
    return int(value) if value == value.to_integral_value() else float(value)


def absent_value(question: str) -> str | bool | None:
    """The absent value a question names ("If data is not available, return 'N/A'" -> "N/A"; "return False" ->
    False), or None."""
    if re.search(r"return\s+'N/A'", question):
        return "N/A"
    if re.search(r"return\s+False\b", question):
        return False
    return None


def fill(template: str, company: edgar.Company | None, **values: str) -> str:
    """A question from its template: placeholders filled, "{co}'s" written as the company's possessive."""
    text = template.format(co=company.short if company else "", **values)
    if company is not None:
        text = text.replace(f"{company.short}'s", edgar.possessive(company.short))
    return " ".join(text.split())


def _pages(fact: PageFact, filing: edgar.Filing) -> tuple[int, ...]:
    """Every page of the filing that prints the same figure of the same concept and period."""
    same = {
        f.page
        for f in filing.source.facts
        if f.concept == fact.concept
        and f.value == fact.value
        and (f.period_start, f.period_end) == (fact.period_start, fact.period_end)
        and not f.dimensions
    }
    return tuple(sorted(same))


def gold(filing: edgar.Filing, pages: Sequence[int]) -> tuple[GoldPage, ...]:
    return tuple(GoldPage(document=filing.relpath, page=p) for p in sorted(set(pages)))


def report_period(filing: edgar.Filing) -> str:
    """The filing's own period as a question's end says it ("for the fiscal year ended ...", "for the quarter
    ended ...")."""
    end = filing.cover.get("period_end")
    kind = "year" if filing.form == "10-K" else "quarter"
    phrases = edgar.period_phrases(kind, filing.cover, PageFact(1, "", "0", "0", 0, None, None, end))
    return phrases[0][0] if phrases else "in the last period"


# ---- figures -----------------------------------------------------------------------------------------------


def number_questions(filing: edgar.Filing) -> list[TypedQuestion]:
    """Up to NUMBERS_PER_FILING figures of the filing's own period (half of core families), each in a question
    form drawn by hash, with the value in units (sign as reported) and the pages that print it; and, for an
    annual report, one margin (%) worked out from two of its figures."""
    metrics = CONFIG["metrics"]
    candidates = {
        name: found
        for name, found in edgar.candidate_facts(filing).items()
        if name in metrics and found[0].unit in MONEY_UNITS
    }
    families = {f.name: f for f in edgar.FAMILIES}
    order = sorted(candidates, key=lambda name: stable_hash("typed", filing.relpath, name))
    count = NUMBERS_PER_FILING.get(filing.form, 4)
    core = [n for n in order if families[n].core][: (count + 1) // 2]
    chosen = core + [n for n in order if n not in core][: count - len(core)]
    out = []
    for name in chosen:
        fact, kind, pages = candidates[name]
        unit = fact.unit or ""
        forms = [
            t
            for t in CONFIG["numbers"]
            if filing.form in t.get("forms", [filing.form])
            and kind in t.get("periods", [kind])
            and not (t.get("scale") and unit != "USD")
        ]
        template = pick(forms, "typed-form", filing.relpath, name)
        phrases = edgar.period_phrases(kind, filing.cover, fact)
        if "{period}" in template["text"] and not phrases:
            continue
        period = pick(phrases, "typed-period", filing.relpath, name)[0] if phrases else ""
        question = fill(template["text"], filing.company, period=period, unit=MONEY_UNITS[unit], **_words(filing, name))
        expected = ExpectedValue(
            kind="number",
            value=_plain(Decimal(fact.value)),
            currency="USD",
            unit="per share" if unit == "USD/shares" else None,
            scale=template.get("scale"),
        )
        answer = edgar.answer_fact(fact)
        out.append(
            TypedQuestion(
                "number",
                name,
                question,
                (filing,),
                expected,
                gold(filing, pages),
                (answer,) if answer else (),
                filing.company,
                kind,
                (
                    f"wording:{CONFIG['numbers'].index(template)}",
                    *(("scale:million",) if template.get("scale") else ()),
                ),
            )
        )
    margin = margin_question(filing, candidates)
    return [*out, *([margin] if margin else [])]


def _words(filing: edgar.Filing, family: str) -> dict[str, str]:
    metric = CONFIG["metrics"][family]
    return {
        "metric": metric["metric"],
        "statement": metric["statement"],
        "definition": metric["definition"],
        "report": REPORT[filing.form],
        "form": filing.form,
    }


def margin_question(
    filing: edgar.Filing, candidates: Mapping[str, tuple[PageFact, str, tuple[int, ...]]]
) -> TypedQuestion | None:
    """An annual report's margin (%): a numerator figure over revenue of the same fiscal year, times 100."""
    if filing.form != "10-K" or "revenue" not in candidates:
        return None
    revenue, kind, revenue_pages = candidates["revenue"]
    options = [m for m in CONFIG["margins"] if m["numerator"] in candidates and candidates[m["numerator"]][1] == kind]
    if kind != "year" or Decimal(revenue.value) <= 0 or not options:
        return None
    spec = pick(options, "typed-margin", filing.relpath)
    numerator, _, numerator_pages = candidates[spec["numerator"]]
    value = Decimal(numerator.value) / Decimal(revenue.value) * 100
    phrases = edgar.period_phrases(kind, filing.cover, revenue)
    template = pick(spec["text"], "typed-margin-form", filing.relpath)
    period = phrases[0][0] if phrases else ""
    question = fill(template, filing.company, label=spec["label"], period=period, report=REPORT[filing.form])
    return TypedQuestion(
        "number",
        spec["name"],
        question,
        (filing,),
        ExpectedValue(kind="number", value=round(float(value), 6), unit="%"),
        gold(filing, (*revenue_pages, *numerator_pages)),
        (f"{value:.1f}%",),
        filing.company,
        kind,
        ("margin",),
    )


# ---- yes or no ---------------------------------------------------------------------------------------------


def _own_facts(filing: edgar.Filing, concepts: Sequence[str]) -> list[PageFact]:
    """The filing's figures of `concepts` for its own period (a duration ending at its period end, without
    dimensions), longest period first (a 10-Q's year to date before its quarter)."""
    end = filing.cover.get("period_end")
    facts = [
        f
        for f in filing.source.facts
        if f.concept in concepts and not f.dimensions and f.period_end == end and f.period_start is not None
    ]
    return sorted(facts, key=lambda f: (f.period_start or "", concepts.index(f.concept)))


def _events(filing: edgar.Filing, patterns: Sequence[str], start: str | None = None, end: str | None = None) -> bool:
    """Whether the filing reports a positive figure of a concept an event pattern names (within [start, end]
    when given: its period ending there)."""
    compiled = [re.compile(p, re.IGNORECASE) for p in patterns]
    for fact in filing.source.facts:
        local = fact.concept.rsplit(":", 1)[-1]
        if not any(p.search(local) for p in compiled) or Decimal(fact.value) <= 0:
            continue
        if start is None or end is None or (fact.period_end is not None and start <= fact.period_end <= end):
            return True
    return False


def boolean_questions(filing: edgar.Filing) -> list[TypedQuestion]:
    """Yes/no questions the XBRL settles (see scripts/edgar_typed.toml): True on a positive figure of the
    period, False on the same figure printed as zero or on no such event reported in any period; else none."""
    out = []
    for spec in CONFIG["booleans"]:
        own = _own_facts(filing, spec["concepts"])
        positive = [f for f in own if Decimal(f.value) > 0]
        template = pick(spec["text"], "typed-boolean", filing.relpath, spec["name"])
        question = fill(template, filing.company, report=REPORT[filing.form], form=filing.form)
        if positive:
            fact = positive[0]
            answer, evidence, pages = True, "figure", _pages(fact, filing)
        elif own and not _events(filing, spec["events"], own[0].period_start, own[0].period_end):
            answer, evidence, pages = False, "zero", _pages(own[0], filing)
        elif not _events(filing, spec["events"]):
            answer, evidence, pages = False, "none", ()
        else:
            continue
        expected = ExpectedValue(kind="boolean", value=answer, absent=evidence == "none")
        out.append(
            TypedQuestion(
                "boolean",
                spec["name"],
                question,
                (filing,),
                expected,
                gold(filing, pages),
                (),
                filing.company,
                "report",
                (f"answer:{str(answer).lower()}", f"evidence:{evidence}", f"wording:{spec['text'].index(template)}"),
                stated=evidence != "none",
            )
        )
    return out


def balanced(questions: Sequence[TypedQuestion], most: int | None = None) -> list[TypedQuestion]:
    """The yes/no questions of one split with as many True as False (at most `most` of each): the larger side
    cut in hash order."""
    sides = {
        answer: sorted(
            (q for q in questions if q.expected.value is answer), key=lambda q: stable_hash("typed-balance", q.question)
        )
        for answer in (True, False)
    }
    keep = min(len(side) for side in sides.values())
    keep = keep if most is None else min(keep, most)
    kept = {id(q) for side in sides.values() for q in side[:keep]}
    return [q for q in questions if id(q) in kept]


# ---- names from the cover -------------------------------------------------------------------------------


def cover_values(path: Path, concept: str) -> list[str]:
    """The distinct texts (as printed, spacing collapsed; one per name) of a `dei:` fact of an inline XBRL
    filing, in the order it gives them."""
    tree = LexborHTMLParser(path.read_bytes().decode("utf-8", errors="replace"))
    seen: dict[str, str] = {}
    for node in tree.css("ix\\:nonnumeric"):
        if (node.attrs.get("name") or "") != concept:
            continue
        text = " ".join(node.text(deep=True).split())
        if text and name_key(text) not in seen:
            seen[name_key(text)] = text
    return list(seen.values())


# How close (in characters) a value must stand to the words that say what it is (`near`).
NEAR_CHARS = 300


def printed_on(
    filing: edgar.Filing, values: Sequence[str], first: int | None, near: str | None = None
) -> tuple[int, ...]:
    """The pages (of the first `first`, or any) that print every value as whole words, each within NEAR_CHARS
    of a match of `near` when given ("incorporat": a state named as the state of incorporation, not in a
    court's name); for a cover, only the first such page."""
    pages = filing.source.pages[:first] if first else filing.source.pages
    patterns = [re.compile(rf"(?<!\w){re.escape(normalise(v))}(?!\w)") for v in values]
    context = re.compile(near) if near else None

    def prints(text: str) -> bool:
        flat = normalise(text)
        for pattern in patterns:
            spots = [m.start() for m in pattern.finditer(flat)]
            if context is not None:
                marks = [m.start() for m in context.finditer(flat)]
                spots = [s for s in spots if any(abs(s - m) <= NEAR_CHARS for m in marks)]
            if not spots:
                return False
        return True

    found = [n for n, text in enumerate(pages, start=1) if prints(text)]
    return tuple(found[:1]) if first else tuple(found)


def name_aliases(value: str) -> tuple[str, ...]:
    """Other accepted forms of a name: the configured ones, a state's code for its name and the reverse."""
    states: dict[str, str] = CONFIG["states"]
    names = {v: k for k, v in states.items()}
    out = list(CONFIG["name_aliases"].get(value, ()))
    if value in names:
        out.append(names[value])
    if value.upper() in states:
        out.append(states[value.upper()])
    return tuple(dict.fromkeys(a for a in out if a != value))


def name_questions(filing: edgar.Filing, folder: Path) -> list[TypedQuestion]:
    """Questions a cover's `dei:` facts settle: exchanges and tickers (names), state of incorporation and
    auditor (a name); each only when the filing prints it (its gold page)."""
    out = []
    path = folder / filing.relpath
    for spec in CONFIG["names"]:
        if filing.form not in spec.get("forms", [filing.form]):
            continue
        values = cover_values(path, spec["concept"])
        if not values or (spec["name"] == "tickers" and len(values) > MAX_TICKERS):
            continue
        if spec["kind"] == "name" and len(values) != 1:
            continue
        pages = printed_on(filing, values, None if spec["name"] == "auditor" else COVER_PAGES, spec.get("near"))
        if not pages:
            log.info("%s: %s not printed on a page; no question", filing.relpath, spec["concept"])
            continue
        aliases = {v: name_aliases(v) for v in values if name_aliases(v)}
        value: str | list[str] = values if spec["kind"] == "names" else values[0]
        template = pick(spec["text"], "typed-name", filing.relpath, spec["name"])
        question = fill(template, filing.company, report=REPORT[filing.form], form=filing.form)
        out.append(
            TypedQuestion(
                cast(Kind, spec["kind"]),
                spec["name"],
                question,
                (filing,),
                ExpectedValue(kind=spec["kind"], value=value, aliases=aliases),
                gold(filing, pages),
                tuple(values),
                filing.company,
                "cover",
                (f"wording:{spec['text'].index(template)}",),
            )
        )
    return out


# ---- absent values ---------------------------------------------------------------------------------------


def absent_questions(filing: edgar.Filing, own: Sequence[edgar.Filing]) -> list[TypedQuestion]:
    """A figure none of the company's filings (`own`) reports or mentions (the first topic, in the order below, that
    passes scripts/absence.py's check), and a present figure asked in a currency the filing does not use."""
    out = []
    texts = {f.relpath: f.source.pages for f in own}
    concepts = {fact.concept for o in own for fact in o.source.facts}
    # Figures a filing of its kind might hold (their concepts named) first, then those of other industries.
    topics = sorted(
        CONFIG["absent"], key=lambda t: (not t["concepts"], stable_hash("typed-absent", filing.relpath, t["name"]))
    )
    for topic in topics:
        if concepts & set(topic["concepts"]) or marker_hits(topic["markers"], texts, texts):
            continue
        template = pick(topic["text"], "typed-absent-form", filing.relpath)
        question = fill(template, filing.company, report=REPORT[filing.form], period=report_period(filing))
        expected = ExpectedValue(kind="number", value=absent_value(question), absent=True)
        tags = ("absent:topic", f"topic:{topic['name']}")
        out.append(
            TypedQuestion(
                "absent", topic["name"], question, (filing,), expected, company=filing.company, tags=tags, stated=False
            )
        )
        break
    money = {
        n: found
        for n, found in edgar.candidate_facts(filing).items()
        if n in CONFIG["metrics"] and found[0].unit == "USD"
    }
    if money:
        name = pick(sorted(money), "typed-currency", filing.relpath)
        fact, kind, _ = money[name]
        units = {(f.unit or "").upper() for f in filing.source.facts}
        codes = [c for c in CONFIG["currencies"]["codes"] if not any(c in u for u in units)]
        phrases = edgar.period_phrases(kind, filing.cover, fact)
        if codes and phrases:
            code = pick(codes, "typed-currency-code", filing.relpath)
            template = pick(CONFIG["currencies"]["text"], "typed-currency-form", filing.relpath)
            words = _words(filing, name)
            question = fill(template, filing.company, currency=code, period=phrases[0][0], **words)
            expected = ExpectedValue(kind="number", value=absent_value(question), absent=True, currency=code)
            tags = ("absent:currency", f"currency:{code}")
            out.append(
                TypedQuestion(
                    "absent",
                    name,
                    question,
                    (filing,),
                    expected,
                    company=filing.company,
                    period=kind,
                    tags=tags,
                    stated=False,
                )
            )
    return out
