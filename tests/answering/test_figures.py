"""Figures read from tables (pipeline.answering.figures, figure_answers, typed_answers): the row whose label
names the metric, the column of the period asked, the table's scale and currency, and the typed value."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from decimal import Decimal

import pytest

from pipeline.answering.figure_answers import figure_for, figure_line, metric_ask, render_row
from pipeline.answering.figures import MetricAsk, cell_value, find_figure, label_score, metric_terms, row_figures
from pipeline.answering.metric_labels import alternatives
from pipeline.answering.typed_answers import figure_value, line_value
from pipeline.intake.contract import read_contract
from pipeline.types import Chunk, ChunkHit, RowCell, TableRow
from pipeline.values.columns import column_period
from pipeline.values.periods import Period, find_periods

Q3 = "Three Months Ended July 1, 2023"
Q3_PRIOR = "Three Months Ended June 25, 2022"
YTD = "Nine Months Ended July 1, 2023"
INCOME = "CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS (Unaudited)"


def row(
    label: str,
    cells: Sequence[tuple[str, str]],
    *,
    page: int = 4,
    parents: tuple[str, ...] = (),
    title: str = INCOME,
    scale: str | None = "million",
    currency: str | None = "USD",
    ordinal: int = 0,
) -> TableRow:
    return TableRow(page, 0, ordinal, label, tuple(RowCell(t, h) for t, h in cells), parents, scale, currency, title)


STATEMENT = [
    row("Products", [("$60,584", Q3), ("$63,355", Q3_PRIOR), ("$230,901", YTD)], parents=("Net sales:",)),
    row("Services", [("21,213", Q3), ("19,604", Q3_PRIOR), ("62,886", YTD)], parents=("Net sales:",)),
    row("Total net sales", [("81,797", Q3), ("82,959", Q3_PRIOR), ("293,787", YTD)], parents=("Net sales:",)),
    row("Research and development", [("7,442", Q3), ("6,797", Q3_PRIOR), ("22,608", YTD)]),
    row("Other income/(expense), net", [("(265)", Q3), ("(10)", Q3_PRIOR), ("(594)", YTD)]),
    row("Basic", [("$1.27", Q3), ("$1.20", Q3_PRIOR), ("$4.69", YTD)], parents=("Earnings per share:",)),
    row("Gross margin percentage", [("44.5%", Q3), ("43.3%", Q3_PRIOR), ("43.8%", YTD)]),
]
SEGMENTS = [
    row(
        "Net sales",
        [("$35,383", Q3), ("$37,472", Q3_PRIOR)],
        parents=("Americas:",),
        page=12,
        title="Segment Information",
    ),
]


def ask(question: str, **changes: object) -> MetricAsk:
    contract = read_contract(question)
    made = metric_ask(contract.question, contract.question, contract, frozenset())
    return made if not changes else MetricAsk(**{**made.__dict__, **changes})


def test_metric_terms_leave_out_framing_periods_and_figures() -> None:
    assert metric_terms("How large were the total assets as of July 1, 2023?") == ("asset",)
    assert metric_terms("In the second quarter of fiscal 2023, what was revenue?") == ("revenu",)


def test_a_label_with_other_words_scores_below_one_that_names_only_the_metric() -> None:
    assert label_score(("revenu",), ("total", "net", "revenu")) == 1.0
    assert label_score(("revenu",), ("cost", "sale")) < 0.7


@pytest.mark.parametrize(
    ("header", "end", "months"),
    [
        (Q3, date(2023, 7, 1), 3),
        (YTD, date(2023, 7, 1), 9),
        ("Year ended 31 December 2022", date(2022, 12, 31), 12),
        ("December 31, 2022", date(2022, 12, 31), None),
        ("52 Weeks Ended December 30, 2023", date(2023, 12, 30), 12),
    ],
)
def test_a_column_header_gives_its_period(header: str, end: date, months: int | None) -> None:
    period = column_period(header)
    assert (period.end, period.months) == (end, months)


def test_a_year_alone_is_a_column_of_that_year() -> None:
    assert column_period("2023").year == 2023 and column_period("FY23").year == 2023


@pytest.mark.parametrize(("text", "value"), [("$81,797", "81797"), ("(265)", "-265"), ("—", "0"), ("44.5%", "44.5")])
def test_cell_values(text: str, value: str) -> None:
    read = cell_value(text)
    assert read is not None and read[0] == Decimal(value)


def test_the_total_row_of_the_quarter_asked_answers_with_the_tables_scale() -> None:
    found = find_figure(ask("What were the total net sales for the quarter ended July 1, 2023?"), {"d": STATEMENT})
    assert found is not None and found.row.label == "Total net sales"
    assert found.cell.header == Q3 and found.value == Decimal(81_797_000_000)


def test_year_to_date_asked_reads_the_nine_months_column() -> None:
    found = find_figure(ask("What were the total net sales for the nine months ended July 1, 2023?"), {"d": STATEMENT})
    assert found is not None and found.cell.text == "293,787"


def test_no_period_asked_reads_the_latest_column_of_the_shortest_span() -> None:
    found = find_figure(ask("What were the total net sales?"), {"d": STATEMENT})
    assert found is not None and found.cell.header == Q3


def test_a_period_no_column_holds_gives_no_figure() -> None:
    assert find_figure(ask("What were the total net sales for fiscal 2019?"), {"d": STATEMENT}) is None


def test_a_segment_row_does_not_answer_for_the_total() -> None:
    found = find_figure(ask("What were net sales for the quarter ended July 1, 2023?"), {"d": [*SEGMENTS, *STATEMENT]})
    assert found is not None and found.row.label == "Total net sales"


def test_per_share_and_percentages_answer_only_their_own_questions() -> None:
    eps = find_figure(ask("What were basic earnings per share for the quarter ended July 1, 2023?"), {"d": STATEMENT})
    assert eps is not None and eps.value == Decimal("1.27") and eps.unit == "per share"
    margin = find_figure(ask("What was the gross margin (%) for the quarter ended July 1, 2023?"), {"d": STATEMENT})
    assert margin is not None and margin.value == Decimal("44.5") and margin.unit == "%"
    plain = row_figures(ask("What was research and development for the quarter ended July 1, 2023?"), "d", STATEMENT)
    assert plain and all(f.unit is None for f in plain)


def test_an_outflow_printed_in_brackets_is_its_amount() -> None:
    cash_flow = [
        row(
            "Payments for acquisition of property, plant and equipment",
            [("(8,796)", YTD)],
            title="CONDENSED CONSOLIDATED STATEMENTS OF CASH FLOWS",
            parents=("Investing activities:",),
        )
    ]
    found = find_figure(
        ask("What were the capital expenditures for the nine months ended July 1, 2023?"), {"d": cash_flow}
    )
    assert found is not None and found.value == Decimal(8_796_000_000)


def test_the_metric_is_found_in_the_words_statements_use_for_it() -> None:
    assert ("net", "cash", "provid", "oper", "activ") in alternatives(metric_terms("Cash flow from operations"))
    cash_flow = [
        row(
            "Net cash provided by operating activities",
            [("12,345", "Year Ended December 31, 2023"), ("11,000", "Year Ended December 31, 2022")],
            title="CONSOLIDATED STATEMENTS OF CASH FLOWS",
        )
    ]
    found = find_figure(ask("What was the Cash flow from operations in fiscal 2023?"), {"d": cash_flow})
    assert found is not None and found.value == Decimal(12_345_000_000)


class Tables:
    """A TableSource over rows held in memory."""

    def __init__(self, rows: dict[str, list[TableRow]], periods: dict[str, tuple[Period, ...]] | None = None) -> None:
        self.rows = rows
        self.periods = periods or {}

    def document_rows(self, document_id: str) -> Sequence[TableRow]:
        return self.rows.get(document_id, [])

    def page_hits(self, document_id: str, page: int) -> list[ChunkHit]:
        text = " ".join(render_row(r) for r in self.rows.get(document_id, []) if r.page == page)
        return [ChunkHit(Chunk(page, document_id, page, 0, f"(In millions) {text}"), f"{document_id}.pdf", 0.0)]

    def document_periods(self, document_id: str) -> tuple[Period, ...]:
        return self.periods.get(document_id, ())

    def owner_names(self, document_id: str) -> tuple[str, ...]:
        return ("Acme Inc.",)

    def first_hit(self, document_id: str) -> ChunkHit | None:
        return hit(document_id)


def hit(document_id: str, page: int = 1) -> ChunkHit:
    return ChunkHit(Chunk(page, document_id, page, 0, "text"), f"{document_id}.pdf", 1.0)


def test_a_document_whose_own_period_is_asked_answers_from_its_latest_column() -> None:
    tables = Tables({"q3": STATEMENT}, {"q3": find_periods("2023 Q3").periods})
    found = figure_for(ask("What were Acme's total net sales in Q3 2023?"), [hit("q3")], tables)
    assert found is not None and found.cell.header == Q3


def test_a_figure_line_states_label_figure_scale_and_period() -> None:
    found = find_figure(ask("What were the total net sales for the quarter ended July 1, 2023?"), {"d": STATEMENT})
    assert found is not None
    assert figure_line(found) == f"Total net sales: $81,797 million ({Q3})"


def test_the_typed_value_is_in_units_or_in_the_scale_asked() -> None:
    question = "What were the total net sales for the quarter ended July 1, 2023? Answer in USD billions."
    found = find_figure(ask(question), {"d": STATEMENT})
    assert found is not None
    value = figure_value(found, "d.pdf", read_contract(question))
    assert (value.kind, value.value, value.currency, value.scale) == ("number", 81.797, "USD", "billion")
    units = figure_value(found, "d.pdf", read_contract("What were the total net sales?"))
    assert units.value == 81_797_000_000 and units.pages[0].page == 4


def test_a_figure_in_another_currency_than_asked_is_absent_with_a_note() -> None:
    question = "What were the total net sales (in EUR)? If data is not available, return 'N/A'."
    found = find_figure(ask(question), {"d": STATEMENT})
    assert found is not None
    value = figure_value(found, "d.pdf", read_contract(question))
    assert value.absent and (value.value, value.absent_value) == (None, "N/A")
    assert value.note is not None and "USD" in value.note


def test_a_line_states_its_value_by_kind() -> None:
    contract = read_contract("How much is the rent?")
    assert line_value("number", "KSH 285,000 per month", (), contract).value == 285_000
    assert line_value("number", "22,998", (), contract, "million").value == 22_998_000_000
    assert line_value("date", "from 1 March 2020", (), contract).value == "2020-03-01"
    absent = line_value("number", "no figure here", (), read_contract("What is X? If not available, return 'N/A'."))
    assert absent.absent and (absent.value, absent.absent_value) == (None, "N/A")


def test_a_rate_is_a_percentage_never_an_amount() -> None:
    taxes = [
        row("Provision for income taxes", [("$4,222", Q3), ("$4,458", Q3_PRIOR)]),
        row("Effective tax rate", [("14.9%", Q3), ("16.2%", Q3_PRIOR)]),
    ]
    assert ask("What was the effective tax rate for the quarter ended July 1, 2023?").percent
    assert not ask("What was the provision for income taxes for the quarter ended July 1, 2023?").percent
    rate = find_figure(ask("What was Acme's effective tax rate for the quarter ended July 1, 2023?"), {"d": taxes})
    assert rate is not None and rate.value == Decimal("14.9") and rate.unit == "%"
    # where no row prints the rate, the provision (an amount) does not answer it
    assert (
        find_figure(ask("What was the effective tax rate for the quarter ended July 1, 2023?"), {"d": taxes[:1]})
        is None
    )


def test_a_row_named_by_its_heading_alone_is_a_part_of_the_total_that_names_itself() -> None:
    margin = [
        row("Products", [("$22,651", Q3), ("$23,847", Q3_PRIOR)], parents=("Gross margin:",), ordinal=1),
        row("Services", [("14,061", Q3), ("12,336", Q3_PRIOR)], parents=("Gross margin:",), ordinal=2),
        row("Total gross margin", [("36,712", Q3), ("36,183", Q3_PRIOR)], parents=("Gross margin:",), ordinal=3),
    ]
    total = find_figure(ask("What was the gross margin for the quarter ended July 1, 2023?"), {"d": margin})
    assert total is not None and total.row.label == "Total gross margin" and total.value == Decimal("36712000000")
    # with no row naming the metric itself, the heading still names its rows ("Basic" under "Earnings per share:")
    basic = find_figure(ask("What was basic earnings per share for the quarter ended July 1, 2023?"), {"d": STATEMENT})
    assert basic is not None and basic.row.label == "Basic" and basic.value == Decimal("1.27")


def test_an_expense_a_reconciliation_takes_away_is_asked_as_an_amount() -> None:
    segments = "Segment operating income reconciliation"
    rows = [
        row("Research and development expense", [("(7,442)", Q3), ("(6,797)", Q3_PRIOR)], title=segments, page=16),
        row("Other income/(expense), net", [("(265)", Q3), ("(10)", Q3_PRIOR)], title=segments, page=16, ordinal=1),
        row("Provision for (benefit from) income tax expense", [("(120)", Q3)], title=segments, page=16, ordinal=2),
    ]
    period = "for the quarter ended July 1, 2023?"
    expense = find_figure(ask(f"What was research and development expense {period}"), {"d": rows})
    assert expense is not None and expense.value == Decimal("7442000000")
    # an expense netted against an income, or one that may be a benefit, keeps its sign
    other = find_figure(ask(f"What was other income/(expense), net {period}"), {"d": rows})
    assert other is not None and other.value == Decimal("-265000000")
    tax = find_figure(ask(f"What was the provision for income tax expense {period}"), {"d": rows})
    assert tax is not None and tax.value == Decimal("-120000000")


def test_basic_and_diluted_never_answer_for_each_other() -> None:
    basic, diluted = metric_terms("basic earnings per share"), metric_terms("diluted earnings per share")
    assert alternatives(basic) and not any("dilut" in label for label in alternatives(basic))
    assert alternatives(diluted) and not any("basic" in label for label in alternatives(diluted))
    heading = ("NET EARNINGS PER COMMON SHARE (1)",)
    year, prior = "Year Ended June 30, 2024", "Year Ended June 30, 2023"
    annual = "Consolidated Statements of Earnings"
    rows = [
        row("Basic", [("$6.18", year), ("$6.07", prior)], parents=heading, title=annual, scale=None, ordinal=1),
        row("Diluted", [("$6.02", year), ("$5.90", prior)], parents=heading, title=annual, scale=None, ordinal=2),
    ]
    for asked, value in (("basic", "6.18"), ("diluted", "6.02")):
        found = find_figure(ask(f"What was {asked} earnings per share for the year ended June 30, 2024?"), {"d": rows})
        assert found is not None and found.value == Decimal(value), asked


def test_a_one_word_label_is_named_by_the_heading_nearest_it() -> None:
    headings = ("Operating costs and expenses:", "Earnings per share")
    year = "Year Ended December 31 2023"
    rows = [row("Basic", [("$12.14", year)], parents=headings, scale=None), row("Diluted", [("$12.02", year)])]
    found = find_figure(ask("What was basic earnings per share for the year ended December 31, 2023?"), {"d": rows})
    assert found is not None and found.value == Decimal("12.14")


def test_a_column_header_longer_than_a_period_is_cut_not_a_crash() -> None:
    header = "CREATIVE MEDIA & COMMUNITY TRUST CORPORATION AND SUBSIDIARIES " * 5 + "December 31, 2022"
    statement = [row("Total equity", [("690,248", header)], title="Balance sheets")]
    found = find_figure(ask("What was the total equity at December 31, 2022?"), {"d": statement})
    assert found is not None
    value = figure_value(found, "d.pdf", read_contract("What was the total equity at December 31, 2022?"))
    assert value.value == 690_248_000_000 and value.period is not None and len(value.period) <= 200


# -- the probe's finding E4 (issue 47): the value of a line that fell back to its evidence sentence ---------------

SENTENCE_LINES = [
    # (the whole sentence a line fell back to, the kind asked, the value read from it)
    ("1.2 The Tenant shall pay rent of KSH 285,000 per month (KSH 3,420,000 per year).", "amount", 285_000),
    ("Deposit 2.1 On signing, the Tenant pays a deposit of KSH 570,000, equal to 2 months' rent.", "amount", 570_000),
    ("Particulars Premises: 14 Banda Lane, Hardy, Karen Monthly rent: KSH 285,000", "amount", 285_000),
    ("1.3 The rent shall increase by 5% on each anniversary of the commencement date.", "percent", 5),
    ("4. Premises 4.1 The house at 14 Banda Lane has 4 bedrooms and 2 bathrooms.", "count", 4),
]


def test_a_line_opening_with_its_clause_number_states_the_figure_after_it() -> None:
    contract = read_contract("Does the rent increase each year?")
    line = "1.3 The rent shall increase by 5% on each anniversary of the commencement date."
    assert line_value("number", line, (), contract).value == 5  # it was 1.3, the clause number


def test_a_bare_figure_of_a_table_in_millions_is_an_amount_of_a_whole_sentence() -> None:
    contract = read_contract("What were total net sales?")
    row = "Total net sales 81,797 82,959"
    assert line_value("number", row, (), contract, "million", sentence=True, asked="amount").value == 81_797_000_000
    assert line_value("number", row, (), contract, sentence=True, asked="amount").absent  # no scale, no currency


@pytest.mark.parametrize(("sentence", "asked", "value"), SENTENCE_LINES)
def test_a_whole_sentence_gives_the_figure_of_the_kind_asked_never_a_clause_or_street_number(
    sentence: str, asked: str, value: int
) -> None:
    contract = read_contract("What is it?")
    read = line_value("number", sentence, (), contract, sentence=True, asked=asked)  # type: ignore[arg-type]
    assert not read.absent and read.value == value, read


def test_a_whole_sentence_with_no_figure_of_the_kind_asked_or_asked_for_a_name_gives_none() -> None:
    contract = read_contract("What is the monthly rent? If data is not available, return 'N/A'.")
    clause_only = line_value("number", "1.4 Late rent bears interest.", (), contract, sentence=True, asked="amount")
    assert clause_only.absent and clause_only.value is None and "no figure" in (clause_only.note or "")
    signed = "SIGNED by the Tenant, Peter Otieno Ochieng, in the presence of an advocate."
    name = line_value("name", signed, (), read_contract("Who is the tenant?"), sentence=True, asked="name")
    assert name.absent and name.value is None and "whole sentence" in (name.note or "")
    # a span the floor or the LM gave is its own value, as before
    assert line_value("name", "Peter Otieno Ochieng", (), read_contract("Who is the tenant?")).value == (
        "Peter Otieno Ochieng"
    )
