"""Figures and dates as values: the one normalisation grounding, fact matching and formatting share."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from pipeline.evaluation.metrics import fact_present
from pipeline.values.quantities import find_days, find_quantities, missing_values, reference_kind, same_figure


def _figure(text: str) -> tuple[str, str, bool]:
    (q,) = find_quantities(text)
    return str(q.value), str(q.mantissa), q.percent


@pytest.mark.parametrize(
    ("text", "value", "mantissa", "percent"),
    [
        ("$1,577 million", Decimal("1577000000"), Decimal("1577"), False),
        ("1.577 billion", Decimal("1577000000"), Decimal("1.577"), False),
        ("KSH 3.4bn", Decimal("3400000000"), Decimal("3.4"), False),
        ("44.3 %", Decimal("44.3"), Decimal("44.3"), True),
        ("seventy-five per cent", Decimal("75"), Decimal("75"), True),
        ("two hundred and fifty", Decimal("250"), Decimal("250"), False),
        ("(393)", Decimal("-393"), Decimal("-393"), False),
    ],
)
def test_figures_are_read_as_values(text: str, value: Decimal, mantissa: Decimal, percent: bool) -> None:
    (q,) = find_quantities(text)
    assert (q.value, q.mantissa, q.percent) == (value, mantissa, percent)


@pytest.mark.parametrize("text", ["L.R. NO: 1160/88", "clause 4.2.1", "P.O. Box 24518-00502", "Q2", "10am", "1st"])
def test_references_clause_numbers_and_ordinals_are_not_figures(text: str) -> None:
    assert find_quantities(text) == []


def test_a_numeric_date_means_every_day_it_can_and_matches_the_same_day_written_in_words() -> None:
    ((_, _, days),) = find_days("signed 10/11/96")
    assert days == {date(1996, 10, 11), date(1996, 11, 10)}
    assert fact_present("10/11/96", "dated Oct. 11, 1996") and fact_present("Oct. 11, 1996", "on 11 October 1996")
    assert not fact_present("10/11/96", "dated 12 October 1996")


@pytest.mark.parametrize(
    ("wanted", "written", "same"),
    [
        ("$1,577 million", "1.577 billion", True),
        ("$15.3 billion", "15,338 million", True),  # more precise rounds to the fact's precision
        ("$15.3 billion", "$15 billion", False),  # never the reverse
        ("$117,154 million", "Total net sales 117,154", True),  # a table "in millions" states no scale
        ("5%", "5 per cent", True),
        ("5%", "5", False),  # a percentage only matches a percentage
        ("(393)", "a loss of 393", True),
    ],
)
def test_same_figure_compares_values_to_the_wanted_precision(wanted: str, written: str, same: bool) -> None:
    assert same_figure(find_quantities(wanted)[0], find_quantities(written)[0]) is same


def test_missing_values_names_what_the_support_does_not_state() -> None:
    support = "Rent of KSH 285,000 per month from 1 March 2023 on L.R. NO: 1160/88."
    assert missing_values("KSH 285,000 from 1 March 2023", support) == []
    assert missing_values("KSH 258,000 from 2 March 2023 on 1160/89", support) == ["2 March 2023", "258,000", "1160/89"]


@pytest.mark.parametrize(
    ("text", "figure", "kind"),
    [
        ("2. Deposit 2.1 On signing, the Tenant pays a deposit", "2.1", "a clause or section number"),
        ("Term and rent 1.1 The term is 3 years", "1.1", "a clause or section number"),
        ("Earnings per share 2.15 Diluted 2.10", "2.15", None),  # the next cell of a row, not a clause
        ("Basic 1.27 1.20 Diluted 1.26", "1.20", None),
        ("Net income per share 1.27 Basic 1.20", "1.27", None),
        ("The deposit, 2.5 Times the rent, is paid on signing", "2.5", None),  # no heading before it
    ],
)
def test_a_dotted_number_between_a_heading_and_its_clause_is_a_clause_number(
    text: str, figure: str, kind: str | None
) -> None:
    quantity = next(q for q in find_quantities(text) if q.text == figure)
    assert reference_kind(text, quantity) == kind
