"""The program executes its plan: strategies without retrieval, the goal, the question's own
sub-questions, the token and latency budgets, one tool loop per question with its message, and a
trace of what ran that rides on the last event without ever being serialised."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import dspy

from pipeline.execution.direct import SMALL_TALK_ANSWER
from pipeline.intake.scope import Scope, resolve_scope
from pipeline.program.events import Completed, Event, Failed
from pipeline.program.module import ScopedQA
from pipeline.program.trace import QuestionTrace
from pipeline.serving.sse import frame
from pipeline.settings import CoreConfig, PlannerConfig, QuestionLimits, Settings
from pipeline.store import Store
from tests.support.fakes import Responder, cooperative, scripted_lm


class Recorded:
    """A responder that keeps every prompt it answers."""

    def __init__(self, inner: Responder) -> None:
        self.inner = inner
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> Any:
        self.prompts.append(prompt)
        return self.inner(prompt)


def ask(
    store: Store,
    question: str,
    scope: Scope,
    respond: Responder | None = None,
    program: ScopedQA | None = None,
) -> tuple[list[Event], Completed | Failed, QuestionTrace]:
    with dspy.context(lm=scripted_lm(respond or cooperative())):
        events = list((program or ScopedQA(store)).stream(question, scope))
    last = events[-1]
    assert isinstance(last, Completed | Failed) and last.trace is not None
    return events, last, last.trace


def test_direct_answer_reads_nothing_and_calls_no_lm(demo_store: Store) -> None:
    lm = Recorded(cooperative())
    _, done, trace = ask(demo_store, "What is 12 * 7?", resolve_scope(demo_store), lm)
    assert isinstance(done, Completed) and done.strategy == "direct_answer"
    assert done.answer == "12 * 7 = 84" and done.sections == () and done.lm_calls == 0
    assert trace.direct_answer is not None and (trace.direct_answer.kind, trace.direct_answer.result) == (
        "arithmetic",
        "84",
    )
    _, hello, hello_trace = ask(demo_store, "hello", resolve_scope(demo_store), lm)
    assert isinstance(hello, Completed) and hello.answer == SMALL_TALK_ANSWER
    assert hello_trace.direct_answer is not None and hello_trace.direct_answer.kind == "small_talk"
    assert lm.prompts == [] and demo_store.call_log == [] and trace.sub_questions == []


def test_personal_data_request_is_refused_before_reading(demo_store: Store) -> None:
    _, done, _ = ask(demo_store, "What is the passport number of the Banda Lane tenant?", resolve_scope(demo_store))
    assert isinstance(done, Completed) and done.strategy == "defer_or_refuse" and done.lm_calls == 0
    assert demo_store.call_log == []
    allowed = Settings(core=CoreConfig(planner=PlannerConfig(pii_allowed=True)))
    _, asked, _ = ask(
        demo_store,
        "What is the passport number of the Banda Lane tenant?",
        resolve_scope(demo_store),
        program=ScopedQA(demo_store, allowed),
    )
    assert isinstance(asked, Completed) and asked.strategy == "retrieve_then_answer" and demo_store.call_log


def test_the_goal_is_what_the_lm_steps_receive(demo_store: Store) -> None:
    lm = Recorded(cooperative())
    _, done, trace = ask(demo_store, "What is   the rent\n at Banda Lane?", resolve_scope(demo_store), lm)
    assert isinstance(done, Completed)
    assert trace.question == "What is   the rent\n at Banda Lane?"
    assert trace.planner["goal"] == "What is the rent at Banda Lane?"
    assert '"What is the rent at Banda Lane?"' in lm.prompts[0] or "What is the rent at Banda Lane?" in lm.prompts[0]
    assert "What is   the rent" not in lm.prompts[0]


def test_a_sub_question_the_decomposition_missed_is_added(demo_store: Store) -> None:
    question = "Who is the tenant of Banda Lane? When does the lease end?"
    _, done, trace = ask(demo_store, question, resolve_scope(demo_store), cooperative(["Who is the tenant?"]))
    assert isinstance(done, Completed)
    assert [s.sub_question for s in done.sections] == ["Who is the tenant?", "When does the lease end?"]
    assert [i.target for i in trace.interventions if i.guard == "plan"] == ["sub_question:When does the lease end?"]
    _, whole, _ = ask(demo_store, question, resolve_scope(demo_store), cooperative())
    assert isinstance(whole, Completed) and len(whole.sections) == 1  # the echoed question covers both


def test_output_token_budget_caps_then_skips_lm_calls(demo_store: Store) -> None:
    def settings(max_tokens: int) -> Settings:
        return Settings(core=CoreConfig(planner=PlannerConfig(max_tokens=max_tokens)))

    scope = resolve_scope(demo_store, property_ref="Banda Lane")
    _, _, roomy_trace = ask(demo_store, "What is the rent?", scope, program=ScopedQA(demo_store, settings(4000)))
    assert roomy_trace.lm_calls == 3 and not any(f.guard == "budget" for f in roomy_trace.fallbacks)
    _, _, trace = ask(demo_store, "What is the rent?", scope, program=ScopedQA(demo_store, settings(300)))
    capped = [f for f in trace.fallbacks if f.guard == "budget"]
    assert trace.lm_calls == 3 and capped and all("capped" in f.reason for f in capped)
    # five long sub-questions spend a budget of 100 output tokens in the first call
    long = [f"What does clause {n} of the Banda Lane lease say about repairs and maintenance?" for n in range(5)]
    _, spent, spent_trace = ask(
        demo_store, "What is the rent?", scope, cooperative(long), program=ScopedQA(demo_store, settings(100))
    )
    assert isinstance(spent, Completed) and spent_trace.lm_calls == 1 and spent_trace.completion_tokens >= 100
    skipped = [f.target for f in spent_trace.fallbacks if f.guard == "budget" and "skipped" in f.reason]
    assert skipped == ["score", "answer"]
    # with no answer call left, every section is answered by the span floor, and that is recorded
    assert {s.status for s in spent.sections} == {"answered"}
    assert sum("span floor answered" in f.reason for f in spent_trace.fallbacks) == len(spent.sections)


def test_the_latency_deadline_stops_follow_up_rounds(demo_store: Store) -> None:
    question = 'What does the Banda Lane lease say about "purple elephant clause" and "rent unpaid"?'
    scope = resolve_scope(demo_store, property_ref="Banda Lane")

    def clock(times: Iterator[float]) -> Any:
        return lambda: next(times)

    # a question bound past the 1000 s below: only the plan's latency deadline (120 s) acts here
    settings = Settings(question=QuestionLimits(seconds=3600.0))
    on_time_clock = clock(iter([0.0] * 500))
    _, _, on_time = ask(demo_store, question, scope, program=ScopedQA(demo_store, settings, clock=on_time_clock))
    assert [r.purpose for r in on_time.sub_questions[0].rounds] == ["precision", "gap_filling"]
    late_clock = clock(iter([0.0, *[1000.0] * 500]))  # the question arrives at 0; retrieval starts 1000 s later
    _, done, late = ask(demo_store, question, scope, program=ScopedQA(demo_store, settings, clock=late_clock))
    assert isinstance(done, Completed)
    assert [r.purpose for r in late.sub_questions[0].rounds] == ["precision"]
    assert late.sub_questions[0].stop_reason == "deadline"


def test_one_tool_loop_per_question_and_its_message_reaches_the_user(demo_store: Store) -> None:
    # Banda Road asked inside Banda Lane's own documents: the gate keeps nothing; after two sub-questions
    # whose chunk step found nothing to read, retrieve_chunks is given up for the whole question.
    lane = demo_store.entity_document_ids(demo_store.resolve_entity("Banda Lane").entity_id)
    scope = resolve_scope(demo_store, document_ids=lane, property_ref="Banda Lane")
    respond = cooperative(["What is the rent?", "Who is the tenant?", "When does the lease end?"])
    _, done, trace = ask(demo_store, "What is the rent at Banda Road?", scope, respond)
    assert isinstance(done, Completed)
    steps = [s["status"] for sq in trace.sub_questions for s in sq.steps if s["tool"] == "retrieve_chunks"]
    assert steps[-1] == "skipped"  # the third sub-question's chunk step never ran
    assert trace.tool_loop is not None and trace.tool_loop.given_up == ["retrieve_chunks"]
    assert done.notice is not None and done.notice.startswith("Some steps could not be completed")
    assert done.notice == trace.tool_loop.message and "retrieve_chunks" in done.notice
    # the non-blocking scope question comes with the answer
    assert done.clarifying_questions and "Banda Road" in done.clarifying_questions[0]
    assert json.loads(done.model_dump_json())["notice"] == done.notice
    _, fine, fine_trace = ask(demo_store, "What is the rent?", scope)
    assert isinstance(fine, Completed) and fine.notice is None and fine_trace.tool_loop is not None
    assert fine_trace.tool_loop.given_up == [] and fine_trace.tool_loop.stop_reason is None


def test_the_trace_rides_on_the_last_event_and_is_never_serialised(demo_store: Store) -> None:
    events, done, trace = ask(demo_store, "What is the rent at Banda Lane?", resolve_scope(demo_store))
    assert isinstance(done, Completed) and done.trace is trace
    assert "trace" not in done.model_dump() and "trace" not in json.loads(done.model_dump_json())
    data = frame(done, "s1", len(events)).decode().split("data: ", 1)[1]
    assert set(json.loads(data)) == {"stream_id", "seq", *Completed.model_fields} - {"trace"}
    assert done.model_copy(update={"history_id": "h"}).trace is trace

    def broken(prompt: str) -> Any:
        raise ConnectionError("gone")

    _, failed, failed_trace = ask(demo_store, "What is the rent at Banda Lane?", resolve_scope(demo_store), broken)
    assert isinstance(failed, Failed) and failed.trace is failed_trace and "trace" not in failed.model_dump()


def test_the_trace_records_the_rounds_that_ran_and_the_planner_tags(demo_store: Store) -> None:
    scope = resolve_scope(demo_store, property_ref="Banda Lane")
    _, done, trace = ask(demo_store, "What is the rent at Banda Lane?", scope, cooperative(["What is the rent?"]))
    assert isinstance(done, Completed)
    tags = trace.planner["planner_meta"]["rationale_tags"]
    assert {"property_scope", "entity_in_scope", "entity_mentioned"} <= set(tags)
    assert trace.planner["planner_meta"]["planner_version"] == "scoperag-planner/2"
    (sq,) = trace.sub_questions
    (round_,) = sq.rounds
    assert (round_.round_id, round_.purpose, round_.queries, round_.mode) == (
        1,
        "recall",
        ["What is the rent?"],
        "hybrid",
    )
    assert round_.k == {"bm25": 40, "dense": 40} and round_.weights == {"bm25": 0.85, "dense": 0.15}
    assert round_.chunks >= len(sq.chunks) > 0 and round_.new_chunks > 0 and round_.sources >= 1
    assert round_.accepted and sq.stop_reason == "accepted"
    assert [s["round"] for s in sq.steps] == [1] and sq.steps[0]["query"] == "What is the rent?"
