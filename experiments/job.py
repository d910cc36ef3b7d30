"""What every optimisation job shares: its progress events and summary, its LMs, its MLflow run and
counters, the export of the chosen program, the paired comparison and the cost record."""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy

import experiments.report as report
from experiments.config import ExperimentConfig, flatten
from experiments.tracking import Tracker, artifact_dir, finish_run, log_artifacts, log_metrics, log_params, log_text
from pipeline.cli.eta import Eta
from pipeline.evaluation.compare import Difference, compare_paired, differences_frame
from pipeline.evaluation.examples import LabelledExample
from pipeline.evaluation.scoring import ExampleResult, evaluate
from pipeline.evaluation.stage_metrics import STAGE_WEIGHTS, Stage
from pipeline.export import program_state, render_prompts, save_export
from pipeline.program.calls import LMCallCounter, StopSignal, counting
from pipeline.program.lm import parse_lm_spec
from pipeline.program.module import ScopedQA
from pipeline.store import Store

LMFactory = Callable[[str], Any]


@dataclass(frozen=True)
class ProgressEvent:
    """Where a job is: phase (setup, baseline, compile, result, log, done), done of total, a message."""

    phase: str
    done: int = 0
    total: int | None = None
    message: str = ""
    # Something the user should read before the job goes on (e.g. too few validation examples).
    warning: bool = False
    # The whole job's ETA as it stands (one per job, shown once on the screen), "" when there is none yet.
    eta: str = ""


Progress = Callable[[ProgressEvent], None]


@dataclass(frozen=True)
class ParentRun:
    """A sweep's run: a job's run is created in its experiment, nested under it."""

    experiment: str
    run_id: str


@dataclass(frozen=True)
class RunSummary:
    """What a job did: its run, per-case tables before/after, the paired comparison, LM cost, export, selection.

    `baseline`/`result` are the end-to-end per-case tables (for a stage job: on its end-to-end
    sample, None when it has none); `comparison` is the paired difference of the job's metric on
    validation (the stage's metric for a stage job) and `test_comparison` the same on the test split.
    """

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
    stage: str = "end_to_end"
    comparison: Any = None
    test_comparison: Any = None
    # A stage job: which way the step runs in the export ("lm" or a floor), why, the mean stage value of each
    # way (floors, uncompiled, compiled) per split, and the chosen LM minus the best floor, paired
    step: str | None = None
    step_reason: str | None = None
    ways: Any = None
    floor_comparison: Any = None
    test_floor_comparison: Any = None
    # how long the work took, and what the job estimated before it started (None: the LM's speed was unknown)
    seconds: float = 0.0
    estimate_seconds: float | None = None


@dataclass
class Job:
    """One running job: its config, MLflow run, index, progress callback and LM-call counters per phase."""

    config: ExperimentConfig
    config_path: Path
    tracker: Tracker
    store: Store
    run_id: str
    progress: Progress
    stop: StopSignal | None = None
    counters: dict[str, LMCallCounter] = field(default_factory=dict)
    # phase -> (examples done, of how many, what they are): repeated with every LM call as a heartbeat
    examples: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    phase: str = "setup"
    # On Ray (`--ray`): makes an LM from its spec inside each worker; the task attempts Ray repeated so far.
    ray_factory: LMFactory | None = None
    ray_retries: int = 0
    # The job's ETA over all its phases, learning its rates from the work finished so far (experiments.estimate),
    # and the time the job was planned to take before it started.
    clock: Eta | None = None
    estimate_seconds: float | None = None

    def ray_lm(self, spec: str | None) -> Callable[[], Any] | None:
        """What makes the LM `spec` inside a Ray worker; None when not on Ray or no spec."""
        if self.ray_factory is None or spec is None:
            return None
        return functools.partial(self.ray_factory, spec)

    def counter(self, phase: str, limit: int | None = None) -> LMCallCounter:
        """A new LM-call counter for `phase` (stopping at `limit` and at the job's stop), reporting every call."""

        def seen(calls: int) -> None:
            if phase == "compile":
                self._tick(phase, calls)
                self.progress(ProgressEvent(phase, calls, limit, "LM calls", eta=self._eta()))
                return
            done, total, unit = self.examples.get(phase, (0, 0, "examples"))
            self.progress(ProgressEvent(phase, done, total, f"{unit}, {calls} LM calls", eta=self._eta()))

        self.phase = phase
        self.counters[phase] = LMCallCounter(limit, on_call=seen, stop=self.stop)
        self._tick(phase, 0)
        return self.counters[phase]

    def enter(self, phase: str, total: int | None = None, message: str = "") -> None:
        """The job moves on to `phase` (compile, log), which reports `message`."""
        self.phase = phase
        self._tick(phase, 0)
        self.progress(ProgressEvent(phase, 0, total, message, eta=self._eta()))

    def advance(self, phase: str, done: int, total: int, unit: str = "examples") -> None:
        """`done` of `total` examples of `phase` are scored (reported with the phase's LM calls so far and the
        job's ETA; once the first units are done, a line saying how this machine compares with the plan)."""
        self.examples[phase] = (done, total, unit)
        self._tick(phase, done)
        counter = self.counters.get(phase)
        calls = f", {counter.calls} LM calls" if counter is not None and counter.calls else ""
        self.progress(ProgressEvent(phase, done, total, f"{unit}{calls}", eta=self._eta()))

    def _tick(self, phase: str, done: int) -> None:
        if self.clock is None:
            return
        self.clock.advance(phase, done)
        note = self.clock.note()
        if note is not None:
            self.progress(ProgressEvent(phase, message=note, eta=self._eta()))

    def _eta(self) -> str:
        return self.clock.text() if self.clock is not None else ""


class LMs:
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


def comparison_metrics(prefix: str, differences: Sequence[Difference]) -> dict[str, float | int | None]:
    """`<prefix>.<case>.difference|ci_low|ci_high|n` for every row of a paired comparison."""
    out: dict[str, float | int | None] = {}
    for d in differences:
        out.update(
            {
                f"{prefix}.{d.case}.difference": d.difference,
                f"{prefix}.{d.case}.ci_low": d.low,
                f"{prefix}.{d.case}.ci_high": d.high,
                f"{prefix}.{d.case}.n": d.n,
            }
        )
    return out


# The few metrics a researcher compares first: short top-level names the MLflow runs list can show as columns.
HEADLINE = {"before": "baseline", "after": "candidate", "difference": "difference", "ci_low": "low", "ci_high": "high"}


def headline_metrics(differences: Sequence[Difference]) -> dict[str, float | int | None]:
    """`val.before|after|difference|ci_low|ci_high|n`: the overall paired comparison on validation."""
    for d in differences:
        if d.case == "all":
            return {f"val.{name}": getattr(d, attr) for name, attr in HEADLINE.items()} | {"val.n": d.n}
    return {}


def export_and_log(
    job: Job,
    chosen: ScopedQA,
    candidate: ScopedQA,
    frames: Mapping[str, Any],
    comparisons: Mapping[str, Sequence[Difference]],
    scores: Mapping[str, Any],
    data_hash: str,
    digest: str,
    selected: bool,
) -> Path:
    """Export the chosen program and log it, its prompts and every table as artifacts; the export's directory.

    `frames` are DataFrames written as `evaluation/<name>.csv`; `comparisons` as
    `evaluation/<name>.csv` too (the paired differences with their intervals); `scores` are the
    per-case tables the export's manifest records.
    """
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
            settings=config.settings(),
            experiment_config=experiment_config,
            trainset_hash=data_hash,
            scores=report.export_scores(scores),
            run_id=run_id,
            lm_name=config.lm.task,
        )
        log_artifacts(tracker, run_id, staging / "export", "export")
        log_text(tracker, run_id, (staging / "export" / "prompts.md").read_text(encoding="utf-8"), "prompts.md")
        if not selected:
            log_text(tracker, run_id, render_prompts(program_state(candidate)), "candidate/prompts.md")
        tables_dir = staging / "evaluation"
        tables_dir.mkdir(parents=True)
        for name, frame in frames.items():
            frame.to_csv(tables_dir / f"{name}.csv", index=not _is_example_rows(frame))
        for name, differences in comparisons.items():
            differences_frame(differences).to_csv(tables_dir / f"{name}.csv", index=False)  # type: ignore[attr-defined]
        log_artifacts(tracker, run_id, tables_dir, "evaluation")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return artifact_dir(tracker, run_id, "export", tracker.root / ".staging")


def _is_example_rows(frame: Any) -> bool:
    """Per-example tables carry an `id` column; per-case tables are indexed by case."""
    return "id" in frame.columns


def log_costs(job: Job) -> dict[str, int]:
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
    if job.ray_factory is not None:
        metrics["ray.retries"] = job.ray_retries
    if job.clock is not None:  # how long the work took against the estimate the job started with
        metrics["time.seconds"] = round(job.clock.elapsed, 1)
        metrics["time.estimate_seconds"] = None if job.estimate_seconds is None else round(job.estimate_seconds, 1)
    log_metrics(job.tracker, job.run_id, metrics)
    return totals


def log_inputs(job: Job, digest: str, data_hash: str, splits: Mapping[str, Sequence[str]]) -> None:
    """The flattened config, hashes and sizes as params; the TOML and the example ids as artifacts."""
    config = job.config
    params = flatten(config.model_dump(mode="json"))
    params.update({"config_hash": digest, "data_hash": data_hash, "index_generation": job.store.manifest.generation})
    params.update({f"{name}_examples": str(len(ids)) for name, ids in splits.items()})
    if config.stage != "end_to_end":  # what the stage metric weighs, so runs --compare can tell two apart
        stage: Stage = config.stage  # type: ignore[assignment]
        params.update({f"stage_metric.{part}": str(w) for part, w in STAGE_WEIGHTS[stage].items()})
    log_params(job.tracker, job.run_id, params)
    log_text(job.tracker, job.run_id, job.config_path.read_text(encoding="utf-8"), "config.toml")
    log_text(job.tracker, job.run_id, json.dumps({k: list(v) for k, v in splits.items()}, indent=2), "data/splits.json")


def compare_results(before: Sequence[ExampleResult], after: Sequence[ExampleResult], *, seed: int) -> list[Difference]:
    """The paired composite differences of two runs over the same examples, over those examples
    whose composite applies in both (a case no weighted metric applies to is left out, not 0)."""
    cases: list[str] = []
    baseline: list[float] = []
    candidate: list[float] = []
    for b, a in zip(before, after, strict=True):
        if b.composite is not None and a.composite is not None:
            cases.append(b.example.case)
            baseline.append(b.composite)
            candidate.append(a.composite)
    return compare_paired(cases, baseline, candidate, seed=seed)


def evaluate_program(
    job: Job, phase: str, program: ScopedQA, examples: Sequence[LabelledExample], lms: LMs
) -> list[ExampleResult]:
    """The program end to end on `examples`, its LM calls counted under `phase`."""
    counter = job.counter(phase)
    job.advance(phase, 0, len(examples))

    def advance(done: int, total: int) -> None:
        job.advance(phase, done, total)

    if job.ray_factory is not None:
        return _evaluate_on_ray(job, counter, program, examples, lms, advance)
    with lms.task_context(), counting(counter):
        return evaluate(
            examples,
            job.store,
            program=program,
            threads=job.config.lm.num_threads,
            progress=advance,
            weights=job.config.metric.weights,
        )


def _evaluate_on_ray(
    job: Job,
    counter: LMCallCounter,
    program: ScopedQA,
    examples: Sequence[LabelledExample],
    lms: LMs,
    advance: Callable[[int, int], None],
) -> list[ExampleResult]:
    """`evaluate_program` with the examples as Ray tasks; the workers' LM calls counted from their traces."""
    from pipeline.evaluation.fanout import evaluate_on_ray, program_setup

    task_lm = job.ray_lm(job.config.lm.task)
    if task_lm is None:
        raise ValueError("the job has no Ray LM factory")
    setup = program_setup(
        job.config.data.index_dir, program, task_lm, json_adapter=lms.embedded, weights=job.config.metric.weights
    )
    fanned = evaluate_on_ray(examples, setup, progress=advance)
    counter.add_remote(sum(r.scores.lm_calls for r in fanned.results), sum(r.scores.tokens for r in fanned.results))
    job.ray_retries += fanned.retries
    return fanned.results


def finish(
    job: Job,
    digest: str,
    tables: tuple[Any, Any],
    export_dir: Path,
    rejection: str | None,
    versions: dict[str, int],
    comparisons: tuple[Sequence[Difference], Sequence[Difference]],
) -> RunSummary:
    """Log the job's LM costs, end its run FINISHED, and summarise it (`tables`: end-to-end per-case tables
    before and after; `comparisons`: the paired differences on validation and on the test split)."""
    if job.clock is not None:  # the export and the logging are done
        job.clock.advance("log", 1)
    totals = log_costs(job)
    finish_run(job.tracker, job.run_id, "FINISHED")
    differences, test_differences = comparisons
    return RunSummary(
        run_id=job.run_id,
        experiment=job.config.tracking.experiment,
        config_hash=digest,
        baseline=tables[0],
        result=tables[1],
        lm_calls=totals["lm_calls.total"],
        new_lm_calls=totals["lm_calls.new"],
        tokens=totals["tokens.total"],
        export_dir=export_dir,
        selected=rejection is None,
        rejection=rejection,
        prompt_versions=versions,
        stage=job.config.stage,
        comparison=differences_frame(differences),
        test_comparison=differences_frame(test_differences) if test_differences else None,
        seconds=job.clock.elapsed if job.clock is not None else 0.0,
        estimate_seconds=job.estimate_seconds,
    )
