"""Unanswerable-in-scope examples of the SEC 10-Q traces: the right filing selected or the right company as
scope, and the fact asked in none of its filings (unit sales Apple does not report, a segment it does not
have, a backlog, a headcount, an outlook a 10-Q does not give).

Each fact becomes a chip example (the filing of the quarter asked about selected) and a company-scope
example (every filing of the company in scope), both expecting "not found". Before either is kept,
scripts/absence.py checks that none of the fact's markers occurs in any page (and, given an index, any
chunk) of a filing in scope.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # scripts/ is no package: its builders import each other by name

import sec_filings as sec  # noqa: E402
from absence import require_absent  # noqa: E402
from sec_statements import read_statement  # noqa: E402

from pipeline.evaluation.examples import LabelledExample, make_example  # noqa: E402

# A headcount stated as a number ("approximately 164,000 full-time employees").
EMPLOYEES = (
    r"\d[\d,.]* (?:full-time |part-time )?(?:employees|people|staff|workers)",
    "employed approximately",
    "total headcount",
    r"headcount (?:of|was|is|totaled)",
    r"workforce of \d",
    "number of employees",
)
UNITS_SOLD = (r"units? sold", "unit sales", r"units? shipped", "unit shipments", r"\d[\d,.]* (?:million )?units")
AVERAGE_PRICE = (
    "average selling price",
    r"asps?",
    r"price per (?:device|unit)",
    r"average (?:sales |selling )?price of",
)
EXECUTIVE_PAY = (
    r"(?:chief executive officer|ceo)['’]?s? (?:total |annual |base )?(?:compensation|salary|pay)",
    r"(?:base|annual) salary",
    r"compensation (?:of|paid to) (?:our|the|its) (?:chief executive officer|ceo)",
)
OUTLOOK = (
    "outlook",
    "guidance",
    r"revenue (?:is |are )?(?:expected|projected|forecast) to be",
    r"expects? (?:total )?(?:net sales|revenue) (?:to|of)",
)


@dataclass(frozen=True)
class AbsentFact:
    """A fact no filing of the company states: the chip's quarter and question, the company-scope question
    (`{date}` is a quarter's end, `scope_quarter` names which), and the markers a filing stating it would hold."""

    ticker: str
    topic: str
    chip_quarter: str
    chip_question: str
    scope_question: str
    markers: tuple[str, ...]
    scope_quarter: str = "2023 Q3"


ABSENT_FACTS: tuple[AbsentFact, ...] = (
    AbsentFact(
        "AAPL",
        "unit_sales",
        "2023 Q1",
        "How many iPhone units did Apple sell in the quarter ended {date}?",
        "How many iPhones did Apple ship in the three months ended {date}?",
        (*UNITS_SOLD, r"(?:iphones?|devices) sold", r"\d[\d,.]* (?:million )?iphones"),
    ),
    AbsentFact(
        "AAPL",
        "store_count",
        "2022 Q3",
        "How many retail stores did Apple operate at the end of the quarter ended {date}?",
        "How many Apple Stores were open worldwide as of {date}?",
        (r"retail stores?", r"\d[\d,]* stores", "store count", r"apple stores?", "number of stores"),
        "2023 Q2",
    ),
    AbsentFact(
        "AAPL",
        "segment_not_reported",
        "2023 Q2",
        "What were Apple's net sales in its Latin America segment for the quarter ended {date}?",
        "How much revenue did Apple's Latin America segment report in the three months ended {date}?",
        ("latin america", "latam"),
    ),
    AbsentFact(
        "AAPL",
        "market_share",
        "2023 Q3",
        "What was Apple's share of the global smartphone market in the quarter ended {date}?",
        "What share of the smartphone market did the iPhone hold as of {date}?",
        ("market share", "smartphone market", r"share of the (?:global |worldwide )?(?:smartphone|phone) market"),
        "2023 Q1",
    ),
    AbsentFact(
        "AAPL",
        "headcount",
        "2023 Q2",
        "How many full-time employees did Apple have as of {date}?",
        "What was Apple's total headcount at the end of the quarter ended {date}?",
        EMPLOYEES,
    ),
    AbsentFact(
        "AAPL",
        "outlook",
        "2023 Q3",
        "What revenue guidance for the next quarter did Apple give in its 10-Q for the quarter ended {date}?",
        "What net sales did Apple forecast for the quarter after the one ended {date}?",
        OUTLOOK,
        "2023 Q2",
    ),
    AbsentFact(
        "AAPL",
        "average_price",
        "2022 Q3",
        "What was the average selling price of an iPhone in the quarter ended {date}?",
        "How much did Apple receive per iPhone sold, on average, in the three months ended {date}?",
        AVERAGE_PRICE,
    ),
    AbsentFact(
        "AAPL",
        "subscriptions",
        "2023 Q1",
        "How many paid subscriptions did Apple's services have as of {date}?",
        "What was the number of paid subscriptions across Apple's services at the end of the quarter ended {date}?",
        ("paid subscriptions", r"\d[\d,.]* (?:million )?(?:paid )?subscriptions", "subscribers"),
        "2023 Q2",
    ),
    AbsentFact(
        "AMZN",
        "member_count",
        "2023 Q1",
        "How many Prime members did Amazon have at the end of the quarter ended {date}?",
        "What was Amazon's Prime membership count as of {date}?",
        (
            r"\d[\d,.]* (?:million )?(?:paid )?prime members",
            r"prime members(?:hip)? (?:grew|reached|increased|totaled|was|of \d)",
            "number of prime",
            "prime subscribers",
        ),
    ),
    AbsentFact(
        "AMZN",
        "floor_space",
        "2022 Q3",
        "How many square feet of fulfillment and data center space did Amazon add in the quarter ended {date}?",
        "What was the total square footage of Amazon's fulfillment network as of {date}?",
        ("square feet", "square footage", r"sq\.? ?ft", "million square"),
    ),
    AbsentFact(
        "AMZN",
        "headcount",
        "2023 Q3",
        "How many employees did Amazon have as of {date}?",
        "How many full-time and part-time employees did Amazon employ at the end of the quarter ended {date}?",
        EMPLOYEES,
        "2023 Q1",
    ),
    AbsentFact(
        "AMZN",
        "emissions",
        "2023 Q2",
        "What were Amazon's carbon emissions in the quarter ended {date}?",
        "How much greenhouse gas did Amazon emit in the three months ended {date}?",
        ("carbon", r"emissions?", "greenhouse", "co2", r"net[- ]zero", "climate pledge"),
    ),
    AbsentFact(
        "AMZN",
        "customer_count",
        "2023 Q2",
        "How many active customers did AWS have at the end of the quarter ended {date}?",
        "How many customers used Amazon Web Services as of {date}?",
        (
            r"\d[\d,.]* (?:million |thousand )?(?:active )?customers",
            "active customers",
            "customer count",
            r"number of (?:active )?customers",
        ),
        "2022 Q3",
    ),
    AbsentFact(
        "AMZN",
        "package_count",
        "2023 Q3",
        "How many packages did Amazon deliver in the quarter ended {date}?",
        "How many parcels did Amazon's delivery network handle in the three months ended {date}?",
        ("packages", "parcels", r"\d[\d,.]* (?:million |billion )?(?:packages|parcels|deliveries|shipments)"),
        "2023 Q2",
    ),
    AbsentFact(
        "INTC",
        "backlog",
        "2023 Q1",
        "What was Intel's order backlog at the end of the quarter ended {date}?",
        "How large was Intel's backlog of unfilled orders as of {date}?",
        ("backlog", "order book", "bookings", "unfilled orders", r"remaining performance obligations?"),
    ),
    AbsentFact(
        "INTC",
        "headcount",
        "2022 Q3",
        "How many people did Intel employ at the end of the quarter ended {date}?",
        "What was Intel's employee headcount as of {date}?",
        EMPLOYEES,
        "2023 Q2",
    ),
    AbsentFact(
        "INTC",
        "emissions",
        "2023 Q2",
        "What were Intel's greenhouse gas emissions in the quarter ended {date}?",
        "How many tonnes of CO2 did Intel's operations emit in the three months ended {date}?",
        ("greenhouse", r"emissions?", "carbon", "co2", r"scope [123]", r"net[- ]zero", r"tonnes?"),
    ),
    AbsentFact(
        "INTC",
        "executive_pay",
        "2023 Q3",
        "What total compensation did Intel pay its CEO in the quarter ended {date}?",
        "What was the base salary of Intel's chief executive officer as of {date}?",
        EXECUTIVE_PAY,
        "2023 Q1",
    ),
    AbsentFact(
        "MSFT",
        "active_users",
        "2023 Q1",
        "How many monthly active users did Microsoft Teams have as of {date}?",
        "What was the number of Microsoft Teams daily active users at the end of the quarter ended {date}?",
        ("monthly active", "daily active", "active users", r"maus?", r"daus?"),
    ),
    AbsentFact(
        "MSFT",
        "churn",
        "2022 Q3",
        "What was the churn rate of Microsoft 365 commercial subscribers in the quarter ended {date}?",
        "What renewal rate did Microsoft report for Office 365 commercial subscriptions in the three months ended"
        " {date}?",
        ("churn", "renewal rate", "retention rate", "attrition"),
        "2023 Q2",
    ),
    AbsentFact(
        "MSFT",
        "average_price",
        "2023 Q2",
        "What was the average selling price of Microsoft's Surface devices in the quarter ended {date}?",
        "How much did a Surface device sell for on average in the three months ended {date}?",
        AVERAGE_PRICE,
    ),
    AbsentFact(
        "MSFT",
        "headcount",
        "2022 Q3",
        "How many employees did Microsoft have as of {date}?",
        "What was Microsoft's total headcount at the end of the quarter ended {date}?",
        EMPLOYEES,
    ),
    AbsentFact(
        "NVDA",
        "outlook",
        "2023 Q2",
        "What revenue outlook for the next quarter did NVIDIA give in its 10-Q for the quarter ended {date}?",
        "What revenue guidance for the following quarter did NVIDIA state as of {date}?",
        OUTLOOK,
    ),
    AbsentFact(
        "NVDA",
        "unit_sales",
        "2023 Q3",
        "How many H100 GPUs did NVIDIA ship in the quarter ended {date}?",
        "How many data center GPUs did NVIDIA sell in the three months ended {date}?",
        (*UNITS_SOLD, r"gpus (?:sold|shipped)", r"\d[\d,.]* (?:million |thousand )?gpus"),
        "2023 Q2",
    ),
    AbsentFact(
        "NVDA",
        "executive_pay",
        "2023 Q1",
        "What total compensation did NVIDIA pay its chief executive officer in the quarter ended {date}?",
        "What was the base salary of NVIDIA's CEO as of {date}?",
        EXECUTIVE_PAY,
    ),
    AbsentFact(
        "NVDA",
        "developer_count",
        "2022 Q3",
        "How many developers were using NVIDIA's CUDA platform as of {date}?",
        "How many developers did NVIDIA's developer ecosystem count at the end of the quarter ended {date}?",
        (r"\d[\d,.]* (?:million )?developers", "cuda", "number of developers", "developer ecosystem"),
    ),
)


def _filings(ticker: str) -> tuple[str, ...]:
    return tuple(d for d in sec.SEC_DOCUMENTS if sec.ticker_of(d) == ticker)


def _quarter_end(document: str, pages: Mapping[str, Sequence[str]]) -> str:
    """The end of the quarter a filing reports ("December 31, 2022"), as its statement of operations says."""
    return read_statement(document, pages[document]).period_end


def absent_examples(
    pages: Mapping[str, Sequence[str]], chunks: Mapping[str, Sequence[str]] | None = None
) -> list[LabelledExample]:
    """The chip and company-scope example of every ABSENT_FACTS entry, each checked absent from its scope."""
    out: list[LabelledExample] = []
    for fact in ABSENT_FACTS:
        chip = f"{fact.chip_quarter} {fact.ticker}.pdf"
        dated = {q: _quarter_end(f"{q} {fact.ticker}.pdf", pages) for q in (fact.chip_quarter, fact.scope_quarter)}
        others = tuple(d for d in sec.SEC_DOCUMENTS if sec.ticker_of(d) != fact.ticker)
        tags = ("not_in_scope", "absent_in_scope", f"topic:{fact.topic}")
        for case, question, scope, in_scope in (
            ("chip", fact.chip_question.format(date=dated[fact.chip_quarter]), {"document_ids": (chip,)}, (chip,)),
            (
                "property",
                fact.scope_question.format(date=dated[fact.scope_quarter]),
                {"property": fact.ticker.lower()},
                _filings(fact.ticker),
            ),
        ):
            require_absent(f"{case} example {question!r}", fact.markers, in_scope, pages, chunks)
            out.append(
                make_example(
                    corpus=sec.CORPUS,
                    case=case,
                    question=question,
                    scope=scope,
                    forbidden_documents=others,
                    expect_not_found=True,
                    expected_plan="one_step",
                    tags=(*tags, "scope:chip" if case == "chip" else "scope:property"),
                    split=sec.split_of(question),
                )
            )
    return out
