"""Grounding of answer lines and the sub-question guard: one test per branch (accepts, rejects naming what is
missing)."""

from __future__ import annotations

import pytest

from pipeline.guards.grounding import acting, added_negation, changed_party, ground_line, proper_names
from pipeline.guards.sub_questions import check_sub_questions, introduced
from pipeline.values.figures import Passage, passage, read_figures

EVIDENCE = [
    "1.2 The Tenant shall pay rent of KSH 285,000 per month (KSH 3,420,000 per year), in advance.",
    "SIGNED by the Tenant, Peter Otieno Ochieng, on 20 February 2023.",
]


@pytest.mark.parametrize(
    "line",
    [
        "KSH 285,000 per month",
        "Peter Otieno Ochieng",
        "The rent is 285,000 a month, KSH 3.42 million a year",  # values compared as values
        "signed on 20/2/2023",  # a date in other words
    ],
)
def test_a_line_its_evidence_states_is_grounded(line: str) -> None:
    assert ground_line(line, EVIDENCE).grounded


@pytest.mark.parametrize(
    ("line", "missing"),
    [
        ("KSH 258,000 per month", "258,000"),
        ("Peter Otieno Kamau", "Peter Otieno Kamau"),
        ("signed on 21 February 2023", "21 February 2023"),
        ("A roof leak above the master bedroom", None),
    ],
)
def test_a_line_stating_what_its_evidence_does_not_is_not_grounded(line: str, missing: str | None) -> None:
    verdict = ground_line(line, EVIDENCE)
    assert not verdict.grounded and verdict.reason
    if missing:
        assert missing in verdict.missing


def test_a_line_restating_its_question_is_no_answer() -> None:
    question = "What is the monthly rent?"
    evidence = ["The monthly rent is KSH 285,000."]
    assert ground_line("the monthly rent", evidence, question=question).reason == "restates the question"
    assert ground_line("The monthly rent is KSH 285,000.", evidence, question=question).grounded


def test_no_evidence_or_an_empty_line_is_never_grounded() -> None:
    assert ground_line("KSH 285,000", []).reason == "no evidence"
    assert ground_line("  ", EVIDENCE).reason == "empty"


def test_proper_names_skip_a_capitalised_first_word_and_stopwords() -> None:
    assert proper_names("The tenant is Peter Otieno Ochieng of Nairobi.") == ["Peter Otieno Ochieng Nairobi"]
    assert proper_names("Rent is due.") == []


QUESTION = "What is the operating margin for Acme Corp in FY2022?"


def test_sub_questions_that_say_only_what_the_question_says_are_kept() -> None:
    kept, dropped = check_sub_questions(
        ["What is Acme Corp's operating income in FY2022?", "What is revenue?"], QUESTION
    )
    assert len(kept) == 2 and not dropped


@pytest.mark.parametrize(
    ("sub_question", "reason"),
    [
        ("What operating margin for Acme Corp is 1.2%?", "1.2%"),
        ("What is the margin in FY2021?", "FY2021"),
        ("What is the margin on 31 March 2022?", "31 March 2022"),
        ("What is the margin of Globex Inc?", "Globex Inc"),
        ("Answer in USD billions.?", "format"),
        ("Round to one decimal place.", "format"),
    ],
)
def test_a_sub_question_bringing_what_the_question_does_not_say_is_dropped(sub_question: str, reason: str) -> None:
    kept, dropped = check_sub_questions([sub_question], QUESTION)
    assert kept == [] and len(dropped) == 1 and reason in dropped[0].reason


def test_introduced_lists_figures_dates_and_names() -> None:
    assert introduced("Is the Acme Corp margin 5% since 2019?", QUESTION) == ["5%", "2019"]


# ---- meaning, not digits (issue 36, D2): the probe's lines, each refused naming what differs ------------

LEASE = [
    "1.2 The Tenant shall pay to the Landlord rent of KSH 285,000 per month (KSH 3,420,000 per year), in advance.",
    "2.1 On signing, the Tenant pays a deposit of KSH 570,000, equal to 2 months' rent.",
]
INCOME = ["Net income $ 81,797 million for the quarter."]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("KSH 285,000 million per month", "285,000 million"),  # another scale
        ("KSH -285,000", "the sign differs"),
        ("(285,000)", "the sign differs"),
        ("KSH -570,000", "the sign differs"),
        ("KSH 285,000 per year", "the period differs"),
        ("KSH 570,000 per month", "the period differs"),  # a period the deposit is not counted per
        ("USD 285,000", "the currency differs"),
        ("The Tenant shall not pay rent of KSH 285,000", "adds a negation its evidence lacks (not pay)"),
        ("The Landlord shall pay rent of KSH 285,000", "makes the landlord the party that acts"),
        ("The landlord pays the tenant KSH 570,000", "names a party its evidence does not: landlord"),
        ("Rent of KSH 285,000, paid by the guarantor", "names a party its evidence does not: guarantor"),
        ("KSH 285,000 per month, twice", "twice"),
        ("KSH 285,000 per month and a half", "half"),
        ("KSH 285,000 per month for ten years", "ten"),
    ],
)
def test_a_line_that_changes_what_its_figure_means_is_not_grounded(line: str, why: str) -> None:
    verdict = ground_line(line, LEASE)
    assert not verdict.grounded and why in (verdict.reason or ""), verdict


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("Net loss was $81,797 million", "the sign differs"),  # a loss where the filing reports income
        ("$81,797 billion", "81,797 billion"),
        ("$81,797", "81,797"),  # a bare mantissa of a figure that states its own scale
    ],
)
def test_a_reported_figure_keeps_its_sign_and_scale(line: str, why: str) -> None:
    verdict = ground_line(line, INCOME)
    assert not verdict.grounded and why in (verdict.reason or ""), verdict


@pytest.mark.parametrize(
    "line",
    [
        "KSH 285,000 per month",
        "The Tenant shall pay KSH 285,000 per month",
        "Rent of KSH 285,000 is paid by the Tenant",
        "KSH 3.42 million per year",  # the same value in another scale
        "A deposit of KSH 570,000",
        "Monthly rent: KSH 285,000",
    ],
)
def test_a_line_that_keeps_its_figure_s_meaning_is_grounded(line: str) -> None:
    assert ground_line(line, LEASE).grounded


def test_a_bare_figure_matches_only_where_its_table_states_the_scale() -> None:
    row = "Net sales $ 81,797 $ 82,959"
    in_millions = passage(row, "(In millions, except per share amounts)\n" + row)
    assert ground_line("$81,797", [in_millions]).grounded  # the table as printed
    assert ground_line("$81,797 million", [in_millions]).grounded  # its note's scale applied
    assert not ground_line("$81,797 billion", [in_millions]).grounded
    assert not ground_line("$81,797 million", [row]).grounded  # no note: a bare 81,797 is no million


def test_a_figure_reads_its_sign_from_marks_and_loss_words() -> None:
    (loss,) = read_figures("Net loss was $81,797 million")
    (income,) = read_figures("Net income was $81,797 million")
    (bracketed, next_column) = read_figures("Net income (loss) 1,234 (567)")
    cells = read_figures("Operating loss 1,234 567")
    (damage,) = read_figures("The Tenant is liable for any loss or damage up to KSH 50,000.")
    assert loss.negative and not income.negative
    assert not bracketed.negative and next_column.negative  # a label naming both ways leaves it to the brackets
    assert all(f.negative for f in cells)  # a row of bare cells has its label's sign word
    assert not damage.negative  # a loss word that does not govern the figure
    assert ground_line("A net loss of $1,234", ["Net loss $ (1,234)"]).grounded
    assert not ground_line("$1,234", ["Net loss $ (1,234)"]).grounded


def test_a_figure_reads_its_currency_and_period_from_its_own_words_or_its_passage() -> None:
    (own,) = read_figures("rent of KSH 285,000 per month")
    (before,) = read_figures("The monthly rent is 285,000 euros.")
    (row,) = read_figures(passage("Services 20,766", "(In thousands of euros) Services 20,766"))
    assert (own.currency, own.period) == ("KSH", "month")
    assert (before.currency, before.period) == ("EUR", "month")
    assert row.currency == "EUR" and row.magnitude == 20_766_000
    assert ground_line("EUR 20,766 thousand", [Passage("Services 20,766", "thousand", "EUR")]).grounded
    assert not ground_line("USD 20,766 thousand", [Passage("Services 20,766", "thousand", "EUR")]).grounded


def test_negations_and_parties_are_read_where_the_figure_is_stated() -> None:
    assert added_negation("The Tenant shall not sublet", ["The Tenant shall not sublet the premises."]) is None
    assert added_negation("No deposit is payable", ["No deposit is payable under this lease."]) is None
    assert added_negation("L.R. No. 1160/88", ["L.R. NO: 1160/88"]) is None  # "No." numbers, never negates
    assert added_negation("The Tenant shall not pay", ["The Tenant shall pay rent."]) == (
        "adds a negation its evidence lacks (not pay)"
    )
    assert acting("Rent is paid by the Tenant to the Landlord") == {"tenant"}
    assert acting("The Landlord: Grace Wanjiku Kamau") == set()
    assert changed_party("Tenant: Peter Otieno Ochieng", ["Tenant: Peter Otieno Ochieng"]) is None
    # the cover page names both parties, but says nothing of who pays the deposit
    cover = "Landlord: Grace Wanjiku Kamau Tenant: Peter Otieno Ochieng Deposit: KSH 570,000"
    assert changed_party("The Tenant pays KSH 570,000", [cover]) is not None
    assert ground_line("Deposit: KSH 570,000", [cover]).grounded


# -- the probe's finding E9 (issue 47): the grounding function alone -------------------------------------------

QUARTER = ["Total net sales were $81,797 million for the three months ended July 1, 2023."]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("-$81,797 million", "the sign differs"),  # a sign written before the currency
        ("\u2212$81,797 million", "the sign differs"),  # U+2212 MINUS SIGN
        ("Total net sales were minus $81,797 million", "the sign differs"),
        ("Total net sales were negative $81,797 million", "the sign differs"),
        ("Total net sales fell by $81,797 million", "states a fall its evidence does not"),
        ("Total net sales rose by $81,797 million", "states a rise its evidence does not"),
        ("Total net sales were $81,797 million for the year", "the period differs"),  # a quarter's figure
        ("Total net sales were $\uff18\uff11,\uff17\uff19\uff17 million", "digits its evidence does not write"),
        ("Total net sales were $\u0668\u0661,\u0667\u0669\u0667 million", "digits its evidence does not write"),
    ],
)
def test_a_line_that_turns_a_reported_figure_into_another_is_not_grounded(line: str, why: str) -> None:
    verdict = ground_line(line, QUARTER)
    assert not verdict.grounded and why in (verdict.reason or ""), verdict


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("The rent of KSH 285,000 per month is waived", "waived"),
        ("The Tenant is exempt from rent of KSH 285,000 per month", "exempt"),
        ("The Tenant shall receive rent of KSH 285,000 per month", "receive"),
        ("The Tenant shall pay rent of up to KSH 285,000 per month", "up to"),
        ("The Tenant shall pay rent of at least KSH 285,000 per month", "at least"),
    ],
)
def test_a_line_that_waives_reverses_or_bounds_what_its_evidence_says_is_not_grounded(line: str, why: str) -> None:
    verdict = ground_line(line, LEASE)
    assert not verdict.grounded and why in (verdict.reason or ""), verdict


@pytest.mark.parametrize(
    ("line", "evidence"),
    [
        ("-$81,797 million", ["Net change in cash -$81,797 million."]),
        ("Total net sales fell by $5 million", ["Total net sales fell by $5 million compared with 2022."]),
        ("$81,797 million for the quarter", ["Total net sales were $81,797 million for the quarter."]),
        ("Revenue - $81,797 million", ["Revenue - $81,797 million"]),  # a dash apart from the figure is no sign
        ("The deposit is refundable up to KSH 570,000", ["The deposit is refundable up to KSH 570,000."]),
        ("KSH \u0662\u0668\u0665,\u0660\u0660\u0660", ["rent of KSH \u0662\u0668\u0665,\u0660\u0660\u0660"]),
    ],
)
def test_the_same_words_in_its_evidence_keep_such_a_line_grounded(line: str, evidence: list[str]) -> None:
    assert ground_line(line, evidence).grounded
    assert ground_line("Revenue - $81,797 million", ["Revenue $81,797 million"]).grounded
