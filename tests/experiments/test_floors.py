"""Each learned step against its floors (experiments.floors): the LM runs a step only when it beats the best
floor by the selection rule; otherwise the exported program runs that floor."""

from __future__ import annotations

import pytest

from experiments.floors import LM, best_floor, choose_step, lm_steps, with_steps
from pipeline.program.module import ScopedQA
from pipeline.settings import ProgramSettings, Settings, StepChoices
from pipeline.store import Store

CASES = ["chip", "no_scope", "property", "wrong_property"] * 5
SAFE = {"wrong_property": 0, "invalid_ids": 0}


def test_the_best_floor_is_the_highest_mean_and_the_first_listed_on_a_tie() -> None:
    assert best_floor({"top_k": [0.2, 0.4], "keep_all": [0.9, 0.9]}) == "keep_all"
    assert best_floor({"parts": [0.5, 1.0], "question": [1.0, 0.5]}) == "parts"


def test_the_lm_runs_a_step_only_when_it_beats_the_best_floor_with_the_interval_above_zero() -> None:
    floors = {"top_k": [0.5] * 20, "keep_all": [0.3] * 20}
    better = choose_step("score", CASES, floors, [0.9] * 20, lambda _: SAFE, SAFE, seed=0)
    assert better.chosen == LM and better.steps == {} and better.best_floor == "top_k"
    assert better.floor_values == {"top_k": 0.5, "keep_all": 0.3}
    worse = choose_step("score", CASES, floors, [0.2] * 20, lambda _: SAFE, SAFE, seed=0)
    assert worse.chosen == "top_k" and worse.steps == {"score": "top_k"} and "does not beat the top_k" in worse.reason
    tied = choose_step("score", CASES, floors, [0.5] * 20, lambda _: SAFE, SAFE, seed=0)
    assert tied.chosen == "top_k"  # no gain is no reason to pay for the call


def test_an_lm_that_wins_but_breaks_a_safety_gate_does_not_run_the_step() -> None:
    floors = {"span": [0.5] * 20, "sentence": [0.4] * 20}
    unsafe = choose_step("answer", CASES, floors, [0.9] * 20, lambda _: SAFE, {**SAFE, "wrong_property": 1}, seed=0)
    assert unsafe.chosen == "span" and unsafe.steps == {
        "answer": "span",
        "abstain": "support",
        "compute": "rows",
        "judge": "claims",
    }


def test_the_answer_stage_s_lm_abstains_by_the_lm_unless_the_config_hands_it_to_the_support_floor() -> None:
    assert lm_steps("answer", {}) == {"answer": LM, "abstain": LM}
    assert lm_steps("answer", {"abstain": "support"}) == {"answer": LM, "abstain": "support"}
    assert lm_steps("score", {"abstain": "support"}) == {"score": LM}


def test_with_steps_copies_the_program_and_validates_the_steps(demo_store: Store) -> None:
    program = ScopedQA(demo_store, Settings(program=ProgramSettings(steps=StepChoices(decompose="parts"))))
    floor = with_steps(program, {"score": "top_k"})
    assert floor.settings.program.steps.score == "top_k" and floor.settings.program.steps.decompose == "parts"
    assert program.settings.program.steps.score == "lm" and floor is not program
    with pytest.raises(ValueError, match="needs answer"):
        with_steps(program, {"answer": "span", "abstain": "lm"})
