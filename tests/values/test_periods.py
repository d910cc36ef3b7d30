"""Periods in questions and documents (pipeline.values.periods): found, matched, preferred."""

from __future__ import annotations

from datetime import date

import pytest

from pipeline.intake.analysis import analyse_question
from pipeline.intake.planner import plan_question
from pipeline.intake.scope import NO_SCOPE
from pipeline.settings import PlannerConfig
from pipeline.values.periods import (
    AskedPeriods,
    Period,
    asked_from_labels,
    document_periods,
    find_periods,
    parse_period,
    period_matches,
    preferred_documents,
)
from pipeline.vocabulary import Vocabulary


@pytest.mark.parametrize(
    ("question", "labels"),
    [
        ("What was revenue in FY2018?", ("2018",)),
        ("How much did it earn in 2022?", ("2022",)),
        ("What were the Q2 2023 results?", ("2023-Q2",)),
        ("What was the cash balance as of December 31, 2021?", ("2021-12-31",)),
        ("the second quarter of 2023", ("2023-Q2",)),
        ("In the first quarter of fiscal 2023, how much", ("2023-Q1",)),
        ("FY23 Q1 margin", ("2023-Q1",)),
        ("Q2'23 revenue", ("2023-Q2",)),
        ("2023 Q1 filing", ("2023-Q1",)),
        ("compare Q1 2023 and Q3 2023", ("2023-Q1", "2023-Q3")),
        ("the latest quarterly report", ("latest",)),
        ("the most recent quarter compared to previous quarters", ("latest", "others")),
        ("How has revenue changed over time?", ()),  # other periods but none named: nothing to prefer
        ("What does the Q3 report say?", ()),  # a quarter without its year is no period
        ("revenue of $2022 million and 2022% growth", ()),  # amounts are no years
    ],
)
def test_questions_name_their_periods(question: str, labels: tuple[str, ...]) -> None:
    assert find_periods(question).labels == labels


def test_attribute_values_state_one_period_each() -> None:
    attributes = [("quarter", "2023 Q1"), ("ticker", "ACME"), ("period_end", "2022-12-31"), ("note", "2021 and 2022")]
    assert document_periods(attributes) == (Period("quarter", 2023, 1), Period("day", 2022, 0, date(2022, 12, 31)))
    assert parse_period("FY2020") == Period("year", 2020) and parse_period("none") is None


def test_periods_match_by_kind_then_by_containment() -> None:
    fiscal = [Period("quarter", 2023, 1), Period("day", 2022, 0, date(2022, 12, 31))]  # a fiscal Q1 ending in December
    assert period_matches(Period("quarter", 2023, 1), fiscal)
    assert not period_matches(Period("quarter", 2022, 4), fiscal)  # its own quarter answers for a quarter
    assert period_matches(Period("day", 2022, 0, date(2022, 12, 31)), fiscal)
    assert period_matches(Period("year", 2022), fiscal) and period_matches(Period("year", 2023), fiscal)
    dated = [Period("day", 2021, 0, date(2021, 3, 3))]
    assert period_matches(Period("quarter", 2021, 1), dated)  # a day inside the asked quarter
    assert not period_matches(Period("day", 2021, 0, date(2021, 3, 4)), dated)
    assert period_matches(Period("day", 2023, 0, date(2023, 2, 1)), [Period("quarter", 2023, 1)])


def test_preferred_documents_by_period_and_latest_per_owner() -> None:
    held = {
        "a1": (Period("quarter", 2023, 1),),
        "a3": (Period("quarter", 2023, 3),),
        "b2": (Period("quarter", 2023, 2),),
        "x": (),
    }
    owners = {"a1": "A", "a3": "A", "b2": "B", "x": "A"}
    assert preferred_documents(find_periods("Q1 2023"), held, owners) == {"a1"}
    assert preferred_documents(find_periods("in 2023"), held, owners) == {"a1", "a3", "b2"}
    assert preferred_documents(find_periods("the latest report"), held, owners) == {"a3", "b2"}
    assert preferred_documents(AskedPeriods(), held, owners) == frozenset()


def test_labels_round_trip_through_the_plan() -> None:
    asked = find_periods("the latest report, compared to Q1 2023 and previous quarters")
    assert asked_from_labels(asked.labels) == asked
    intake = analyse_question("What was revenue in Q2 2023?", [], ["report"], PlannerConfig(), Vocabulary())
    plan = plan_question(intake, NO_SCOPE, {})
    assert plan.retrieval_rounds[0].filters.periods == ("2023-Q2",)
    assert "period_mentioned" in plan.planner_meta.rationale_tags
