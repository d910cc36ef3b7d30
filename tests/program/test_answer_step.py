"""The answer step in the whole program: each section an answer line with its evidence; floors that cost no
LM call; the LM's answer, abstention and computation; format instructions applied by code, never searched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dspy
import pytest

from pipeline.intake.scope import resolve_scope
from pipeline.program.events import Completed
from pipeline.program.module import ScopedQA
from pipeline.settings import ProgramSettings, Settings, StepChoices
from pipeline.store import Store
from tests.support.fakes import cooperative, field, scripted_lm
from tests.support.paths import DATASETS
from tests.support.stores import store_of

FLOORS = StepChoices(
    decompose="parts", score="keep_all", answer="span", abstain="support", compute="rows", choose="span"
)
QUESTION = "What is the monthly rent for Banda Lane and who is the tenant?"


def _ask(
    store: Store, question: str, steps: StepChoices, respond: Any = None, **scope: Any
) -> tuple[Completed, list[str]]:
    prompts: list[str] = []

    def record(prompt: str) -> Any:
        prompts.append(prompt)
        return (respond or cooperative())(prompt)

    program = ScopedQA(store, Settings(program=ProgramSettings(steps=steps)))
    with dspy.context(lm=scripted_lm(record)):
        done = list(program.stream(question, resolve_scope(store, **scope)))[-1]
    assert isinstance(done, Completed), done
    return done, prompts


def test_the_floors_answer_with_lines_and_evidence_and_no_lm_call(demo_store: Store) -> None:
    done, prompts = _ask(demo_store, QUESTION, FLOORS, property_ref="Banda Lane")
    assert prompts == [] and done.lm_calls == 0 and done.tokens == 0
    rent, tenant = done.sections
    assert rent.answer == "KSH 285,000 per month" and tenant.answer == "Peter Otieno Ochieng"
    for section in done.sections:
        assert section.status == "answered" and section.basis == "extracted"
        assert 1 <= len(section.evidence) <= 3 and section.answer_sources
        assert section.evidence[0].source in section.sources
    assert "285,000" in rent.evidence[0].text and "Peter Otieno Ochieng" in tenant.evidence[0].text
    trace = done.trace
    assert trace is not None and trace.steps == FLOORS.model_dump()
    assert [line.step for line in trace.lines] == ["span", "span"] and all(line.support for line in trace.lines)


def test_the_lm_answers_each_section_in_one_call_and_its_sentences_are_quoted(demo_store: Store) -> None:
    done, prompts = _ask(demo_store, QUESTION, StepChoices(), property_ref="Banda Lane")
    assert [p for p in prompts if "[[ ## sections_context ## ]]" in p and "answers" in p]
    for section in done.sections:
        assert section.status == "answered" and section.basis == "extracted" and section.evidence


def test_an_lm_that_finds_no_answer_abstains_when_abstaining_is_its_call(demo_store: Store) -> None:
    def finds_nothing(prompt: str) -> Any:
        if "[[ ## sections_context ## ]]" in prompt:
            contexts = field(prompt, "sections_context")
            return {"answers": [{"sub_question_index": c["sub_question_index"]} for c in contexts]}
        return cooperative()(prompt)

    done, _ = _ask(demo_store, "What is the monthly rent?", StepChoices(), finds_nothing, property_ref="Banda Lane")
    section = done.sections[0]
    assert section.status == "not_found" and not section.sources and not section.evidence
    assert done.trace is not None and done.trace.lines[0].reason == "the LM found no sentence that answers it"
    # abstaining is the support floor's call: the LM's empty answer gives way to the span floor
    steps = StepChoices(abstain="support")
    done, _ = _ask(demo_store, "What is the monthly rent?", steps, finds_nothing, property_ref="Banda Lane")
    assert done.sections[0].status == "answered" and done.trace is not None
    assert any("span floor answered" in f.reason for f in done.trace.fallbacks)


def test_the_support_floor_abstains_before_any_answer_call(demo_store: Store) -> None:
    steps = StepChoices(decompose="question", score="keep_all", abstain="support")
    done, prompts = _ask(demo_store, "How many parking bays come with the house?", steps, property_ref="Banda Lane")
    assert done.sections[0].status == "not_found" and prompts == []
    assert done.trace is not None and "key terms" in (done.trace.lines[0].reason or "")


def test_format_instructions_are_never_searched_or_made_sub_questions(demo_store: Store) -> None:
    question = "What is the monthly rent for Banda Lane? Answer in thousands, rounded to one decimal place."
    done, prompts = _ask(
        demo_store, question, StepChoices(score="keep_all", answer="span", abstain="support"), property_ref="Banda Lane"
    )
    decompose = [p for p in prompts if "[[ ## question ## ]]" in p]
    assert decompose and all("rounded" not in p and "Answer in" not in p for p in decompose)
    assert [s.sub_question for s in done.sections] == ["What is the monthly rent for Banda Lane?"]
    assert done.sections[0].answer.startswith("285.0 thousand (as reported: KSH 285,000 per month")
    assert done.trace is not None and done.trace.format_request is not None


def test_a_sub_question_inventing_a_figure_is_dropped_and_recorded(demo_store: Store) -> None:
    invents = cooperative(["What is the monthly rent?", "Is the monthly rent KSH 999,999?"])
    done, _ = _ask(demo_store, "What is the monthly rent?", StepChoices(), invents, property_ref="Banda Lane")
    assert [s.sub_question for s in done.sections] == ["What is the monthly rent?"]
    assert done.trace is not None
    assert any(i.guard == "sub_question" and "999,999" in i.reason for i in done.trace.interventions)


STATEMENT = (
    "Acme Corp condensed statement of operations (In millions) Three Months Ended March 31, 2023 March 31, 2022\n"
    "Total net sales 94,836 97,278\nCost of sales 52,860 54,719\nGross margin 41,976 42,559\n"
    "Research and development 7,457 6,387\nOperating income 28,318 29,979\n"
)


def _names_operands(prompt: str) -> Any:
    """An LM that names the gross margin and total net sales rows' first figures, and a / b * 100."""
    if "computations" not in prompt:
        return cooperative()(prompt)
    (context,) = field(prompt, "sections_context")
    rows = {s["text"].split(" 4")[0].split(" 9")[0]: s for s in context["sentences"]}
    margin, sales = rows["Gross margin"], rows["Total net sales"]
    operands = [
        {"name": "a", "sentence_id": margin["sentence_id"], "figure": "41,976"},
        {"name": "b", "sentence_id": sales["sentence_id"], "figure": "94,836"},
    ]
    return {"computations": [{"sub_question_index": 0, "operands": operands, "expression": "a / b * 100"}]}


def test_a_computed_figure_is_worked_out_by_code_with_its_formula_and_cited_operands(tmp_path: Path) -> None:
    store = store_of(tmp_path, {"acme-q1.md": STATEMENT})
    question = "What was the gross margin as a percentage of total net sales?"
    for steps, calls in ((FLOORS, 0), (StepChoices(decompose="question", score="keep_all", abstain="support"), 1)):
        done, prompts = _ask(store, question, steps, _names_operands)
        (section,) = done.sections
        assert section.status == "answered" and section.basis == "computed", section
        assert section.answer == "44.3% (Gross margin 41,976 / Total net sales 94,836 × 100)"
        assert section.formula == "41,976 / 94,836 × 100"
        assert {e.text for e in section.evidence} == {"Gross margin 41,976 42,559", "Total net sales 94,836 97,278"}
        assert done.lm_calls == calls and len(prompts) == calls


def test_a_computed_figure_rests_on_its_operands_and_needs_no_other_support(tmp_path: Path) -> None:
    # a support threshold no sentence can reach: a figure as reported abstains, a computed one does not
    store = store_of(tmp_path, {"acme-q1.md": STATEMENT})
    program = ScopedQA(store, Settings(program=ProgramSettings(steps=FLOORS, support_threshold=1.0)))
    with dspy.context(lm=scripted_lm(cooperative())):
        computed = list(
            program.stream("What was the gross margin as a percentage of total net sales?", resolve_scope(store))
        )[-1]
        reported = list(program.stream("What were the research grants received?", resolve_scope(store)))[-1]
    assert isinstance(computed, Completed) and isinstance(reported, Completed)
    assert computed.sections[0].status == "answered" and computed.sections[0].basis == "computed"
    assert reported.sections[0].status == "not_found"


# ---- a compromised LM's computation (issue 36, D1): only the asked operation over quoted amounts ----------

STATEMENT_WITH_YEARS = STATEMENT + "Fiscal years 2023 2022\nRevenue (Note 7) 94,836 97,278\n"
SHARE = "What was the gross margin as a percentage of total net sales?"
SUM = "What is the sum of cost of sales and operating income?"


def _computes(expression: str, *figures: tuple[str, str]) -> Any:
    """An LM that names, for each (row label, figure) in turn, the row's sentence and that figure, and writes
    `expression` over them."""

    def respond(prompt: str) -> Any:
        if "computations" not in prompt:
            return cooperative()(prompt)
        (context,) = field(prompt, "sections_context")
        operands = []
        for name, (label, figure) in zip("abcdefgh", figures, strict=False):
            sentence = next(s for s in context["sentences"] if s["text"].startswith(label))
            operands.append({"name": name, "sentence_id": sentence["sentence_id"], "figure": figure})
        return {"computations": [{"sub_question_index": 0, "operands": operands, "expression": expression}]}

    return respond


LM_COMPUTES = StepChoices(decompose="question", score="keep_all", abstain="support")
SHARE_LINE = "44.3% (Gross margin 41,976 / Total net sales 94,836 × 100)"
SUM_LINE = "81,178 million (Cost of sales 52,860 + Operating income 28,318)"


@pytest.mark.parametrize(
    ("question", "expression", "figures", "floor_line", "why"),
    [
        # any number as the answer: a literal constant and an operand multiplied away
        (SHARE, "a * 0 + 4242424", (("Gross margin", "41,976"), ("Total net sales", "94,836")), SHARE_LINE, "4242424"),
        (SUM, "(a + b) * 1000", (("Cost of sales", "52,860"), ("Operating income", "28,318")), SUM_LINE, "1000"),
        # a product where the question asks for a sum; a ratio without its percentage's 100
        (SUM, "a * b", (("Cost of sales", "52,860"), ("Operating income", "28,318")), SUM_LINE, "not the sum"),
        (SHARE, "a / b", (("Gross margin", "41,976"), ("Total net sales", "94,836")), SHARE_LINE, "not the share"),
        # an operand used twice, one left out, a sign change
        (SHARE, "a / a * 100", (("Gross margin", "41,976"), ("Total net sales", "94,836")), SHARE_LINE, "b is not"),
        (SHARE, "-a / b * 100", (("Gross margin", "41,976"), ("Total net sales", "94,836")), SHARE_LINE, "sign"),
        # operands that are no amounts: a year of a column header, a note reference
        (SHARE, "a / b * 100", (("Gross margin", "41,976"), ("Fiscal years", "2023")), SHARE_LINE, "a year"),
        (SHARE, "a / b * 100", (("Gross margin", "41,976"), ("Revenue", "7")), SHARE_LINE, "a note reference"),
    ],
)
def test_an_lm_computation_that_is_not_the_asked_operation_gives_way_to_the_floor(
    tmp_path: Path, question: str, expression: str, figures: tuple[tuple[str, str], ...], floor_line: str, why: str
) -> None:
    store = store_of(tmp_path, {"acme-q1.md": STATEMENT_WITH_YEARS})
    done, prompts = _ask(store, question, LM_COMPUTES, _computes(expression, *figures))
    (section,) = done.sections
    assert len(prompts) == 1  # the compute call was made, and refused
    assert section.answer == floor_line and section.basis == "computed"
    assert "4,242,424" not in section.answer and done.trace is not None
    (fallback,) = [f for f in done.trace.fallbacks if f.guard == "compute"]
    assert why in fallback.reason and fallback.reason.endswith("the rows floor computed it")


def test_an_lm_computation_in_another_operand_order_or_form_is_worked_out(tmp_path: Path) -> None:
    store = store_of(tmp_path, {"acme-q1.md": STATEMENT_WITH_YEARS})
    for expression, figures in (
        ("b * 100 / a", (("Total net sales", "94,836"), ("Gross margin", "41,976"))),
        ("a * 100 / b", (("Gross margin", "41,976"), ("Total net sales", "94,836"))),
    ):
        done, _ = _ask(store, SHARE, LM_COMPUTES, _computes(expression, *figures))
        (section,) = done.sections
        assert section.basis == "computed" and section.answer.startswith("44.3% ("), section.answer
        assert done.trace is not None and not [f for f in done.trace.fallbacks if f.guard == "compute"]


def test_a_line_resting_on_a_sentence_that_does_not_state_what_is_asked_abstains(tmp_path: Path) -> None:
    # the contract corpus's Northwind-Helix NDA: "notice" is in the notices clause, a duration in the survival
    # clause; together they pass the support floor, but the span floor's "five (5) years" rests on a sentence
    # that states no notice period (before: a cited wrong answer)
    nda = (DATASETS / "contracts" / "agreements" / "northwind-helix-nda.txt").read_text()
    store = store_of(tmp_path, {"nda.txt": nda.replace("<!-- pagebreak -->", "")})
    question = "How much notice does a party need to give to terminate before the term ends?"
    done, prompts = _ask(store, question, FLOORS)
    (section,) = done.sections
    assert section.status == "not_found" and not section.sources and prompts == []
    line = done.trace.lines[0] if done.trace is not None else None
    assert line is not None and line.proposed == "five (5) years"
    assert "the sentence it rests on holds" in (line.reason or "")
    # a question the cited sentence states is answered from it, the heading's words counting
    done, _ = _ask(store, "Within how many days must materials be returned?", FLOORS)
    assert done.sections[0].status == "answered" and done.sections[0].answer == "fifteen (15) days"


# -- D1's leftover (issue 47): one clause number as both operands of a sum ----------------------------------------

LEASE_CLAUSES = (
    "2. Deposit 2.1 On signing, the Tenant pays a deposit of KSH 570,000, equal to 2 months' rent.\n\n"
    "1. Rent 1.2 The Tenant shall pay rent of KSH 285,000 per month.\n"
)
DEPOSIT_AND_RENT = "What is the sum of the deposit and the monthly rent?"


@pytest.mark.parametrize(
    ("figures", "why"),
    [
        ((("2. Deposit", "2.1"), ("2. Deposit", "2.1")), "a clause or section number"),
        ((("2. Deposit", "570,000"), ("2. Deposit", "570,000")), "the same figure as operand a"),
    ],
)
def test_one_figure_of_a_sentence_is_never_two_operands_nor_is_a_clause_number_one(
    tmp_path: Path, figures: tuple[tuple[str, str], ...], why: str
) -> None:
    store = store_of(tmp_path, {"lease.md": LEASE_CLAUSES})
    done, prompts = _ask(store, DEPOSIT_AND_RENT, LM_COMPUTES, _computes("a + b", *figures))
    assert len(prompts) == 1 and done.trace is not None
    (fallback,) = [f for f in done.trace.fallbacks if f.guard == "compute"]
    assert why in fallback.reason
    (section,) = done.sections
    assert "4.2" not in section.answer and "1,140,000" not in section.answer


# -- the probe's finding E2 (issue 47): a currency asked for is never a rename -----------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "What is the monthly rent for Banda Lane? Answer in USD millions.",
        "What is the monthly rent for Banda Lane (in EUR thousands)?",
    ],
)
def test_a_currency_the_evidence_is_not_in_is_never_written_beside_its_figure(demo_store: Store, question: str) -> None:
    done, prompts = _ask(demo_store, question, FLOORS, property_ref="Banda Lane")
    (section,) = done.sections
    asked = "USD" if "USD" in question else "EUR"
    assert prompts == [] and section.status == "answered"
    assert asked not in section.answer.replace(f"not the {asked} asked for", ""), section.answer
    assert "KSH 285,000" in section.answer and f"reported in KSH, not the {asked} asked for" in section.answer
    value = done.value
    assert value is not None and value.absent and value.value is None, value
    assert value.note == f"reported in KSH, not the {asked} asked for"


def test_a_currency_the_evidence_is_in_is_applied_with_the_scale_asked(demo_store: Store) -> None:
    done, _ = _ask(
        demo_store,
        "What is the monthly rent for Banda Lane? Answer in KSH thousands.",
        FLOORS,
        property_ref="Banda Lane",
    )
    (section,) = done.sections
    assert section.answer.startswith("KSH 285 thousand (as reported: KSH 285,000 per month"), section.answer
    assert done.value is not None and not done.value.absent and done.value.value == 285
