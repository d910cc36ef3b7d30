"""One question's run: its plan, its trace and what intake read from it, passed between the program's steps (the
program itself is shared between questions)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.answering.asks import FormatRequest
from pipeline.deadline import Deadline, unbounded
from pipeline.intake.contract import Contract
from pipeline.intake.planner_state import PlannerState
from pipeline.intake.scope import QuestionScope
from pipeline.program.trace import QuestionTrace


@dataclass
class QuestionRun:
    """One question's plan and record, passed between the steps (the program itself is shared)."""

    plan: PlannerState
    trace: QuestionTrace
    # The documents the question may read, derived once at intake: every step below reads this one value.
    scope: QuestionScope
    # The question asks for reasoning only (arithmetic on given numbers): answered without documents.
    reasoning_only: bool = False
    # How the question asks its answer to be written ("Answer in EUR billions."), taken out of the plan's goal.
    format_request: FormatRequest | None = None
    # What the question's instructions ask of the answer, read before planning (never searched for).
    contract: Contract | None = None
    # The question's time bound, checked by every stage (a step run alone, as stage jobs do, has none).
    deadline: Deadline = field(default_factory=unbounded)
    # Names the question quotes that no entity is called and no document in scope writes ("What was the net
    # income of "Acme Holdings"?" over a collection without Acme): the documents hold nothing about them.
    unknown_names: tuple[str, ...] = ()
