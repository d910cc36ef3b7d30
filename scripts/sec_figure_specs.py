"""What the computed-figure questions of the SEC 10-Q traces ask: for each company, how its statement of
operations names each line (METRICS), the kinds of figure (KINDS: operation, operands, expression,
wordings), the answer formats a question may ask for (FORMATS) and the questions themselves (SPECS).
scripts/sec_computed.py reads the operands from the filings and works the answers out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

COMPANY = {"AAPL": "Apple", "AMZN": "Amazon", "INTC": "Intel", "MSFT": "Microsoft", "NVDA": "NVIDIA"}
REVENUE = {
    "AAPL": "total net sales",
    "AMZN": "total net sales",
    "INTC": "net revenue",
    "MSFT": "total revenue",
    "NVDA": "revenue",
}
SERVICES = {"AAPL": "Services", "AMZN": "net service sales", "MSFT": "service and other revenue"}

Labels = tuple[tuple[str, ...], str | None]  # line labels (first found wins) and the section they sit in
_ALL = ("AAPL", "AMZN", "INTC", "MSFT", "NVDA")


def _same(labels: tuple[str, ...], tickers: Sequence[str] = _ALL, section: str | None = None) -> dict[str, Labels]:
    return {t: (labels, section) for t in tickers}


# metric -> ticker -> how its statement of operations names the line.
METRICS: Mapping[str, Mapping[str, Labels]] = {
    "revenue": {
        "AAPL": (("Total net sales",), None),
        "AMZN": (("Total net sales",), None),
        "INTC": (("Net revenue",), None),
        "MSFT": (("Total revenue",), None),
        "NVDA": (("Revenue",), None),
    },
    "cost": {
        "AAPL": (("Total cost of sales",), None),
        "AMZN": (("Cost of sales",), None),
        "INTC": (("Cost of sales",), None),
        "MSFT": (("Total cost of revenue",), None),
        "NVDA": (("Cost of revenue",), None),
    },
    "gross": {**_same(("Gross margin",), ("AAPL", "INTC", "MSFT")), "NVDA": (("Gross profit",), None)},
    "rd": _same(("Research and development",), ("AAPL", "INTC", "MSFT", "NVDA")),
    "sga": {
        "AAPL": (("Selling, general and administrative",), None),
        "INTC": (("Marketing, general, and administrative",), None),
        "NVDA": (("Sales, general and administrative",), None),
    },
    "sm": _same(("Sales and marketing",), ("AMZN", "MSFT")),
    "ga": _same(("General and administrative",), ("AMZN", "MSFT")),
    "fulfillment": _same(("Fulfillment",), ("AMZN",)),
    "opinc": _same(("Operating income", "Operating income (loss)", "Income from operations")),
    "net": _same(("Net income (loss) attributable to Intel", "Net income", "Net income (loss)")),
    "services": {
        "AAPL": (("Services",), "Net sales"),
        "AMZN": (("Net service sales",), None),
        "MSFT": (("Service and other",), "Revenue"),
    },
    "pretax": {
        "AAPL": (("Income before provision for income taxes",), None),
        "MSFT": (("Income before income taxes",), None),
    },
    "tax": _same(("Provision for income taxes",), ("AAPL", "MSFT")),
}
# The expenses a "combined operating expenses" question adds up, and how the question names them.
SUMS: Mapping[str, tuple[tuple[str, ...], str]] = {
    "AAPL": (("rd", "sga"), "research and development and selling, general and administrative expenses"),
    "AMZN": (("sm", "ga"), "sales and marketing and general and administrative expenses"),
    "INTC": (("rd", "sga"), "research and development and marketing, general, and administrative expenses"),
    "MSFT": (
        ("rd", "sm", "ga"),
        "research and development, sales and marketing, and general and administrative expenses",
    ),
    "NVDA": (("rd", "sga"), "research and development and sales, general and administrative expenses"),
}


@dataclass(frozen=True)
class Format:
    """How an answer is stated: the question's instruction (none: the default precision), percent or USD
    (in millions or billions), decimal places, and its format tags."""

    instruction: str
    unit: str  # percent | millions | billions
    places: int
    tags: tuple[str, ...] = ()


FORMATS: Mapping[str, Format] = {
    "pct": Format("", "percent", 1),
    "pct_in": Format("Answer in percent.", "percent", 1, ("format:percent",)),
    "pct_1dp": Format("Round to one decimal place.", "percent", 1, ("format:one_decimal",)),
    "pct_2dp": Format(
        "Answer in percent, rounded to two decimal places.", "percent", 2, ("format:percent", "format:two_decimals")
    ),
    "pct_0dp": Format("Round to the nearest whole percent.", "percent", 0, ("format:whole_percent",)),
    "usd_m": Format("Answer in USD millions.", "millions", 0, ("format:usd_millions",)),
    "usd_b2": Format(
        "Answer in USD billions, rounded to two decimal places.",
        "billions",
        2,
        ("format:usd_billions", "format:two_decimals"),
    ),
}


@dataclass(frozen=True)
class Term:
    """One operand of a kind of figure: its name in the expression, the metric, which of the question's
    filings (0-based) and which column ("current" quarter or "prior" year's quarter)."""

    name: str
    metric: str
    filing: int = 0
    column: str = "current"


@dataclass(frozen=True)
class Kind:
    """A kind of computed figure: its operation, operands, expression over their names and wordings."""

    op: str
    terms: tuple[Term, ...]
    expression: str
    wordings: tuple[str, ...]


def _share(metric: str, op: str, wordings: tuple[str, ...]) -> Kind:
    return Kind(op, (Term("part", metric), Term("whole", "revenue")), "{part} / {whole} * 100", wordings)


def _yoy(metric: str, op: str, wordings: tuple[str, ...]) -> Kind:
    terms = (Term("now", metric), Term("before", metric, column="prior"))
    expression = "{now} - {before}" if op == "change" else "({now} - {before}) / {before} * 100"
    return Kind(op, terms, expression, wordings)


KINDS: Mapping[str, Kind] = {
    "gross_margin": _share(
        "gross",
        "margin",
        (
            "What was {co}'s gross margin as a percentage of {revenue} in the quarter ended {date}?",
            "For the three months ended {date}, what was {co}'s gross margin percentage?",
            "What percentage of its {revenue} did {co} keep as gross margin in the quarter ended {date}?",
        ),
    ),
    "gross_margin_cost": Kind(
        "margin",
        (Term("sales", "revenue"), Term("cost", "cost")),
        "({sales} - {cost}) / {sales} * 100",
        (
            "What was {co}'s gross margin ({revenue} less cost of sales, as a percentage of {revenue}) in the"
            " quarter ended {date}?",
            "Taking {revenue} minus cost of sales, what was {co}'s gross margin percentage for the three months"
            " ended {date}?",
        ),
    ),
    "operating_margin": _share(
        "opinc",
        "margin",
        (
            "What was {co}'s operating margin in the quarter ended {date}?",
            "What was {co}'s operating income as a share of {revenue} for the three months ended {date}?",
        ),
    ),
    "net_margin": _share(
        "net",
        "margin",
        (
            "What was {co}'s net income margin in the quarter ended {date}?",
            "What share of {co}'s {revenue} did net income represent in the three months ended {date}?",
        ),
    ),
    "rd_intensity": _share(
        "rd",
        "ratio",
        (
            "What was {co}'s research and development expense as a percentage of {revenue} in the quarter ended"
            " {date}?",
            "How large was {co}'s R&D spending relative to its {revenue} in the three months ended {date}?",
        ),
    ),
    "services_share": _share(
        "services",
        "ratio",
        (
            "What share of {co}'s {revenue} came from {services} in the quarter ended {date}?",
            "What proportion of {co}'s {revenue} for the three months ended {date} was {services}?",
        ),
    ),
    "fulfillment_share": _share(
        "fulfillment",
        "ratio",
        ("What were {co}'s fulfillment expenses as a percentage of {revenue} in the quarter ended {date}?",),
    ),
    "tax_rate": Kind(
        "ratio",
        (Term("tax", "tax"), Term("pretax", "pretax")),
        "{tax} / {pretax} * 100",
        (
            "What was {co}'s effective tax rate for the quarter ended {date}?",
            "Dividing the provision for income taxes by income before income taxes, what was {co}'s effective tax"
            " rate in the three months ended {date}?",
        ),
    ),
    "opex_sum": Kind(
        "sum",
        (),  # the company's SUMS
        "",
        (
            "What were {co}'s combined {sum_name} in the quarter ended {date}?",
            "How much did {co} spend on {sum_name} together in the three months ended {date}?",
        ),
    ),
    "revenue_change_yoy": _yoy(
        "revenue",
        "change",
        (
            "By how much did {co}'s {revenue} change in the quarter ended {date} compared with the quarter ended"
            " {prior_date}?",
            "What was the dollar change in {co}'s {revenue} for the three months ended {date} versus the same quarter"
            " a year earlier?",
        ),
    ),
    "revenue_growth_yoy": _yoy(
        "revenue",
        "pct_change",
        (
            "By what percentage did {co}'s {revenue} change year over year in the quarter ended {date}?",
            "What was {co}'s year-over-year {revenue} growth rate for the three months ended {date}?",
        ),
    ),
    "net_growth_yoy": _yoy(
        "net",
        "pct_change",
        (
            "By what percentage did {co}'s net income change in the quarter ended {date} from the same quarter of the"
            " prior year?",
            "What was the year-over-year percentage change in {co}'s net income for the three months ended {date}?",
        ),
    ),
    "rd_growth_yoy": _yoy(
        "rd",
        "pct_change",
        (
            "How much did {co}'s research and development expense grow, in percent, in the quarter ended {date}"
            " compared with the quarter ended {prior_date}?",
        ),
    ),
    "revenue_change_qoq": Kind(
        "change",
        (Term("now", "revenue", 1), Term("before", "revenue", 0)),
        "{now} - {before}",
        ("How much did {co}'s {revenue} change from the quarter ended {d1} to the quarter ended {d2}?",),
    ),
    "revenue_growth_qoq": Kind(
        "pct_change",
        (Term("now", "revenue", 1), Term("before", "revenue", 0)),
        "({now} - {before}) / {before} * 100",
        (
            "What was the percentage change in {co}'s {revenue} between the quarter ended {d1} and the quarter ended"
            " {d2}?",
        ),
    ),
    "revenue_average": Kind(
        "average",
        tuple(Term(f"q{i}", "revenue", i) for i in range(4)),
        "({q0} + {q1} + {q2} + {q3}) / 4",
        ("What was {co}'s average quarterly {revenue} over the quarters ended {dates}?",),
    ),
    "rd_average": Kind(
        "average",
        tuple(Term(f"q{i}", "rd", i) for i in range(4)),
        "({q0} + {q1} + {q2} + {q3}) / 4",
        (
            "On average, how much did {co} spend on research and development per quarter over the quarters ended"
            " {dates}?",
        ),
    ),
}

FOUR = ("2022 Q3", "2023 Q1", "2023 Q2", "2023 Q3")
# (company, kind, the filings' quarters, format, wording): each row is one question.
SPECS: tuple[tuple[str, str, tuple[str, ...], str, int], ...] = (
    ("AAPL", "services_share", ("2022 Q3",), "pct_in", 0),
    ("AAPL", "operating_margin", ("2022 Q3",), "pct_1dp", 1),
    ("AAPL", "gross_margin", ("2023 Q1",), "pct", 0),
    ("AAPL", "opex_sum", ("2023 Q1",), "usd_m", 0),
    ("AAPL", "tax_rate", ("2023 Q2",), "pct_1dp", 0),
    ("AAPL", "revenue_growth_yoy", ("2023 Q2",), "pct_2dp", 1),
    ("AAPL", "rd_intensity", ("2023 Q3",), "pct_0dp", 0),
    ("AAPL", "net_margin", ("2023 Q3",), "pct", 0),
    ("AAPL", "revenue_change_qoq", ("2023 Q2", "2023 Q3"), "usd_m", 0),
    ("AAPL", "revenue_average", FOUR, "usd_b2", 0),
    ("AMZN", "gross_margin_cost", ("2022 Q3",), "pct_1dp", 1),
    ("AMZN", "revenue_change_yoy", ("2022 Q3",), "usd_m", 0),
    ("AMZN", "services_share", ("2023 Q1",), "pct_2dp", 1),
    ("AMZN", "opex_sum", ("2023 Q1",), "usd_m", 1),
    ("AMZN", "operating_margin", ("2023 Q2",), "pct", 0),
    ("AMZN", "fulfillment_share", ("2023 Q2",), "pct_1dp", 0),
    ("AMZN", "revenue_growth_yoy", ("2023 Q3",), "pct_1dp", 0),
    ("AMZN", "net_margin", ("2023 Q3",), "pct_in", 1),
    ("AMZN", "revenue_growth_qoq", ("2023 Q2", "2023 Q3"), "pct_1dp", 0),
    ("AMZN", "revenue_average", FOUR, "usd_b2", 0),
    ("INTC", "gross_margin", ("2022 Q3",), "pct_2dp", 0),
    ("INTC", "rd_intensity", ("2022 Q3",), "pct_1dp", 1),
    ("INTC", "revenue_growth_yoy", ("2023 Q1",), "pct", 0),
    ("INTC", "opex_sum", ("2023 Q1",), "usd_m", 1),
    ("INTC", "gross_margin", ("2023 Q2",), "pct_0dp", 2),
    ("INTC", "revenue_change_yoy", ("2023 Q2",), "usd_b2", 1),
    ("INTC", "rd_growth_yoy", ("2023 Q3",), "pct_1dp", 0),
    ("INTC", "rd_intensity", ("2023 Q3",), "pct_in", 0),
    ("INTC", "revenue_change_qoq", ("2023 Q2", "2023 Q3"), "usd_m", 0),
    ("INTC", "rd_average", FOUR, "usd_b2", 0),
    ("MSFT", "gross_margin", ("2022 Q3",), "pct_1dp", 1),
    ("MSFT", "tax_rate", ("2022 Q3",), "pct", 1),
    ("MSFT", "opex_sum", ("2023 Q1",), "usd_m", 0),
    ("MSFT", "services_share", ("2023 Q1",), "pct_0dp", 0),
    ("MSFT", "operating_margin", ("2023 Q2",), "pct_2dp", 1),
    ("MSFT", "net_growth_yoy", ("2023 Q2",), "pct_1dp", 0),
    ("MSFT", "revenue_growth_yoy", ("2023 Q3",), "pct", 0),
    ("MSFT", "rd_intensity", ("2023 Q3",), "pct_1dp", 1),
    ("MSFT", "revenue_growth_qoq", ("2023 Q1", "2023 Q2"), "pct_2dp", 0),
    ("MSFT", "revenue_average", FOUR, "usd_b2", 0),
    ("NVDA", "net_growth_yoy", ("2022 Q3",), "pct_1dp", 1),
    ("NVDA", "gross_margin", ("2022 Q3",), "pct", 2),
    ("NVDA", "operating_margin", ("2023 Q1",), "pct_1dp", 0),
    ("NVDA", "opex_sum", ("2023 Q1",), "usd_m", 1),
    ("NVDA", "revenue_growth_yoy", ("2023 Q2",), "pct_0dp", 1),
    ("NVDA", "rd_intensity", ("2023 Q2",), "pct_2dp", 1),
    ("NVDA", "revenue_change_yoy", ("2023 Q3",), "usd_m", 1),
    ("NVDA", "net_margin", ("2023 Q3",), "pct_1dp", 1),
    ("NVDA", "revenue_growth_qoq", ("2023 Q2", "2023 Q3"), "pct_1dp", 0),
    ("NVDA", "rd_average", FOUR, "usd_b2", 0),
)
