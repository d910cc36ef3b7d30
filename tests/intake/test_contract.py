"""The question's contract (pipeline.intake.contract): instructions read into one typed request and taken off
the question, so that none of them is ever searched for, a literal term or a sub-question."""

from __future__ import annotations

import json

import pytest

from pipeline.intake.analysis import analyse_question
from pipeline.intake.comparison import Comparison, entity_comparison
from pipeline.intake.contract import read_contract, section_kind
from pipeline.intake.parts import question_parts
from pipeline.intake.planner import plan_question
from pipeline.intake.scope import NO_SCOPE
from pipeline.settings import PlannerConfig
from pipeline.text import normalise
from pipeline.types import Entity
from pipeline.vocabulary import Vocabulary
from tests.support.paths import ROOT

ENTITIES = {
    e.entity_id: e
    for e in (
        Entity("e-ypl", "ypl", "Yellow Pages Limited", ()),
        Entity("e-cc", "cc", "Charles & Colvard, Ltd.", ()),
        Entity("e-acme", "acme", "Acme AG", ()),
        Entity("e-beta", "beta", "Beta plc", ()),
    )
}


def test_absent_value_na_is_read_and_taken_off() -> None:
    c = read_contract(
        'According to the annual report, what is the Cash flow from operations (in USD) for "Yellow Pages Limited"'
        " (within the last period or at the end of the last period)? If data is not available, return 'N/A'."
    )
    assert c.question == 'What is the Cash flow from operations for "Yellow Pages Limited"?'
    assert (c.kind, c.absent, c.currency, c.period) == ("number", "N/A", "USD", "latest")
    assert "If data is not available, return 'N/A'." in c.instructions


def test_absent_value_false_makes_a_yes_no_question() -> None:
    c = read_contract(
        'Did "Charles & Colvard, Ltd." announce any share buyback plans in the annual report? '
        "If there is no mention, return False."
    )
    assert c.question == 'Did "Charles & Colvard, Ltd." announce any share buyback plans?'
    assert (c.kind, c.absent) == ("boolean", False)


@pytest.mark.parametrize(
    ("question", "currency", "unit", "scale"),
    [
        ("What was the total revenue (in EUR) of Acme AG?", "EUR", None, None),
        ("What was the total revenue of Acme AG in EUR?", "EUR", None, None),
        ("What was the Gross margin (%) of Acme AG?", None, "%", None),
        ("What was the total data storage capacity (TB) of Acme AG?", None, "TB", None),
        ("What was the installed capacity (MW) of Acme AG?", None, "MW", None),
        ("What is the FY2018 capital expenditure amount (in USD millions) for 3M?", "USD", None, "million"),
        ("What was Acme AG's revenue? Answer in USD billions.", "USD", None, "billion"),
    ],
)
def test_currency_unit_and_scale_are_read_and_taken_off(
    question: str, currency: str | None, unit: str | None, scale: str | None
) -> None:
    c = read_contract(question)
    assert (c.currency, c.unit, c.scale, c.kind) == (currency, unit, scale, "number")
    for instruction in c.instructions:
        assert instruction not in c.question
    assert "(" not in c.question and " in EUR" not in c.question


@pytest.mark.parametrize(
    "phrase",
    [
        "at the end of the period",
        "within the last period",
        "(within the last period or at the end of the last period)",
        "at the end of the period listed in the annual report",
    ],
)
def test_a_period_instruction_means_the_latest_period(phrase: str) -> None:
    c = read_contract(f"What were the total assets of Acme AG {phrase}?")
    assert c.period == "latest" and c.question == "What were the total assets of Acme AG?"


def test_the_kind_asked_is_an_instruction_not_a_part() -> None:
    c = read_contract(
        'Which leadership positions changed at "Acme AG" in the reporting period? If data is not available, '
        "return 'N/A'. Give me the title of the position."
    )
    assert c.question == 'Which leadership positions changed at "Acme AG"?'
    assert c.kind == "names" and "Give me the title of the position." in c.instructions


def test_a_long_prompt_keeps_its_preamble_and_definitions_as_context() -> None:
    c = read_contract(
        "You are an investment banker and your only resource(s) to answer the following question is (are): the "
        "statement of income and the cash flow statement. Here's the question: what is the FY2015 unadjusted "
        "EBITDA less capex for Amcor? Define unadjusted EBITDA as unadjusted operating income + depreciation and "
        "amortization [from cash flow statement]. Answer in USD millions."
    )
    assert c.question == "What is the FY2015 unadjusted EBITDA less capex for Amcor?"
    assert (c.currency, c.scale) == ("USD", "million")
    assert any(line.startswith("You are an investment banker") for line in c.context)
    assert any(line.startswith("Define unadjusted EBITDA") for line in c.context)
    assert "cash flow statement" in c.sources and "statement of income" in c.sources


def test_a_comparison_names_its_entities_and_keeps_its_metric() -> None:
    c = read_contract(
        'Which of the companies had the lowest total assets in EUR at the end of the period: "Acme AG", "Beta plc",'
        ' "Gamma Inc"? If data for the company is not available, exclude it from the comparison.'
    )
    assert c.comparison == Comparison("lowest", "total assets", ("Acme AG", "Beta plc", "Gamma Inc"))
    assert (c.kind, c.currency, c.period) == ("name", "EUR", "latest")
    assert section_kind("What were the total assets of Acme AG?", c) == "number"


def test_a_question_without_instructions_is_left_as_it_is() -> None:
    c = read_contract("What is the monthly rent for Banda Lane and who is the tenant?")
    assert c.question == "What is the monthly rent for Banda Lane and who is the tenant?"
    assert c.instructions == () and c.context == () and c.absent is None


@pytest.mark.parametrize(
    "question",
    [
        "What does the lease say about the deposit? (holdquestion)",
        "What was the net income (or loss) of Acme AG?",
    ],
)
def test_a_bracket_that_names_no_unit_stays_in_the_question(question: str) -> None:
    c = read_contract(question)
    assert c.question == question and c.unit is None


def _reaches_search(question: str) -> list[str]:
    """Where each instruction of `question` shows up: retrieval queries, literal terms, floor sub-questions."""
    contract = read_contract(question)
    intake = analyse_question(contract.question, list(ENTITIES.values()), set(), PlannerConfig(), Vocabulary())
    plan = plan_question(intake, NO_SCOPE, ENTITIES, PlannerConfig())
    searched = [q for r in plan.retrieval_rounds for q in r.query_variants]
    places = [*searched, *intake.literal_texts, *question_parts(plan.goal)]
    leaks = []
    for instruction in contract.instructions:
        core = normalise(instruction).strip(" .?()'\"")
        if core and any(core in normalise(place) for place in places):
            leaks.append(instruction)
    for term in intake.literal_texts:
        if normalise(term) in {"n/a", "false", "true"}:
            leaks.append(term)
    return leaks


@pytest.mark.parametrize(
    "question",
    [
        'What was the Total revenue (in EUR) of "Acme AG" at the end of the period? If data is not available, '
        "return 'N/A'.",
        'Did "Charles & Colvard, Ltd." announce any share buyback plans in the annual report? If there is no '
        "mention, return False.",
        'What is the Operating margin (%) for "Beta plc" (within the last period or at the end of the last period)?'
        " If data is not available, return 'N/A'.",
        "What was the total data storage capacity (TB) of Acme AG? If data is not available, return 'N/A'.",
        "Which leadership positions changed at Acme AG? Give me the title of the position.",
        "What is the FY2018 capital expenditure amount (in USD millions) for Acme AG? Give a response to the "
        "question by relying on the details shown in the cash flow statement.",
    ],
)
def test_no_instruction_reaches_a_query_a_literal_term_or_a_sub_question(question: str) -> None:
    assert _reaches_search(question) == []


def test_a_quoted_entity_name_is_no_literal_term() -> None:
    intake = analyse_question(
        'What is the Cash flow from operations for "Yellow Pages Limited"?',
        list(ENTITIES.values()),
        set(),
        PlannerConfig(),
        Vocabulary(),
    )
    assert intake.literal_texts == () and intake.entity_ids == ("e-ypl",)


def test_no_instruction_of_any_labelled_question_reaches_search() -> None:
    """Over every labelled question the project ships: 0 instructions in a query, a literal term or a
    sub-question."""
    questions: set[str] = set()
    for path in sorted((ROOT / "datasets").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                if isinstance(record.get("question"), str):
                    questions.add(record["question"])
    assert len(questions) > 1000
    leaks = {q: found for q in sorted(questions) if (found := _reaches_search(q))}
    assert leaks == {}


@pytest.mark.parametrize(
    ("question", "proper"),
    [
        (
            "Give Marathon Digital's bottom line for its 2023 fiscal year from its 10-K. Where it isn't reported, "
            "say 'N/A'.",
            "Give Marathon Digital's bottom line for its 2023 fiscal year from its 10-K.",
        ),
        (
            "Tell me every stock ticker on the cover of the annual filing; reply 'N/A' when no ticker is given.",
            "Tell me every stock ticker on the cover of the annual filing",
        ),
        ("Who audited the statements? Answer 'None' if so.", "Who audited the statements?"),  # an absent word
    ],
)
def test_a_clause_saying_what_to_answer_when_the_value_is_missing_is_an_instruction_in_any_words(
    question: str, proper: str
) -> None:
    contract = read_contract(question)
    assert contract.question == proper
    assert contract.absent in ("N/A", "None")


def test_a_quoted_value_in_a_clause_that_says_nothing_is_missing_stays_in_the_question() -> None:
    contract = read_contract("Does the policy say 'pets allowed'? Reply 'yes' in that case.")
    assert "pets allowed" in contract.question
    assert contract.absent is None


# -- entities named without quotes compare as quoted companies do (issue 47, E5) ---------------------------------

BANDA = [("Banda Lane", "14 Banda Lane"), ("Banda Road", "7 Banda Road")]


@pytest.mark.parametrize(
    ("question", "extreme", "metric"),
    [
        ("Which is higher, the monthly rent at Banda Lane or at Banda Road?", "highest", "monthly rent"),
        ("Which property has the higher deposit, Banda Lane or Banda Road?", "highest", "deposit"),
        ("Which of Banda Lane and Banda Road has the lowest deposit?", "lowest", "deposit"),
        ("Which has a smaller rent per month: 14 Banda Lane or 7 Banda Road?", "lowest", "rent per month"),
    ],
)
def test_a_question_asking_which_named_entity_ranks_first_is_a_comparison(
    question: str, extreme: str, metric: str
) -> None:
    found = entity_comparison(question, BANDA, frozenset({"property"}))
    assert found is not None and (found.extreme, found.metric, found.names) == (
        extreme,
        metric,
        ("Banda Lane", "Banda Road"),
    )


@pytest.mark.parametrize(
    ("question", "entities"),
    [
        ("What is the monthly rent at Banda Lane and the deposit at Banda Road?", BANDA),  # no comparative
        ("Which firm valued Banda Lane and Banda Road?", BANDA),
        ("Is the rent at Banda Lane higher than at Banda Road?", BANDA),  # a yes/no question, not "which"
        ("Which is higher, the monthly rent at Banda Lane or the deposit?", BANDA[:1]),  # one entity
        ("Which lease is longer, the one of Banda Lane or of Banda Road?", BANDA),  # nothing left to compare by
        # quoted names are the quoted comparison's (a comparative there is not read: issue 47 keeps it so)
        ('Which company had a higher deposit: "Banda Lane" or "Banda Road", in 2023?', BANDA),
    ],
)
def test_other_questions_naming_entities_are_no_comparison(question: str, entities: list[tuple[str, str]]) -> None:
    assert entity_comparison(question, entities, frozenset({"lease", "property"})) is None


@pytest.mark.parametrize(
    ("question", "proper", "currency", "scale"),
    [
        (
            "Give the PP&E of Acme at December 31, 2023, stated in millions of Swiss francs.",
            "Give the PP&E of Acme at December 31, 2023.",
            "CHF",
            "million",
        ),
        (
            "In Japanese yen (millions), how much goodwill did Acme report?",
            "How much goodwill did Acme report?",
            "JPY",
            "million",
        ),
        (
            "What were Acme's short-term liabilities at year end, in US dollars?",
            "What were Acme's short-term liabilities at year end?",
            "USD",
            None,
        ),
        (
            "What were Acme's earnings? State the amount in millions of US dollars.",
            "What were Acme's earnings?",
            "USD",
            "million",
        ),
    ],
)
def test_a_piece_naming_only_a_currency_and_scale_is_a_format_instruction_in_any_words(
    question: str, proper: str, currency: str, scale: str | None
) -> None:
    c = read_contract(question)
    assert (c.question, c.currency, c.scale) == (proper, currency, scale)


def test_a_currency_that_is_the_subject_of_the_question_stays_in_it() -> None:
    c = read_contract("How much revenue did Acme earn in euros and in dollars?")
    assert "euros" in c.question and c.currency is None


@pytest.mark.parametrize(
    ("question", "absent"),
    [
        ("How much goodwill did Acme report? If the filing has no such figure, answer N/A.", "N/A"),
        ("Did Acme buy other companies? Answer False if the filing says nothing about it.", False),
        ("What was Acme's goodwill? State it in USD millions, or 'N/A' when the filing does not report it.", "N/A"),
    ],
)
def test_an_unquoted_absent_value_in_a_clause_saying_the_value_may_be_missing_is_an_instruction(
    question: str, absent: object
) -> None:
    c = read_contract(question)
    assert c.absent == absent and "N/A" not in c.question and "False" not in c.question


def test_true_or_false_leading_a_statement_is_no_absent_value_of_its_own() -> None:
    c = read_contract(
        "True or False: Acme paid dividends in the period. If the report is silent on this, answer False."
    )
    assert c.kind == "boolean" and c.absent is False and c.question.strip()


def test_a_request_is_read_as_the_question_it_stands_for() -> None:
    assert read_contract("Give Acme's total assets at the end of 2023.").kind == "number"
    assert read_contract("Tell me who audited Acme's statements.").kind == "name"
