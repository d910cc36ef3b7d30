"""The choose step in the whole program (pipeline.answering.choose wired by the answer step): with the span floor
answering and `[program.steps] choose = "lm"`, the LM picks the answer line among the floor's few best
candidates; its floor (the first candidate) answers otherwise and whenever the LM's choice does not count; an
export written before the step existed still loads, with the step on its floor."""

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
CHOSEN = FLOORS.model_copy(update={"choose": "lm"})
QUESTION = "How long does the Acme agreement remain in force?"

MANIFEST = """format = "scoperag-corpus/v1"
name = "agreements"
entity_kind = "company"

[[entities]]
slug = "acme"
name = "Acme Widgets Inc."
aliases = ["Acme"]

[[documents]]
path = "acme/nda.html"
type = "agreement"
entities = ["acme"]
"""
NDA = """<html><body>
<p>Mutual non-disclosure agreement between Acme Widgets Inc. and Beta Tools Corporation.</p>
<p>The confidentiality obligations of this agreement remain in force for five (5) years after the agreement ends.</p>
<p>This agreement remains in force for three (3) years from the Effective Date.</p>
</body></html>"""

Respond = Callable[[str], Any]


@pytest.fixture(scope="module")
def agreements(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("chosen")
    source = root / "corpus"
    (source / "acme").mkdir(parents=True)
    (source / "acme" / "nda.html").write_text(NDA, encoding="utf-8")
    (source / "corpus.toml").write_text(MANIFEST, encoding="utf-8")
    build_index(source, root / "index", HashEmbedder(32))
    return open_store(root / "index", HashEmbedder(32))


def chooses(choice: Callable[[list[str]], Any], shown: list[list[str]]) -> Respond:
    """An LM that answers only choose prompts with `choice(candidate lines)`, recording what it was shown."""

    def respond(prompt: str) -> Any:
        assert "[[ ## candidates ## ]]" in prompt, prompt[:200]
        lines = str(field(prompt, "candidates")).splitlines()
        shown.append(lines)
        return {"choice": choice(lines)}

    return respond


def ask(store: Store, steps: StepChoices, respond: Respond | None = None) -> Completed:
    program = ScopedQA(store, Settings(program=ProgramSettings(steps=steps)))
    lm = scripted_lm(respond or (lambda prompt: pytest.fail(f"no LM call expected: {prompt[:120]}")))
    with dspy.context(lm=lm):
        *_, done = program.stream(QUESTION, resolve_scope(store, property_ref="Acme"))
    assert isinstance(done, Completed), done
    return done


def line(done: Completed) -> str:
    return done.sections[0].answer


def test_the_floor_takes_its_first_candidate_with_no_lm_call(agreements: Store) -> None:
    # like every step, choose runs by the LM unless told otherwise (the uncompiled program: every step by the LM)
    assert StepChoices().choose == "lm"
    done = ask(agreements, FLOORS)
    assert done.lm_calls == 0 and line(done) == "five (5) years"


def test_the_lm_chooses_among_the_floors_candidates_and_its_line_is_cited(agreements: Store) -> None:
    shown: list[list[str]] = []
    floor = ask(agreements, FLOORS)
    done = ask(
        agreements, CHOSEN, chooses(lambda lines: 1 + next(i for i, t in enumerate(lines) if "three" in t), shown)
    )
    assert done.lm_calls == 1 and len(shown) == 1 and shown[0][0].startswith(f"1. {line(floor)} | from: ")
    assert line(done) == "three (3) years" and done.sections[0].status == "answered"
    assert "remains in force for three (3) years" in done.sections[0].evidence[0].text
    assert done.trace is not None and done.trace.lines[0].proposed == "three (3) years"


@pytest.mark.parametrize(
    ("respond", "why"),
    [
        pytest.param(lambda prompt: {"choice": 0}, "chose none", id="none"),
        pytest.param(lambda prompt: {"choice": 9}, "was not offered", id="not-offered"),
        pytest.param(lambda prompt: "[[ ## choice ## ]]\nthe second\n\n[[ ## completed ## ]]", "no choice", id="text"),
        pytest.param(lambda prompt: (_ for _ in ()).throw(RuntimeError("connection reset")), "", id="lm-error"),
    ],
)
def test_a_choice_that_does_not_count_leaves_the_line_to_the_floor(
    agreements: Store, respond: Respond, why: str
) -> None:
    floor = ask(agreements, FLOORS)
    done = ask(agreements, CHOSEN, respond)
    assert line(done) == line(floor) == "five (5) years"
    assert done.trace is not None
    reasons = [f.reason for f in done.trace.fallbacks if f.guard == "choose"]
    assert reasons and all(why in r for r in reasons[-1:])


def test_an_export_without_the_choose_step_loads_with_it_on_its_floor(agreements: Store) -> None:
    shipped = ROOT / "pipeline" / "export" / "shipped"
    assert "choose" not in read_export(shipped).program_state
    program, _ = load_export_with_settings(shipped, agreements)
    assert program.settings.program.steps.choose == "span" and program.settings.program.call_tokens("choose") == 16
    assert list(program.choose.signature.fields) == ["question", "candidates", "choice"]


def test_the_answer_phase_says_when_the_lm_may_choose(agreements: Store) -> None:
    from pipeline.program.events import Generating

    scope = resolve_scope(agreements, property_ref="Acme")
    said = {}
    for name, steps in (("floor", FLOORS), ("chosen", CHOSEN)):
        program = ScopedQA(agreements, Settings(program=ProgramSettings(steps=steps)))
        with dspy.context(lm=scripted_lm(lambda prompt: {"choice": 1})):
            said[name] = next(e for e in program.stream(QUESTION, scope) if isinstance(e, Generating)).lm
    assert said == {"floor": False, "chosen": True}
