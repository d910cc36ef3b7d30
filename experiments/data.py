"""A job's data: the index, case-stratified train and validation examples resolved against it, and their hash; and
the job prepared to run (its data and its plan), which `optimize --dry-run` prints without importing MLflow."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments.config import ExperimentConfig
from experiments.estimate import JobPlan, job_gauge, plan_job
from pipeline.errors import ExperimentConfigError, IndexNotFoundError
from pipeline.evaluation.examples import LabelledExample, load_examples, missing_cases, stratified_sample
from pipeline.evaluation.labels import ResolvedExample, resolve_example
from pipeline.evaluation.stage_inputs import (
    REQUIRED_LABEL,
    StageExample,
    gold_chunk_rows,
    labelled_for,
    needs_gold_rows,
    stage_example,
)
from pipeline.program.lm import parse_lm_spec
from pipeline.program.lm.factory import DEFAULT_EMBEDDED
from pipeline.program.lm.timings import load_rates
from pipeline.store import Store, open_store


@dataclass(frozen=True)
class JobData:
    """Train and validation examples (labelled and resolved) and the hash that identifies them."""

    train: list[LabelledExample]
    val: list[LabelledExample]
    resolved_train: list[ResolvedExample]
    resolved_val: list[ResolvedExample]
    data_hash: str


def load_job_data(config: ExperimentConfig, config_path: Path, store: Store) -> JobData:
    """The job's examples; ExperimentConfigError when a case is missing or the traces do not fit the index."""
    train, val = _load_splits(config, config_path)
    _check_corpus([*train, *val], store, config_path)
    return JobData(
        train=train,
        val=val,
        resolved_train=[resolve_example(e, store) for e in train],
        resolved_val=[resolve_example(e, store) for e in val],
        data_hash=_data_hash(train, val, store),
    )


def open_index(config: ExperimentConfig, config_path: Path) -> Store:
    """The config's index; ExperimentConfigError saying how to build it when there is none."""
    try:
        return open_store(config.data.index_dir)
    except IndexNotFoundError:
        data = config.data
        manifest = f" --manifest {data.corpus_manifest}" if data.corpus_manifest else ""
        raise ExperimentConfigError(
            str(config_path),
            f"no index at {data.index_dir}; build it with "
            f"`scoperag index {data.corpus_dir}{manifest} --out {data.index_dir}`",
            "data.index_dir",
        ) from None


def _load_splits(config: ExperimentConfig, config_path: Path) -> tuple[list[LabelledExample], list[LabelledExample]]:
    out = []
    for split, size, seed in (
        (config.data.train_split, config.data.train_size, config.seed),
        (config.data.val_split, config.data.val_size, config.seed + 1),
    ):
        path = config.data.traces_dir / f"{split}.jsonl"
        examples = load_examples(path, cases=config.data.cases)
        missing = missing_cases(examples, config.data.cases)
        if missing:
            raise ExperimentConfigError(
                str(config_path),
                f"{path} has no example of case(s) {', '.join(missing)}: every case must be in train and "
                "validation (or narrow data.cases)",
                "data.cases",
            )
        out.append(stratified_sample(examples, size, seed))
    train, val = out
    overlap = {e.id for e in train} & {e.id for e in val}
    if overlap:
        raise ExperimentConfigError(
            str(config_path), f"{len(overlap)} example(s) are in both splits, e.g. {sorted(overlap)[0]}", "data"
        )
    return train, val


def _data_hash(
    train: Sequence[LabelledExample], val: Sequence[LabelledExample], store: Store, stage: str = "end_to_end"
) -> str:
    """sha256 over the train and validation examples (full content), the index generation and a stage's name."""
    digest = hashlib.sha256()
    if stage != "end_to_end":
        digest.update(stage.encode())
    for name, examples in (("train", train), ("val", val)):
        digest.update(name.encode())
        for example in examples:
            digest.update(example.model_dump_json().encode())
    digest.update(store.manifest.generation.encode())
    return "sha256:" + digest.hexdigest()


@dataclass(frozen=True)
class StageData:
    """A stage job's train, validation and (optional) test examples with their stage inputs, and their hash."""

    train: list[StageExample]
    val: list[StageExample]
    test: list[StageExample]
    data_hash: str


def load_stage_data(config: ExperimentConfig, config_path: Path, store: Store) -> StageData:
    """Case-stratified examples labelled for the config's stage; ExperimentConfigError naming the trace file
    and the label field when a split has too few, or lacks a case."""
    stage = config.stage
    if stage == "end_to_end":
        raise ValueError("load_stage_data is for stage jobs; end-to-end jobs use load_job_data")
    data = config.data
    roles: list[tuple[str, str, int, int]] = [
        ("train", data.train_split, data.train_size, config.seed),
        ("val", data.val_split, data.val_size, config.seed + 1),
    ]
    if data.test_split is not None:
        roles.append(("test", data.test_split, data.test_size, config.seed + 2))
    picked: dict[str, list[StageExample]] = {"test": []}
    cache: dict[tuple[str, ...], Any] = {}  # documents' chunks and facts found in them, shared by every split
    for role, split, size, seed in roles:
        path = data.traces_dir / f"{split}.jsonl"
        examples = load_examples(path, cases=data.cases)
        _check_corpus(examples, store, config_path)
        resolved = [resolve_example(e, store) for e in examples]
        # Gold rows are found only where the label check reads them (score, answer) and for the examples sampled.
        rows = [gold_chunk_rows(store, r, cache) if needs_gold_rows(stage, r.example) else None for r in resolved]
        needed = size if role != "test" else 1
        usable = labelled_for(stage, examples, [r or frozenset() for r in rows], needed, str(path))
        missing = missing_cases([examples[i] for i in usable], data.cases)
        if missing:
            raise ExperimentConfigError(
                str(path),
                f"no example of case(s) {', '.join(missing)} is labelled for stage {stage} "
                f"({REQUIRED_LABEL[stage]}): narrow data.cases or label them",
                "data.cases",
            )
        by_id = {examples[i].id: i for i in usable}
        sample = stratified_sample([examples[i] for i in usable], size, seed)
        chosen = [by_id[e.id] for e in sample]
        found = {i: _gold_rows(stage, store, resolved[i], rows[i], cache) for i in chosen}
        picked[role] = [stage_example(store, resolved[i], found[i]) for i in chosen]
    train, val, test = picked["train"], picked["val"], picked["test"]
    return StageData(
        train, val, test, _data_hash([i.example for i in train], [i.example for i in val], store, stage=stage)
    )


def _gold_rows(
    stage: str, store: Store, resolved: ResolvedExample, rows: frozenset[int] | None, cache: dict[tuple[str, ...], Any]
) -> frozenset[int]:
    """A sampled example's gold chunk rows: those found for its label check, else found now; none for decompose,
    whose metric reads gold documents and pages, never chunks (finding them reads every figure of a filing)."""
    if rows is not None:
        return rows
    return frozenset() if stage == "decompose" else gold_chunk_rows(store, resolved, cache)


def _check_corpus(examples: Sequence[LabelledExample], store: Store, config_path: Path) -> None:
    other = sorted({e.corpus for e in examples} - {store.manifest.corpus})
    if other:
        raise ExperimentConfigError(
            str(config_path),
            f"the traces are about corpus {', '.join(other)} but the index holds {store.manifest.corpus!r}; "
            "point data.index_dir at an index of the traces' corpus",
            "data.index_dir",
        )


@dataclass(frozen=True)
class PreparedJob:
    """A job ready to run: its index, its examples (end to end or for its stage) and its plan."""

    store: Store
    data: JobData | None
    stage_data: StageData | None
    plan: JobPlan


def prepare_job(
    config: ExperimentConfig,
    config_path: Path,
    store: Store | None = None,
    timings: Path | None = None,
    contention: float | None = None,
) -> PreparedJob:
    """Open the index, load and check the examples, and plan the job (its phases, LM calls and time, at the
    rates measured here in `timings` when there are any, scaled by `contention`: by default the load the job's
    local work will meet now); no LM is made and no run is started."""
    store = store if store is not None else open_index(config, config_path)
    data = load_job_data(config, config_path, store) if config.stage == "end_to_end" else None
    stage_data = load_stage_data(config, config_path, store) if data is None else None
    examples: dict[str, list[str]] = {}
    if data is not None:
        examples = {"train": [e.case for e in data.train], "val": [e.case for e in data.val]}
        if config.data.test_split:
            examples["test"] = [e.case for e in test_examples(config)]
    elif stage_data is not None:
        examples = {
            role: [i.example.case for i in items] for role, items in stage_data.__dict__.items() if role != "data_hash"
        }
    spec = parse_lm_spec(config.lm.task)
    embedded = spec.kind == "embedded"
    rates = load_rates(timings, config.lm.task, config.lm.num_threads) if timings is not None else None
    if contention is None:
        gauge = job_gauge(embedded, config.lm.threads)
        contention = gauge.expected() if gauge is not None else 1.0
    # benchmarks/ timed the default embedded model only: another's speed is unknown until measured here
    benchmarked = embedded and spec.size == DEFAULT_EMBEDDED
    plan = plan_job(config, examples, embedded=benchmarked, rates=rates, contention=contention)
    return PreparedJob(store, data, stage_data, plan)


def test_examples(config: ExperimentConfig) -> list[LabelledExample]:
    """An end-to-end job's test examples (empty without data.test_split)."""
    split = config.data.test_split
    if split is None:
        return []
    path = config.data.traces_dir / f"{split}.jsonl"
    return stratified_sample(load_examples(path, cases=config.data.cases), config.data.test_size, config.seed + 2)
