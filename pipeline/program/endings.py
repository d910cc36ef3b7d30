"""How a question ends before (or instead of) the full pipeline: the planner reads nothing (ask back, refuse, or
answer directly), the question names something no document in scope writes, or the question reaches its time
bound. Each is the question's `completed` event, its trace finished; none calls the LM."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from pipeline.answering.typed_answers import absent
from pipeline.deadline import DeadlinePassed
from pipeline.execution.direct import direct_answer
from pipeline.intake.planner_state import PlannerState
from pipeline.program.events import Completed, Section, render_markdown
from pipeline.program.question_run import QuestionRun
from pipeline.program.trace import Intervention, QuestionTrace, fit_trace, record_direct_answer

log = logging.getLogger(__name__)


def answer_stopped(run: QuestionRun, sub_questions: Sequence[str], stop: DeadlinePassed, started: float) -> Completed:
    """The question ended at its time bound: what it has (the plan, what retrieval found, the calls made, all
    in its trace) and one error section per sub-question (the question itself before it had any) naming the
    stage it stopped in."""
    trace = run.trace
    trace.timings["total"] = time.perf_counter() - started
    trace.fallbacks.append(Intervention(guard="deadline", target=stop.stage, reason=str(stop)))
    log.warning("question stopped: %s", stop)
    message = f"Not answered: {stop}."
    asked = list(sub_questions) or [run.plan.goal]
    sections = [
        Section(index=i, sub_question=sq, status="error", error=str(stop), answer=message) for i, sq in enumerate(asked)
    ]
    answer = render_markdown(sections)
    trace.answer = answer
    trace.sections = [s.model_dump(mode="json") for s in sections]
    fit_trace(trace)
    return Completed(
        answer=answer,
        sections=tuple(sections),
        lm_calls=trace.lm_calls,
        cached_calls=trace.cached_calls,
        tokens=trace.tokens,
        seconds=round(trace.timings["total"], 3),
        strategy=run.plan.strategy,
        notice=message,
        trace=trace,
    )


def answer_unknown_names(run: QuestionRun, started: float) -> Completed:
    """The answer to a question about a name the documents in scope never write: one section saying so,
    nothing read or cited, the question's absent value."""
    trace = run.trace
    names = ", ".join(f'"{n}"' for n in run.unknown_names)
    message = f"No document in scope mentions {names}: the documents do not state this."
    trace.interventions.append(Intervention(guard="scope", target="unknown_name", reason=message))
    kind = run.contract.kind if run.contract is not None else "text"
    value = absent(kind, run.contract, message)
    section = Section(index=0, sub_question=run.plan.goal, answer=message, status="not_found", value=value)
    trace.timings["total"] = time.perf_counter() - started
    trace.answer = message
    trace.sections = [section.model_dump(mode="json")]
    trace.value = value
    fit_trace(trace)
    return Completed(
        answer=message,
        sections=(section,),
        value=value,
        lm_calls=trace.lm_calls,
        tokens=trace.tokens,
        seconds=round(trace.timings["total"], 3),
        strategy=run.plan.strategy,
        trace=trace,
    )


def answer_without_retrieval(plan: PlannerState, arithmetic: bool, trace: QuestionTrace, started: float) -> Completed:
    """The answer when the planner reads nothing: ask back, refuse, or answer directly (no LM)."""
    questions = tuple(q.question for q in plan.clarifying_questions)
    if plan.strategy == "clarify_then_retrieve":
        answer = "Before searching, please clarify:\n" + "\n".join(f"- {q}" for q in questions)
    elif plan.strategy == "direct_answer":
        direct = direct_answer(plan.goal, arithmetic)
        record_direct_answer(trace, direct)
        answer = direct.answer
    else:
        answer = "This request cannot be answered from the documents under the current safety settings."
    trace.answer = answer
    trace.timings["total"] = time.perf_counter() - started
    return Completed(
        answer=answer,
        sections=(),
        lm_calls=0,
        tokens=0,
        seconds=round(trace.timings["total"], 3),
        strategy=plan.strategy,
        clarifying_questions=questions,
        trace=trace,
    )
