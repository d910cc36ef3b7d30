"""Generate labelled traces for the demo corpus: datasets/demo-traces/{train,dev,test}.jsonl + card.

Run from the repository root (after scripts/make_demo_corpus.py):

    python scripts/make_demo_traces.py

Deterministic: facts come from the property records in scripts/demo_properties.toml (read by
scripts/make_demo_corpus.py, whose helpers this script shares), every random choice
from one random.Random(SEED), and the output is identical on every run. Before writing, every
example is checked against the documents themselves (Markdown pages split at the page-break
comment, PDF pages extracted with pypdf, as the index reads them): each answer fact occurs in a
gold document, each "not found" example's answer is absent from its scope, gold documents lie
inside the scope, forbidden documents are about another property, and every trap of
datasets/demo/traps.toml is exercised by a wrong_property example. Any failure stops the run.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tomllib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.evaluation.examples import (
    CASES,
    SPLITS,
    ExampleScope,
    GoldPage,
    LabelledExample,
    Split,
    counts_table,
    example_id,
    make_example,
    write_example_set,
)
from pipeline.store.reading import read_source

SCRIPTS = Path(__file__).resolve().parent
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))  # scripts/ is no package: its builders import each other by name

import demo_facts  # noqa: E402
from absence import index_chunks, marker_hits, require_absent  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "demo"
DEFAULT_OUT = ROOT / "datasets" / "demo-traces"
SEED = 20240601
CORPUS = "demo"
SPLIT_SHARES = {"train": 0.6, "dev": 0.2, "test": 0.2}
CYR_A, CYR_O = "\u0430", "\u043e"


P = demo_facts.BY_SLUG  # slug -> Property
d, ksh = demo_facts.d, demo_facts.ksh


# ---------------------------------------------------------------------------------------
# The corpus as the index sees it
# ---------------------------------------------------------------------------------------


def norm(text: str) -> str:
    """Case-folded text with whitespace collapsed (PDF line breaks fall anywhere)."""
    return " ".join(text.split()).casefold()


def states(text: str, fact: str) -> bool:
    """Whether normalised `text` states `fact` as a whole: "5%" is not in "7.5%", "1160/88" not in "1160/880"."""
    pattern = r"(?<!\w)(?<!\d[.,/])" + re.escape(norm(fact)) + r"(?!\w|[.,/]\d)"
    return re.search(pattern, text) is not None


@dataclass(frozen=True)
class Corpus:
    """Manifest entries, traps and the page texts of every document."""

    types: dict[str, str]
    owners: dict[str, tuple[str, ...]]
    pages: dict[str, tuple[str, ...]]
    traps: tuple[dict[str, str], ...]

    def docs_of(self, slug: str) -> list[str]:
        """The documents the manifest relates to a property (its property scope)."""
        return sorted(p for p, owners in self.owners.items() if slug in owners)

    def text(self, path: str) -> str:
        return norm(" ".join(self.pages[path]))

    def contains(self, path: str, fact: str) -> bool:
        return states(self.text(path), fact)

    def fact_pages(self, path: str, facts: Iterable[str]) -> list[int]:
        pages = enumerate(self.pages[path], start=1)
        return [i for i, page in pages if any(states(norm(page), f) for f in facts)]


def load_corpus(root: Path) -> Corpus:
    manifest = tomllib.loads((root / "corpus.toml").read_text(encoding="utf-8"))
    types = {doc["path"]: doc["type"] for doc in manifest["documents"]}
    owners = {doc["path"]: tuple(doc["entities"]) for doc in manifest["documents"]}
    pages = {path: read_source(root / path, path).pages for path in sorted(types)}
    traps = tuple(tomllib.loads((root / "traps.toml").read_text(encoding="utf-8"))["traps"])
    return Corpus(types, owners, pages, traps)


# ---------------------------------------------------------------------------------------
# Question specs: what is asked about which property, and what answers it
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    """A question about `owner`; gold = owner's documents of `types` holding a fact, or `gold`."""

    topic: str
    owner: str
    question: str
    facts: tuple[str, ...]
    types: tuple[str, ...] = ()
    gold: tuple[str, ...] = ()
    sub_questions: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()


MULTI = ("lease_dates", "rent_and_end", "valuer", "offer", "inspection_when", "proprietor_since")
LITERAL = ("parcel", "parcel_reverse", "interest_clause", "land_area_parcel")
PLAIN = (
    "rent", "tenant", "landlord", "deposit", "escalation", "notice", "stamp_duty", "market_value",
    "forced_sale", "offer_price", "completion", "inspection_high", "inspection_cost", "land_area",
    "encumbrance", "tenure",
)  # fmt: skip
ABSENT = (
    ("What is the monthly service charge for {r}?", "service charge"),
    ("How many parking bays come with {r}?", "parking"),
    ("Who is the property manager for {r}?", "property manager"),
    ("What was the electricity bill for {r} last month?", "electricity bill"),
)


def _high_phrase(issue: str) -> str:
    """The head of a finding before its location or cause: a substring of the report text."""
    return re.split(r" caused by| at the | in the | on the | along | under | after | for |;", issue)[0]


def _encumbrance_facts(text: str) -> tuple[str, ...]:
    charge = re.match(r"Charge to (.+?) to secure (KSH [\d,]+), registered", text)
    if charge:
        return charge.group(1), charge.group(2)
    caveat = re.match(r"Caveat lodged by (.+?) as purchaser, registered (.+)\.$", text)
    if caveat:
        return caveat.group(1), caveat.group(2)
    raise SystemExit(f"unparsed encumbrance: {text}")


def _encumbrance_or_none(p: Any) -> tuple[str, ...]:
    return _encumbrance_facts(p.encumbrances[0]) if p.encumbrances else ()


LEASE, VALUATION, OFFER = ("lease",), ("valuation",), ("offer_letter",)
INSPECTION, TITLE = ("inspection_report",), ("title_document",)
Row = tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def spec(topic: str, slug: str, r: str) -> Spec:
    """The question of `topic` about property `slug`, naming it as `r`."""
    p = P[slug]
    # The Mellifera Court lease was renewed at a new rent: ask about the original lease.
    lease = "original 2023 lease" if slug == "mellifera-court" else "lease"
    end = d(demo_facts.lease_end(p))
    months = f"{p.notice_months} month{'s' if p.notice_months > 1 else ''}"
    severity = next(level for level in ("High", "Medium", "Low") if any(f.severity == level for f in p.findings))
    worst = tuple(_high_phrase(f.issue) for f in p.findings if f.severity == severity)
    total = sum(f.cost for f in p.findings)
    quoted = '"rent unpaid fourteen days after it falls due"'
    # topic: (question, answer facts, document types that answer, sub-questions, tags)
    rows: dict[str, Row] = {
        "rent": (f"What is the monthly rent under the {lease} of {r}?", (ksh(p.rent),), LEASE, (), ()),
        "tenant": (f"Who is the tenant of {r}?", (p.tenant,), LEASE, (), ()),
        "landlord": (f"Who is the landlord of {r}?", (p.landlord,), LEASE, (), ()),
        "deposit": (
            f"How much deposit did the tenant pay under the {lease} of {r}?",
            (ksh(p.rent * p.deposit_months),), LEASE, (), (),
        ),
        "escalation": (
            f"By what percentage does the rent under the {lease} of {r} increase each year?",
            (p.escalation,), LEASE, (), (),
        ),
        "notice": (f"How much notice ends the {lease} of {r} after its first year?", (months,), LEASE, (), ()),
        "stamp_duty": (
            f"How much stamp duty was paid on the {lease} of {r}?", (ksh(p.rent * 12 // 100),), LEASE, (), ()
        ),
        "interest_clause": (
            f"Under the {lease} of {r}, what interest is charged on {quoted}?",
            ("two per cent per month",), LEASE, (), ("literal", "quoted_clause"),
        ),
        "lease_dates": (
            f"When does the {lease} of {r} start and when does it end?", (d(p.lease_start), end), LEASE,
            (f"When does the {lease} of {r} start?", f"When does the {lease} of {r} end?"), (),
        ),
        "rent_and_end": (
            f"What is the rent at {r} and when does the {lease} end?", (ksh(p.rent), end), LEASE,
            (f"What is the monthly rent at {r}?", f"When does the {lease} of {r} end?"), (),
        ),
        "market_value": (f"What is the market value of {r}?", (ksh(p.market_value),), VALUATION, (), ()),
        "forced_sale": (
            f"What forced sale value does the valuation give for {r}?", (ksh(p.forced_sale_value),), VALUATION, (), ()
        ),
        "valuer": (
            f"Which firm valued {r} and on what date?", (p.valuer_firm, d(p.valuation_date)), VALUATION,
            (f"Which firm valued {r}?", f"On what date was {r} valued?"), (),
        ),
        "offer_price": (
            f"What is the purchase price in the offer letter for {r}?", (ksh(p.offer_price),), OFFER, (), ()
        ),
        "under_offer": (f"At what price is {r} under offer?", (ksh(p.offer_price),), OFFER, (), ()),
        "offer": (
            f"Who offered to buy {r} and at what price?", (p.buyer, ksh(p.offer_price)), OFFER,
            (f"Who offered to buy {r}?", f"What price was offered for {r}?"), (),
        ),
        "completion": (
            f"Within how many days of the sale agreement must the sale of {r} complete?",
            (f"{p.completion_days} days",), OFFER, (), (),
        ),
        "inspection_high": (
            f"What {severity.lower()}-priority issues did the inspection of {r} find?", worst, INSPECTION, (), ()
        ),
        "inspection_cost": (
            f"What is the total estimated cost of the remedial works recommended for {r}?",
            (ksh(total),), INSPECTION, (), (),
        ),
        "inspection_when": (
            f"When was {r} inspected and by which firm?", (d(p.inspection_date), p.inspector_firm), INSPECTION,
            (f"When was {r} inspected?", f"Which firm inspected {r}?"), (),
        ),
        "parcel": (f"What is the L.R. number of {r}?", (p.parcel,), TITLE, (), ("literal",)),
        "parcel_reverse": (f"Which property is registered as {p.parcel}?", (p.address,), TITLE, (), ("literal",)),
        "land_area": (f"What is the land area of {r}?", (p.hectares,), TITLE, (), ()),
        "land_area_parcel": (f"What is the land area of {p.parcel}?", (p.hectares,), TITLE, (), ("literal",)),
        "proprietor_since": (
            f"Who is the registered proprietor of {r} and since when?", (p.landlord, d(p.registered)), TITLE,
            (f"Who is the registered proprietor of {r}?", f"Since when has {r} been registered to them?"), (),
        ),
        "encumbrance": (
            f"What encumbrance is registered against the title of {r}?", _encumbrance_or_none(p), TITLE, (), ()
        ),
        "tenure": (f"What is the tenure of {r}?", (p.tenure,), TITLE, (), ()),
    }  # fmt: skip
    if topic not in rows:
        raise SystemExit(f"unknown topic {topic}")
    question, facts, types, subs, tags = rows[topic]
    if not facts:
        raise SystemExit(f"{slug} has no {topic}")
    return Spec(topic, slug, question, facts, types, (), subs, (*tags, "multi_part") if subs else tags)


SPECIAL_TOPICS = (
    "followup_bl", "contractor_bl", "followup_mv", "renewal_mc", "counter_kr", "letting_krc", "report_mk",
    "portfolio_mv", "portfolio_ot", "search_dd", "search_mg", "annex_br", "assumptions_mv", "under_offer_mk",
)  # fmt: skip


def special(topic: str, r: str) -> Spec:
    """Questions answered only by the one-off documents of the corpus (follow-ups, annexes...)."""
    mk, dd, mg = P["mkungu-close"], P["dik-dik-lane"], P["mellifera-gardens"]
    # topic: (property, question, answer facts, gold document, sub-questions, tags)
    rows: dict[str, tuple[str, str, tuple[str, ...], str, tuple[str, ...], tuple[str, ...]]] = {
        "followup_bl": (
            "banda-lane", f"Has the electric fence energiser at {r} been replaced since the inspection?",
            ("not been replaced",), "banda-lane/inspection-followup.md", (), (),
        ),
        "contractor_bl": (
            "banda-lane", f"Which contractor replaced the cracked roof tiles at {r}, and at what cost?",
            ("Maji Safi Plumbers and Roofers", "KSH 185,000"), "banda-lane/inspection-followup.md",
            (f"Which contractor replaced the roof tiles at {r}?", "What did the roof repair cost?"), (),
        ),
        "followup_mv": (
            "mvuli-road", f"When was the new garage door motor fitted at {r}?",
            ("20 October 2024",), "mvuli-road/inspection-followup.md", (), (),
        ),
        "renewal_mc": (
            "mellifera-court", f"What is the monthly rent under the renewed lease of {r}, and from when?",
            ("KSH 90,000", "1 October 2024"), "mellifera-court/lease-renewal.md",
            (f"What is the rent under the renewed lease of {r}?", "When does the renewal start?"), (),
        ),
        "counter_kr": (
            "karen-ridge", f"What counter-offer did the vendor of {r} make?",
            ("KSH 88,000,000",), "karen-ridge/counter-offer.md", (), (),
        ),
        "letting_krc": (
            "karen-ridges-court", f"What monthly rent does the letting report say is achievable for {r}?",
            ("KSH 170,000",), "karen-ridges-court/comparative-letting-report.md", (), (),
        ),
        "report_mk": (
            "mkungu-close", f"What asking price does the comparative market report recommend for {r}?",
            ("KSH 79,000,000",), "mkungu-close/comparative-market-report.pdf", (), (),
        ),
        "portfolio_mv": (
            "mvuli-road", f"What price does the portfolio offer put on {r}?",
            ("KSH 57,000,000",), "mvuli-road/portfolio-offer-mvuli-othaya.pdf", (), (),
        ),
        "portfolio_ot": (
            "othaya-road", f"What price does the portfolio offer put on {r}?",
            ("KSH 123,000,000",), "mvuli-road/portfolio-offer-mvuli-othaya.pdf", (), (),
        ),
        "search_dd": (
            "dik-dik-lane", f"On what date was the official search of {dd.parcel} made, and who applied?",
            ("16 September 2024", dd.buyer), "dik-dik-lane/official-search-2327-30.md",
            (f"When was the official search of {dd.parcel} made?", "Who applied for the search?"), ("literal",),
        ),
        "search_mg": (
            "mellifera-gardens", f"On what date was the official search of {mg.parcel} made, and who applied?",
            ("10 June 2024", mg.buyer), "mellifera-gardens/official-search-7785-41.pdf",
            (f"When was the official search of {mg.parcel} made?", "Who applied for the search?"), ("literal",),
        ),
        "annex_br": (
            "banda-road",
            f"Within how many hours must urgent repairs be attended to under the standard terms of the {r} lease?",
            ("forty-eight hours",), "banda-road/standard-terms-annex.md", (), (),
        ),
        "assumptions_mv": (
            "mvuli-road",
            f"According to the valuation assumptions annex filed with {r}, at what share of market value is the"
            " forced sale value reported?",
            ("seventy-five per cent",), "mvuli-road/valuation-assumptions-annex.pdf", (), (),
        ),
        "under_offer_mk": (
            "mkungu-close", f"At what price is {r} under offer, and to whom?",
            (ksh(mk.offer_price), mk.buyer), "mkungu-close/offer-letter.md",
            (f"At what price is {r} under offer?", f"Who is buying {r}?"), (),
        ),
    }  # fmt: skip
    if set(rows) != set(SPECIAL_TOPICS):
        raise SystemExit(f"SPECIAL_TOPICS is out of date: {sorted(set(rows) ^ set(SPECIAL_TOPICS))}")
    owner, question, facts, gold, subs, tags = rows[topic]
    return Spec(topic, owner, question, facts, (), (gold,), subs, (*tags, "multi_part") if subs else tags)


# ---------------------------------------------------------------------------------------
# Building checked examples
# ---------------------------------------------------------------------------------------

PARTNERS = {
    "banda-lane": "banda-road",
    "banda-road": "banda-lane",
    "karen-ridge": "karen-ridges-court",
    "karen-ridges-court": "karen-ridge",
    "mellifera-gardens": "mellifera-court",
    "mellifera-court": "mellifera-gardens",
}


def ref(slug: str, kind: str) -> str:
    """How a question names the property: its name, its address, or not at all (property scope)."""
    p = P[slug]
    return {"name": p.name, "address": p.address, "none": "the property"}.get(kind, kind)


@dataclass
class Builder:
    """Collects examples; every add() checks the example against the documents or stops the run."""

    corpus: Corpus
    rng: random.Random
    examples: list[LabelledExample] = field(default_factory=list)
    owners: dict[str, str] = field(default_factory=dict)  # example id -> property the question is about

    def gold_of(self, s: Spec) -> tuple[str, ...]:
        if s.gold:
            return s.gold
        c = self.corpus
        return tuple(
            doc for doc in c.docs_of(s.owner) if c.types[doc] in s.types and any(c.contains(doc, f) for f in s.facts)
        )

    def confusables(self, slug: str) -> set[str]:
        """Documents about other properties that a question about `slug` invites: trap documents
        excluded for it, and every document of its near-identical partner."""
        c = self.corpus
        found = {t["document"] for t in c.traps if t["asked_entity"] == slug and t["expected"] == "exclude"}
        if slug in PARTNERS:
            found |= set(c.docs_of(PARTNERS[slug]))
        return {doc for doc in found if slug not in c.owners[doc]}

    def scope_docs(self, scope: dict[str, Any]) -> list[str]:
        if scope.get("document_ids"):
            return list(scope["document_ids"])
        if scope.get("property"):
            return self.corpus.docs_of(scope["property"])
        return sorted(self.corpus.types)

    def taken(self, s: Spec, scope: dict[str, Any]) -> bool:
        wanted = example_id(CORPUS, s.question, ExampleScope.model_validate(scope))
        return any(e.id == wanted for e in self.examples)

    def add(
        self,
        case: str,
        s: Spec,
        scope: dict[str, Any],
        *,
        not_found: bool = False,
        forbidden: Iterable[str] = (),
        tags: Sequence[str] = (),
    ) -> bool:
        """Check and keep one example; False (nothing kept) when its id is already taken."""
        if self.taken(s, scope):
            return False
        c = self.corpus
        where = f"{case} example {s.question!r} (scope {scope})"
        in_scope = self.scope_docs(scope)
        gold: tuple[str, ...] = ()
        pages: list[GoldPage] = []
        if not_found:
            present = sorted({doc for doc in in_scope for f in s.facts if c.contains(doc, f)})
            if present:
                raise SystemExit(f"{where}: expects 'not found' but {present} hold its answer {s.facts}")
            forbid = set(forbidden)
        else:
            gold = self.gold_of(s)
            if not gold:
                raise SystemExit(f"{where}: no gold document holds {s.facts}")
            for fact in s.facts:
                if not any(c.contains(doc, fact) for doc in gold):
                    raise SystemExit(f"{where}: fact {fact!r} occurs in none of its gold documents {gold}")
            for doc in gold:
                doc_pages = c.fact_pages(doc, s.facts)
                if not doc_pages:
                    raise SystemExit(f"{where}: gold document {doc} states none of {s.facts}")
                pages += [GoldPage(document=doc, page=n) for n in doc_pages]
            outside = sorted(set(gold) - set(in_scope))
            if outside:
                raise SystemExit(f"{where}: gold documents {outside} lie outside the scope")
            forbid = (set(forbidden) | self.confusables(s.owner)) - set(gold)
            about_owner = sorted(doc for doc in forbid if s.owner in c.owners[doc])
            if about_owner:
                raise SystemExit(f"{where}: forbidden documents {about_owner} are about {s.owner} itself")
        if case == "wrong_property" and not forbid:
            raise SystemExit(f"{where}: a wrong_property example needs forbidden documents")
        scope_tag = (
            "scope:chip" if scope.get("document_ids") else "scope:property" if scope.get("property") else "scope:none"
        )
        example = make_example(
            corpus=CORPUS,
            case=case,
            question=s.question,
            scope=scope,
            gold_documents=gold,
            gold_pages=tuple(pages),
            answer_facts=() if not_found else s.facts,
            forbidden_documents=tuple(sorted(forbid)),
            expect_not_found=not_found,
            expected_plan="two_step" if scope_tag == "scope:none" else "one_step",
            gold_sub_questions=() if not_found else s.sub_questions,
            tags=tuple(dict.fromkeys((f"topic:{s.topic}", *s.tags, *tags, scope_tag))),
        )
        self.examples.append(example)
        self.owners[example.id] = s.owner
        return True


def chip(*groups: Iterable[str]) -> dict[str, Any]:
    return {"document_ids": tuple(sorted({doc for group in groups for doc in group}))}


# ---------------------------------------------------------------------------------------
# The four cases
# ---------------------------------------------------------------------------------------


def topics_for(slug: str, rng: random.Random) -> list[str]:
    """A multi-part topic, a literal one, then every topic, each list shuffled."""
    plain = [t for t in PLAIN if t != "encumbrance" or P[slug].encumbrances]
    multi, literal, rest = list(MULTI), list(LITERAL), [*MULTI, *LITERAL, *plain]
    for group in (multi, literal, rest):
        rng.shuffle(group)
    return list(dict.fromkeys([multi[0], literal[0], *rest]))


def answerable(b: Builder, case: str, slug: str, refs: Sequence[str], count: int) -> None:
    """`count` answerable examples about `slug` in `case` (no_scope, chip or property)."""
    added = 0
    for topic in topics_for(slug, b.rng):
        s = spec(topic, slug, ref(slug, b.rng.choice(refs)))
        if case == "no_scope":
            scope: dict[str, Any] = {}
        elif case == "property":
            scope = {"property": slug}
        else:
            others = [doc for doc in b.corpus.docs_of(slug) if doc not in b.gold_of(s)]
            scope = chip(b.gold_of(s), b.rng.sample(others, b.rng.randint(0, 2)))
        added += b.add(case, s, scope, tags=s.tags)
        if added == count:
            return
    raise SystemExit(f"only {added} {case} examples for {slug}")


def chip_not_in_scope(b: Builder, slug: str) -> None:
    """A chip of documents that cannot answer the question (e.g. the inspection, asked the value)."""
    c = b.corpus
    for topic in b.rng.sample(PLAIN, len(PLAIN)):
        if topic == "encumbrance" and not P[slug].encumbrances:
            continue
        s = spec(topic, slug, ref(slug, b.rng.choice(["name", "address"])))
        candidates = [
            doc
            for doc in c.docs_of(slug)
            if c.types[doc] not in s.types and not any(c.contains(doc, f) for f in s.facts)
        ]
        if candidates:
            picked = b.rng.sample(candidates, min(len(candidates), b.rng.randint(1, 2)))
            kinds = "+".join(sorted({c.types[doc] for doc in picked}))
            if b.add("chip", s, chip(picked), not_found=True, tags=("not_in_scope", f"chip_of:{kinds}")):
                return
    raise SystemExit(f"no not-in-scope chip for {slug}")


def absent(b: Builder, case: str, slug: str, index: int, refs: Sequence[str]) -> None:
    """A question about a fact no document holds (service charge, parking...): 'not found'."""
    template, term = ABSENT[index % len(ABSENT)]
    s = Spec("absent", slug, template.format(r=ref(slug, b.rng.choice(refs))), (term,))
    scope = {"property": slug} if case == "property" else {}
    if not b.add(case, s, scope, not_found=True, tags=("not_in_scope", "absent_fact")):
        raise SystemExit(f"duplicate absent-fact example for {slug}")


def regular_cases(b: Builder) -> None:
    for i, slug in enumerate(P):
        answerable(b, "no_scope", slug, ["name", "address"], 6)
        absent(b, "no_scope", slug, i, ["name", "address"])
        answerable(b, "chip", slug, ["name", "address"], 6)
        chip_not_in_scope(b, slug)
        answerable(b, "property", slug, ["name", "address", "none", "none"], 6)
        absent(b, "property", slug, i + 1, ["name", "none"])


# ---------------------------------------------------------------------------------------
# wrong_property: every trap, look-alike spellings, scopes that cannot answer
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrapPlan:
    """How one trap record of traps.toml becomes a question about its asked property.

    exclude: the trap document is forbidden (and put in the chip when the scope is a chip).
    keep: the trap document is gold; `lure` is the property it could be mistaken for, whose
    documents of the same type are forbidden (and put in the chip).
    """

    document: str
    asked: str
    topic: str
    ref: str
    scope: str  # none | chip | property
    lure: str | None = None


TRAP_PLANS: tuple[TrapPlan, ...] = (
    TrapPlan("banda-lane/offer-letter-banda-lane-copy.pdf", "banda-lane", "offer_price", "name", "chip"),
    TrapPlan("banda-lane/offer-letter-banda-lane-copy.pdf", "dik-dik-lane", "tenant", "address", "none", "banda-lane"),
    TrapPlan("karen-ridge/valuation-karen-ridge-final.md", "karen-ridge", "market_value", "name", "none"),
    TrapPlan("karen-ridge/valuation-karen-ridge-final.md", "karen-ridges-court", "market_value", "address", "chip",
             "karen-ridge"),
    TrapPlan("mellifera-gardens/inspection-mellifera-gardens-scan.pdf", "mellifera-gardens", "inspection_high",
             "name", "chip"),
    TrapPlan("mellifera-gardens/inspection-mellifera-gardens-scan.pdf", "mellifera-court", "inspection_when",
             "address", "property", "mellifera-gardens"),
    TrapPlan("mkungu-close/Offer_Letter.md", "mkungu-close", "offer", "address", "chip"),
    TrapPlan("banda-lane/valuation-banda-copy.md", "banda-lane", "market_value", "name", "none"),
    TrapPlan("banda-road/lease.md", "banda-lane", "rent", "name", "none"),
    TrapPlan("banda-lane/valuation.md", "banda-road", "market_value", "address", "chip"),
    TrapPlan("banda-lane/lease.pdf", "banda-lane", "tenant", "address", "property", "banda-road"),
    TrapPlan("karen-ridges-court/title-document.pdf", "karen-ridge", "parcel", "address", "none"),
    TrapPlan("karen-ridge/lease.md", "karen-ridges-court", "tenant", "address", "chip"),
    TrapPlan("karen-ridge/lease.md", "karen-ridge", "lease_dates", "name", "property", "karen-ridges-court"),
    TrapPlan("mellifera-court/valuation.md", "mellifera-gardens", "market_value", "address", "none"),
    TrapPlan("mellifera-gardens/offer-letter.md", "mellifera-court", "offer_price", "address", "chip"),
    TrapPlan("banda-lane/offer-letter.pdf", "karen-ridge", "offer", "address", "none"),
    TrapPlan("banda-road/title-document.md", "banda-lane", "parcel_reverse", "name", "none"),
    TrapPlan("banda-lane/title-document.pdf", "banda-lane", "land_area_parcel", "name", "chip", "banda-road"),
    TrapPlan("dik-dik-lane/official-search-2327-30.md", "dik-dik-lane", "search_dd", "name", "none", "banda-lane"),
    TrapPlan("dik-dik-lane/official-search-2327-30.md", "banda-lane", "encumbrance", "address", "chip"),
    TrapPlan("mellifera-gardens/official-search-7785-41.pdf", "mellifera-gardens", "search_mg", "name", "property",
             "mellifera-court"),
    TrapPlan("mellifera-gardens/official-search-7785-41.pdf", "mellifera-court", "proprietor_since", "address",
             "none"),
    TrapPlan("dik-dik-lane/valuation.md", "banda-lane", "under_offer", "address", "none"),
    TrapPlan("dik-dik-lane/valuation.md", "dik-dik-lane", "market_value", "address", "chip", "banda-lane"),
    TrapPlan("mvuli-road/valuation.md", "mkungu-close", "under_offer_mk", "address", "property"),
    TrapPlan("mkungu-close/comparative-market-report.pdf", "othaya-road", "market_value", "address", "none"),
    TrapPlan("mkungu-close/comparative-market-report.pdf", "mkungu-close", "report_mk", "address", "chip",
             "othaya-road"),
    TrapPlan("karen-ridges-court/comparative-letting-report.md", "karen-ridge", "rent", "address", "chip"),
    TrapPlan("karen-ridges-court/comparative-letting-report.md", "karen-ridges-court", "letting_krc", "address",
             "none", "karen-ridge"),
    TrapPlan("mvuli-road/portfolio-offer-mvuli-othaya.pdf", "mvuli-road", "portfolio_mv", "address", "property",
             "othaya-road"),
    TrapPlan("mvuli-road/portfolio-offer-mvuli-othaya.pdf", "othaya-road", "portfolio_ot", "address", "none",
             "mvuli-road"),
    TrapPlan("mvuli-road/portfolio-offer-mvuli-othaya.pdf", "mkungu-close", "offer_price", "address", "chip"),
    TrapPlan("banda-lane/inspection-followup.md", "banda-lane", "followup_bl", "address", "property", "banda-road"),
    TrapPlan("banda-lane/inspection-followup.md", "banda-road", "inspection_high", "address", "none"),
    TrapPlan("mellifera-court/lease-renewal.md", "mellifera-court", "renewal_mc", "address", "none",
             "mellifera-gardens"),
    TrapPlan("mellifera-court/lease-renewal.md", "mellifera-gardens", "rent", "address", "chip"),
    TrapPlan("mvuli-road/inspection-followup.md", "banda-lane", "contractor_bl", "address", "none"),
    TrapPlan("mvuli-road/inspection-followup.md", "mvuli-road", "followup_mv", "address", "chip", "banda-lane"),
    TrapPlan("karen-ridge/counter-offer.md", "mellifera-gardens", "offer_price", "address", "none"),
    TrapPlan("karen-ridge/counter-offer.md", "karen-ridge", "counter_kr", "address", "property", "mellifera-gardens"),
    TrapPlan("banda-road/standard-terms-annex.md", "banda-road", "annex_br", "address", "chip", "banda-lane"),
    TrapPlan("mvuli-road/valuation-assumptions-annex.pdf", "mvuli-road", "assumptions_mv", "address", "none",
             "mkungu-close"),
)  # fmt: skip


def make_spec(topic: str, slug: str, ref_kind: str) -> Spec:
    """A table topic or a one-off document's topic, about `slug`."""
    r = ref(slug, ref_kind)
    if topic not in SPECIAL_TOPICS:
        return spec(topic, slug, r)
    s = special(topic, r)
    if s.owner != slug:
        raise SystemExit(f"special topic {topic} is about {s.owner}, not {slug}")
    return s


def lure_docs(b: Builder, lure: str, asked: str, gold: Sequence[str]) -> list[str]:
    """The lure property's documents of the gold documents' types (none about `asked`)."""
    c = b.corpus
    kinds = {c.types[doc] for doc in gold}
    return [doc for doc in c.docs_of(lure) if c.types[doc] in kinds and asked not in c.owners[doc]]


def trap_examples(b: Builder) -> None:
    plans = {(t.document, t.asked) for t in TRAP_PLANS}
    records = {(t["document"], t["asked_entity"]) for t in b.corpus.traps}
    if plans != records:
        raise SystemExit(f"trap plans and traps.toml differ: {sorted(plans ^ records)}")
    kinds = {(t["document"], t["asked_entity"]): (t["kind"], t["expected"]) for t in b.corpus.traps}
    for plan in TRAP_PLANS:
        kind, expected = kinds[(plan.document, plan.asked)]
        s = make_spec(plan.topic, plan.asked, plan.ref)
        gold = b.gold_of(s)
        if expected == "keep":
            if plan.document not in gold or plan.lure is None:
                raise SystemExit(f"keep trap {plan}: the trap document must be gold and a lure named")
            bait = lure_docs(b, plan.lure, plan.asked, gold)
        else:
            if plan.document in gold:
                raise SystemExit(f"exclude trap {plan}: the trap document answers the question")
            bait = [plan.document]
        scope = {"none": {}, "property": {"property": plan.asked}, "chip": chip(gold, bait)}[plan.scope]
        tags = (*s.tags, f"trap:{kind}", f"trap_expected:{expected}")
        if kind.startswith("lookalike"):
            tags += ("lookalike",)
        if not b.add("wrong_property", s, scope, forbidden=bait, tags=tags):
            raise SystemExit(f"trap example collides with another example: {plan}")


# Questions that spell a property with a Cyrillic look-alike letter: (topic, slug, spelling, scope, bait).
LOOKALIKE_QUESTIONS: tuple[tuple[str, str, str, str, tuple[str, ...]], ...] = (
    ("rent", "banda-lane", f"B{CYR_A}nda Lane", "none", ()),
    ("tenant", "banda-road", f"7 B{CYR_A}nda Road", "chip", ("banda-lane/lease.pdf",)),
    ("market_value", "mellifera-court", f"Apartment B4, Mellifera C{CYR_O}urt", "property", ()),
    ("inspection_when", "mellifera-gardens", f"House 9, Mellifera G{CYR_A}rdens", "none", ()),
    ("followup_bl", "banda-lane", f"14 B{CYR_A}nda Lane", "chip", ("banda-road/inspection-report.pdf",)),
    ("tenant", "mellifera-gardens", f"Mellifera G{CYR_A}rdens", "chip", ("mellifera-court/lease-renewal.md",)),
)

# A property scope asked about another property's fact: (scope property, topic, asked property, ref).
OTHER_PROPERTY_IN_SCOPE: tuple[tuple[str, str, str, str], ...] = (
    ("banda-lane", "rent", "banda-road", "address"),
    ("banda-road", "market_value", "banda-lane", "address"),
    ("karen-ridge", "tenant", "karen-ridges-court", "name"),
    ("karen-ridges-court", "lease_dates", "karen-ridge", "address"),
    ("mellifera-gardens", "offer_price", "mellifera-court", "name"),
    ("mellifera-court", "parcel", "mellifera-gardens", "name"),
    ("mkungu-close", "offer_price", "othaya-road", "address"),
    ("mvuli-road", "tenant", "mkungu-close", "address"),
)

# A chip of another property's documents, asked about a property it does not hold: (chip, topic, asked, ref).
CHIP_OF_OTHER: tuple[tuple[tuple[str, ...], str, str, str], ...] = (
    (("banda-road/lease.md",), "rent", "banda-lane", "address"),
    (("karen-ridges-court/title-document.pdf",), "parcel", "karen-ridge", "address"),
    (("mellifera-gardens/offer-letter.md",), "offer_price", "mellifera-court", "address"),
    (("banda-lane/offer-letter-banda-lane-copy.pdf",), "offer_price", "banda-lane", "address"),
    (("mkungu-close/Offer_Letter.md",), "completion", "mkungu-close", "address"),
    (("mellifera-gardens/inspection-mellifera-gardens-scan.pdf",), "inspection_cost", "mellifera-gardens", "name"),
)

# A chip of a whole folder that holds misfiled documents about other properties: (folder, topic, ref).
FOLDER_CHIPS: tuple[tuple[str, str, str], ...] = (
    ("banda-lane", "valuer", "address"),
    ("banda-lane", "rent_and_end", "name"),
    ("karen-ridge", "forced_sale", "address"),
    ("mellifera-gardens", "inspection_cost", "address"),
    ("mkungu-close", "completion", "name"),
)


def wrong_property_cases(b: Builder) -> None:
    c = b.corpus
    trap_examples(b)
    for topic, slug, spelling, scope_kind, bait in LOOKALIKE_QUESTIONS:
        s = make_spec(topic, slug, spelling)
        scope = {"none": {}, "property": {"property": slug}, "chip": chip(b.gold_of(s), bait)}[scope_kind]
        if not b.add("wrong_property", s, scope, forbidden=bait, tags=(*s.tags, "lookalike", "lookalike:question")):
            raise SystemExit(f"look-alike example collides: {s.question}")
    for scope_slug, topic, asked, ref_kind in OTHER_PROPERTY_IN_SCOPE:
        s = make_spec(topic, asked, ref_kind)
        holders = [doc for doc in c.docs_of(asked) if any(c.contains(doc, f) for f in s.facts)]
        tags = ("not_in_scope", "other_property_in_question")
        if not b.add("wrong_property", s, {"property": scope_slug}, not_found=True, forbidden=holders, tags=tags):
            raise SystemExit(f"other-property example collides: {s.question}")
    for docs, topic, asked, ref_kind in CHIP_OF_OTHER:
        s = make_spec(topic, asked, ref_kind)
        holders = [doc for doc in c.docs_of(asked) if any(c.contains(doc, f) for f in s.facts)]
        tags = ("not_in_scope", "chip_of_other_property")
        if not b.add("wrong_property", s, chip(docs), not_found=True, forbidden=[*docs, *holders], tags=tags):
            raise SystemExit(f"chip-of-other example collides: {s.question}")
    for folder, topic, ref_kind in FOLDER_CHIPS:
        s = make_spec(topic, folder, ref_kind)
        docs = [doc for doc in c.types if doc.startswith(f"{folder}/")]
        misfiled = [doc for doc in docs if folder not in c.owners[doc] and c.owners[doc]]
        if not b.add("wrong_property", s, chip(docs), forbidden=misfiled, tags=(*s.tags, "folder_chip")):
            raise SystemExit(f"folder example collides: {s.question}")


# ---------------------------------------------------------------------------------------
# Unanswerable in scope: the right documents or the property as scope, the fact in none of them
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AbsentAsk:
    """A fact a reader of the property's documents would ask for that none of them states: the document
    types a reader would select to ask it (a chip of the property's documents of those types), two
    wordings ({r}: the property, {lease}: which lease) and the markers a document stating it would use
    (scripts/absence.py). `chip_only`: some other document of a property may use a marker (a title search
    fee is no valuer's fee), so the fact is asked only of the selected documents."""

    topic: str
    types: tuple[str, ...]
    wordings: tuple[str, str]
    markers: tuple[str, ...]
    chip_only: bool = False


ABSENT_ASKS: tuple[AbsentAsk, ...] = (
    AbsentAsk(
        "pets", LEASE,
        ("Does the {lease} of {r} allow the tenant to keep pets?", "Are dogs or cats allowed at {r}?"),
        ("pet", "pets", "animal", "animals", "dog", "dogs", "cat", "cats"),
    ),
    AbsentAsk(
        "valuer_fee", VALUATION,
        ("What fee did the valuer charge for the valuation of {r}?", "How much was the valuer paid to value {r}?"),
        ("fee", "fees", "invoice", "invoiced"), chip_only=True,
    ),
    AbsentAsk(
        "agent_commission", OFFER,
        ("What commission does the agent earn on the sale of {r}?",
         "What percentage commission is the estate agent paid if {r} is sold?"),
        ("commission", "agency fee", "agent's fee", "agent’s fee", "agents' fees"),
    ),
    AbsentAsk(
        "generator", INSPECTION,
        ("What condition is the standby generator at {r} in, according to the inspection?",
         "Does {r} have a backup generator, and does it work?"),
        ("generator", "generators", "standby power", "backup power"),
    ),
    AbsentAsk(
        "land_rent", TITLE,
        ("What annual land rent is payable on {r} according to its title?",
         "How much ground rent is due each year on {r}?"),
        ("land rent", "ground rent", "annual rent"), chip_only=True,
    ),
    AbsentAsk(
        "purchase_option", LEASE,
        ("Does the tenant of {r} have an option to buy the property under the {lease}?",
         "Does the tenant at {r} have a right of first refusal if the property is sold?"),
        ("option to purchase", "option to buy", "first refusal", "pre-emption", "purchase option"),
    ),
    AbsentAsk(
        "floor_area", VALUATION,
        ("What is the built-up floor area of the house at {r} in square metres?",
         "How many square metres is the house at {r}, according to its valuation?"),
        ("square metre", "square metres", "square meter", "square meters", "sq m", "sqm", "m2", "floor area",
         "plinth area", "built-up area"), chip_only=True,
    ),
    AbsentAsk(
        "legal_fees", OFFER,
        ("Who pays the legal fees on the purchase of {r}, according to the offer letter?",
         "How much are the conveyancing costs for the sale of {r}?"),
        ("legal fees", "legal costs", "advocates' fees", "advocates’ fees", "conveyancing", "costs of the transfer"),
    ),
    AbsentAsk(
        "cctv", INSPECTION,
        ("Does {r} have working CCTV cameras, according to the inspection report?",
         "Were the security cameras at {r} checked during the inspection?"),
        ("cctv", "camera", "cameras", "surveillance"),
    ),
    AbsentAsk(
        "zoning", TITLE,
        ("What is the zoning or permitted use of {r} under its title?",
         "What land use is {r} zoned for?"),
        ("zoning", "zoned", "permitted use", "user", "land use"),
    ),
    AbsentAsk(
        "rent_free", LEASE,
        ("How long is the rent-free period under the {lease} of {r}?",
         "Did the tenant of {r} get any rent-free months at the start of the {lease}?"),
        ("rent-free", "rent free", "free of rent", "fit-out", "fit out"),
    ),
    AbsentAsk(
        "year_built", VALUATION,
        ("In what year was the house at {r} built, according to its valuation?",
         "When was the house at {r} built?"),
        ("built in", "year of construction", "constructed", "construction", "years old", "age of the"),
    ),
    AbsentAsk(
        "guarantor", LEASE,
        ("Who guarantees the tenant's obligations under the {lease} of {r}?",
         "Does the {lease} of {r} name a guarantor for the tenant?"),
        ("guarantor", "guarantee", "guaranteed", "guarantees", "surety"),
    ),
    AbsentAsk(
        "inspector_fee", INSPECTION,
        ("What did the inspection of {r} cost the client in fees?",
         "How much was the building surveyor paid for inspecting {r}?"),
        ("fee", "fees", "invoice", "invoiced"), chip_only=True,
    ),
    AbsentAsk(
        "furnished", LEASE,
        ("Is {r} let furnished, and what furniture does the {lease} list?",
         "Does the {lease} of {r} include an inventory of furniture?"),
        ("furnished", "furniture", "furnishings", "inventory"),
    ),
)  # fmt: skip
ABSENT_CHIPS_PER_PROPERTY = 2
ABSENT_SEED = SEED + 1


def absent_in_scope_cases(b: Builder, chunks: dict[str, tuple[str, ...]] | None = None) -> list[LabelledExample]:
    """Per property, chips of the documents a question would need with the fact asked in none of them, and
    property scopes with the fact in none of the property's documents (shared ones included); every one
    checked absent from its scope's pages (and, given, the index's chunks). The examples, without split."""
    c = b.corpus
    shared = [doc for doc in c.types if not c.owners[doc]]
    first = len(b.examples)
    asks = list(ABSENT_ASKS)
    scoped = [a for a in ABSENT_ASKS if not a.chip_only]
    for i, slug in enumerate(P):
        picks = [asks[(ABSENT_CHIPS_PER_PROPERTY * i + k) % len(asks)] for k in range(ABSENT_CHIPS_PER_PROPERTY)]
        for k, ask in enumerate(picks):
            docs = [doc for doc in c.docs_of(slug) if c.types[doc] in ask.types]
            r = ref(slug, ("name", "address")[(i + k) % 2])
            s = Spec(ask.topic, slug, _absent_question(ask, 0, slug, r), ask.markers)
            _add_absent(b, "chip", s, chip(docs), docs, chunks, f"chip_of:{'+'.join(ask.types)}")
        # Property scope: the asks no document of the property may hold, in their second wording.
        for ask in (scoped[i % len(scoped)], scoped[(i + 5) % len(scoped)])[: 2 if i % 2 == 0 else 1]:
            r = ref(slug, ("none", "name")[i % 2])
            s = Spec(ask.topic, slug, _absent_question(ask, 1, slug, r), ask.markers)
            _add_absent(b, "property", s, {"property": slug}, [*c.docs_of(slug), *shared], chunks)
    return b.examples[first:]


def _absent_question(ask: AbsentAsk, wording: int, slug: str, r: str) -> str:
    lease = "original 2023 lease" if slug == "mellifera-court" else "lease"
    return ask.wordings[wording].format(r=r, lease=lease)


def _add_absent(
    b: Builder,
    case: str,
    s: Spec,
    scope: dict[str, Any],
    in_scope: Sequence[str],
    chunks: dict[str, tuple[str, ...]] | None,
    *extra: str,
) -> None:
    c = b.corpus
    where = f"{case} example {s.question!r} (scope {scope})"
    require_absent(where, s.facts, in_scope, c.pages, chunks)
    anywhere = not marker_hits(s.facts, c.pages, c.types)
    tags = ("not_in_scope", "absent_in_scope", *extra, *(("absent_fact",) if anywhere else ()))
    if not b.add(case, s, scope, not_found=True, forbidden=b.confusables(s.owner), tags=tags):
        raise SystemExit(f"{where}: collides with another example")


def absent_splits(
    new: Sequence[LabelledExample], owners: dict[str, str], existing: Sequence[LabelledExample]
) -> list[LabelledExample]:
    """Splits for the unanswerable-in-scope examples without moving any existing one: a question (text and
    property) already in a split stays there; the others 60/20/20 per case, as assign_splits does."""
    known = {(norm(e.question), owners[e.id]): e.split for e in existing}
    rest = [e for e in new if (norm(e.question), owners[e.id]) not in known]
    split_of = {e.id: e.split for e in assign_splits(rest, owners, random.Random(ABSENT_SEED))}
    return [e.model_copy(update={"split": split_of.get(e.id) or known[(norm(e.question), owners[e.id])]}) for e in new]


# ---------------------------------------------------------------------------------------
# Splits, card, entry point
# ---------------------------------------------------------------------------------------


def assign_splits(
    examples: Sequence[LabelledExample], owners: dict[str, str], rng: random.Random
) -> list[LabelledExample]:
    """60/20/20 per case; the variants of one question (same text, same property) share a split."""
    groups: dict[tuple[str, str], list[LabelledExample]] = {}
    for e in examples:
        groups.setdefault((norm(e.question), owners[e.id]), []).append(e)
    totals = Counter(e.case for e in examples)
    assigned: Counter[tuple[str, str]] = Counter()
    split_of: dict[str, Split] = {}
    order = list(groups)
    rng.shuffle(order)
    for key in order:
        members = groups[key]

        def deficit(split: Split, members: list[LabelledExample] = members) -> float:
            return sum(SPLIT_SHARES[split] * totals[e.case] - assigned[(e.case, split)] for e in members)

        best = max(SPLITS, key=deficit)
        for e in members:
            assigned[(e.case, best)] += 1
            split_of[e.id] = best
    return [e.model_copy(update={"split": split_of[e.id]}) for e in examples]


TAG_MEANINGS = (
    ("topic:<name>", "what is asked (rent, tenant, market_value, offer, inspection_high, parcel, ...)"),
    ("multi_part", "needs decomposition; `gold_sub_questions` lists the parts"),
    ("literal", "names a literal string: a parcel number (L.R. NO: ...) or a quoted clause"),
    ("quoted_clause", "quotes the lease text"),
    ("not_in_scope", "the answer is not in the scope: `expect_not_found`, no facts, no gold"),
    ("absent_fact", "no document of the corpus holds the answer (service charge, parking, ...)"),
    ("absent_in_scope", "the right documents selected or the property as scope; the fact is in none of them"),
    ("chip_of:<types>", "not-in-scope chip: the document types selected"),
    ("trap:<kind>", "built from a trap record of datasets/demo/traps.toml (kind as there)"),
    ("trap_expected:keep", "the trap document is about the asked property: gold"),
    ("trap_expected:exclude", "the trap document is about another property: forbidden"),
    ("lookalike", "a Cyrillic look-alike letter in a property name, in the question or the documents"),
    ("lookalike:question", "the question itself spells the property with a Cyrillic letter"),
    ("other_property_in_question", "property scope, question about another property (not found)"),
    ("chip_of_other_property", "chip of another property's documents (not found; the chip is forbidden)"),
    ("folder_chip", "chip = every file of a folder that holds misfiled documents of other properties"),
    ("scope:none", "asked without scope"),
    ("scope:chip", "asked with selected documents"),
    ("scope:property", "asked with a property as scope"),
)


def card(examples: Sequence[LabelledExample]) -> str:
    tags = Counter(t for e in examples for t in e.tags)

    def count(tag: str) -> int:
        """Examples with the tag; a pattern "kind:<x>" counts every tag starting "kind:"."""
        prefix = tag.split("<")[0]
        return sum(n for t, n in tags.items() if t.startswith(prefix)) if "<" in tag else tags[tag]

    kinds = Counter(t.split(":", 1)[1] for e in examples for t in e.tags if t.startswith("trap:"))
    not_found = Counter(e.case for e in examples if e.expect_not_found)
    lines = [
        "# Demo corpus: labelled traces",
        "",
        "Labelled questions over the demo corpus (`datasets/demo`, fictional Nairobi property documents) in",
        "the four scope cases, as `pipeline.evaluation.examples.LabelledExample` JSONL. Documents are named by",
        'their relative path in the corpus ("banda-lane/lease.pdf"), property scopes by slug ("banda-lane"), so',
        "the traces survive index rebuilds. Load with",
        "`pipeline.evaluation.examples.load_examples(path, split=..., cases=...)`.",
        "",
        "## Counts",
        "",
        *counts_table(examples),
        "",
        "Examples expecting 'not found': " + ", ".join(f"{c} {not_found[c]}" for c in CASES) + ".",
        "",
        "## The cases",
        "",
        "- `no_scope`: questions naming a property by name or address; two-step plan expected.",
        "- `chip`: the selected documents are the gold documents plus up to two other documents of the same",
        "  property; one in ten asks for a fact the selected documents do not hold (`not_in_scope`, e.g. the",
        "  inspection report selected, the market value asked), and two per property select the documents",
        "  the question needs and ask a fact none of them states (`absent_in_scope`, below).",
        '- `property`: the property as scope; many questions do not repeat its name ("the property"); one',
        "  in ten asks for a fact no document holds, and one or two per property more (`absent_in_scope`).",
        "- `wrong_property`: the question or the corpus invites a document about another property, which",
        "  is listed in `forbidden_documents`: one example per trap record of `datasets/demo/traps.toml`",
        "  (filename/content mismatches, Banda Lane / Banda Road and the other near-identical pairs, parcel",
        "  1160/88 inside 1160/880, passing mentions, Cyrillic look-alike letters), questions spelling a",
        "  name with a Cyrillic letter, property scopes asked about another property, chips of another",
        "  property's documents, and chips of whole folders that hold misfiled documents. Scopes vary.",
        "",
        *absent_section(examples),
        "## Fields",
        "",
        "- `gold_documents`: the asked property's documents of the type that answers (lease, valuation,",
        "  offer letter, inspection report, title document, or the one-off document asked about) that state",
        "  at least one answer fact; `gold_pages`: every page of those documents stating a fact (PDF page or",
        "  Markdown page between page-break comments, 1-based).",
        '- `answer_facts`: short strings a correct answer must state ("KSH 285,000", "1 March 2023", names).',
        "- `forbidden_documents`: documents about other properties the question invites: the trap",
        "  documents excluded for the asked property in traps.toml and every document of its near-identical",
        "  partner (set on all cases), plus the example's own bait. Never overlaps the gold documents.",
        "- `expected_plan`: `two_step` without scope, `one_step` with a chip or a property.",
        "",
        "## Tags",
        "",
        "| tag | meaning | examples |",
        "| --- | --- | --- |",
        *[f"| `{tag}` | {meaning} | {count(tag)} |" for tag, meaning in TAG_MEANINGS],
        "",
        "Trap kinds used: " + ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())) + ".",
        "",
        "## How the labels were checked",
        "",
        "`scripts/make_demo_traces.py` takes every fact from the property records in",
        "`scripts/demo_properties.toml` (as `scripts/make_demo_corpus.py` loads them) and",
        "stops unless, against the documents as the index reads them (Markdown pages, PDF text by pypdf),",
        "every answer fact occurs (case-insensitively, whitespace collapsed) in a gold document, every gold",
        "document states a fact and lies inside the scope, no 'not found' example's answer occurs in its",
        "scope, no forbidden document is about the asked property, and every trap record is used.",
        "The facts of the `absent_in_scope` examples are checked by their markers (`scripts/absence.py`):",
        "none may occur in any page of a document in scope, nor, with `--index`, in any chunk of it.",
        "`tests/evaluation/test_demo_traces.py` re-checks the committed files independently.",
        "",
        "## Splits",
        "",
        "Fixed on disk (`train.jsonl`, `dev.jsonl`, `test.jsonl`; each example's `split` says the same):",
        "60/20/20 per case, and every variant of one question (same text about the same property) in the",
        "same split, so no question leaks from train into dev or test. The `absent_in_scope` examples are",
        "split after the others, by the same rule from their own random stream, so none of the others moved.",
        "",
        "## Regenerate",
        "",
        "```",
        "python scripts/make_demo_corpus.py    # the corpus, if its records changed",
        "python scripts/make_demo_traces.py    # from the repository root; same output on every run",
        "# the same, and the absent facts also checked in the chunks of a built index:",
        "scoperag index datasets/demo --out .scoperag/index",
        "python scripts/make_demo_traces.py --index .scoperag/index",
        "```",
        "",
    ]
    return "\n".join(lines)


def absent_section(examples: Sequence[LabelledExample]) -> list[str]:
    """The card's section on the unanswerable-in-scope examples: counts and the facts asked."""
    absent = [e for e in examples if "absent_in_scope" in e.tags]
    topics = Counter(t.split(":", 1)[1] for e in absent for t in e.tags if t.startswith("topic:"))
    chip_only = ", ".join(a.topic for a in ABSENT_ASKS if a.chip_only)
    return [
        "## Unanswerable in scope",
        "",
        "Questions a reader of the documents would ask whose answer none of the documents in scope states",
        "(tags `absent_in_scope`, `not_in_scope`; `expect_not_found`, no facts, no gold documents; the",
        "property's confusable documents forbidden as on its answerable examples). Chips select the",
        "property's documents of the type the question is about (`chip_of:<type>`: the lease for a pets",
        "clause, the offer letter for an agent's commission); property scopes ask in another wording, of",
        "every document of the property and the shared ones. `absent_fact` is added where no document of",
        "the corpus uses the fact's markers at all.",
        "",
        *counts_table(absent),
        "",
        "Facts asked: " + ", ".join(f"{t} {n}" for t, n in sorted(topics.items())) + ".",
        "Asked only with the documents selected, as another document of the property uses a marker (a search",
        f"fee on a title is no valuer's fee): {chip_only}.",
        "",
    ]


def build(root: Path, index: Path | None = None) -> list[LabelledExample]:
    """Every example, checked against the corpus in `root` (and, given, the absent facts against the chunks
    of the index at `index`), with its split."""
    rng = random.Random(SEED)
    b = Builder(load_corpus(root), rng)
    wrong_property_cases(b)
    regular_cases(b)
    examples = assign_splits(b.examples, b.owners, rng)
    counts = Counter(e.case for e in examples)
    short = [case for case in CASES if counts[case] < 60]
    if len(examples) < 240 or short:
        raise SystemExit(f"too few examples: {len(examples)} in all, per case {dict(counts)}")
    # Added after the others are split, from their own random stream: no existing example moves.
    absent = absent_in_scope_cases(b, index_chunks(index) if index is not None else None)
    return [*examples, *absent_splits(absent, b.owners, examples)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEMO, help="the demo corpus (default: datasets/demo)")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="output directory (default: datasets/demo-traces)"
    )
    parser.add_argument(
        "--index", type=Path, help="an index of the corpus: absent facts are also checked against its chunks"
    )
    args = parser.parse_args()
    examples = build(args.corpus, args.index)
    for split, count in write_example_set(args.out, examples).items():
        print(f"{split}: {count} examples")
    (args.out / "README.md").write_text(card(examples), encoding="utf-8")
    print(f"wrote {len(examples)} examples to {args.out}")


if __name__ == "__main__":
    main()
