"""Generate the filings fixture (datasets/filings) and its labelled traces (datasets/filings-traces/dev.jsonl).

Run from the repository root:

    python scripts/make_filings_fixture.py

Fictional annual and quarterly reports of invented companies, written from one template so that
search cannot tell two companies' reports apart by their wording: only names and figures differ.
It holds what entity names look like in use: a company named by the first word of its name or by
its initials, a phrase only one name contains while each of its words is shared, two companies
given the same alias, a report whose summary names another company (its largest customer), and
names long enough to make long clarifying questions. Deterministic; every answer fact is checked to
occur on its gold page before anything is written.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.evaluation.examples import ExampleScope, GoldPage, LabelledExample, make_example, write_examples

ROOT = Path(__file__).resolve().parent.parent
CORPUS = "filings"
PAGE_BREAK = "\n<!-- pagebreak -->\n"
ANNUAL, QUARTERLY = "annual-2023.txt", "quarterly-2024-q1.txt"


@dataclass(frozen=True)
class Company:
    slug: str
    name: str
    aliases: tuple[str, ...]
    # (annual revenue, annual net income, quarterly revenue, quarterly net income), millions of dollars
    figures: tuple[str, str, str, str]
    business: str
    # A company the annual report names (its largest customer), and the summary the manifest gives it.
    customer: str = "no single customer"
    summary: str | None = None


HALCYON = Company(
    "halcyon",
    "Halcyon Resorts International Inc.",
    (),
    ("1,482.6", "211.4", "402.9", "58.3"),
    "operates beach and mountain resorts",
)
CORVANE = Company(
    "corvane",
    "Corvane Textiles Corporation",
    ("Corvane",),
    ("736.1", "64.8", "188.0", "15.2"),
    "weaves linen and towelling for hotels",
    customer="Halcyon Resorts International",
    summary="Annual report of Corvane Textiles Corporation for fiscal 2023; its largest customer is Halcyon Resorts"
    " International, which bought 31% of its linen.",
)
PACIFIC_LEJU = Company(
    "pacific-leju",
    "Shanghai Pacific Leju Information Co., Ltd.",
    (),
    ("2,904.5", "317.7", "701.2", "80.6"),
    "runs online property listings",
)
PACIFIC_HARBOR = Company(
    "pacific-harbor", "Pacific Harbor Foods Inc.", (), ("955.3", "41.0", "240.7", "9.9"), "cans tuna and salmon"
)
LEJU = Company("leju", "Leju Holdings Limited", (), ("412.8", "22.6", "99.5", "4.1"), "leases office space")
NORVANE_LLC = Company("norvane-llc", "Norvane LLC", ("Norvane",), ("88.2", "7.3", "21.0", "1.6"), "makes valves")
NORVANE_LTD = Company(
    "norvane-limited", "Norvane Limited", ("Norvane",), ("143.9", "12.1", "35.8", "2.9"), "distributes valves"
)
# Names long enough that a clarifying question naming two of them passes its length limit.
MINERAL = Company(
    "northern-mineral",
    "Consolidated Northern Territories Mineral Exploration and Development Holdings Corporation",
    (),
    ("3,310.0", "402.2", "815.4", "99.7"),
    "explores for copper and nickel",
)
RAILWAY = Company(
    "transcontinental-freight",
    "Amalgamated Transcontinental Railway Freight Logistics and Warehousing Services Incorporated",
    (),
    ("5,120.4", "611.9", "1,266.3", "150.2"),
    "hauls freight by rail",
)
COMPANIES = (HALCYON, CORVANE, PACIFIC_LEJU, PACIFIC_HARBOR, LEJU, NORVANE_LLC, NORVANE_LTD, MINERAL, RAILWAY)


def render(company: Company, annual: bool) -> str:
    """One report's three pages: cover, results, customers and risks."""
    revenue, income = (company.figures[0], company.figures[1]) if annual else (company.figures[2], company.figures[3])
    form, period = (
        ("FORM 10-K", "For the fiscal year ended December 31, 2023")
        if annual
        else (
            "FORM 10-Q",
            "For the quarterly period ended March 31, 2024",
        )
    )
    span = "fiscal 2023" if annual else "the first quarter of 2024"
    cover = "\n".join(
        (
            "UNITED STATES SECURITIES AND EXCHANGE COMMISSION",
            form,
            period,
            company.name,
            "(Exact name of registrant as specified in its charter)",
            f"The registrant {company.business}.",
        )
    )
    results = (
        f"Results of operations. Total revenue for {span} was ${revenue} million. Net income for {span} was"
        f" ${income} million. Revenue grew on higher volumes and firmer prices; costs rose with wages and"
        " energy. The company repurchased no shares in the period."
    )
    customers = (
        f"Customers and risks. Our largest customer is {company.customer}. We depend on a small number of"
        " suppliers, on energy prices and on the credit markets. Litigation is not expected to have a material"
        " effect on our financial position."
    )
    return PAGE_BREAK.join((cover, results, customers)) + "\n"


def manifest() -> str:
    """corpus.toml: each company an entity owning its two reports."""
    lines = [
        "# Generated by scripts/make_filings_fixture.py - edit the script, not this file.",
        'format = "scoperag-corpus/v1"',
        f'name = "{CORPUS}"',
        'entity_kind = "company"',
        'exclude = ["README.md"]',
        "",
        "[vocabulary]",
        'generic_words = ["company", "companies", "report", "reports", "filing", "filings"]',
        'units = ["usd", "dollar", "dollars"]',
    ]
    for c in COMPANIES:
        lines += ["", "[[entities]]", f"slug = {json.dumps(c.slug)}", f"name = {json.dumps(c.name)}"]
        lines.append(f"aliases = [{', '.join(json.dumps(a) for a in c.aliases)}]")
    for c in COMPANIES:
        for file, kind in ((ANNUAL, "10-K"), (QUARTERLY, "10-Q")):
            lines += ["", "[[documents]]", f'path = "{c.slug}/{file}"', f'type = "{kind}"']
            lines.append(f'entities = ["{c.slug}"]')
            if file == ANNUAL and c.summary:
                lines.append(f"summary = {json.dumps(c.summary)}")
    return "\n".join(lines) + "\n"


def _path(company: Company, annual: bool) -> str:
    return f"{company.slug}/{ANNUAL if annual else QUARTERLY}"


def _others(*companies: Company) -> tuple[str, ...]:
    """Every report of every company but these."""
    mine = {c.slug for c in companies}
    return tuple(_path(c, a) for c in COMPANIES if c.slug not in mine for a in (True, False))


def _example(
    case: str,
    question: str,
    gold: Sequence[tuple[Company, bool]] = (),
    facts: Sequence[str] = (),
    forbidden: Sequence[str] = (),
    scope: ExampleScope | None = None,
    **labels: Any,
) -> LabelledExample:
    """An example whose facts are checked to stand on page 2 (results) of its gold reports; `labels` are
    further LabelledExample fields (tags, expect_not_found, expect_scope_note, expected_strategy)."""
    for fact in facts:
        if not any(fact in render(c, a).split(PAGE_BREAK)[1] for c, a in gold):
            raise SystemExit(f"fact {fact!r} of {question!r} is on none of its gold pages")
    documents = [_path(c, a) for c, a in gold]
    return make_example(
        corpus=CORPUS,
        case=case,
        question=question,
        scope=(scope or ExampleScope()).model_dump(),
        gold_documents=tuple(documents),
        gold_pages=tuple(GoldPage(document=d, page=2) for d in documents),
        answer_facts=tuple(facts),
        forbidden_documents=tuple(f for f in forbidden if f not in documents),
        split="dev",
        **labels,
    )


# How each company is named in the questions: as people write it.
SPOKEN = {
    HALCYON.slug: ("Halcyon", "HRI", "Halcyon Resorts International"),
    CORVANE.slug: ("Corvane", "Corvane Textiles", "Corvane Textiles Corp."),
    PACIFIC_LEJU.slug: ("Pacific Leju", "Shanghai Pacific Leju", "Pacific Leju Information"),
    PACIFIC_HARBOR.slug: ("Pacific Harbor Foods", "Pacific Harbor", "Pacific Harbor Foods, Inc."),
    LEJU.slug: ("Leju Holdings", "Leju Holdings Ltd", "Leju Holdings Limited"),
}
NAMED = (HALCYON, CORVANE, PACIFIC_LEJU, PACIFIC_HARBOR, LEJU)


def examples() -> list[LabelledExample]:
    """Questions naming a company as people write it, in no scope and in the company's scope; questions
    in another company's scope; an alias two companies share; long names."""
    out: list[LabelledExample] = []
    for company in NAMED:
        first, second, third = SPOKEN[company.slug]
        asked = [
            (f"What was {first}'s total revenue for fiscal 2023?", True, company.figures[0]),
            (f"What net income did {second} report for the quarter ended March 31, 2024?", False, company.figures[3]),
            (f"How much revenue did {third} record in the first quarter of 2024?", False, company.figures[2]),
        ]
        for question, annual, fact in asked:
            gold = [(company, annual)]
            tags = ["finding:names_as_written", "scope:none"]
            out.append(_example("no_scope", question, gold, [fact], _others(company), tags=tags))
            scoped = ExampleScope(property=company.slug)
            tags = ["finding:names_as_written", "scope:property"]
            out.append(_example("property", question, gold, [fact], _others(company), scoped, tags=tags))
    out += [
        # a report that names another company is not that company's
        _example(
            "wrong_property",
            "Who is Halcyon's largest customer and what was its fiscal 2023 net income?",
            [(HALCYON, True)],
            [HALCYON.figures[1]],
            _others(HALCYON),
            tags=["finding:catalog_decides", "wrong_entity", "scope:none"],
        ),
        _example(
            "wrong_property",
            "What was Halcyon's total revenue for fiscal 2023?",
            forbidden=(_path(CORVANE, True), _path(CORVANE, False)),
            scope=ExampleScope(property=CORVANE.slug),
            tags=["finding:catalog_decides", "wrong_entity", "not_in_scope", "scope:property"],
            expect_not_found=True,
            expect_scope_note="other_entity",
        ),
        # an alias two companies share asks which one is meant
        _example(
            "no_scope",
            "What was Norvane's total revenue for fiscal 2023?",
            tags=["finding:shared_alias", "scope:none"],
            expected_strategy="clarify_then_retrieve",
        ),
        # two long names asked in a third company's scope
        _example(
            "wrong_property",
            f"Compare the fiscal 2023 revenue of {MINERAL.name} and {RAILWAY.name}.",
            forbidden=(_path(HALCYON, True), _path(HALCYON, False)),
            scope=ExampleScope(property=HALCYON.slug),
            tags=["finding:long_names", "wrong_entity", "not_in_scope", "scope:property"],
            expect_not_found=True,
            expect_scope_note="other_entity",
        ),
    ]
    return out


def write(corpus_dir: Path, traces_dir: Path) -> list[Path]:
    """Write the corpus and its traces; the paths written."""
    written = []
    for company in COMPANIES:
        for annual in (True, False):
            path = corpus_dir / _path(company, annual)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render(company, annual), encoding="utf-8")
            written.append(path)
    (corpus_dir / "corpus.toml").write_text(manifest(), encoding="utf-8")
    written.append(corpus_dir / "corpus.toml")
    traces_dir.mkdir(parents=True, exist_ok=True)
    write_examples(traces_dir / "dev.jsonl", examples())
    written.append(traces_dir / "dev.jsonl")
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "datasets" / "filings")
    parser.add_argument("--traces", type=Path, default=ROOT / "datasets" / "filings-traces")
    args = parser.parse_args()
    for path in write(args.corpus, args.traces):
        print(path)


if __name__ == "__main__":
    main()
