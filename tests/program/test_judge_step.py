"""The judge step in the whole program (pipeline.answering.judge wired by the answer step): a yes/no question
judged by the LM statement by statement when `[program.steps] judge = "lm"`, its floor (pipeline.answering.claims)
otherwise and whenever the LM gives no usable verdict; an export written before the judge existed still loads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import dspy
import pytest

from pipeline.export.saving import load_export_with_settings, read_export
from pipeline.intake.scope import resolve_scope
from pipeline.program.events import Completed
from pipeline.program.module import ScopedQA
from pipeline.settings import ProgramSettings, Settings, StepChoices
from pipeline.store import Store, open_store
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder
from tests.support.fakes import field, scripted_lm

ROOT = Path(__file__).resolve().parents[2]
FLOORS = StepChoices(
    decompose="parts",
    score="top_k",
    answer="span",
    abstain="support",
    compute="rows",
    hyde="none",
    judge="claims",
    choose="span",
)
JUDGED = FLOORS.model_copy(update={"judge": "lm"})
QUESTION = "Did {} declare any dividends on its common stock? If there is no mention, return False."

MANIFEST = """format = "scoperag-corpus/v1"
name = "reports"
entity_kind = "company"

[[entities]]
slug = "acme"
name = "Acme Widgets Inc."
aliases = ["Acme"]

[[entities]]
slug = "beta"
name = "Beta Tools Corporation"
aliases = ["Beta"]

[[documents]]
path = "acme/annual-2023.html"
type = "10-K"
entities = ["acme"]

[[documents]]
path = "beta/annual-2023.html"
type = "10-K"
entities = ["beta"]
"""
ACME = """<html><body>
<p>Acme Widgets Inc. Annual Report 2023</p>
<p>Acme Widgets Inc. makes widgets for the building trade.</p>
<div style="page-break-after: always"></div>
<p>CONSOLIDATED STATEMENTS OF EQUITY</p>
<p>(In millions, except per share amounts)</p>
<table>
<tr><td></td><td>Year Ended December 31, 2023</td><td>Year Ended December 31, 2022</td></tr>
<tr><td>Net income</td><td>$250</td><td>$200</td></tr>
<tr><td>Dividends declared on common stock</td><td>$40</td><td>$35</td></tr>
</table>
</body></html>"""
# The sentence holds the event's verb and object but only half its words (not "common stock"): the floor does not
# take it, the judge is asked. (A sentence without the verb, "approved a special dividend", is no yes whatever the
# judge says: pipeline.guards.yes_answers.)
BETA = """<html><body>
<p>Beta Tools Corporation Annual Report 2023</p>
<p>In June 2023 the Board of Beta Tools Corporation declared a special dividend to its shareholders.</p>
</body></html>"""

Respond = Callable[[str], Any]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("judged")
    source = root / "corpus"
    for relative, text in {"acme/annual-2023.html": ACME, "beta/annual-2023.html": BETA}.items():
        path = source / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (source / "corpus.toml").write_text(MANIFEST, encoding="utf-8")
    build_index(source, root / "index", HashEmbedder(32))
    return open_store(root / "index", HashEmbedder(32))


def judged_by(verdict: Callable[[str], str], shown: list[str]) -> Respond:
    """An LM that answers only judge prompts, with `verdict(statement)`, recording each statement shown."""

    def respond(prompt: str) -> Any:
        assert "[[ ## statement ## ]]" in prompt, prompt[:200]
        statement = str(field(prompt, "statement"))
        shown.append(statement)
        return {"verdict": verdict(statement)}

    return respond


def ask(store: Store, company: str, steps: StepChoices, respond: Respond | None = None) -> Completed:
    program = ScopedQA(store, Settings(program=ProgramSettings(steps=steps)))
    lm = scripted_lm(respond or (lambda prompt: pytest.fail(f"no LM call expected: {prompt[:120]}")))
    with dspy.context(lm=lm):
        *_, done = program.stream(QUESTION.format(company), resolve_scope(store, property_ref=company))
    assert isinstance(done, Completed), done
    return done


def line_step(done: Completed) -> str:
    assert done.trace is not None
    return done.trace.lines[0].step


def test_the_judges_floor_makes_no_lm_call(reports: Store) -> None:
    # like every step, the judge runs by the LM unless told otherwise (the uncompiled program: every step by the LM)
    assert StepChoices().judge == "lm"
    done = ask(reports, "Beta", FLOORS)
    assert done.lm_calls == 0 and done.value is not None and done.value.value is False
    assert line_step(done) == "claim:none"


def test_a_yes_on_a_sentence_answers_true_cited_to_that_sentence(reports: Store) -> None:
    shown: list[str] = []
    done = ask(reports, "Beta", JUDGED, judged_by(lambda s: "yes" if "special dividend" in s else "no", shown))
    value = done.value
    assert value is not None and value.value is True and not value.absent
    assert any("special dividend" in s for s in shown) and done.lm_calls == len(shown)
    assert value.pages and value.pages[0].filename.startswith("annual-2023")
    assert "special dividend" in done.sections[0].evidence[0].text
    assert line_step(done) == "judge:lm"


def test_a_yes_on_the_row_leaves_the_value_to_its_figure(reports: Store) -> None:
    shown: list[str] = []
    done = ask(reports, "Acme", JUDGED, judged_by(lambda s: "yes", shown))
    assert shown[0].startswith("Dividends declared on common stock: $40") and len(shown) == 1
    assert done.value is not None and done.value.value is True
    assert "Dividends declared" in done.sections[0].evidence[0].text
    assert done.trace is not None and done.trace.lines[0].proposed == "row: yes"


def test_no_yes_gives_the_absent_value_with_the_verdicts_traced(reports: Store) -> None:
    shown: list[str] = []
    done = ask(reports, "Acme", JUDGED, judged_by(lambda s: "not stated", shown))
    assert done.value is not None and done.value.value is False and done.value.absent
    assert done.sections[0].status != "answered" and len(shown) == done.lm_calls >= 1
    assert done.trace is not None and (done.trace.lines[0].proposed or "").startswith("row: not stated")


@pytest.mark.parametrize(
    "respond",
    [
        pytest.param(lambda prompt: "[[ ## verdict ## ]]\nperhaps\n\n[[ ## completed ## ]]", id="unparseable"),
        pytest.param(lambda prompt: (_ for _ in ()).throw(RuntimeError("connection reset")), id="lm-error"),
    ],
)
def test_an_lm_that_gives_no_verdict_leaves_the_question_to_the_floor(reports: Store, respond: Respond) -> None:
    floor = ask(reports, "Acme", FLOORS)
    done = ask(reports, "Acme", JUDGED, respond)
    assert done.value == floor.value and done.value is not None and done.value.value is True
    assert line_step(done) == line_step(floor) == "claim:rows"
    assert done.trace is not None
    assert any(f.guard == "judge" and "claims floor answered" in f.reason for f in done.trace.fallbacks)


def test_an_export_without_the_judge_loads_with_the_judge_on_its_floor(reports: Store) -> None:
    shipped = ROOT / "pipeline" / "export" / "shipped"
    assert "judge" not in read_export(shipped).program_state
    program, _ = load_export_with_settings(shipped, reports)
    assert program.settings.program.steps.judge == "claims" and program.settings.program.call_tokens("judge") == 24
    assert list(program.judge.signature.fields) == ["question", "statement", "verdict"]


def test_ask_names_the_judge_step_with_the_others(reports: Store) -> None:
    from pipeline.cli.answer_view import steps_line

    judged = ask(reports, "Acme", JUDGED, judged_by(lambda s: "yes", []))
    floor = ask(reports, "Acme", FLOORS)
    assert judged.trace is not None and floor.trace is not None
    assert steps_line(judged.trace.steps).endswith("hyde: floor none, judge: LM, choose: floor span")
    assert steps_line(floor.trace.steps).endswith("judge: floor claims, choose: floor span")


# -- the probe's finding E3 (issue 47): the judge's "yes" is checked ---------------------------------------------

# Yes/no questions over the demo lease that no sentence of it answers yes (subletting and alterations are
# forbidden without consent, the deposit bears no interest, termination needs notice, pets are not mentioned).
NOT_YES = (
    "Can the landlord terminate the lease without notice?",
    "Is the tenant allowed to sublet the premises?",
    "Is subletting allowed?",
    "Does the deposit bear interest?",
    "Can the tenant make structural alterations?",
    "Is the tenant allowed to keep pets?",
)


@pytest.mark.parametrize("question", NOT_YES)
@pytest.mark.parametrize("steps", [JUDGED, FLOORS], ids=["lm-always-yes", "claims-floor"])
def test_a_yes_never_stands_on_a_sentence_that_does_not_state_the_event(
    demo_store: Store, question: str, steps: StepChoices
) -> None:
    program = ScopedQA(demo_store, Settings(program=ProgramSettings(steps=steps)))
    with dspy.context(lm=scripted_lm(lambda prompt: {"verdict": "yes"})):
        *_, done = program.stream(question, resolve_scope(demo_store, property_ref="Banda Lane"))
    assert isinstance(done, Completed) and done.value is not None
    assert done.value.kind == "boolean" and done.value.value is not True, (done.sections[0].answer, done.value)


def test_a_yes_still_stands_on_a_sentence_stating_the_event(demo_store: Store) -> None:
    program = ScopedQA(demo_store, Settings(program=ProgramSettings(steps=JUDGED)))
    with dspy.context(lm=scripted_lm(lambda prompt: {"verdict": "yes"})):
        *_, done = program.stream(
            "Does the landlord pay the county rates?", resolve_scope(demo_store, property_ref="Banda Lane")
        )
    assert isinstance(done, Completed) and done.value is not None and done.value.value is True
    assert "county rates" in done.sections[0].evidence[0].text


def test_an_answer_line_says_yes_only_where_its_sentence_states_the_event(demo_store: Store) -> None:
    # with the answer step on the LM and the judge on its floor, a yes/no question's line is the LM's: a line
    # copied from "Allow the Tenant quiet enjoyment of the Premises" was True for subletting
    def quotes_quiet_enjoyment(prompt: str) -> Any:
        contexts = field(prompt, "sections_context")
        answers = []
        for context in contexts:
            quiet = [s for s in context["sentences"] if "quiet enjoyment" in s["text"]]
            line = "Allow the Tenant quiet enjoyment of the Premises" if quiet else ""
            ids = [s["sentence_id"] for s in quiet[:1]]
            answers.append({"sub_question_index": context["sub_question_index"], "sentence_ids": ids, "answer": line})
        return {"answers": answers}

    steps = FLOORS.model_copy(update={"answer": "lm"})
    program = ScopedQA(demo_store, Settings(program=ProgramSettings(steps=steps)))
    with dspy.context(lm=scripted_lm(quotes_quiet_enjoyment)):
        *_, done = program.stream(
            "Is the tenant allowed to sublet the premises?", resolve_scope(demo_store, property_ref="Banda Lane")
        )
    assert isinstance(done, Completed) and done.value is not None
    assert done.value.value is not True, (done.sections[0].answer, done.value)
