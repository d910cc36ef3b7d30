"""run_experiment: one optimisation job from a TOML config to a logged, exported MLflow run.

load config -> stratified train/val -> baseline on val -> compile (budgeted) -> result on val ->
select (a candidate with any wrong-property citation or invalid id is rejected; the baseline is
kept) -> export -> log params, per-case metrics, artifacts, prompt versions -> finish the run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy

import experiments.report as report
from experiments.config import ExperimentConfig, config_hash, flatten, load_config
from experiments.data import JobData, load_job_data, open_index
from experiments.tracking import (
    TAG_CONFIG_HASH,
    TAG_CONFIG_NAME,
    TAG_OPTIMIZER,
    TAG_REJECTION,
    TAG_SELECTED,
    Tracker,
    artifact_dir,
    dspy_autolog,
    experiment_id,
    finish_run,
    log_artifacts,
    log_metrics,
    log_params,
    log_text,
    open_tracker,
    reap_stale_runs,
    register_prompts,
    set_tags,
    start_run,
)
from optimizers import compile_program, to_training_examples
from optimizers.params import GepaParams
from pipeline.errors import BudgetExceededError
from pipeline.evaluation.examples import LabelledExample
from pipeline.evaluation.scoring import ExampleResult, evaluate
from pipeline.evaluation.tables import per_case_table, results_frame
from pipeline.export import program_state, render_prompts, save_export
from pipeline.program.calls import LMCallCounter, counting
from pipeline.program.lm import default_model_cache_dir, make_lm, parse_lm_spec
from pipeline.program.module import ScopedQA
from pipeline.settings import Settings
from pipeline.store import Store

log = logging.getLogger(__name__)

LMFactory = Callable[[str], Any]


@dataclass(frozen=True)
class ProgressEvent:
    """Where a job is: phase (setup, baseline, compile, result, log, done), done of total, a message."""

    phase: str
    done: int = 0
    total: int | None = None
    message: str = ""


Progress = Callable[[ProgressEvent], None]


@dataclass(frozen=True)
class RunSummary:
    """What a job did: its run, per-case tables before/after, LM cost, the export and the selection."""

    run_id: str
    experiment: str
    config_hash: str
    baseline: Any
    result: Any
    lm_calls: int
    new_lm_calls: int
    tokens: int
    export_dir: Path
    selected: bool
    rejection: str | None
    prompt_versions: dict[str, int] = field(default_factory=dict)
    reaped: tuple[str, ...] = ()


@dataclass
class _Job:
    config: ExperimentConfig
    config_path: Path
    tracker: Tracker
    store: Store
    run_id: str
    progress: Progress
    counters: dict[str, LMCallCounter] = field(default_factory=dict)

    def counter(self, phase: str, limit: int | None = None) -> LMCallCounter:
        def seen(calls: int) -> None:
            self.progress(ProgressEvent(phase, calls, limit, "LM calls"))

        self.counters[phase] = LMCallCounter(limit, on_call=seen if phase == "compile" else None)
        return self.counters[phase]


def run_experiment(
    config_path: Path,
    *,
    mlruns: Path,
    progress: Progress | None = None,
    lm_factory: LMFactory | None = None,
    store: Store | None = None,
    model_cache_dir: Path | None = None,
) -> RunSummary:
    """Run the job in `config_path`, logging to the MLflow store under `mlruns`.

    `lm_factory` makes a dspy LM from a spec string (default: pipeline.lm.make_lm with the embedded
    model's cache in `model_cache_dir`); `store` defaults to the config's index. Raises
    BudgetExceededError when the compile step reaches budget.max_lm_calls (the run is marked FAILED).
    """
    config_path = Path(config_path)
    config = load_config(config_path)
    report_progress = progress or (lambda event: None)
    report_progress(ProgressEvent("setup", message=f"{config.name}: {config.optimizer} on {', '.join(config.modules)}"))
    store = store if store is not None else open_index(config, config_path)
    data = load_job_data(config, config_path, store)
    digest = config_hash(config)
    lms = _LMs(config, lm_factory or _default_factory(config, model_cache_dir))
    tracker = open_tracker(mlruns)
    reaped = tuple(reap_stale_runs(tracker))
    for stale in reaped:  # the scratch export of a job killed while logging (its process is gone)
        shutil.rmtree(tracker.root / ".staging" / stale, ignore_errors=True)
    run_id = start_run(
        tracker,
        experiment_id(tracker, config.tracking.experiment),
        f"{config.name}-{digest[:8]}",
        {
            TAG_CONFIG_HASH: digest,
            TAG_CONFIG_NAME: config.name,
            TAG_OPTIMIZER: config.optimizer,
            "mlflow.note.content": config.description,
        },
    )
    job = _Job(config, config_path, tracker, store, run_id, report_progress)
    report_progress(ProgressEvent("setup", message=f"MLflow run {run_id} in {tracker.uri}"))
    with dspy_autolog(tracker, run_id, config.tracking.dspy_autolog):
        try:
            summary = _run(job, lms, data, digest)
        except BudgetExceededError as exc:
            _log_costs(job)
            finish_run(tracker, run_id, "FAILED", str(exc))
            raise
        except KeyboardInterrupt:
            finish_run(tracker, run_id, "KILLED", "interrupted")
            raise
        except BaseException as exc:
            finish_run(tracker, run_id, "FAILED", f"{type(exc).__name__}: {exc}")
            raise
    report_progress(ProgressEvent("done", message=f"run {run_id}"))
    return dataclasses.replace(summary, reaped=reaped)


def _run(job: _Job, lms: _LMs, data: JobData, digest: str) -> RunSummary:
    config, tracker, run_id = job.config, job.tracker, job.run_id
    train, val, data_hash = data.train, data.val, data.data_hash
    params = flatten(config.model_dump(mode="json"))
    params.update({"config_hash": digest, "data_hash": data_hash, "index_generation": job.store.manifest.generation})
    params.update({"train_examples": str(len(train)), "val_examples": str(len(val))})
    log_params(tracker, run_id, params)
    log_text(tracker, run_id, job.config_path.read_text(encoding="utf-8"), "config.toml")
    splits = {"train": [e.id for e in train], "val": [e.id for e in val]}
    log_text(tracker, run_id, json.dumps(splits, indent=2), "data/splits.json")

    student = ScopedQA(job.store)
    baseline = _evaluate(job, "baseline", student, val, lms)
    log_dir = _gepa_dir(job, digest, data_hash)
    spec = config.compile_spec(teacher_lm=lms.teacher, reflection_lm=lms.reflection, log_dir=log_dir)
    compile_counter = job.counter("compile", config.budget.max_lm_calls)
    job.progress(ProgressEvent("compile", 0, config.budget.max_lm_calls, config.optimizer))
    with lms.task_context():
        candidate = compile_program(
            spec,
            student,
            to_training_examples(data.resolved_train),
            to_training_examples(data.resolved_val),
            store=job.store,
            counter=compile_counter,
        )
    result = _evaluate(job, "result", candidate, val, lms)

    baseline_table = per_case_table(results_frame(baseline))
    result_table = per_case_table(results_frame(result))
    failures = report.gate_failures(result_table)
    before = report.finite_number(baseline_table.loc["all", "composite"]) or 0.0
    after = report.finite_number(result_table.loc["all", "composite"]) or 0.0
    rejection = None
    if failures:
        rejection = f"{failures} wrong-property citation(s) or invalid id(s) on validation"
    elif job.config.require_improvement and after <= before:
        rejection = f"no improvement on validation (composite {before:.4f} -> {after:.4f})"
    selected = rejection is None
    if not selected:
        log.warning("run %s: candidate rejected (%s); the baseline is kept", run_id, rejection)
    chosen = candidate if selected else student
    job.progress(ProgressEvent("log", message="export, tables, prompts"))
    tables = {"baseline": baseline_table, "result": result_table}
    export_dir = _export_and_log(job, chosen, candidate, baseline, result, tables, data_hash, digest, selected)
    candidate_state = program_state(candidate)
    scores_tag = {
        "baseline_composite": f"{before:.4f}",
        "result_composite": f"{after:.4f}",
        "gate_failures": str(failures),
        "selected": str(selected).lower(),
        "config_hash": digest,
    }
    versions = register_prompts(tracker, run_id, report.module_prompts(candidate_state, config.modules), scores_tag)
    tags = {TAG_SELECTED: str(selected).lower()}
    if rejection:
        tags[TAG_REJECTION] = rejection
    set_tags(tracker, run_id, tags)
    metrics: dict[str, float | int | None] = {**report.case_metrics("baseline", baseline_table)}
    metrics.update(report.case_metrics("result", result_table))
    metrics.update({"selected": float(selected), "gate_failures": failures})
    log_metrics(tracker, run_id, metrics)
    totals = _log_costs(job)
    finish_run(tracker, run_id, "FINISHED")
    return RunSummary(
        run_id=run_id,
        experiment=config.tracking.experiment,
        config_hash=digest,
        baseline=baseline_table,
        result=result_table,
        lm_calls=totals["lm_calls.total"],
        new_lm_calls=totals["lm_calls.new"],
        tokens=totals["tokens.total"],
        export_dir=export_dir,
        selected=selected,
        rejection=rejection,
        prompt_versions=versions,
    )


def _evaluate(job: _Job, phase: str, program: ScopedQA, val: list[LabelledExample], lms: _LMs) -> list[ExampleResult]:
    counter = job.counter(phase)
    job.progress(ProgressEvent(phase, 0, len(val), "validation examples"))

    def advance(done: int, total: int) -> None:
        job.progress(ProgressEvent(phase, done, total, "validation examples"))

    with lms.task_context(), counting(counter):
        return evaluate(
            val,
            job.store,
            program=program,
            threads=job.config.lm.num_threads,
            progress=advance,
            weights=job.config.metric.weights,
        )


def _export_and_log(
    job: _Job,
    chosen: ScopedQA,
    candidate: ScopedQA,
    baseline: list[ExampleResult],
    result: list[ExampleResult],
    tables: dict[str, Any],
    data_hash: str,
    digest: str,
    selected: bool,
) -> Path:
    config, tracker, run_id = job.config, job.tracker, job.run_id
    staging = tracker.root / ".staging" / run_id
    shutil.rmtree(staging, ignore_errors=True)
    try:
        experiment_config = {
            **config.model_dump(mode="json"),
            "config_hash": digest,
            "selected": selected,
            "program": "candidate" if selected else "baseline (candidate rejected: see the run's rejection tag)",
        }
        save_export(
            chosen,
            staging / "export",
            settings=Settings(index_dir=config.data.index_dir, lm_threads=config.lm.threads),
            experiment_config=experiment_config,
            trainset_hash=data_hash,
            scores=report.export_scores(tables),
            run_id=run_id,
            lm_name=config.lm.task,
        )
        log_artifacts(tracker, run_id, staging / "export", "export")
        log_text(tracker, run_id, (staging / "export" / "prompts.md").read_text(encoding="utf-8"), "prompts.md")
        if not selected:
            log_text(tracker, run_id, render_prompts(program_state(candidate)), "candidate/prompts.md")
        tables_dir = staging / "evaluation"
        tables_dir.mkdir(parents=True)
        for phase, results in (("baseline", baseline), ("result", result)):
            results_frame(results).to_csv(tables_dir / f"{phase}-examples.csv", index=False)
            tables[phase].to_csv(tables_dir / f"{phase}-cases.csv")
            (tables_dir / f"{phase}-cases.json").write_text(tables[phase].to_json(orient="index", indent=2))
        report.comparison_frame(tables["baseline"], tables["result"]).to_csv(tables_dir / "comparison.csv")
        log_artifacts(tracker, run_id, tables_dir, "evaluation")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return artifact_dir(tracker, run_id, "export", tracker.root / ".staging")


def _log_costs(job: _Job) -> dict[str, int]:
    """LM calls (all / not from cache) and tokens per phase and in total, logged as metrics."""
    totals = {"lm_calls.total": 0, "lm_calls.new": 0, "tokens.total": 0}
    metrics: dict[str, float | int | None] = {}
    for phase, counter in job.counters.items():
        metrics.update(
            {
                f"lm_calls.{phase}": counter.calls,
                f"lm_calls_new.{phase}": counter.new_calls,
                f"tokens.{phase}": counter.tokens,
            }
        )
        totals["lm_calls.total"] += counter.calls
        totals["lm_calls.new"] += counter.new_calls
        totals["tokens.total"] += counter.tokens
    metrics.update(totals)
    log_metrics(job.tracker, job.run_id, metrics)
    return totals


def _gepa_dir(job: _Job, digest: str, data_hash: str) -> Path | None:
    """GEPA's state directory, one per (config hash `digest`, data): an interrupted job with the same both resumes."""
    params = job.config.optimizer_params
    if not isinstance(params, GepaParams):
        return None
    key = hashlib.sha256(f"{digest}:{data_hash}".encode()).hexdigest()[:16]
    directory = params.log_dir or job.tracker.root / "gepa" / key
    state = directory / "gepa_state.bin"
    if state.exists() and not params.resume:
        shutil.rmtree(directory)
    elif state.exists():
        job.progress(ProgressEvent("compile", message=f"resuming GEPA from {directory}"))
        set_tags(job.tracker, job.run_id, {"scoperag.gepa_resumed_from": str(directory)})
    return directory


class _LMs:
    """The job's LMs, each spec made once (the embedded model is loaded once for task and teacher)."""

    def __init__(self, config: ExperimentConfig, factory: LMFactory) -> None:
        made: dict[str, Any] = {}

        def get(spec: str | None) -> Any:
            if spec is None:
                return None
            if spec not in made:
                made[spec] = factory(spec)
            return made[spec]

        self.task = get(config.lm.task)
        self.teacher = get(config.lm.teacher)
        self.reflection = get(config.lm.reflection)
        self.embedded = parse_lm_spec(config.lm.task).kind == "embedded"

    @contextlib.contextmanager
    def task_context(self) -> Iterator[None]:
        """The task LM (JSON adapter for the embedded model, whose decoding is schema-constrained)."""
        settings: dict[str, Any] = {"lm": self.task}
        if self.embedded:
            settings["adapter"] = dspy.JSONAdapter()
        with dspy.context(**settings):
            yield


def _default_factory(config: ExperimentConfig, model_cache_dir: Path | None) -> LMFactory:
    cache_dir = model_cache_dir or default_model_cache_dir()
    return lambda spec: make_lm(spec, cache_dir=cache_dir, threads=config.lm.threads, parallel=config.lm.num_threads)
