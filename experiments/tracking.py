"""MLflow tracking for optimisation jobs: runs, params, batched metrics, artifacts, prompt versions, aliases.

Where runs go is decided once, by `resolve_tracking_uri`: `--tracking-uri`, else MLFLOW_TRACKING_URI,
else the project's own store `sqlite:///<root>/mlflow.db` with artifacts under
`<root>/artifacts/<experiment>/` (recent MLflow refuses the plain file store unless forced). A team
points every command at one `mlflow server` (PostgreSQL backend, shared artifact root; README "Team
setup"). Every call goes through an explicit `MlflowClient`; the global tracking URI is set only while
DSPy autologging is on, and restored.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import socket
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# MLflow phones a telemetry host at import unless this is set; nothing may reach the network.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

import mlflow
from mlflow import MlflowClient
from mlflow.entities import Metric, Param, RunStatus, RunTag
from mlflow.exceptions import MlflowException
from mlflow.tracing.constant import TraceTagKey
from mlflow.tracing.utils.prompt import update_linked_prompts_tag

from pipeline.errors import TrackingError
from pipeline.files import process_alive, process_start

log = logging.getLogger(__name__)

TAG = "scoperag."
TAG_PID = TAG + "pid"
TAG_PID_START = TAG + "pid_start"
TAG_HOST = TAG + "host"
TAG_CONFIG_HASH = TAG + "config_hash"
TAG_CONFIG_NAME = TAG + "config_name"
TAG_OPTIMIZER = TAG + "optimizer"
TAG_SELECTED = TAG + "selected"
TAG_REJECTION = TAG + "rejection"
TAG_STOP = TAG + "stop_reason"
TAG_STAGE = TAG + "stage"  # a stage job's stage
TAG_STEP = TAG + "step"  # which way a stage job's exported program runs its step: "lm" or a floor
TAG_PROMPT = TAG + "prompt."
TAG_CHAMPION_RUN = TAG + "champion_run"
TAG_PARENT = "mlflow.parentRunId"  # MLflow nests a run under its parent (a sweep's) by this tag
PROMPT_PREFIX = "scoperag-"
CHAMPION = "champion"
MAX_PARAM_CHARS = 500
PARAMS_PER_BATCH = 100
METRICS_PER_BATCH = 1000


# An experiment of optimisation runs is a "Model training" experiment to MLflow's UI (its runs list), not a
# GenAI one (traces). MLflow 3.17 reads the view from the browser instead: see experiments.ui.runs_links.
EXPERIMENT_TAGS = {"mlflow.experimentKind": "custom_model_development"}

TRACKING_URI_ENV = "MLFLOW_TRACKING_URI"


def tracking_uri(root: Path) -> str:
    """`sqlite:///<absolute root>/mlflow.db`: the project's own store."""
    return f"sqlite:///{Path(root).resolve() / 'mlflow.db'}"


def resolve_tracking_uri(flag: str | None, root: Path, environ: Mapping[str, str] | None = None) -> str:
    """The tracking (and prompt-registry) URI every MLflow-using command uses: `flag` (--tracking-uri), else
    MLFLOW_TRACKING_URI, else the project's sqlite store under `root` (--mlruns)."""
    environ = os.environ if environ is None else environ
    for uri in (flag, environ.get(TRACKING_URI_ENV)):
        if uri and uri.strip():
            return uri.strip()
    return tracking_uri(root)


def is_local_store(uri: str, root: Path) -> bool:
    """Whether `uri` is the project's own sqlite store under `root` (its artifacts then live under `root`)."""
    return uri == tracking_uri(root)


def prompt_name(module: str) -> str:
    """The prompt-registry name of one predictor's prompt: one prompt per module, a version per run."""
    return f"{PROMPT_PREFIX}{module}"


@dataclass
class Tracker:
    """An MLflow client bound to one tracking store (its prompt registry at the same URI), and the local
    directory `root` that holds scratch files (and, for the project's own store, the store itself)."""

    root: Path
    client: MlflowClient = field(repr=False)
    uri: str = ""

    @property
    def local(self) -> bool:
        """Whether the store is the project's sqlite file under `root`."""
        return is_local_store(self.uri, self.root)


# -- experiments and runs ------------------------------------------------------------------------


def experiment_id(tracker: Tracker, name: str) -> str:
    """The id of experiment `name`, created if new: its artifacts under `<root>/artifacts/<name>` for the
    project's own store, else where the tracking server keeps artifacts."""
    found = tracker.client.get_experiment_by_name(name)
    if found is not None:
        return str(found.experiment_id)
    location = (tracker.root / "artifacts" / name).resolve().as_uri() if tracker.local else None
    try:
        return str(tracker.client.create_experiment(name, artifact_location=location, tags=EXPERIMENT_TAGS))
    except MlflowException:  # created meanwhile by another job
        found = tracker.client.get_experiment_by_name(name)
        if found is None:
            raise
        return str(found.experiment_id)


def find_experiment_ids(tracker: Tracker, name: str | None = None) -> list[str]:
    """Ids of experiment `name` (TrackingError naming the known ones if absent), or of all experiments."""
    experiments = tracker.client.search_experiments()
    if name is None:
        return [str(e.experiment_id) for e in experiments]
    for experiment in experiments:
        if experiment.name == name:
            return [str(experiment.experiment_id)]
    known = ", ".join(sorted(e.name for e in experiments)) or "none yet"
    raise TrackingError(f"no MLflow experiment {name!r} in {tracker.uri} (known: {known})")


def owner_tags() -> dict[str, str]:
    """Tags naming the process that owns a run, so a later job can tell whether it is still alive."""
    pid = os.getpid()
    tags = {TAG_PID: str(pid), TAG_HOST: socket.gethostname()}
    start = process_start(pid)
    if start is not None:
        tags[TAG_PID_START] = start
    return tags


def start_run(tracker: Tracker, experiment: str, run_name: str, tags: Mapping[str, str]) -> str:
    """A new RUNNING run in `experiment` tagged with its owner process; returns its id."""
    run = tracker.client.create_run(experiment, run_name=run_name, tags={**tags, **owner_tags()})
    return str(run.info.run_id)


def finish_run(tracker: Tracker, run_id: str, status: str = "FINISHED", reason: str | None = None) -> None:
    """End the run with `status` (FINISHED, FAILED, KILLED), recording `reason` as a tag."""
    if reason:
        tracker.client.set_tag(run_id, TAG_STOP, reason[:5000])
    active = mlflow.active_run()
    if active is not None and active.info.run_id == run_id:
        mlflow.end_run(status=status)
    else:
        tracker.client.set_terminated(run_id, status=status)


def reap_stale_runs(tracker: Tracker) -> list[str]:
    """Mark FAILED the RUNNING runs whose owning process (on this host) is gone; returns their ids.

    Runs owned by a live process, by another host, or not started by scoperag are left alone.
    """
    ids = find_experiment_ids(tracker)
    if not ids:
        return []
    host = socket.gethostname()
    reaped = []
    for run in tracker.client.search_runs(ids, filter_string="attributes.status = 'RUNNING'", max_results=1000):
        tags = run.data.tags
        pid = tags.get(TAG_PID, "")
        if not pid.isdigit() or process_alive(tags.get(TAG_HOST, ""), int(pid), tags.get(TAG_PID_START)):
            continue
        reason = f"process {pid} on {host} ended without closing the run (killed or crashed)"
        tracker.client.set_tag(run.info.run_id, TAG_STOP, reason)
        tracker.client.set_terminated(run.info.run_id, status=RunStatus.to_string(RunStatus.FAILED))
        log.warning("marked run %s FAILED: %s", run.info.run_id, reason)
        reaped.append(str(run.info.run_id))
    return reaped


# -- params, metrics, tags, artifacts ------------------------------------------------------------


def log_params(tracker: Tracker, run_id: str, params: Mapping[str, str]) -> None:
    """Params in batches of 100, each value cut to 500 characters (the full config is also an artifact)."""
    items = [Param(key[:250], _cut(value)) for key, value in params.items()]
    for start in range(0, len(items), PARAMS_PER_BATCH):
        tracker.client.log_batch(run_id, params=items[start : start + PARAMS_PER_BATCH], synchronous=True)


def log_metrics(tracker: Tracker, run_id: str, metrics: Mapping[str, float | int | None], step: int = 0) -> None:
    """Finite metrics in batches of 1000 (one sqlite transaction each, not one per metric); None/NaN skipped."""
    now = int(time.time() * 1000)
    items = [
        Metric(key[:250], float(value), now, step)
        for key, value in metrics.items()
        if value is not None and math.isfinite(float(value))
    ]
    for start in range(0, len(items), METRICS_PER_BATCH):
        tracker.client.log_batch(run_id, metrics=items[start : start + METRICS_PER_BATCH], synchronous=True)


def set_tags(tracker: Tracker, run_id: str, tags: Mapping[str, str]) -> None:
    """Run tags in one batch."""
    items = [RunTag(key[:250], value[:5000]) for key, value in tags.items()]
    if items:
        tracker.client.log_batch(run_id, tags=items, synchronous=True)


def log_artifacts(tracker: Tracker, run_id: str, local_dir: Path, artifact_path: str | None = None) -> None:
    """Copy the files of `local_dir` into the run's artifacts (under `artifact_path`)."""
    tracker.client.log_artifacts(run_id, str(local_dir), artifact_path)


def log_text(tracker: Tracker, run_id: str, text: str, artifact_file: str) -> None:
    """One text artifact."""
    tracker.client.log_text(run_id, text, artifact_file)


def artifact_dir(tracker: Tracker, run_id: str, path: str, scratch: Path) -> Path:
    """A local directory holding the run's artifact `path` (the store itself when local, else a download)."""
    run = get_run(tracker, run_id)
    uri = str(run.info.artifact_uri)
    if uri.startswith("file://"):
        from urllib.parse import unquote, urlparse

        local = Path(unquote(urlparse(uri).path)) / path
        if not local.is_dir():
            raise TrackingError(f"run {run_id} has no artifact {path!r} (looked in {local})")
        return local
    try:
        return Path(tracker.client.download_artifacts(run_id, path, str(scratch)))
    except MlflowException as exc:
        raise TrackingError(f"run {run_id} has no artifact {path!r}: {exc.message}") from exc


RUN_ID_DIGITS = 32
# Runs named when a prefix is ambiguous (more are counted, not listed).
AMBIGUOUS_SHOWN = 10


# A run name as jobs give them (`<config>-<config hash>-<UTC time>`) or a config's name: searched for as it is, so
# nothing that could change the filter's meaning (a quote, a space) is accepted.
RUN_NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,249}"


def resolve_run_id(tracker: Tracker, ref: str) -> str:
    """The full id of the one run `ref` names: its id or a unique prefix of it (the 8 digits `scoperag runs`
    prints), else its name (`quick-decompose-sec-0fc2fc2a-20261128-023022`) or the name of its config when one run
    has it (`quick-decompose-sec`, as the README names the reference runs); TrackingError when `ref` is neither, when
    nothing matches, or naming every run an ambiguous prefix or name matches."""
    text = ref.strip()
    hex_id = text.lower()
    is_hex = re.fullmatch(r"[0-9a-f]{1,32}", hex_id) is not None
    if is_hex:
        if len(hex_id) == RUN_ID_DIGITS:
            return hex_id
        found = _search(tracker, f"attributes.run_id LIKE '{hex_id}%'")
        if len(found) > 1:
            raise TrackingError(f"run id prefix {hex_id!r} matches several runs: {_listed(found)}; give more digits")
        if found:
            return str(found[0].info.run_id)
    elif not re.fullmatch(RUN_NAME_PATTERN, text):
        raise TrackingError(
            f"{ref!r} is not a run id or name: give the hex digits `scoperag runs` prints (or more of them), a run's "
            "name or its config's"
        )
    for condition, words in (
        (f"attributes.run_name = '{text}'", "named"),
        (f"tags.`{TAG_CONFIG_NAME}` = '{text}'", "of config"),
    ):
        named = _search(tracker, condition)
        if len(named) > 1:
            raise TrackingError(f"{len(named)} runs {words} {text!r}: {_listed(named)}; give one's id")
        if named:
            return str(named[0].info.run_id)
    missing = f"no run id starts with {hex_id!r} and no run or config is named so" if is_hex else ""
    raise TrackingError(
        f"{missing or f'no run or config is named {text!r}'} in {tracker.uri}; list runs with `scoperag runs` "
        "(or pass the right --mlruns or --tracking-uri)"
    )


def _search(tracker: Tracker, filter_string: str) -> list[Any]:
    """The runs of every experiment matching `filter_string` (at most AMBIGUOUS_SHOWN + 1, newest first)."""
    ids = find_experiment_ids(tracker)
    if not ids:
        return []
    return list(
        tracker.client.search_runs(
            ids, filter_string=filter_string, max_results=AMBIGUOUS_SHOWN + 1, order_by=["attributes.start_time DESC"]
        )
    )


def _listed(runs: list[Any]) -> str:
    """The runs an ambiguous name or prefix matches, by id and name."""
    shown = "; ".join(f"{r.info.run_id} ({r.info.run_name})" for r in runs[:AMBIGUOUS_SHOWN])
    return shown + (" and more" if len(runs) > AMBIGUOUS_SHOWN else "")


def get_run(tracker: Tracker, run_id: str) -> Any:
    """The MLflow run `run_id` names (a whole id or a unique prefix); TrackingError if this store has none."""
    full = resolve_run_id(tracker, run_id)
    try:
        return tracker.client.get_run(full)
    except MlflowException as exc:
        raise TrackingError(
            f"no run {run_id!r} in {tracker.uri}; list runs with `scoperag runs` "
            "(or pass the right --mlruns or --tracking-uri)"
        ) from exc


# -- prompt registry -------------------------------------------------------------------------------


def register_prompts(
    tracker: Tracker, run_id: str, prompts: Mapping[str, str], tags: Mapping[str, str], *, selected: bool = True
) -> dict[str, int]:
    """The version of `scoperag-<module>` holding each module's prompt, linked to the run; {module: version}.

    A prompt identical to an existing version is not registered again: the run points at that version.
    A new version of a rejected candidate is titled and tagged as a candidate (`role`).
    """
    role = "selected" if selected else "rejected candidate"
    registered = {
        module: prompt_version(
            tracker,
            prompt_name(module),
            template,
            f"run {run_id}: {role}",
            {"run_id": run_id, "module": module, "role": role, **tags},
        )
        for module, template in prompts.items()
    }
    run_tags = prompt_tags(registered)
    set_tags(tracker, run_id, run_tags)
    return {module: int(v.version) for module, v in registered.items()}


def prompt_version(tracker: Tracker, name: str, template: str, message: str, tags: Mapping[str, str]) -> Any:
    """The newest version of prompt `name` holding exactly `template`, else a new one (with `message` and `tags`)."""
    existing = _same_version(tracker, name, template)
    return existing if existing is not None else _register(tracker, name, template, message, tags)


def prompt_tags(registered: Mapping[str, Any]) -> dict[str, str]:
    """The run tags linking a run to its prompt versions ({module: version}): one per module, and the list the
    run page reads. (MlflowClient.link_prompt_version_to_run would write that list through the *global*
    tracking store, creating ./mlflow.db, so it is written as a tag.)"""
    tags = {f"{TAG_PROMPT}{m}": str(v.version) for m, v in registered.items()}
    tags[TraceTagKey.LINKED_PROMPTS] = update_linked_prompts_tag(None, list(registered.values()))
    return tags


def _register(tracker: Tracker, name: str, template: str, message: str, tags: Mapping[str, str]) -> Any:
    """A new version of prompt `name`. Two jobs creating the same new prompt at once (a sweep's children) race:
    the one that loses sees "already exists" and then uses the winner's prompt (its version if identical)."""

    def register() -> Any:
        return tracker.client.register_prompt(name=name, template=template, commit_message=message, tags=tags)

    try:
        return register()
    except MlflowException as exc:
        if exc.error_code != "RESOURCE_ALREADY_EXISTS":
            raise
    same = _same_version(tracker, name, template)  # the winner may have registered this very prompt
    return same if same is not None else register()


def _same_version(tracker: Tracker, name: str, template: str) -> Any:
    """The newest version of prompt `name` whose template is exactly `template`, else None."""
    try:
        versions = list(tracker.client.search_prompt_versions(name, max_results=1000))
    except MlflowException:  # no such prompt yet
        return None
    same = [v for v in versions if v.template == template]
    return max(same, key=lambda v: int(v.version)) if same else None


def run_prompt_versions(run: Any) -> dict[str, int]:
    """{module: prompt version} recorded on a run."""
    return {
        key.removeprefix(TAG_PROMPT): int(value)
        for key, value in run.data.tags.items()
        if key.startswith(TAG_PROMPT) and value.isdigit()
    }


def set_champion(tracker: Tracker, run_id: str) -> dict[str, int]:
    """Move alias `champion` of every module's prompt to this run's versions; {module: version}.

    A run whose candidate was rejected by the safety gates (or that did not finish) cannot be champion.
    """
    run = get_run(tracker, run_id)
    run_id = str(run.info.run_id)
    if run.info.status != "FINISHED":
        raise TrackingError(f"run {run_id} is {run.info.status}; only a finished run can be champion")
    if run.data.tags.get(TAG_SELECTED) != "true":
        reason = run.data.tags.get(TAG_REJECTION, "it was not selected")
        raise TrackingError(f"run {run_id}'s candidate was rejected ({reason}); it cannot be champion")
    versions = run_prompt_versions(run)
    if not versions:
        raise TrackingError(f"run {run_id} registered no prompt versions")
    for module, version in versions.items():
        tracker.client.set_prompt_alias(prompt_name(module), CHAMPION, version)
    tracker.client.set_experiment_tag(run.info.experiment_id, TAG_CHAMPION_RUN, run_id)
    return versions


# -- DSPy autologging -------------------------------------------------------------------------------


@contextlib.contextmanager
def dspy_autolog(tracker: Tracker, run_id: str, enabled: bool) -> Iterator[None]:
    """While inside, DSPy calls are traced into the run (mlflow.dspy.autolog); a no-op when not `enabled`.

    Autologging needs the global tracking URI and an active run: both are set here and restored after.
    The caller ends the run with `finish_run` inside the block, which closes the active run with its
    real status; a run still active on leaving is ended FAILED.
    """
    if not enabled:
        yield
        return
    import mlflow.dspy

    previous = mlflow.get_tracking_uri()
    previous_registry = mlflow.get_registry_uri()
    mlflow.set_tracking_uri(tracker.uri)
    mlflow.set_registry_uri(tracker.uri)
    mlflow.start_run(run_id=run_id)
    mlflow.dspy.autolog(log_traces=True, log_traces_from_compile=False, log_traces_from_eval=True, silent=True)
    try:
        yield
    finally:
        mlflow.dspy.autolog(disable=True, silent=True)
        with contextlib.suppress(Exception):  # best effort: traces are a debugging aid
            mlflow.flush_trace_async_logging()
        active = mlflow.active_run()
        if active is not None and active.info.run_id == run_id:
            mlflow.end_run(status="FAILED")
        mlflow.set_tracking_uri(previous)
        mlflow.set_registry_uri(previous_registry)


def _cut(value: str) -> str:
    return value if len(value) <= MAX_PARAM_CHARS else value[: MAX_PARAM_CHARS - 1] + "…"
