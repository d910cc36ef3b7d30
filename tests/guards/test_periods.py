"""The period guard (pipeline.guards.periods): a test per branch."""

from __future__ import annotations

from pipeline.guards.periods import period_problem, written_periods
from pipeline.values.periods import find_periods

STATEMENT_2022 = "Consolidated Balance Sheets December 31, 2022 and 2021 Total liabilities 5,992,487 4,953,884"


def test_a_page_of_another_year_does_not_answer_the_year_asked() -> None:
    asked = find_periods("What was the total liabilities of the bank in the fiscal year 2023?")
    assert period_problem(asked, [STATEMENT_2022]) is not None
    assert "2023" in (period_problem(asked, [STATEMENT_2022]) or "")


def test_a_page_writing_the_year_asked_in_any_usual_form_answers_it() -> None:
    for page in (STATEMENT_2022, "FY2022 revenue 12.3", "Fiscal '22 highlights", "FY 22 results"):
        assert period_problem(find_periods("total liabilities in fiscal year 2022"), [page]) is None, page
    assert written_periods(find_periods("as of June 30, 2022 and in 2021"), [STATEMENT_2022]) == (2022, 2021)


def test_a_year_inside_a_figure_or_an_identifier_is_not_a_year_written() -> None:
    asked = find_periods("revenue in 2023")
    assert period_problem(asked, ["Total revenue 12,023 2,023.5 ISIN 2023X"]) is not None


def test_no_period_asked_or_no_page_is_not_checked() -> None:
    assert period_problem(find_periods("What was the total revenue?"), [STATEMENT_2022]) is None
    assert period_problem(find_periods("revenue at the end of the period"), [STATEMENT_2022]) is None
    assert period_problem(find_periods("revenue in 2023"), []) is None
