"""run_sweep: several experiment configs as one MLflow parent run with a child run per config, each config's
job in a Ray task when asked for (else one after another), and a paired comparison of every config with the
first at the end (experiments.runs.compare_runs: the bootstrap CI of the difference per case)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.config import load_config
from experiments.job import LMFactory, ParentRun, RunSummary
from experiments.runner import run_experiment
from experiments.runs import compare_runs
from experiments.store import open_tracker
from experiments.tracking import TAG, experiment_id, finish_run, log_metrics, log_params, log_text, start_run
from pipeline.cluster import map_tasks, ray_session

log = logging.getLogger(__name__)

TAG_SWEEP = TAG + "sweep"


@dataclass(frozen=True)
class SweepJob:
    """What a worker needs to run one config of a sweep as a child run."""

    config_path: Path
    mlruns: Path
    tracking_uri: str | None
    parent: ParentRun
    lm_factory: LMFactory | None
    model_cache_dir: Path | None


@dataclass(frozen=True)
class SweepSummary:
    """The parent run, each config's child summary (or its error), and the comparison with the first config."""

    run_id: str
    experiment: str
    children: list[RunSummary | None]
    errors: list[str | None]
    comparison: Any  # DataFrame: config, run_id, case, n, baseline, candidate, difference, ci_low, ci_high
    retries: int = 0
    configs: list[str] = field(default_factory=list)


def run_sweep(
    config_paths: Sequence[Path],
    *,
    mlruns: Path,
    tracking_uri: str | None = None,
    ray: str | None = None,
    experiment: str | None = None,
    lm_factory: LMFactory | None = None,
    model_cache_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> SweepSummary:
    """Run every config as a child of one parent run (in `experiment`, default the first config's), on Ray when
    `ray` names a cluster or 'local'; a config that fails is reported and the others go on. `progress` is told
    what the sweep is doing (Ray starting, configs running and finished)."""
    say = progress or (lambda text: None)
    paths = [Path(p).resolve() for p in config_paths]
    configs = [load_config(p) for p in paths]  # every config is checked before anything runs
    name = experiment or configs[0].tracking.experiment
    tracker = open_tracker(mlruns, tracking_uri)
    run_id = start_run(tracker, experiment_id(tracker, name), f"sweep-{len(paths)}-configs", {TAG_SWEEP: "true"})
    log_params(tracker, run_id, {"configs": json.dumps([c.name for c in configs]), "ray": ray or "none"})
    parent = ParentRun(name, run_id)
    jobs = [SweepJob(p, Path(mlruns).resolve(), tracking_uri, parent, lm_factory, model_cache_dir) for p in paths]
    try:
        if ray:
            say(f"starting Ray ({ray})")
            with ray_session(ray):
                say(f"{len(jobs)} configs running as Ray tasks, 0 finished")
                fanned = map_tasks(
                    _run_child,
                    None,
                    jobs,
                    progress=lambda done, total: say(f"{len(jobs)} configs running as Ray tasks, {done} finished"),
                )
            outcomes, retries = fanned.results, fanned.retries
        else:
            outcomes = []
            for number, (job, config) in enumerate(zip(jobs, configs, strict=True), start=1):
                say(f"config {number} of {len(jobs)}: {config.name}")
                outcomes.append(_run_child(None, job, 1))
            retries = 0
        children = [o if isinstance(o, RunSummary) else None for o in outcomes]
        errors = [o if isinstance(o, str) else None for o in outcomes]
        comparison = _compare(children, [c.name for c in configs], mlruns, tracker.uri)
        log_text(tracker, run_id, comparison.to_csv(index=False), "sweep/comparison.csv")
        log_metrics(
            tracker, run_id, {"children.finished": sum(c is not None for c in children), "ray.retries": retries}
        )
    except BaseException as exc:
        finish_run(tracker, run_id, "FAILED", f"{type(exc).__name__}: {exc}")
        raise
    failed = [f"{c.name}: {e}" for c, e in zip(configs, errors, strict=True) if e is not None]
    finish_run(tracker, run_id, "FAILED" if failed else "FINISHED", "; ".join(failed) or None)
    return SweepSummary(run_id, name, children, errors, comparison, retries, [c.name for c in configs])


def _run_child(shared: None, job: SweepJob, attempt: int) -> RunSummary | str:
    """One config's job as a child run; its error as text when it fails (the sweep goes on)."""
    try:
        return run_experiment(
            job.config_path,
            mlruns=job.mlruns,
            tracking_uri=job.tracking_uri,
            lm_factory=job.lm_factory,
            model_cache_dir=job.model_cache_dir,
            parent=job.parent,
        )
    except Exception as exc:  # reported in the sweep's table and its run; the other configs go on
        log.warning("sweep: %s failed: %s", job.config_path, exc)
        return f"{type(exc).__name__}: {exc}"


def _compare(children: Sequence[RunSummary | None], names: Sequence[str], mlruns: Path, uri: str) -> Any:
    """Every finished config minus the first, paired on the validation examples both scored, per case."""
    import pandas as pd

    first = children[0]
    frames = []
    if first is not None:
        for child, name in zip(children[1:], names[1:], strict=True):
            if child is None:
                continue
            table = compare_runs(first.run_id, child.run_id, mlruns, uri=uri)
            table.insert(0, "run_id", child.run_id)
            table.insert(0, "config", name)
            frames.append(table)
    if not frames:
        return pd.DataFrame(columns=["config", "run_id", "case", "n", "difference", "ci_low", "ci_high"])
    return pd.concat(frames, ignore_index=True)
