"""How long a running question has left, from how long each stage took for the questions this server answered
before with the same LM (their traces' timings). Pure logic: the traces and the times are passed in.

The estimate is a median per stage, so one slow or cached question does not move it; questions any of whose
LM calls DSPy's cache answered are left out (their time is not the model's). Before any question has been
answered here with this LM there is no estimate: a rate measured elsewhere would not say what this machine,
under its present load, takes.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pipeline.program.trace import QuestionTrace

# The stages a question goes through, in order, as its progress events name them.
STAGES = ("decomposing", "retrieving", "filtering", "generating")
# Each stage's share of a trace's timings (program steps and retrieval), by timing name.
STAGE_TIMINGS: Mapping[str, tuple[str, ...]] = {
    "decomposing": ("decompose", "hyde"),
    "retrieving": ("retrieve",),
    "filtering": ("score",),
    "generating": ("answer", "compute", "judge"),
}
# The event that starts each stage, and the events sent within it.
STAGE_OF_PHASE: Mapping[str, str] = {
    "decomposing": "decomposing",
    "decomposed": "decomposing",
    "retrieving": "retrieving",
    "filtering": "filtering",
    "generating": "generating",
    "generating_subquestion": "generating",
}
# How many recent answered questions the estimate is taken from.
MEASURED_QUESTIONS = 20


@dataclass(frozen=True)
class StageTimes:
    """Typical seconds per stage (the median over `questions` answered questions), and per whole question."""

    seconds: Mapping[str, float]
    total: float
    questions: int


@dataclass(frozen=True)
class Estimate:
    """Seconds left, measured on `questions` answered questions; `overdue` when the current stage already ran
    longer than it typically takes (`seconds_left` is then what the later stages typically take: a lower bound)."""

    seconds_left: float
    overdue: bool
    questions: int


def stage_seconds(trace: QuestionTrace) -> dict[str, float]:
    """Seconds each stage of one question took, from its trace's timings."""
    return {stage: sum(trace.timings.get(name, 0.0) for name in names) for stage, names in STAGE_TIMINGS.items()}


def typical_times(traces: Sequence[QuestionTrace]) -> StageTimes | None:
    """The median time of each stage over `traces` that the LM answered itself (no cached call) and that ran every
    stage; None when there is none."""
    usable = [t for t in traces if t.cached_calls == 0 and t.sub_questions and "total" in t.timings]
    if not usable:
        return None
    per_stage = [stage_seconds(t) for t in usable]
    seconds = {stage: statistics.median(s[stage] for s in per_stage) for stage in STAGES}
    total = statistics.median(t.timings["total"] for t in usable)
    return StageTimes(seconds=seconds, total=max(total, sum(seconds.values())), questions=len(usable))


def estimate_left(typical: StageTimes | None, stage: str | None, in_stage: float, elapsed: float) -> Estimate | None:
    """Seconds left for a question `elapsed` seconds old and `in_stage` seconds into `stage` (None: before the
    first stage); None without typical times."""
    if typical is None:
        return None
    if stage not in STAGES:
        left = typical.total - elapsed
        return Estimate(round(max(left, 0.0), 1), left < 0, typical.questions)
    at = STAGES.index(stage)
    later = sum(typical.seconds[s] for s in STAGES[at + 1 :])
    # the part of a typical question outside the stages (planning, guards) is spread evenly over them
    outside = (typical.total - sum(typical.seconds.values())) * (len(STAGES) - at) / len(STAGES)
    this = typical.seconds[stage] - in_stage
    return Estimate(round(max(this, 0.0) + later + outside, 1), this < 0, typical.questions)


def current_stage(phases: Sequence[tuple[str, float]]) -> tuple[str | None, float | None]:
    """The stage a question is in, given its events' (phase, time) so far, and the time it entered it."""
    stage, entered = None, None
    for phase, at in phases:
        now = STAGE_OF_PHASE.get(phase)
        if now is not None and now != stage:
            stage, entered = now, at
    return stage, entered
