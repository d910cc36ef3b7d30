"""run_experiment: one optimisation job from a TOML config to a logged, exported MLflow run.

load config -> stratified train/val -> baseline on val -> compile (budgeted) -> result on val ->
paired comparison with a bootstrap interval -> select (pipeline.evaluation.compare.select_candidate:
no safety gate failed or got worse, and the interval's lower end above 0; else the baseline is
kept) -> optionally both on the test split -> export -> log params, per-case metrics, comparisons,
artifacts, prompt versions -> finish the run. A stage job (`stage = "decompose"`, ...) runs the
same steps on one learned module (experiments.stage_job).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import logging
import shutil
from datetime import UTC, datetime
from pathlib import Path

import experiments.report as report
from experiments.config import ExperimentConfig, config_hash, load_config
from experiments.data import JobData, StageData, prepare_job, test_examples
from experiments.estimate import JobPlan, job_eta, job_gauge
from experiments.job import (
    Job,
    LMFactory,
    LMs,
    ParentRun,
    Progress,
    ProgressEvent,
    RunSummary,
    compare_results,
    comparison_metrics,
    evaluate_program,
    export_and_log,
    finish,
    headline_metrics,
    log_costs,
    log_inputs,
)
from experiments.stage_job import run_stage_job
from experiments.store import open_tracker
from experiments.tracking import (
    TAG_CONFIG_HASH,
    TAG_CONFIG_NAME,
    TAG_OPTIMIZER,
    TAG_PARENT,
    TAG_REJECTION,
    TAG_SELECTED,
    dspy_autolog,
    experiment_id,
    finish_run,
    log_metrics,
    reap_stale_runs,
    register_prompts,
    set_tags,
    start_run,
)
from optimizers import compile_program, to_training_examples
from optimizers.fanout import RayCandidates
from optimizers.params import GepaParams
from pipeline.cli.eta import Eta
from pipeline.cluster import ray_session
from pipeline.errors import BudgetExceededError, JobInterrupted
from pipeline.evaluation.compare import Difference, select_candidate
from pipeline.evaluation.tables import per_case_table, results_frame
from pipeline.export import program_state
from pipeline.program.calls import StopRequested, StopSignal
from pipeline.program.lm import LMKeys, default_model_cache_dir, make_lm, parse_lm_spec
from pipeline.program.lm.timings import record_rates
from pipeline.program.module import ScopedQA
from pipeline.store import Store

__all__ = ["ProgressEvent", "RunSummary", "run_experiment"]

log = logging.getLogger(__name__)


def run_experiment(
    config_path: Path,
    *,
    mlruns: Path,
    tracking_uri: str | None = None,
    progress: Progress | None = None,
    lm_factory: LMFactory | None = None,
    store: Store | None = None,
    model_cache_dir: Path | None = None,
    ray: str | None = None,
    parent: ParentRun | None = None,
    stop: StopSignal | None = None,
    dspy_cache_dir: Path | None = None,
    timings: Path | None = None,
    keys: LMKeys | None = None,
) -> RunSummary:
    """Run the job in `config_path`, logging to `tracking_uri` (default: the MLflow store under `mlruns`,
    which also holds the job's scratch files).

    `lm_factory` makes a dspy LM from a spec string (default: pipeline.lm.make_lm with the embedded
    model's cache in `model_cache_dir`, and `keys` for OpenAI-compatible servers); `store` defaults
    to the config's index. `ray` (an address or 'local') evaluates the examples of every phase as Ray tasks,
    each worker making its LM with `lm_factory`; the job's other steps run here. `parent` makes the run a
    child of a sweep's run (in the sweep's experiment). Raises BudgetExceededError when the compile step
    reaches budget.max_lm_calls (the run is marked FAILED).
    When `stop` is requested (Ctrl-C) the run is marked KILLED at once, no further LM call is made, and
    JobInterrupted says what was kept (`dspy_cache_dir` names where the LM's answers are). `timings` keeps this
    machine's measured LM rates: the plan is timed by them, and the phases the LM answered wholly add to them.
    """
    config_path = Path(config_path)
    config = load_config(config_path)
    report_progress = progress or (lambda event: None)
    report_progress(ProgressEvent("setup", message=f"{config.name}: {config.optimizer} on {', '.join(config.modules)}"))
    prepared = prepare_job(config, config_path, store, timings)
    _announce_cost(config, prepared.plan, report_progress)
    factory = lm_factory or _default_factory(config, model_cache_dir, keys)
    embedded = parse_lm_spec(config.lm.task).kind == "embedded"
    clock = job_eta(prepared.plan, job_gauge(embedded and not ray, config.lm.threads))
    with ray_session(ray) if ray else contextlib.nullcontext():
        return _tracked(
            config_path,
            config,
            prepared.store,
            prepared.data,
            prepared.stage_data,
            LMs(config, factory),
            tracking_uri,
            mlruns,
            report_progress,
            factory if ray else None,
            parent,
            stop=stop,
            dspy_cache_dir=dspy_cache_dir,
            clock=clock,
            estimate_seconds=prepared.plan.seconds,
            timings=None if ray else timings,
        )


def _tracked(
    config_path: Path,
    config: ExperimentConfig,
    store: Store,
    data: JobData | None,
    stage_data: StageData | None,
    lms: LMs,
    tracking_uri: str | None,
    mlruns: Path,
    report_progress: Progress,
    ray_factory: LMFactory | None,
    parent: ParentRun | None,
    *,
    stop: StopSignal | None = None,
    dspy_cache_dir: Path | None = None,
    clock: Eta | None = None,
    estimate_seconds: float | None = None,
    timings: Path | None = None,
) -> RunSummary:
    """The job in its MLflow run: opened (stale runs of dead jobs reaped first), run, closed with its status
    (KILLED at once when `stop` is requested)."""
    digest = config_hash(config)
    tracker = open_tracker(mlruns, tracking_uri)
    reaped = tuple(reap_stale_runs(tracker))
    for stale in reaped:  # the scratch export of a job killed while logging (its process is gone)
        shutil.rmtree(tracker.root / ".staging" / stale, ignore_errors=True)
    tags = {
        TAG_CONFIG_HASH: digest,
        TAG_CONFIG_NAME: config.name,
        TAG_OPTIMIZER: config.optimizer,
        "mlflow.note.content": config.description,
    }
    if parent is not None:
        tags[TAG_PARENT] = parent.run_id
    experiment = parent.experiment if parent is not None else config.tracking.experiment
    run_id = start_run(tracker, experiment_id(tracker, experiment), run_name(config.name, digest), tags)
    job = Job(
        config,
        config_path,
        tracker,
        store,
        run_id,
        report_progress,
        stop,
        ray_factory=ray_factory,
        clock=clock,
        estimate_seconds=estimate_seconds,
    )
    report_progress(ProgressEvent("setup", message=f"MLflow run {run_id} in {tracker.uri}"))

    def killed() -> None:  # at once, from the thread that asked to stop: the run list shows it now
        finish_run(tracker, run_id, "KILLED", f"stopped by the user (Ctrl-C) during {job.phase}")

    if stop is not None:
        stop.listen(killed)
    with dspy_autolog(tracker, run_id, config.tracking.dspy_autolog):
        try:
            if clock is not None:  # the LM is made and the run open: the work begins
                clock.advance("setup", 1)
            if stage_data is not None:
                summary = run_stage_job(job, lms, stage_data, digest)
            elif data is not None:
                summary = _run(job, lms, data, digest)
        except BudgetExceededError as exc:
            log_costs(job)
            finish_run(tracker, run_id, "FAILED", str(exc))
            raise
        except BaseException as exc:
            if isinstance(exc, StopRequested | KeyboardInterrupt) or (stop is not None and stop.requested):
                totals = log_costs(job)
                finish_run(tracker, run_id, "KILLED", f"stopped by the user (Ctrl-C) during {job.phase}")
                cache = str(dspy_cache_dir) if dspy_cache_dir else None
                raise JobInterrupted(
                    run_id, job.phase, totals["lm_calls.total"], totals["lm_calls.new"], cache
                ) from None
            finish_run(tracker, run_id, "FAILED", f"{type(exc).__name__}: {exc}")
            raise
        finally:
            if stop is not None:
                stop.forget(killed)
            if clock is not None and timings is not None:  # what this machine measured, for the next plan
                clock.finish()
                uncached = {phase: c.calls > 0 and c.new_calls == c.calls for phase, c in job.counters.items()}
                steps = {p.name: True for p in clock.work if p.kind in ("setup", "log", "floor")}  # no LM call
                record_rates(timings, config.lm.task, config.lm.num_threads, clock.measured(uncached | steps))
    report_progress(ProgressEvent("done", message=f"run {run_id}"))
    return dataclasses.replace(summary, reaped=reaped)


def _run(job: Job, lms: LMs, data: JobData, digest: str) -> RunSummary:
    config, tracker, run_id = job.config, job.tracker, job.run_id
    train, val, data_hash = data.train, data.val, data.data_hash
    splits = {"train": [e.id for e in train], "val": [e.id for e in val]}
    log_inputs(job, digest, data_hash, splits)

    student = ScopedQA(job.store, config.settings())
    baseline = evaluate_program(job, "baseline", student, val, lms)
    log_dir = _gepa_dir(job, digest, data_hash)
    spec = config.compile_spec(teacher_lm=lms.teacher, reflection_lm=lms.reflection, log_dir=log_dir)
    task_lm = job.ray_lm(config.lm.task)
    if task_lm is not None:  # random search's candidates become Ray tasks (other optimizers run here)
        where = RayCandidates(config.data.index_dir, task_lm, job.ray_lm(config.lm.teacher), lms.embedded)
        spec = dataclasses.replace(spec, ray=where)
    compile_counter = job.counter("compile", config.budget.max_lm_calls)
    job.enter("compile", config.budget.max_lm_calls, config.optimizer)
    with lms.task_context():
        candidate = compile_program(
            spec,
            student,
            to_training_examples(data.resolved_train),
            to_training_examples(data.resolved_val),
            store=job.store,
            counter=compile_counter,
        )
    result = evaluate_program(job, "result", candidate, val, lms)

    baseline_frame, result_frame = results_frame(baseline), results_frame(result)
    baseline_table, result_table = per_case_table(baseline_frame), per_case_table(result_frame)
    failures = report.gate_failures(result_table)
    before = report.finite_number(baseline_table.loc["all", "composite"]) or 0.0
    after = report.finite_number(result_table.loc["all", "composite"]) or 0.0
    differences = compare_results(baseline, result, seed=config.seed)
    selection = select_candidate(differences, report.safety_counts(baseline_table), report.safety_counts(result_table))
    # require_improvement = false keeps only the safety part of the rule.
    selected = selection.selected or (not config.require_improvement and not failures)
    rejection = None if selected else selection.reason
    if not selected:
        log.warning("run %s: candidate rejected (%s); the baseline is kept", run_id, rejection)
    chosen = candidate if selected else student
    test_differences = _test_split(job, lms, student, candidate) if config.data.test_split else []
    job.enter("log", message="export, tables, prompts")
    tables = {"baseline": baseline_table, "result": result_table}
    frames = {
        "baseline-examples": baseline_frame,
        "result-examples": result_frame,
        "baseline-cases": baseline_table,
        "result-cases": result_table,
    }
    comparisons = {"comparison": differences} | ({"test-comparison": test_differences} if test_differences else {})
    export_dir = export_and_log(job, chosen, candidate, frames, comparisons, tables, data_hash, digest, selected)
    candidate_state = program_state(candidate)
    scores_tag = {
        "baseline_composite": f"{before:.4f}",
        "result_composite": f"{after:.4f}",
        "gate_failures": str(failures),
        "selected": str(selected).lower(),
        "config_hash": digest,
    }
    prompts = report.module_prompts(candidate_state, config.modules, selected)
    versions = register_prompts(tracker, run_id, prompts, scores_tag, selected=selected)
    tags = {TAG_SELECTED: str(selected).lower()}
    if rejection:
        tags[TAG_REJECTION] = rejection
    set_tags(tracker, run_id, tags)
    metrics: dict[str, float | int | None] = {**report.case_metrics("baseline", baseline_table)}
    metrics.update(report.case_metrics("result", result_table))
    metrics.update({"selected": float(selected), "gate_failures": failures})
    metrics.update(comparison_metrics("compare", differences))
    metrics.update(headline_metrics(differences))
    metrics.update(comparison_metrics("test.compare", test_differences))
    log_metrics(tracker, run_id, metrics)
    tables_before_after = (baseline_table, result_table)
    return finish(job, digest, tables_before_after, export_dir, rejection, versions, (differences, test_differences))


def _announce_cost(config: ExperimentConfig, plan: JobPlan, progress: Progress) -> None:
    """Before anything runs: the job's estimated LM calls and time, and a warning when validation is too small."""
    progress(ProgressEvent("setup", message=f"estimate: {plan.describe()}"))
    if plan.too_few:
        message = (
            f"only {plan.val_examples} validation examples (data.val_size; the configured minimum is "
            f"data.min_val_size = {config.data.min_val_size}): the verdict may turn on one example per case and "
            "its interval is wide"
        )
        log.info("%s: %s", config.name, message)  # the progress event is the warning a user sees
        progress(ProgressEvent("setup", message=message, warning=True))


def run_name(config_name: str, digest: str, now: datetime | None = None) -> str:
    """A run's name: the config's name, its hash's first 8 hex digits and the UTC start time (unique per start)."""
    when = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return f"{config_name}-{digest[:8]}-{when}"


def _test_split(job: Job, lms: LMs, student: ScopedQA, candidate: ScopedQA) -> list[Difference]:
    """Uncompiled vs compiled on the test split, after selection (the test split never selects anything)."""
    config = job.config
    if config.data.test_split is None:
        return []
    examples = test_examples(config)
    before = evaluate_program(job, "test_baseline", student, examples, lms)
    after = evaluate_program(job, "test_result", candidate, examples, lms)
    log_metrics(job.tracker, job.run_id, report.case_metrics("test.baseline", per_case_table(results_frame(before))))
    log_metrics(job.tracker, job.run_id, report.case_metrics("test.result", per_case_table(results_frame(after))))
    return compare_results(before, after, seed=config.seed)


def _gepa_dir(job: Job, digest: str, data_hash: str) -> Path | None:
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


def _default_factory(config: ExperimentConfig, model_cache_dir: Path | None, keys: LMKeys | None = None) -> LMFactory:
    """make_lm for each spec; each OpenAI-compatible server gets its own key from `keys` (pipeline.program.lm.keys)."""
    cache_dir = model_cache_dir or default_model_cache_dir()
    return functools.partial(
        make_lm, cache_dir=cache_dir, threads=config.lm.threads, parallel=config.lm.num_threads, keys=keys
    )
