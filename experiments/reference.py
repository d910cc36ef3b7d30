"""Reference runs: finished runs shipped in the repository under `mlruns/reference/`, so that every clone can
list, compare and export the runs the README reports before it has run anything.

`write_reference` (`scoperag reference RUN...`, `make reference RUNS=...`) turns runs of a store into the
set, replacing it: one directory per run holding `run.json` (its name, experiment, status, times, params,
tags, every logged metric value, the prompt versions it registered) and `artifacts/` (the files it logged,
each listed with its sha256). Plain JSON and the run's own files: nothing is pickled, a reviewer reads the
diff, and a run of a few hundred kilobytes keeps the repository small (the set is capped at `MAX_SET_BYTES`).

`install_reference` runs whenever the project's own store is opened (experiments.store.open_tracker): a
reference run the store does not hold yet is added under its own id, with its params, tags and metrics as
logged, its artifacts copied beside the store's others and its prompts registered (an identical prompt
reuses the store's version). Each run is validated whole (strict schema, sizes, file hashes, no path outside
its folder) before anything is written, and inserted in one transaction, so a store never holds half a run.
A run the store already holds, even deleted, is left alone.
"""

from __future__ import annotations

import logging
import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Literal
from urllib.parse import unquote, urlparse

from pydantic import Field, ValidationError

from experiments.tracking import (
    TAG_CONFIG_HASH,
    TAG_HOST,
    TAG_PID,
    TAG_PID_START,
    TAG_PROMPT,
    Tracker,
    artifact_dir,
    experiment_id,
    get_run,
    prompt_name,
    prompt_tags,
    prompt_version,
    run_prompt_versions,
)
from pipeline.errors import ExportError, TrackingError
from pipeline.export.fs import publish_dir, staged_dir
from pipeline.export.jsonio import canonical_json, read_limited, strict_loads
from pipeline.files import exclusive_lock, sha256_file
from pipeline.types import StrictJson

log = logging.getLogger(__name__)

REFERENCE_DIR = "reference"
RUN_FILE = "run.json"
ARTIFACTS = "artifacts"
# The whole set, artifacts included: the repository stays small (its mlruns/ well under 10 MB).
MAX_SET_BYTES = 5 * 1024 * 1024
MAX_RUN_FILE_BYTES = 4 * 1024 * 1024
# Tags that describe the machine a run ran on, not the run (or that installing rebuilds for the store).
LOCAL_TAGS = (TAG_PID, TAG_PID_START, TAG_HOST, "mlflow.user", "mlflow.source.", "mlflow.linkedPrompts", TAG_PROMPT)
RUN_ID_PATTERN = r"^[0-9a-f]{32}$"


class MetricValue(StrictJson):
    """One logged value of a metric."""

    key: str = Field(min_length=1, max_length=250)
    value: float
    timestamp: int
    step: int


class PromptRecord(StrictJson):
    """A prompt version a run registered: its module, text, commit message and tags."""

    module: str = Field(pattern=r"^[a-z_]{1,40}$")
    template: str
    message: str
    tags: dict[str, str]


class ReferenceRun(StrictJson):
    """`run.json` of one reference run."""

    format: Literal["scoperag-reference-run/v1"]
    run_id: str = Field(pattern=RUN_ID_PATTERN)
    run_name: str = Field(max_length=250)
    experiment: str = Field(min_length=1, max_length=500)
    status: Literal["FINISHED", "FAILED", "KILLED"]
    start_time: int
    end_time: int | None
    params: dict[str, str]
    tags: dict[str, str]
    metrics: list[MetricValue]
    prompts: list[PromptRecord]
    # relative path (POSIX) -> sha256 of every artifact file
    artifacts: dict[str, str]


def reference_dir(root: Path) -> Path:
    """Where the reference runs of the store under `root` (--mlruns) are shipped."""
    return Path(root) / REFERENCE_DIR


# -- writing the set ---------------------------------------------------------------------------------


def write_reference(
    tracker: Tracker, run_refs: Sequence[str], out_dir: Path, max_bytes: int = MAX_SET_BYTES
) -> list[ReferenceRun]:
    """Replace the reference set in `out_dir` with the runs `run_refs` name (ids or unique prefixes) in
    `tracker`'s store; all or nothing. TrackingError for a run that is still running or not a scoperag job,
    or when the set would exceed `max_bytes` (naming its largest files)."""
    if not run_refs:
        raise TrackingError("name at least one run (`scoperag runs` lists them)")
    runs = [get_run(tracker, ref) for ref in dict.fromkeys(run_refs)]
    for run in runs:
        if run.info.status not in ("FINISHED", "FAILED", "KILLED"):
            raise TrackingError(f"run {run.info.run_id} is {run.info.status}: only an ended run can be a reference")
        if TAG_CONFIG_HASH not in run.data.tags:
            raise TrackingError(f"run {run.info.run_id} is not a scoperag job (no {TAG_CONFIG_HASH} tag)")
    records = []
    with staged_dir(Path(out_dir)) as staging, tempfile.TemporaryDirectory(prefix="scoperag-reference-") as scratch:
        for run in runs:
            run_id = str(run.info.run_id)
            folder = staging / run_id
            source = artifact_dir(tracker, run_id, "", Path(scratch) / run_id)
            shutil.copytree(source, folder / ARTIFACTS, symlinks=False)
            record = _record(tracker, run, _hashes(folder / ARTIFACTS))
            (folder / RUN_FILE).write_bytes(canonical_json(record.model_dump(mode="json")))
            records.append(record)
        _check_size(staging, max_bytes)
        publish_dir(staging, Path(out_dir), overwrite=True)
    return records


def _record(tracker: Tracker, run: Any, artifacts: dict[str, str]) -> ReferenceRun:
    """The run as `run.json` holds it: every value of every metric, its prompt versions, no machine tags."""
    client = tracker.client
    run_id = str(run.info.run_id)
    metrics = [
        MetricValue(key=m.key, value=float(m.value), timestamp=int(m.timestamp), step=int(m.step))
        for key in sorted(run.data.metrics)
        for m in client.get_metric_history(run_id, key)
    ]
    prompts = []
    for module, version in sorted(run_prompt_versions(run).items()):
        found = client.get_prompt_version(prompt_name(module), version)
        prompts.append(
            PromptRecord(
                module=module, template=str(found.template), message=found.commit_message or "", tags=dict(found.tags)
            )
        )
    experiment = client.get_experiment(run.info.experiment_id)
    return ReferenceRun(
        format="scoperag-reference-run/v1",
        run_id=run_id,
        run_name=str(run.info.run_name),
        experiment=str(experiment.name),
        status=run.info.status,
        start_time=int(run.info.start_time),
        end_time=None if run.info.end_time is None else int(run.info.end_time),
        params=dict(run.data.params),
        tags={k: v for k, v in run.data.tags.items() if not k.startswith(LOCAL_TAGS)},
        metrics=metrics,
        prompts=prompts,
        artifacts=artifacts,
    )


def _hashes(folder: Path) -> dict[str, str]:
    """relative path -> sha256 of every file under `folder`."""
    return {p.relative_to(folder).as_posix(): sha256_file(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def _check_size(staging: Path, max_bytes: int) -> None:
    files = [(p.stat().st_size, p.relative_to(staging).as_posix()) for p in staging.rglob("*") if p.is_file()]
    total = sum(size for size, _ in files)
    if total > max_bytes:
        largest = ", ".join(f"{name} ({size / 1024:,.0f} KiB)" for size, name in sorted(files, reverse=True)[:5])
        raise TrackingError(
            f"the reference set would hold {total / 1024 / 1024:.1f} MiB, over its {max_bytes / 1024 / 1024:.0f} "
            f"MiB limit (the repository ships it); the largest files: {largest}. Ship fewer or smaller runs"
        )


# -- installing it into a store ----------------------------------------------------------------------


def install_reference(tracker: Tracker, folder: Path | None = None) -> list[str]:
    """Add to `tracker`'s own store every reference run in `folder` (default: `<store root>/reference`) that
    it does not hold yet; the ids added. Only the project's sqlite store is written this way."""
    folder = reference_dir(tracker.root) if folder is None else Path(folder)
    if not tracker.local or not folder.is_dir():
        return []
    shipped = _shipped_ids(folder)
    if not shipped or not (missing := _missing(tracker, shipped)):
        return []
    with exclusive_lock(tracker.root / ".reference.lock", wait=True):  # two commands starting at once
        missing = _missing(tracker, shipped)
        records = sorted((load_reference_run(folder / run_id) for run_id in missing), key=lambda r: r.start_time)
        for record in records:
            _install(tracker, record, folder / record.run_id / ARTIFACTS)
    if records:
        log.info("added %d reference run(s) from %s to %s", len(records), folder, tracker.uri)
    return [r.run_id for r in records]


def _shipped_ids(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and re.fullmatch(RUN_ID_PATTERN, p.name))


def _missing(tracker: Tracker, run_ids: Iterable[str]) -> list[str]:
    """Those of `run_ids` the store holds in no state (deleted runs count as held)."""
    from mlflow.entities import ViewType

    wanted = list(run_ids)
    ids = [str(e.experiment_id) for e in tracker.client.search_experiments(view_type=ViewType.ALL)]
    listed = ", ".join(f"'{run_id}'" for run_id in wanted)  # hex ids only (RUN_ID_PATTERN)
    held = (
        {
            str(r.info.run_id)
            for r in tracker.client.search_runs(
                ids, filter_string=f"attributes.run_id IN ({listed})", run_view_type=ViewType.ALL, max_results=1000
            )
        }
        if ids
        else set()
    )
    return [run_id for run_id in wanted if run_id not in held]


def load_reference_run(folder: Path) -> ReferenceRun:
    """The validated `run.json` of a reference run folder, its artifacts checked against their hashes;
    TrackingError naming the file and the way out otherwise."""
    where = folder / RUN_FILE
    try:
        data = read_limited(where, str(where), MAX_RUN_FILE_BYTES)
        record = ReferenceRun.model_validate(strict_loads(data, str(where)))
    except (ExportError, ValidationError) as exc:
        raise _broken(folder, str(exc)) from exc
    if record.run_id != folder.name:
        raise _broken(folder, f"{RUN_FILE} names run {record.run_id}")
    artifacts = folder / ARTIFACTS
    on_disk = _hashes(artifacts) if artifacts.is_dir() else {}
    for relpath, digest in record.artifacts.items():
        path = PurePosixPath(relpath)
        if path.is_absolute() or ".." in path.parts or (artifacts / relpath).is_symlink():
            raise _broken(folder, f"artifact path {relpath!r} leaves the run's folder")
        if on_disk.get(relpath) != digest:
            raise _broken(folder, f"artifact {relpath} is missing or differs from its recorded sha256")
    if extra := sorted(set(on_disk) - set(record.artifacts)):
        raise _broken(folder, f"files not listed in {RUN_FILE}: {', '.join(extra[:5])}")
    return record


def _broken(folder: Path, problem: str) -> TrackingError:
    return TrackingError(
        f"reference run {folder} cannot be installed: {problem}. Restore it (`git checkout -- {folder}`) "
        "or rewrite the set with `scoperag reference RUN...`"
    )


def _install(tracker: Tracker, record: ReferenceRun, artifacts: Path) -> None:
    """One reference run into the store: prompts registered, artifacts copied, then the run in one transaction."""
    from mlflow.entities import LifecycleStage, SourceType
    from mlflow.store.tracking.dbmodels.models import SqlLatestMetric, SqlMetric, SqlParam, SqlRun, SqlTag

    registered = {
        p.module: prompt_version(tracker, prompt_name(p.module), p.template, p.message, p.tags) for p in record.prompts
    }
    tags = {**record.tags, **(prompt_tags(registered) if registered else {}), "mlflow.runName": record.run_name}
    experiment = tracker.client.get_experiment(experiment_id(tracker, record.experiment))
    artifact_uri = f"{str(experiment.artifact_location).rstrip('/')}/{record.run_id}/artifacts"
    target = Path(unquote(urlparse(artifact_uri).path))
    for relpath in record.artifacts:
        (target / relpath).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(artifacts / relpath, target / relpath)
    latest: dict[str, MetricValue] = {}
    for m in record.metrics:  # MLflow's rule: the highest step, then the latest time, then the largest value
        kept = latest.get(m.key)
        if kept is None or (m.step, m.timestamp, m.value) > (kept.step, kept.timestamp, kept.value):
            latest[m.key] = m
    # MLflow's client cannot create a run under a given id: the run's rows are written as its SQL store
    # writes them (mlflow 3.17, pinned), in one transaction.
    store = tracker.client._tracking_client.store
    rows = {"run_uuid": record.run_id, "is_nan": False}
    with store.ManagedSessionMaker(read_only=False) as session:
        run = SqlRun(
            name=record.run_name,
            artifact_uri=artifact_uri,
            run_uuid=record.run_id,
            experiment_id=int(experiment.experiment_id),
            source_type=SourceType.to_string(SourceType.UNKNOWN),
            source_name="",
            entry_point_name="",
            user_id="scoperag-reference",
            status=record.status,
            start_time=record.start_time,
            end_time=record.end_time,
            deleted_time=None,
            source_version="",
            lifecycle_stage=LifecycleStage.ACTIVE,
        )
        run.tags = [SqlTag(key=k, value=v) for k, v in tags.items()]
        session.add(run)
        session.add_all(SqlParam(key=k, value=v, run_uuid=record.run_id) for k, v in record.params.items())
        session.add_all(
            SqlMetric(key=m.key, value=m.value, timestamp=m.timestamp, step=m.step, **rows) for m in record.metrics
        )
        session.add_all(
            SqlLatestMetric(key=m.key, value=m.value, timestamp=m.timestamp, step=m.step, **rows)
            for m in latest.values()
        )
