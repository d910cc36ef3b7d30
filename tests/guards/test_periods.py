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
    found = written_periods(find_periods("as of June 30, 2022 and in 2021"), [STATEMENT_2022])
    assert [p.year for p in found] == [2022, 2021]


def test_a_year_inside_a_figure_or_an_identifier_is_not_a_year_written() -> None:
    asked = find_periods("revenue in 2023")
    assert period_problem(asked, ["Total revenue 12,023 2,023.5 ISIN 2023X"]) is not None


def test_no_period_asked_or_no_page_is_not_checked() -> None:
    assert period_problem(find_periods("What was the total revenue?"), [STATEMENT_2022]) is None
    assert period_problem(find_periods("revenue at the end of the period"), [STATEMENT_2022]) is None
    assert period_problem(find_periods("revenue in 2023"), []) is None


def test_a_year_followed_by_a_comma_or_a_full_stop_is_written() -> None:
    asked = find_periods("total assets in fiscal year 2023")
    assert period_problem(asked, ["As of December 31, 2023, and 2022 (in millions)"]) is None
    assert period_problem(asked, ["The year ended December 31, 2023."]) is None
    assert period_problem(asked, ["Shares 2,023,456 and 12.2023"]) is not None


def test_a_fiscal_year_that_ends_early_in_the_next_calendar_year_is_written_either_way() -> None:
    fiscal = "Fiscal 2023 Fiscal 2022 Net earnings 15,143 17,105"
    assert period_problem(find_periods("net income for the fiscal year ended January 28, 2024"), [fiscal]) is None
    ended = "Consolidated Statements of Earnings, fiscal year ended January 28, 2024"
    assert period_problem(find_periods("net income in fiscal year 2023"), [ended]) is None
    assert period_problem(find_periods("net income for the year ended December 31, 2024"), [fiscal]) is not None


def test_a_fiscal_quarter_may_fall_in_the_calendar_year_before_its_fiscal_year() -> None:
    page = "Three Months Ended September 30, 2023 2022 Operating income 5,432"
    asked = find_periods("operating income in the first quarter of fiscal 2024")
    assert period_problem(asked, [page], fiscal=True) is None
    assert period_problem(asked, [page], fiscal=False) is not None  # Q1 2024 of the calendar is not 2023


def test_june_closes_its_own_fiscal_year_not_the_one_before() -> None:
    assert period_problem(find_periods("EPS in June 30, 2023"), ["Net income per share 2022 2021 1.2"]) is not None
