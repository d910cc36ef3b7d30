"""run_stage_job: one learned module compiled against its own metric, on inputs taken from the labels, and
measured against its floors.

the stage's floors (no LM) and the uncompiled module on validation -> compile the module alone
(optimizers.stages, budgeted) -> candidate on validation -> paired comparison with a bootstrap interval ->
select (no safety gate failed or got worse, the interval's lower end above 0) -> the LM so chosen against
the best floor by the same rule: the exported program runs the step by the LM only where it wins
(experiments.floors) -> the assembled program end to end on a small validation sample (reported, never
selected on) -> optionally floor, uncompiled and compiled on the test split -> export and log.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

import experiments.report as report
from experiments.data import StageData
from experiments.floors import LM, STAGE_FLOORS, choose_step, floor_table, lm_steps, with_steps
from experiments.job import (
    Job,
    LMs,
    RunSummary,
    comparison_metrics,
    evaluate_program,
    export_and_log,
    finish,
    headline_metrics,
    log_inputs,
)
from experiments.tracking import (
    TAG_REJECTION,
    TAG_SELECTED,
    TAG_STAGE,
    TAG_STEP,
    log_metrics,
    register_prompts,
    set_tags,
)
from optimizers import compile_program
from optimizers.stages import StageProgram, StageResult, evaluate_stage, to_stage_examples
from pipeline.evaluation.compare import Difference, compare_paired, differences_frame, overall, select_candidate
from pipeline.evaluation.examples import stratified_sample
from pipeline.evaluation.stage_inputs import StageExample
from pipeline.evaluation.stage_metrics import STAGE_WEIGHTS, Stage
from pipeline.evaluation.tables import per_case_table, results_frame
from pipeline.export import program_state
from pipeline.program.calls import counting
from pipeline.program.module import ScopedQA

log = logging.getLogger(__name__)

SAFETY = {"wrong-property citations": "wrong_property", "invalid ids": "invalid_ids"}
# The run tag naming which way the stage's step runs in the exported program: "lm" or a floor's name.


def stage_frame(results: Sequence[StageResult]) -> Any:
    """One row per example: id, case, the stage value, each component and detail, safety counts, error."""
    import pandas as pd

    rows = []
    for r in results:
        row: dict[str, Any] = {"id": r.item.example.id, "case": r.item.example.case, "value": r.value}
        row.update(dict(r.scores.metrics))
        row.update(dict(r.scores.details))
        row.update({"wrong_property": r.scores.wrong_property, "invalid_ids": r.scores.invalid_ids, "error": r.error})
        rows.append(row)
    return pd.DataFrame(rows)


def stage_table(frame: Any, stage: Stage) -> Any:
    """Per-case means of the stage value and components (safety counts summed), with an `all` row."""
    import pandas as pd

    columns = ["value", *STAGE_WEIGHTS[stage]]

    def summarise(group: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"n": len(group)}
        for name in columns:
            column = pd.to_numeric(group[name], errors="coerce") if name in group else pd.Series(dtype=float)
            out[name] = round(float(column.mean()), 4) if column.notna().any() else None
        out["wrong_property"] = int(group["wrong_property"].sum())
        out["invalid_ids"] = int(group["invalid_ids"].sum())
        out["errors"] = int(group["error"].notna().sum())
        return out

    table = {case: summarise(group) for case, group in frame.groupby("case", sort=True)}
    table["all"] = summarise(frame)
    return pd.DataFrame.from_dict(table, orient="index")


def _safety(results: Sequence[StageResult]) -> dict[str, int]:
    return {name: sum(getattr(r.scores, attr) for r in results) for name, attr in SAFETY.items()}


def _evaluate(job: Job, lms: LMs, phase: str, program: ScopedQA, items: Sequence[StageExample]) -> list[StageResult]:
    counter = job.counter(phase)
    stage: Stage = job.config.stage  # type: ignore[assignment]
    job.advance(phase, 0, len(items), f"{stage} examples")

    def advance(done: int, total: int) -> None:
        job.advance(phase, done, total, f"{stage} examples")

    with lms.task_context(), counting(counter):
        return evaluate_stage(StageProgram(program, stage), items, threads=job.config.lm.num_threads, progress=advance)


def _paired(before: Sequence[StageResult], after: Sequence[StageResult], seed: int) -> list[Difference]:
    cases = [r.item.example.case for r in before]
    return compare_paired(cases, [r.value for r in before], [r.value for r in after], seed=seed)


def run_stage_job(job: Job, lms: LMs, data: StageData, digest: str) -> RunSummary:
    """The stage job of `job.config` on `data`, logged to the job's run (finished here)."""
    config, tracker, run_id = job.config, job.tracker, job.run_id
    stage: Stage = config.stage  # type: ignore[assignment]
    splits = {"train": [i.example.id for i in data.train], "val": [i.example.id for i in data.val]}
    if data.test:
        splits["test"] = [i.example.id for i in data.test]
    log_inputs(job, digest, data.data_hash, splits)

    configured = config.settings().program.steps.model_dump()
    student = with_steps(ScopedQA(job.store, config.settings()), lm_steps(stage, configured))
    floor_programs = {name: with_steps(student, steps) for name, steps in STAGE_FLOORS[stage].items()}
    floor_val = {name: _evaluate(job, lms, f"floor_{name}", p, data.val) for name, p in floor_programs.items()}
    baseline = _evaluate(job, lms, "baseline", student, data.val)
    spec = config.compile_spec(teacher_lm=lms.teacher, reflection_lm=lms.reflection)
    compile_counter = job.counter("compile", config.budget.max_lm_calls)
    job.enter("compile", config.budget.max_lm_calls, f"{config.optimizer} on {stage}")
    with lms.task_context():
        candidate = compile_program(
            spec,
            student,
            to_stage_examples(data.train),
            to_stage_examples(data.val),
            store=job.store,
            counter=compile_counter,
            stage=stage,
        )
    result = _evaluate(job, lms, "result", candidate, data.val)

    differences = _paired(baseline, result, config.seed)
    before_safety, after_safety = _safety(baseline), _safety(result)
    selection = select_candidate(differences, before_safety, after_safety)
    gates_failed = sum(after_safety.values())
    selected = selection.selected or (not config.require_improvement and not gates_failed)
    rejection = None if selected else selection.reason
    if not selected:
        log.warning("run %s: %s candidate rejected (%s); the baseline is kept", run_id, stage, rejection)
    lm_program, lm_val = (candidate, result) if selected else (student, baseline)
    verdict = choose_step(
        stage,
        [r.item.example.case for r in baseline],
        {name: [r.value for r in results] for name, results in floor_val.items()},
        [r.value for r in lm_val],
        lambda name: _safety(floor_val[name]),
        _safety(lm_val),
        config.seed,
    )
    log.info("run %s: the %s step runs %s (%s)", run_id, stage, verdict.chosen, verdict.reason)
    chosen = with_steps(lm_program, verdict.steps)

    # The assembled program end to end (reported, never selected on): a small stratified sample.
    e2e_examples = stratified_sample([i.example for i in data.val], config.data.end_to_end_size, config.seed + 3)
    e2e_tables: dict[str, Any] = {}
    if e2e_examples:
        for phase, program in (("e2e_baseline", student), ("e2e_result", candidate)):
            e2e_tables[phase] = per_case_table(results_frame(evaluate_program(job, phase, program, e2e_examples, lms)))

    test_differences: list[Difference] = []
    test_floor_differences: list[Difference] = []
    frames: dict[str, Any] = {}
    ways: dict[str, dict[str, Any]] = {f"floor {name}": {"val": value} for name, value in verdict.floor_values.items()}
    ways["lm uncompiled"] = {"val": _mean_value(baseline)}
    ways["lm compiled"] = {"val": _mean_value(result)}
    if data.test:
        test_floor = _evaluate(job, lms, "test_floor", floor_programs[verdict.best_floor], data.test)
        test_before = _evaluate(job, lms, "test_baseline", student, data.test)
        test_after = _evaluate(job, lms, "test_result", candidate, data.test)
        test_differences = _paired(test_before, test_after, config.seed)
        test_floor_differences = _paired(test_floor, test_after if selected else test_before, config.seed)
        frames["test-floor-examples"] = stage_frame(test_floor)
        frames["test-baseline-examples"] = stage_frame(test_before)
        frames["test-result-examples"] = stage_frame(test_after)
        ways[f"floor {verdict.best_floor}"]["test"] = _mean_value(test_floor)
        ways["lm uncompiled"]["test"] = _mean_value(test_before)
        ways["lm compiled"]["test"] = _mean_value(test_after)

    job.enter("log", message="export, tables, prompts")
    baseline_frame, result_frame = stage_frame(baseline), stage_frame(result)
    baseline_table, result_table = stage_table(baseline_frame, stage), stage_table(result_frame, stage)
    frames.update({f"floor-{name}-examples": stage_frame(results) for name, results in floor_val.items()})
    frames["ways"] = floor_table(ways)
    frames.update(
        {
            "baseline-examples": baseline_frame,
            "result-examples": result_frame,
            "baseline-cases": baseline_table,
            "result-cases": result_table,
            **{f"{phase.replace('_', '-')}-cases": table for phase, table in e2e_tables.items()},
        }
    )
    comparisons = {"comparison": differences, "floor-comparison": list(verdict.differences)}
    if test_differences:
        comparisons |= {"test-comparison": test_differences, "test-floor-comparison": test_floor_differences}
    scores = {phase.removeprefix("e2e_"): table for phase, table in e2e_tables.items()}
    export_dir = export_and_log(job, chosen, candidate, frames, comparisons, scores, data.data_hash, digest, selected)
    total = overall(differences)
    scores_tag = {
        "stage": stage,
        "baseline_value": f"{total.baseline:.4f}",
        "result_value": f"{total.candidate:.4f}",
        "difference_ci": f"[{total.low:+.4f}, {total.high:+.4f}]",
        "selected": str(selected).lower(),
        "config_hash": digest,
    }
    optimised = (config.stage_module,)
    prompts = report.module_prompts(program_state(candidate), optimised, selected)
    versions = register_prompts(tracker, run_id, prompts, scores_tag, selected=selected)
    tags = {TAG_SELECTED: str(selected).lower(), TAG_STAGE: stage, TAG_STEP: verdict.chosen}
    if rejection:
        tags[TAG_REJECTION] = rejection
    set_tags(tracker, run_id, tags)
    metrics: dict[str, float | int | None] = {}
    for phase, table in (("stage.baseline", baseline_table), ("stage.result", result_table)):
        for case in table.index:
            for column in table.columns:
                metrics[f"{phase}.{case}.{column}"] = report.finite_number(table.loc[case, column])
    for phase, table in e2e_tables.items():
        metrics.update(report.case_metrics(phase.replace("e2e_", ""), table))
    metrics.update(comparison_metrics("compare", differences))
    metrics.update(headline_metrics(differences))
    metrics.update(comparison_metrics("test.compare", test_differences))
    metrics.update(comparison_metrics("floor.compare", list(verdict.differences)))
    metrics.update(comparison_metrics("test.floor.compare", test_floor_differences))
    metrics.update({f"floor.{name}.val.value": value for name, value in verdict.floor_values.items()})
    metrics.update({"selected": float(selected), "gate_failures": gates_failed, "step_lm": float(verdict.chosen == LM)})
    log_metrics(tracker, run_id, metrics)
    tables = (e2e_tables.get("e2e_baseline"), e2e_tables.get("e2e_result"))
    summary = finish(job, digest, tables, export_dir, rejection, versions, (differences, test_differences))
    return dataclasses.replace(
        summary,
        step=verdict.chosen,
        step_reason=verdict.reason,
        ways=frames["ways"],
        floor_comparison=differences_frame(verdict.differences),
        test_floor_comparison=differences_frame(test_floor_differences) if test_floor_differences else None,
    )


def _mean_value(results: Sequence[StageResult]) -> float | None:
    """The mean stage value of `results` (None when there are none)."""
    return round(sum(r.value for r in results) / len(results), 4) if results else None
