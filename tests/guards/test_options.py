"""The options guard: a question choosing among the names it quotes is answered by one of them or not at all."""

from __future__ import annotations

from pipeline.guards.options import offered_names, outside_options

CHOICE = 'Which company had a higher inventories: "Alpha Holdings PLC", "Beta" or "QUIDELORTHO CORPORATION" in 2022?'
NAMES = offered_names(CHOICE)


def test_a_question_opening_with_which_offers_the_names_it_quotes() -> None:
    assert NAMES == ("Alpha Holdings PLC", "Beta", "QUIDELORTHO CORPORATION")
    assert offered_names('Who audited "Alpha Holdings PLC" or "Beta"?') == ("Alpha Holdings PLC", "Beta")


def test_no_names_are_offered_without_a_choice_or_with_fewer_than_two() -> None:
    assert offered_names('What were the inventories of "Alpha Holdings PLC" and "Beta"?') == ()  # no which / who
    assert offered_names('Which auditor signed the report of "Alpha Holdings PLC"?') == ()  # one name
    assert outside_options("High Street", ()) is None  # nothing offered: any answer may stand


def test_an_answer_naming_an_option_stands() -> None:
    assert outside_options("Highest inventories: Alpha Holdings PLC (12,400 thousand).", NAMES) is None
    assert outside_options("beta", NAMES) is None  # folded
    assert outside_options("QuidelOrtho", NAMES) is None  # part of an option's name


def test_an_answer_naming_none_of_the_options_is_refused() -> None:
    reason = outside_options("High Street", NAMES)
    assert reason is not None and "Alpha Holdings PLC" in reason
    assert outside_options("Betamax Ltd", NAMES) is not None  # an option's name inside a word is not the option
