"""A job's data: the index, case-stratified train and validation examples resolved against it, and their hash."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from experiments.config import ExperimentConfig
from pipeline.errors import ExperimentConfigError, IndexNotFoundError
from pipeline.evaluation.examples import LabelledExample, load_examples, missing_cases, stratified_sample
from pipeline.evaluation.labels import ResolvedExample, resolve_example
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
    other = sorted({e.corpus for e in (*train, *val)} - {store.manifest.corpus})
    if other:
        raise ExperimentConfigError(
            str(config_path),
            f"the traces are about corpus {', '.join(other)} but the index holds {store.manifest.corpus!r}; "
            "point data.index_dir at an index of the traces' corpus",
            "data.index_dir",
        )
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
        raise ExperimentConfigError(
            str(config_path),
            f"no index at {config.data.index_dir}; build it with "
            f"`scoperag index {config.data.corpus_dir} --out {config.data.index_dir}`",
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


def _data_hash(train: Sequence[LabelledExample], val: Sequence[LabelledExample], store: Store) -> str:
    """sha256 over the train and validation examples (full content) and the index generation."""
    digest = hashlib.sha256()
    for name, examples in (("train", train), ("val", val)):
        digest.update(name.encode())
        for example in examples:
            digest.update(example.model_dump_json().encode())
    digest.update(store.manifest.generation.encode())
    return "sha256:" + digest.hexdigest()
