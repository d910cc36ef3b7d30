"""Stage-wise optimisation: one learned step of ScopedQA run alone, on inputs taken from the labels.

`StageProgram` exposes only the stage's predictor to optimizers (like TrainableView) and runs the
program's own step (`ScopedQA.decompose_step`, `score_step`, `answer_sections`): the same prompt,
call path and guards as a full question, but one LM call per example. Its metric is the stage's
own (pipeline.evaluation.stage_metrics); the safety gates stay hard (a gate failure scores the
penalty of optimizers.objective, below every gate-clean candidate).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import dspy

from optimizers.objective import Metric, gate_penalty
from optimizers.trainable import Holder
from pipeline.errors import ScopeRagError
from pipeline.evaluation.scoring import Progress, map_in_context
from pipeline.evaluation.stage_inputs import StageExample, retrieve_all
from pipeline.evaluation.stage_metrics import Stage, StageScores
from pipeline.evaluation.stage_scoring import score_decomposition, score_kept, score_sections
from pipeline.program.events import render_markdown
from pipeline.program.module import ScopedQA
from pipeline.program.trace import record_retrieval

log = logging.getLogger(__name__)


def stage_predictor(program: ScopedQA, stage: Stage) -> str:
    """The predictor that makes `stage`'s output: the stage's own."""
    return stage


class StageProgram(dspy.Module):
    """`program`'s step `stage` alone; `unwrap()` gives the program holding the (compiled) predictor."""

    def __init__(self, program: ScopedQA, stage: Stage) -> None:
        super().__init__()
        self._holder = Holder(program)
        self._stage = stage
        self._predictor = stage_predictor(program, stage)
        setattr(self, self._predictor, getattr(program, self._predictor))

    @property
    def stage(self) -> Stage:
        return self._stage

    def unwrap(self) -> ScopedQA:
        """The program, holding this view's predictor (re-attached in case an optimizer replaced it)."""
        program = self._holder.program
        setattr(program, self._predictor, getattr(self, self._predictor))
        return program

    def forward(self, item: StageExample) -> dspy.Prediction:
        program = self.unwrap()
        store = dataclasses.replace(program.store, call_log=[])
        resolved = item.resolved
        run = program.start(resolved.example.question, resolved.scope)
        if self._stage == "decompose":
            sub_questions = program.decompose_step(run)
            retrieval = retrieve_all(store, run.scope, run.plan, sub_questions, program.settings.core)
            sent = [d for call in store.call_log or [] for d in (call.document_ids or ())]
            scores = score_decomposition(store, item, sub_questions, retrieval, sent)
            return dspy.Prediction(sub_questions=sub_questions, scores=scores, trace=run.trace)
        if self._stage == "score":
            for index, retrieved in enumerate(item.retrieval):
                record_retrieval(run.trace, index, retrieved)
            kept = program.score_step(run, list(item.sub_questions), [list(r.chunks) for r in item.retrieval])
            return dspy.Prediction(kept=kept, scores=score_kept(store, item, kept), trace=run.trace)
        # as the whole program does: a scope of another entity's documents is answered by its note alone
        note = program.scope_note(run)
        other = note is not None and note.kind == "other_entity"
        sections = [] if other else program.answer_sections(run, [run.plan.goal], [list(item.context)])
        return dspy.Prediction(
            answer=render_markdown(sections),
            sections=sections,
            scores=score_sections(store, item, sections),
            trace=run.trace,
        )


def to_stage_examples(items: Sequence[StageExample]) -> list[dspy.Example]:
    """dspy.Examples whose one input is the StageExample; the case rides along."""
    return [dspy.Example(item=item, case=item.example.case).with_inputs("item") for item in items]


def stage_metric(examples: int, threshold: float) -> Metric:
    """DSPy metric of a stage: its value (or the gate penalty) when evaluating; a bool when bootstrapping."""
    penalty = gate_penalty(examples)

    def metric(example: dspy.Example, pred: dspy.Prediction, trace: Any = None) -> float | bool:
        scores: StageScores = pred.scores
        if trace is not None:
            return scores.gates_passed and scores.value >= threshold
        return scores.value if scores.gates_passed else penalty

    return metric


def stage_gepa_metric(examples: int) -> Metric:
    """GEPA's metric of a stage: the value (or penalty) and the stage's components as feedback."""
    penalty = gate_penalty(examples)

    def metric(
        gold: dspy.Example,
        pred: dspy.Prediction,
        trace: Any = None,
        pred_name: str | None = None,
        pred_trace: Any = None,
    ) -> dspy.Prediction:
        scores: StageScores = pred.scores
        return dspy.Prediction(score=scores.value if scores.gates_passed else penalty, feedback=stage_feedback(scores))

    return metric


def stage_feedback(scores: StageScores) -> str:
    """The stage's metrics as one line each, safety first."""
    lines = []
    if not scores.gates_passed:
        lines.append(
            f"SAFETY FAILURE: {scores.wrong_property} document(s) about another entity or outside the scope, "
            f"{scores.invalid_ids} invalid id(s)."
        )
    lines.extend(f"{name}: {value:.2f}" for name, value in scores.metrics.items() if value is not None)
    return "\n".join(lines) or "nothing to score"


@dataclass(frozen=True)
class StageResult:
    """One example's stage scores, or the error that stopped it (scored as a zero, gates passed)."""

    item: StageExample
    scores: StageScores
    error: str | None = None

    @property
    def value(self) -> float:
        return self.scores.value


def evaluate_stage(
    view: StageProgram, items: Sequence[StageExample], *, threads: int, progress: Progress | None = None
) -> list[StageResult]:
    """Every item run through the stage and scored, in input order (`threads` at once)."""

    def one(item: StageExample) -> StageResult:
        try:
            return StageResult(item, view(item=item).scores)
        except ScopeRagError as exc:
            log.warning("example %s failed in stage %s: %s", item.example.id, view.stage, exc)
            return StageResult(item, StageScores(view.stage, {}), error=str(exc))

    return map_in_context(one, items, threads, progress)
