"""The one prompt renderer: prompts.md is every module's section; the prompt registry stores one module."""

from __future__ import annotations

import dspy

from pipeline.export import PREDICTORS, program_state, render_prompts
from pipeline.export.prompts import render_module
from pipeline.program.module import ScopedQA
from pipeline.store import Store


def _state(store: Store) -> dict:
    program = ScopedQA(store)
    program.answer.demos = [dspy.Example(question="Rent?", sections_context=[{"k": 1}], answers=[], note="```x```")]
    return program_state(program)


def test_prompts_md_is_the_module_sections_in_predictor_order(demo_store: Store) -> None:
    state = _state(demo_store)
    text = render_prompts(state)
    sections = [render_module(name, state[name], level=2) for name in PREDICTORS]
    assert text.endswith("\n\n".join(sections) + "\n")
    assert [line for line in text.splitlines() if line.startswith("## ")] == [f"## {n}" for n in PREDICTORS]


def test_one_module_at_level_one_with_its_note(demo_store: Store) -> None:
    state = _state(demo_store)
    text = render_module("answer", state["answer"], note="optimised")
    assert text.splitlines()[0] == "# answer (optimised)"
    assert "## Instructions" in text and "## Fields" in text and "## Demos (1)" in text and "### Demo 1" in text
    # Signature fields first, then other keys sorted; a value holding a fence gets a longer one.
    order = ["sections_context:", "answers:", "note:", "question:"]
    assert [line for line in text.splitlines() if line in order] == order
    assert "````text\n```x```\n````" in text
    assert text.replace("# answer (optimised)", "## answer").replace("\n#", "\n##") == render_module(
        "answer", state["answer"], level=2
    )
