"""Reading logged runs back: the runs table, exporting a run's program, moving the champion alias."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from experiments.reference import reference_dir
from experiments.store import open_tracker
from experiments.tracking import (
    TAG_CHAMPION_RUN,
    TAG_CONFIG_HASH,
    TAG_CONFIG_NAME,
    TAG_OPTIMIZER,
    TAG_REJECTION,
    TAG_SELECTED,
    TAG_STAGE,
    TAG_STEP,
    TAG_STOP,
    Tracker,
    artifact_dir,
    find_experiment_ids,
    get_run,
    is_local_store,
    resolve_run_id,
    run_prompt_versions,
    set_champion,
)
from optimizers.params import MODULES
from pipeline.errors import ScopeRagError, TrackingError
from pipeline.evaluation.examples import CASES
from pipeline.export import MANIFEST, PROGRAM, PROMPTS, ExportManifest, validate_export_bytes
from pipeline.export.fs import check_target, publish_dir, staged_dir, write_files
from pipeline.export.jsonio import read_limited
from pipeline.program.lm import parse_lm_spec

SUMMARY_CASES = (*CASES, "all")


def open_existing(mlruns: Path, uri: str | None = None) -> Tracker:
    """The tracker of an existing store (`uri`, default the project's own under `mlruns`, made from its reference
    runs when there is none yet); TrackingError (with the way out) when the project has neither."""
    local = uri is None or is_local_store(uri, Path(mlruns))
    if local and not (Path(mlruns) / "mlflow.db").is_file() and not reference_dir(Path(mlruns)).is_dir():
        raise TrackingError(
            f"no MLflow store at {mlruns}/mlflow.db; run `scoperag optimize experiments/<config>.toml` first "
            "(or name a tracking server with --tracking-uri or MLFLOW_TRACKING_URI)"
        )
    return open_tracker(mlruns, uri)


def list_runs(mlruns: Path, experiment: str | None = None, uri: str | None = None) -> Any:
    """One row per scoperag run, newest first (pandas DataFrame): the model it compiled for, status, selection, per
    case the selection metric before/after (the composite, or a stage job's stage metric), safety counts after,
    LM calls and the prompt versions it registered."""
    import pandas as pd

    tracker = open_existing(mlruns, uri)
    ids = find_experiment_ids(tracker, experiment)
    names = {str(e.experiment_id): e for e in tracker.client.search_experiments()}
    rows = []
    runs: list[Any] = []
    if ids:
        runs = list(tracker.client.search_runs(ids, order_by=["attributes.start_time DESC"], max_results=1000))
    for run in runs:
        tags, metrics = run.data.tags, run.data.metrics
        if TAG_CONFIG_HASH not in tags:
            continue  # not a scoperag job
        experiment_entity = names.get(str(run.info.experiment_id))
        champion = experiment_entity is not None and experiment_entity.tags.get(TAG_CHAMPION_RUN) == run.info.run_id
        measure = run_measure(run)
        row: dict[str, Any] = {
            "run_id": run.info.run_id,
            "experiment": experiment_entity.name if experiment_entity is not None else run.info.experiment_id,
            "config": tags.get(TAG_CONFIG_NAME, ""),
            "stage": measure.stage,
            "traces": measure.traces,
            "optimizer": tags.get(TAG_OPTIMIZER, ""),
            "model": compiled_for(run.data.params.get("lm.task")),
            "status": run.info.status,
            "selected": tags.get(TAG_SELECTED, ""),
            "champion": champion,
            "started": datetime.fromtimestamp(run.info.start_time / 1000, UTC).strftime("%Y-%m-%d %H:%M"),
        }
        # per case, the metric the run selects by: the composite, or a stage job's own stage metric
        prefix, value = ("stage.", "value") if tags.get(TAG_STAGE) else ("", "composite")
        for case in SUMMARY_CASES:
            row[f"{case} before"] = metrics.get(f"{prefix}baseline.{case}.{value}")
            row[f"{case} after"] = metrics.get(f"{prefix}result.{case}.{value}")
        row.update(_verdict_fields(run))
        wrong = "stage.result.all.wrong_property" if prefix else "result.all.wrong_property_citations"
        row["wrong_property_citations"] = metrics.get(wrong)
        row["invalid_ids"] = metrics.get(f"{prefix}result.all.invalid_ids")
        row["lm_calls"] = metrics.get("lm_calls.total")
        row["lm_calls_new"] = metrics.get("lm_calls.new")
        versions = run_prompt_versions(run)
        row["prompts"] = " ".join(f"{m}:v{versions[m]}" for m in MODULES if m in versions)
        row["note"] = tags.get(TAG_STOP, "")
        rows.append(row)
    return pd.DataFrame(rows)


def _verdict_fields(run: Any) -> dict[str, Any]:
    """What the compact runs table shows of a run: validation examples per case, the selection metric
    before and after, the paired difference with its 95% CI, and the verdict with its reason."""
    tags, metrics = run.data.tags, run.data.metrics
    stage = tags.get(TAG_STAGE)
    prefix = "stage." if stage else ""
    value = "value" if stage else "composite"
    fields: dict[str, Any] = {
        f"n {case}": _count(metrics.get(f"compare.{case}.n", metrics.get(f"{prefix}baseline.{case}.n")))
        for case in CASES
    }
    fields["before"] = metrics.get(f"{prefix}baseline.all.{value}")
    fields["after"] = metrics.get(f"{prefix}result.all.{value}")
    fields["difference"] = metrics.get("compare.all.difference")
    fields["ci_low"] = metrics.get("compare.all.ci_low")
    fields["ci_high"] = metrics.get("compare.all.ci_high")
    fields["runs"] = exported_way(tags)
    if run.info.status != "FINISHED":
        fields["verdict"] = run.info.status.lower()
        fields["reason"] = tags.get(TAG_STOP, "")
    elif fields["runs"].startswith("floor"):
        # the exported program runs the step by plain code: "selected" would name a prompt it never runs
        fields["verdict"] = f"runs {fields['runs']}"
        lm = "the compiled LM" if tags.get(TAG_SELECTED) == "true" else "the LM"
        fields["reason"] = f"{lm} did not beat it"
    elif tags.get(TAG_SELECTED) == "false":
        fields["verdict"], fields["reason"] = "rejected", tags.get(TAG_REJECTION, "")
    else:
        fields["verdict"], fields["reason"] = "selected", ""
    return fields


def compiled_for(task: str | None) -> str:
    """The model a run compiled for, from its logged `lm.task`: "embedded:0.5b" or "embedded:1.5b" for an embedded
    model (plain "embedded" is the 0.5B), else the spec as logged; "" for a run that logged none."""
    if not task:
        return ""
    try:
        spec = parse_lm_spec(task)
    except ScopeRagError:  # a spec an older or newer version wrote: shown as it was logged
        return task
    return f"embedded:{spec.size}" if spec.kind == "embedded" else spec.value


def exported_way(tags: Any) -> str:
    """What the run's exported program runs for what the job optimised: "compiled" (the candidate), "uncompiled"
    (the baseline, the candidate rejected), or, for a stage job, "floor <name>" when the LM lost to its floor."""
    step = tags.get(TAG_STEP)
    if tags.get(TAG_STAGE) and step and step != "lm":
        return f"floor {step}"
    return "uncompiled" if tags.get(TAG_SELECTED) == "false" else "compiled"


def _count(value: float | None) -> int | None:
    return None if value is None else int(value)


CASE_INITIALS = "/".join("".join(word[0] for word in case.split("_")) for case in CASES)


def compact_lines(table: Any, width: int = 80) -> list[str]:
    """The runs table in `width` columns, two lines per run, nothing cut: the run id, start time, validation
    examples per case, the metric before and after and the difference with its 95% CI; then the config, the model
    it compiled for and what its exported program runs (the verdict with its reason), wrapped under it."""
    import textwrap

    def number(value: Any, sign: str = "") -> str:
        return "" if value is None or value != value else f"{value:{sign}.2f}"

    lines = [f"{'run':<8} {'started':<11} {'val n/case':<11} {'before':>6} {'after':>6}  after-before [95% CI]"]
    for row in table.to_dict(orient="records"):
        counts = [row.get(f"n {case}") for case in CASES]
        shown = "/".join("-" if c is None or c != c else str(int(c)) for c in counts)
        interval = ""
        if row.get("difference") is not None and row["difference"] == row["difference"]:
            low, high = number(row["ci_low"], "+"), number(row["ci_high"], "+")
            interval = f"{number(row['difference'], '+')} [{low}, {high}]"
        started = str(row["started"])[5:]
        before, after = number(row.get("before")), number(row.get("after"))
        lines.append(
            f"{str(row['run_id'])[:8]:<8} {started:<11} {shown:<11} {before:>6} {after:>6}  {interval}".rstrip()
        )
        verdict = str(row["verdict"]) + (f" ({short_reason(str(row['reason']))})" if row.get("reason") else "")
        name = str(row["config"]) + (" (champion)" if row.get("champion") else "")
        model = f" for {row['model']}" if row.get("model") else ""
        # a config's name is never split (its hyphens are no place to break)
        wrapped = textwrap.wrap(
            f"{name}{model}: {verdict}", width, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False
        )
        lines.extend(wrapped)
    notes = (
        f"val n/case: validation examples of {CASE_INITIALS} = {', '.join(CASES)}",
        "before/after: the selection metric on validation; after-before: paired, with its 95% bootstrap CI",
    )
    lines.extend(line for note in notes for line in textwrap.wrap(note, width, subsequent_indent="  "))
    return lines


def short_reason(reason: str) -> str:
    """A rejection reason without what the table's own columns already show (the interval)."""
    if reason.startswith("no improvement"):
        return "no improvement"
    return reason.removeprefix("safety gate failed on validation: ")


def export_run(
    run_id: str,
    out_dir: Path,
    mlruns: Path,
    *,
    overwrite: bool = False,
    uri: str | None = None,
    baseline: bool = False,
) -> ExportManifest:
    """Copy the run's logged export to `out_dir` after validating every byte; atomic (all or nothing).

    A run whose candidate was rejected logged the uncompiled baseline as its export: that is copied
    only when `baseline` asks for it (TrackingError naming the reason otherwise).
    """
    out_dir = Path(out_dir)
    tracker = open_existing(mlruns, uri)
    run_id = resolve_run_id(tracker, run_id)
    tags = get_run(tracker, run_id).data.tags
    if tags.get(TAG_SELECTED) == "false" and not baseline:
        reason = tags.get(TAG_REJECTION, "it was not selected")
        raise TrackingError(
            f"run {run_id}'s candidate was rejected ({reason}), so its export is the uncompiled baseline; "
            "pass --baseline to export that anyway, or export a selected run (see `scoperag runs`)"
        )
    check_target(out_dir, overwrite=overwrite)
    with tempfile.TemporaryDirectory(prefix="scoperag-export-") as scratch:
        source = artifact_dir(tracker, run_id, "export", Path(scratch))
        files = {name: read_limited(source / name, f"{source}/{name}") for name in (MANIFEST, PROGRAM, PROMPTS)}
        contents = validate_export_bytes(files[MANIFEST], files[PROGRAM], files[PROMPTS], where=str(source))
    if contents.manifest.run_id != run_id:
        raise TrackingError(
            f"the export logged by run {run_id} names run {contents.manifest.run_id!r}; it was not written by this run"
        )
    with staged_dir(out_dir) as staging:
        write_files(staging, files)
        publish_dir(staging, out_dir, overwrite=overwrite)
    return contents.manifest


def champion(run_id: str, mlruns: Path, uri: str | None = None) -> dict[str, int]:
    """Move alias `champion` of each module's prompt to the versions run `run_id` registered."""
    return set_champion(open_existing(mlruns, uri), run_id)


def run_examples(tracker: Tracker, run_id: str, scratch: Path) -> tuple[Any, str]:
    """A run's per-example results of its compiled program (DataFrame) and the metric column they rank by."""
    import pandas as pd

    path = artifact_dir(tracker, run_id, "evaluation", scratch) / "result-examples.csv"
    if not path.is_file():
        raise TrackingError(f"run {run_id} logged no evaluation/result-examples.csv (did it finish?)")
    frame = pd.read_csv(path, dtype={"id": str})
    metric = "value" if "value" in frame.columns else "composite"
    return frame, metric


@dataclass(frozen=True)
class Measure:
    """What a run measured, from its params and tags: the stage (or the whole program), the metric and its weights,
    the documents, the labelled examples and the validation split."""

    stage: str
    metric: str
    weights: tuple[tuple[str, str], ...]
    corpus: str
    traces: str
    split: str
    cases: str
    generation: str

    def describe(self) -> str:
        """ "the decompose stage metric on datasets/sec-10q/traces (dev)"."""
        return f"the {self.metric} on {self.traces} ({self.split})"


def run_measure(run: Any) -> Measure:
    """What `run` measured (a run logged before the stage metric's weights were recorded compares by stage)."""
    params, tags = run.data.params, run.data.tags
    stage = tags.get(TAG_STAGE) or params.get("stage") or "end_to_end"
    prefix = "metric.weights." if stage == "end_to_end" else "stage_metric."
    weights = tuple(sorted((k.removeprefix(prefix), v) for k, v in params.items() if k.startswith(prefix)))
    corpus = " ".join(filter(None, (params.get("data.corpus_dir"), params.get("data.corpus_manifest"))))
    return Measure(
        stage=stage,
        metric="composite (end to end)" if stage == "end_to_end" else f"{stage} stage metric",
        weights=weights,
        corpus=corpus,
        traces=params.get("data.traces_dir", "?"),
        split=params.get("data.val_split", "?"),
        cases=params.get("data.cases", ""),
        generation=params.get("index_generation", ""),
    )


def measure_conflicts(a: Measure, b: Measure) -> list[str]:
    """Why two runs' scores cannot be compared: they measured different things (each reason in words)."""
    reasons = []
    if a.stage != b.stage:
        reasons.append(f"run A measured the {a.metric} and run B the {b.metric}")
    elif a.weights and b.weights and a.weights != b.weights:
        differ = sorted({k for k, _ in set(a.weights) ^ set(b.weights)})
        reasons.append(f"their {a.metric} weighs its parts differently ({', '.join(differ)})")
    if a.corpus != b.corpus:
        reasons.append(f"run A read {a.corpus or '?'} and run B {b.corpus or '?'}")
    if a.traces != b.traces:
        reasons.append(f"run A was scored on {a.traces} and run B on {b.traces}")
    return reasons


def compare_runs(run_a: str, run_b: str, mlruns: Path, seed: int = 0, uri: str | None = None) -> Any:
    """Run B's compiled program minus run A's, paired over the validation examples both scored (DataFrame
    with a 95% bootstrap CI per case and overall; `attrs` say what was measured and what the pairing left out).
    TrackingError when the runs measured different things (stage, metric, documents, labelled examples) or share
    no example."""
    from pipeline.evaluation.compare import compare_paired, differences_frame

    tracker = open_existing(mlruns, uri)
    run_a, run_b = resolve_run_id(tracker, run_a), resolve_run_id(tracker, run_b)
    entity_a, entity_b = get_run(tracker, run_a), get_run(tracker, run_b)
    measure_a, measure_b = run_measure(entity_a), run_measure(entity_b)
    conflicts = measure_conflicts(measure_a, measure_b)
    if conflicts:
        raise TrackingError(
            f"runs {run_a[:8]} (A) and {run_b[:8]} (B) measured different things: {'; '.join(conflicts)}. "
            "A difference between them would mean nothing: compare two runs of the same stage on the same "
            "labelled examples (`scoperag runs` lists each run's config)"
        )
    with tempfile.TemporaryDirectory(prefix="scoperag-compare-") as scratch:
        frame_a, metric_a = run_examples(tracker, run_a, Path(scratch) / "a")
        frame_b, metric_b = run_examples(tracker, run_b, Path(scratch) / "b")
    if metric_a != metric_b:
        raise TrackingError(
            f"run {run_a} is scored by {metric_a!r} and run {run_b} by {metric_b!r}: compare runs of the same stage"
        )
    paired = frame_a[["id", "case", metric_a]].merge(frame_b[["id", metric_b]], on="id", suffixes=("_a", "_b"))
    # An example no weighted metric applies to has no score (NaN): it is left out of the pairs.
    paired = paired.dropna(subset=[f"{metric_a}_a", f"{metric_b}_b"])
    if paired.empty:
        raise TrackingError(f"runs {run_a} and {run_b} scored no example in common: compare runs on the same data")
    differences = compare_paired(
        list(paired["case"]),
        [float(v) for v in paired[f"{metric_a}_a"]],
        [float(v) for v in paired[f"{metric_b}_b"]],
        seed=seed,
    )
    table = differences_frame(differences)
    notes = []
    if len(paired) < max(len(frame_a), len(frame_b)):
        notes.append(
            f"paired over the {len(paired)} examples both scored (A scored {len(frame_a)}, B {len(frame_b)}); "
            "the others are left out"
        )
    if measure_a.split != measure_b.split or measure_a.cases != measure_b.cases:
        notes.append(
            f"A was validated on {measure_a.split} {measure_a.cases}, B on {measure_b.split} {measure_b.cases}"
        )
    if measure_a.generation != measure_b.generation:
        notes.append("their indexes were built separately from the same documents")
    table.attrs.update(  # type: ignore[attr-defined]
        {
            "metric": metric_a,
            "measure": measure_a.describe(),
            "run_a": run_a,
            "run_b": run_b,
            "sides": {"A": compared_side(entity_a), "B": compared_side(entity_b)},
            "notes": notes,
        }
    )
    return table


def compared_side(run: Any) -> str:
    """What one side of a comparison is: its config, the compiled candidate its scores are of (with its prompt
    versions) and what its exported program runs (the candidate, the uncompiled baseline, or a step's floor)."""
    tags = run.data.tags
    versions = run_prompt_versions(run)
    prompts = " ".join(f"{m}:v{versions[m]}" for m in MODULES if m in versions)
    measured = "its compiled candidate" + (f" (prompts {prompts})" if prompts else "")
    return f"{tags.get(TAG_CONFIG_NAME, '')}: scored {measured}; its exported program runs {exported_way(tags)}"
