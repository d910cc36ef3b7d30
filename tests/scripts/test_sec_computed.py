"""Computed-figure examples of the SEC 10-Q traces: statements of operations read from a filing's text, answers
worked out from the operands, rounded to the question's precision and recomputed before they are written."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction

import pytest

from pipeline.errors import ExamplesError
from pipeline.evaluation.examples import SPLITS, load_examples
from pipeline.values.arithmetic import evaluate_arithmetic
from tests.support.paths import ROOT
from tests.support.scripts import load_script

statements = load_script("sec_statements")
computed = load_script("sec_computed")
sec = load_script("make_sec_traces")
filings = load_script("sec_filings")
COMMITTED = ROOT / "datasets" / "sec-10q" / "traces"

# Apple's statement of operations for the quarter ended December 31, 2022, as the index reads page 4.
APPLE = """PART I — FINANCIAL INFORMATION
Item 1. Financial Statements
Apple Inc.
CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS (Unaudited)
(In millions, except number of shares which are reflected in thousands and per share amounts)
Three Months Ended
December 31,
2022
December 25,
2021
Net sales:
Products $ 96,388 $ 104,429
Services 20,766 19,516
Total net sales 117,154 123,945
Cost of sales:
Products 60,765 64,309
Services 6,057 5,393
Total cost of sales 66,822 69,702
Gross margin 50,332 54,243
Operating expenses:
Research and development 7,709 6,306
Selling, general and administrative 6,607 6,449
Total operating expenses 14,316 12,755
Operating income 36,016 41,488
Other income/(expense), net (393) (247)
Net income $ 29,998 $ 34,630
Apple Inc. | Q1 2023 Form 10-Q | 1"""
# Amazon prints the prior year's column first, and a period end once for both years.
AMAZON = """AMAZON.COM, INC.
CONSOLIDATED STATEMENTS OF OPERATIONS
(in millions, except per share data)
(unaudited)
Three Months Ended
September 30,
Nine Months Ended
September 30,
2022 2023 2022 2023
Net product sales $ 59,340 $ 63,171 $ 172,370 $ 179,184
Total net sales 127,101 143,083 364,779 404,824
Cost of sales 70,268 75,022 203,191 212,186
Other operating expense (income), net 165 244 504 613
Net income (loss) $ 2,872 $ 9,879 $ (3,000) $ 19,801"""
PAGES = {"2023 Q1 AAPL.pdf": ("cover", "contents", "more", APPLE)}


def test_statement_values_and_lines() -> None:
    assert statements.parse_value("1,019") == 1019
    assert statements.parse_value("(393)") == -393
    assert statements.parse_value("—") == 0
    with pytest.raises(ExamplesError, match="not a statement value"):
        statements.parse_value("12a")
    assert statements.split_line("Products $ 96,388 $ 104,429") == ("Products", ("96,388", "104,429"))
    assert statements.split_line("Acquisition termination cost — — — 1,353") == (
        "Acquisition termination cost",
        ("—", "—", "—", "1,353"),
    )


def test_a_statement_is_read_with_its_quarters_sections_and_columns() -> None:
    apple = statements.read_statement("2023 Q1 AAPL.pdf", PAGES["2023 Q1 AAPL.pdf"])
    assert (apple.page, apple.period_end, apple.prior_period_end) == (4, "December 31, 2022", "December 25, 2021")
    services = apple.operand(("Services",), "Net sales")
    assert (services.printed, services.value, services.page) == ("20,766", Decimal(20766), 4)
    assert apple.operand(("Services",), "Cost of sales", column="prior").value == 5393
    with pytest.raises(ExamplesError, match="2 lines named 'Services'"):
        apple.operand(("Services",))
    with pytest.raises(ExamplesError, match="no line named any of"):
        apple.operand(("Revenue",))
    amazon = statements.parse_statement("2023 Q3 AMZN.pdf", 4, AMAZON)
    assert amazon is not None and amazon.current == 1 and amazon.years == (2022, 2023, 2022, 2023)
    assert (amazon.period_end, amazon.prior_period_end) == ("September 30, 2023", "September 30, 2022")
    assert amazon.operand(("Total net sales",)).value == 143083
    assert amazon.operand(("Net income (loss)",), column="prior").value == 2872
    assert statements.parse_statement("x.pdf", 1, "Table of contents\nStatements of Operations 3") is None
    with pytest.raises(ExamplesError, match="no statement of operations"):
        statements.read_statement("x.pdf", ("cover",))


def test_answers_are_stated_to_the_questions_precision() -> None:
    fmt = computed.FORMATS
    assert computed.state(Fraction(50332 * 100, 117154), fmt["pct"]) == "43.0%"
    assert computed.state(Fraction(50332 * 100, 117154), fmt["pct_2dp"]) == "42.96%"
    assert computed.state(Fraction(50332 * 100, 117154), fmt["pct_0dp"]) == "43%"
    assert computed.state(Fraction(14316), fmt["usd_m"]) == "$14,316 million"
    assert computed.state(Fraction(-2372), fmt["usd_b2"]) == "-$2.37 billion"
    assert computed.state(Fraction(-1264, 10), fmt["pct"]) == "-126.4%"
    with pytest.raises(ExamplesError, match="exactly halfway"):
        computed.state(Fraction(13215), fmt["usd_b2"])  # 13.215 billion


def test_a_figure_is_worked_out_from_operands_read_from_the_page() -> None:
    apple = {"2023 Q1 AAPL.pdf": statements.read_statement("2023 Q1 AAPL.pdf", PAGES["2023 Q1 AAPL.pdf"])}
    margin = computed.figure("AAPL", "gross_margin", ("2023 Q1",), "pct", 0, apple)
    assert margin.question == (
        "What was Apple's gross margin as a percentage of total net sales in the quarter ended December 31, 2022?"
    )
    assert (margin.expression, margin.answer, margin.op) == ("50332 / 117154 * 100", "43.0%", "margin")
    assert [(o.label, o.printed, o.page) for o in margin.operands] == [
        ("Gross margin", "50,332", 4),
        ("Total net sales", "117,154", 4),
    ]
    spend = computed.figure("AAPL", "opex_sum", ("2023 Q1",), "usd_m", 0, apple)
    assert spend.question.endswith("in the quarter ended December 31, 2022? Answer in USD millions.")
    assert (spend.expression, spend.answer) == ("7709 + 6607", "$14,316 million")
    growth = computed.figure("AAPL", "revenue_growth_yoy", ("2023 Q1",), "pct_1dp", 0, apple)
    assert (growth.expression, growth.answer) == ("(117154 - 123945) / 123945 * 100", "-5.5%")
    computed.check_figure(margin, PAGES)


def test_the_check_recomputes_and_refuses_a_wrong_answer_or_operand() -> None:
    apple = {"2023 Q1 AAPL.pdf": statements.read_statement("2023 Q1 AAPL.pdf", PAGES["2023 Q1 AAPL.pdf"])}
    margin = computed.figure("AAPL", "gross_margin", ("2023 Q1",), "pct", 0, apple)
    with pytest.raises(ExamplesError, match=r"recomputed 50332 / 117154 \* 100 = 43\.0%, the example says 44\.0%"):
        computed.check_figure(replace(margin, answer="44.0%"), PAGES)
    tampered = {"2023 Q1 AAPL.pdf": (*PAGES["2023 Q1 AAPL.pdf"][:3], APPLE.replace("50,332", "50,333"))}
    with pytest.raises(ExamplesError, match="has no line 'Gross margin' showing 50,332"):
        computed.check_figure(margin, tampered)
    wrong_value = replace(margin.operands[0], value=Decimal(50000))
    with pytest.raises(ExamplesError, match="showing 50,332"):
        computed.check_figure(replace(margin, operands=(wrong_value, margin.operands[1])), PAGES)


def test_a_figure_on_a_base_that_is_not_positive_is_refused() -> None:
    loss = APPLE.replace("Total net sales 117,154 123,945", "Total net sales (117,154) 123,945")
    apple = {"2023 Q1 AAPL.pdf": statements.read_statement("2023 Q1 AAPL.pdf", ("", "", "", loss))}
    with pytest.raises(ExamplesError, match="base figure is not positive"):
        computed.figure("AAPL", "gross_margin", ("2023 Q1",), "pct", 0, apple)


def test_every_figure_of_the_filings_checks_out_and_spans_the_operations(sec_pages: dict[str, Sequence[str]]) -> None:
    figures = computed.computed_figures(sec_pages)
    assert len(figures) == len(computed.SPECS) >= 50
    assert {f.op for f in figures} == {"margin", "ratio", "sum", "change", "pct_change", "average"}
    by_question = {f.question: f for f in figures}
    apple = by_question[
        "What was Apple's gross margin as a percentage of total net sales in the quarter ended December 31, 2022?"
    ]
    assert apple.answer == "43.0%" and apple.documents == ("2023 Q1 AAPL.pdf",)
    average = next(f for f in figures if f.kind == "revenue_average" and f.ticker == "AAPL")
    assert len(average.documents) == 4 and len(average.operands) == 4


def test_the_committed_figures_recompute_from_their_operands() -> None:
    examples = {e.id: e for s in SPLITS for e in load_examples(COMMITTED / f"{s}.jsonl")}
    records = [json.loads(line) for line in (COMMITTED / sec.FIGURES_FILE).read_text(encoding="utf-8").splitlines()]
    tagged = {e.id for e in examples.values() if "computed" in e.tags}
    assert len(tagged) >= 60 and tagged == {i for r in records for i in r["example_ids"]}
    for record in records:
        operands = record["operands"]
        assert len(operands) >= 2
        # the expression is the formula over the operands' values, in order
        values = [o["value"] for o in operands]
        assert all(Decimal(o["printed"].replace(",", "").strip("()")) == abs(Decimal(o["value"])) for o in operands)
        assert [v for v in values if v in record["expression"]] == values
        value = Fraction(evaluate_arithmetic(record["expression"]))
        answer = record["answer"]
        places = len(answer.split(".")[1].split()[0].rstrip("%")) if "." in answer else 0
        scaled = value / 1000 if answer.endswith("billion") else value
        assert answer.replace("$", "").replace(",", "").split()[0].rstrip("%") == f"{float(scaled):.{places}f}"
        for example_id in record["example_ids"]:
            e = examples[example_id]
            assert e.answer_facts == (answer,) and e.question == record["question"]
            assert set(e.gold_documents) == {o["document"] for o in operands}
            assert {(p.document, p.page) for p in e.gold_pages} == {(o["document"], o["page"]) for o in operands}
            assert e.split == filings.split_of(e.question)
