"""Optimizers: stratified sampling, the gated metric, GEPA feedback, the LM-call budget and compiling."""

from __future__ import annotations

import importlib.util
import json
import re
import threading
from typing import Any

import dspy
import pytest
from dspy.clients.base_lm import BaseLM
from dspy.clients.engines.dummy_engine import AsyncDummyEngine
from dspy.utils import DummyLM

from optimizers import (
    BootstrapParams,
    CompileSpec,
    GepaParams,
    MiproParams,
    RandomSearchParams,
    TrainableView,
    compile_program,
    feedback_text,
    gate_penalty,
    gated_metric,
    gepa_metric,
    to_training_examples,
)
from pipeline.errors import BudgetExceededError
from pipeline.evaluation.examples import CASES, LabelledExample, make_example, missing_cases, stratified_sample
from pipeline.evaluation.labels import resolve_example
from pipeline.export import program_state
from pipeline.program.calls import LMCallCounter
from pipeline.program.module import ScopedQA
from pipeline.program.trace import Intervention, QuestionTrace
from pipeline.store import Store
from tests.support.fakes import Responder, _ScriptEngine, cooperative, scripted_lm

PROGRAM_OUTPUTS = {"sub_questions", "scores", "answers", "computations", "passage"}
INSTRUCTION = "Answer each sub-question only from the chunks shown for it and cite each one."


class _KeepScript(DummyLM):
    """A scripted DummyLM whose copies (optimizers copy the LM per rollout) keep the script."""

    def copy(self, **kwargs: Any) -> Any:
        copied = BaseLM.copy(self, **kwargs)  # not DummyLM.copy, which swaps in a fresh engine
        copied._engine_spec = self._engine_spec
        copied._async_engine_spec = self._async_engine_spec
        return copied


_SYSTEM = threading.local()


class _SystemAwareEngine(_ScriptEngine):
    """Remembers the system message (the instruction) of the call being answered, for `follows_instruction`."""

    def _complete_messages(self, messages: list[dict[str, str]]) -> Any:
        _SYSTEM.text = messages[0]["content"] if messages and messages[0].get("role") == "system" else ""
        return super()._complete_messages(messages)


def scripted(respond: Responder) -> DummyLM:
    """tests.support.fakes.scripted_lm that survives `lm.copy()` and can see the instruction it was given."""
    lm = scripted_lm(respond)
    engine = _SystemAwareEngine(lm, respond)
    lm._engine_spec = engine
    lm._async_engine_spec = AsyncDummyEngine(engine)
    lm.__class__ = _KeepScript
    return lm


def follows_instruction(respond: Responder) -> Responder:
    """`respond`, except that answers find nothing unless the answer instruction is INSTRUCTION."""

    def answer(prompt: str) -> Any:
        out = respond(prompt)
        if isinstance(out, dict) and "answers" in out and INSTRUCTION not in getattr(_SYSTEM, "text", ""):
            for line in out["answers"]:
                line["answer"], line["sentence_ids"] = "", []
        return out

    return answer


def tolerant(respond: Responder) -> Responder:
    """`respond`, plus answers for the optimizers' own prompts (instruction proposals, GEPA reflection)."""

    def answer(prompt: str) -> Any:
        if "[[ ## " not in prompt:  # a raw prompt: the new instruction in a fenced block
            return f"```\n{INSTRUCTION}\n```"
        if "Respond with a JSON object" in prompt:  # GEPA's reflection asks through the JSON adapter
            fields = re.findall(r"`(\w+)`", prompt.rsplit("Respond with a JSON object", 1)[-1])
            if fields and not set(fields) & PROGRAM_OUTPUTS:
                return json.dumps({name: INSTRUCTION for name in fields})
        wanted = re.findall(r"`\[\[ ## (\w+) ## \]\]`", prompt.rsplit("Respond with", 1)[-1])
        wanted = [name for name in wanted if name != "completed"]
        if wanted and not set(wanted) & PROGRAM_OUTPUTS:
            return {name: INSTRUCTION for name in wanted}
        return respond(prompt)

    return answer


def demo_examples() -> list[LabelledExample]:
    """Two examples per case on the demo corpus (the cooperative LM answers them within the gates)."""
    rows: list[dict[str, Any]] = [
        {
            "case": "property",
            "question": "What is the monthly rent?",
            "scope": {"property": "banda-lane"},
            "gold_documents": ("banda-lane/lease.pdf",),
            "forbidden_documents": ("banda-road/lease.md",),
        },
        {
            "case": "property",
            "question": "Who is the tenant?",
            "scope": {"property": "dik-dik-lane"},
            "gold_documents": ("dik-dik-lane/lease.pdf",),
        },
        {
            "case": "chip",
            "question": "Who is the tenant?",
            "scope": {"document_ids": ["banda-road/lease.md"]},
            "gold_documents": ("banda-road/lease.md",),
        },
        {
            "case": "chip",
            "question": "What is the deposit?",
            "scope": {"document_ids": ["banda-road/lease.md"]},
            "gold_documents": ("banda-road/lease.md",),
        },
        {
            "case": "wrong_property",
            "question": "Summarise the Banda Lane offer letter",
            "forbidden_documents": ("banda-lane/offer-letter-banda-lane-copy.pdf", "banda-road/lease.md"),
            "gold_documents": ("banda-lane/offer-letter.pdf",),
        },
        {
            "case": "wrong_property",
            "question": "What is the market value of Banda Lane?",
            "forbidden_documents": ("banda-lane/valuation-banda-copy.md",),
            "gold_documents": ("banda-lane/valuation.md",),
        },
        {
            "case": "no_scope",
            "question": "Which firm valued Dik Dik Lane?",
            "gold_documents": ("dik-dik-lane/valuation.md",),
        },
        {
            "case": "no_scope",
            "question": "What did the inspection of Mvuli Road find?",
            "gold_documents": ("mvuli-road/inspection-report.md",),
        },
    ]
    return [make_example(corpus="demo", **row) for row in rows]


def dspy_examples(store: Store, examples: list[LabelledExample]) -> list[dspy.Example]:
    return to_training_examples([resolve_example(e, store) for e in examples])


# -- sampling -------------------------------------------------------------------------------------


def test_stratified_sample_represents_every_case_and_is_deterministic() -> None:
    examples = demo_examples()
    picked = stratified_sample(examples, 4, seed=3)
    assert sorted(e.case for e in picked) == sorted(CASES)
    assert [e.case for e in picked] == list(CASES)  # round-robin in CASES order
    assert stratified_sample(list(reversed(examples)), 4, seed=3) == picked  # input order does not matter
    assert stratified_sample(examples, 4, seed=3) == picked
    assert {e.id for seed in range(8) for e in stratified_sample(examples, 4, seed)} > {e.id for e in picked}
    everything = stratified_sample(examples, 100, seed=0)
    assert sorted(e.id for e in everything) == sorted(e.id for e in examples)
    assert [e.case for e in everything[:4]] == list(CASES) and [e.case for e in everything[4:]] == list(CASES)


def test_missing_cases_names_the_absent_ones() -> None:
    only_chips = [e for e in demo_examples() if e.case == "chip"]
    assert missing_cases(only_chips, CASES) == ["no_scope", "property", "wrong_property"]
    assert missing_cases(demo_examples(), CASES) == []


# -- metric ---------------------------------------------------------------------------------------


def _predict(store: Store, example: dspy.Example, respond: Responder) -> dspy.Prediction:
    with dspy.context(lm=scripted_lm(respond)):
        return ScopedQA(store)(**example.inputs())


def test_gated_metric_scores_gate_failures_below_every_safe_candidate(demo_store: Store) -> None:
    chip = demo_examples()[2]
    poisoned = chip.model_copy(update={"gold_documents": (), "forbidden_documents": ("banda-road/lease.md",)})
    (clean, bad) = dspy_examples(demo_store, [chip, poisoned])
    metric = gated_metric(demo_store, {"citation_recall": 0.0, "abstention": 1.0}, examples=8, threshold=0.5)
    pred = _predict(demo_store, clean, cooperative())
    assert metric(clean, pred) == pytest.approx(1.0)
    assert metric(bad, _predict(demo_store, bad, cooperative())) == gate_penalty(8) == -8.0
    # one gate failure among 8 examples averages below 0, i.e. below any gate-clean candidate
    assert (gate_penalty(8) + 7 * 1.0) / 8 < 0.0
    # bootstrapping (trace given): a bool, False whenever a gate fails
    assert metric(clean, pred, trace=[]) is True
    assert metric(bad, _predict(demo_store, bad, cooperative()), trace=[]) is False
    strict = gated_metric(demo_store, {"fact_recall": 1.0, "abstention": 1.0}, examples=8, threshold=0.99)
    facts = chip.model_copy(update={"answer_facts": ("KSH 999,999,999",)})
    (with_facts,) = dspy_examples(demo_store, [facts])
    assert strict(with_facts, _predict(demo_store, with_facts, cooperative()), trace=[]) is False


def test_gepa_metric_feedback_names_guards_and_failures(demo_store: Store) -> None:
    chip = demo_examples()[2]
    poisoned = chip.model_copy(update={"gold_documents": (), "forbidden_documents": ("banda-road/lease.md",)})
    (bad,) = dspy_examples(demo_store, [poisoned])
    metric = gepa_metric(demo_store, {"abstention": 1.0}, examples=4)
    out = metric(bad, _predict(demo_store, bad, cooperative()), None, "answer", None)
    assert out.score == -4.0
    assert "SAFETY FAILURE" in out.feedback and "Case chip" in out.feedback


def test_feedback_lists_the_modules_own_interventions(demo_store: Store) -> None:
    (example,) = dspy_examples(demo_store, [demo_examples()[0]])
    pred = _predict(demo_store, example, cooperative())
    trace: QuestionTrace = pred.trace.model_copy(deep=True)
    trace.interventions.append(Intervention(guard="citation", target="section:0:[x.pdf, page 9]", reason="not shown"))
    trace.fallbacks.append(Intervention(guard="score", target="sub_question:0", reason="wrong_count: 2 for 3"))
    from optimizers import score_example

    result = score_example(demo_store, example, pred, {"abstention": 1.0})
    answer = feedback_text(result, trace, "answer")
    assert "citation on section:0:[x.pdf, page 9]: not shown" in answer and "wrong_count" not in answer
    score = feedback_text(result, trace, "score")
    assert "wrong_count: 2 for 3" in score and "not shown" not in score


# -- compiling ------------------------------------------------------------------------------------


def test_trainable_view_exposes_only_the_chosen_predictors(demo_store: Store) -> None:
    program = ScopedQA(demo_store)
    view = TrainableView(program, ["answer", "score"])
    assert [name for name, _ in view.named_predictors()] == ["answer", "score"]
    copy = view.reset_copy()
    assert copy.answer is copy.unwrap().answer and copy.answer is not program.answer
    with pytest.raises(ValueError, match="subset"):
        TrainableView(program, ["planner"])


def test_bootstrap_compiles_only_the_chosen_modules_and_leaves_the_student_alone(demo_store: Store) -> None:
    examples = dspy_examples(demo_store, demo_examples())
    student = ScopedQA(demo_store)
    before = program_state(student)
    spec = CompileSpec(params=BootstrapParams(max_bootstrapped_demos=2), modules=("answer",), bootstrap_threshold=0.0)
    counter = LMCallCounter()
    with dspy.context(lm=scripted_lm(cooperative())):
        compiled = compile_program(spec, student, examples[:4], examples[4:], store=demo_store, counter=counter)
    assert compiled is not student and program_state(student) == before
    assert len(compiled.answer.demos) == 2
    assert compiled.score.demos == [] and compiled.decompose.demos == []  # frozen
    assert counter.calls == 6 and counter.new_calls == 6 and counter.tokens > 0  # 2 examples x 3 calls


def test_budget_stops_the_compile_with_a_clear_error(demo_store: Store) -> None:
    examples = dspy_examples(demo_store, demo_examples())
    spec = CompileSpec(params=BootstrapParams(max_bootstrapped_demos=4), modules=("answer",), bootstrap_threshold=0.0)
    counter = LMCallCounter(limit=4)
    with dspy.context(lm=scripted_lm(cooperative())), pytest.raises(BudgetExceededError, match="budget of 4") as info:
        compile_program(spec, ScopedQA(demo_store), examples[:4], examples[4:], store=demo_store, counter=counter)
    assert info.value.limit == 4 and info.value.calls == 5
    assert counter.calls == 5 and counter.new_calls == 4  # the fifth call was refused before reaching the LM


def test_random_search_picks_a_candidate(demo_store: Store) -> None:
    examples = dspy_examples(demo_store, demo_examples())
    spec = CompileSpec(
        params=RandomSearchParams(max_bootstrapped_demos=1, num_candidate_programs=1),
        modules=("answer", "score"),
        bootstrap_threshold=0.0,
    )
    with dspy.context(lm=scripted_lm(cooperative())):
        compiled = compile_program(spec, ScopedQA(demo_store), examples[:4], examples[4:], store=demo_store)
    assert isinstance(compiled, ScopedQA) and compiled.decompose.demos == []


@pytest.mark.skipif(importlib.util.find_spec("optuna") is None, reason="MIPROv2 needs optuna")
def test_mipro_proposes_instructions_for_the_chosen_module(demo_store: Store) -> None:
    examples = dspy_examples(demo_store, demo_examples())
    spec = CompileSpec(
        params=MiproParams(num_candidates=2, num_trials=2, max_bootstrapped_demos=1),
        modules=("answer",),
        bootstrap_threshold=0.0,
    )
    student = ScopedQA(demo_store)
    with dspy.context(lm=scripted(tolerant(cooperative()))):
        compiled = compile_program(spec, student, examples[:4], examples[4:], store=demo_store)
    assert compiled.decompose.signature.instructions == student.decompose.signature.instructions


def test_gepa_evolves_the_instruction_and_resumes_from_its_log_dir(demo_store: Store, tmp_path: Any) -> None:
    examples = dspy_examples(demo_store, demo_examples())
    spec = CompileSpec(
        params=GepaParams(max_metric_calls=8, reflection_minibatch_size=2),
        modules=("answer",),
        log_dir=tmp_path / "gepa",
    )
    student = ScopedQA(demo_store)
    first, again = LMCallCounter(), LMCallCounter()
    with dspy.context(lm=scripted(tolerant(follows_instruction(cooperative())))):
        compiled = compile_program(spec, student, examples[:4], examples[4:], store=demo_store, counter=first)
        assert (tmp_path / "gepa" / "gepa_state.bin").is_file()
        compile_program(spec, student, examples[:4], examples[4:], store=demo_store, counter=again)
    assert compiled.answer.signature.instructions == INSTRUCTION  # the reflection's proposal won
    assert compiled.decompose.signature.instructions == student.decompose.signature.instructions
    assert again.calls < first.calls  # resumed from the saved state, not started over
