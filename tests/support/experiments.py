"""Helpers of the experiment tests: an MLflow store of its own, examples and a job config to run, the job run
with a scripted LM."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from experiments.runner import ProgressEvent, RunSummary, run_experiment
from pipeline.evaluation.examples import LabelledExample, write_examples
from pipeline.store import Store
from tests.optimizers.test_optimizers import demo_examples
from tests.support.fakes import Responder, cooperative, scripted_lm


def fresh_mlruns(template: Path, where: Path) -> Path:
    """A copy of the empty MLflow database `template` in `where` (an MLflow store of its own)."""
    where.mkdir(parents=True, exist_ok=True)
    shutil.copy(template, where / "mlflow.db")
    return where


def write_data(where: Path, val: list[LabelledExample] | None = None) -> Path:
    """train.jsonl (one example per case) and dev.jsonl (the other one per case) under `where`."""
    examples = demo_examples()
    train = [e for i, e in enumerate(examples) if i % 2 == 0]
    dev = val if val is not None else [e for i, e in enumerate(examples) if i % 2 == 1]
    write_examples(where / "train.jsonl", train)
    write_examples(where / "dev.jsonl", dev)
    return where


def write_config(where: Path, traces: Path, *, extra: str = "", data: str = "", budget: int = 200, **top: str) -> Path:
    """job.toml under `where`: a tiny BootstrapFewShot job over `traces` on the scripted LM, `top` keys, `data`
    lines and `extra` tables added."""
    fields = {
        "name": '"tiny"',
        "optimizer": '"bootstrap_few_shot"',
        "modules": '["answer", "score"]',
        # the scripted LM answers the same with or without demos: no improvement to require
        "require_improvement": "false",
        **top,
    }
    head = "\n".join(f"{k} = {v}" for k, v in fields.items())
    text = f"""{head}
[data]
traces_dir = "{traces}"
train_size = 4
val_size = 4
{data}
[lm]
task = "openai/scripted-test"
[metric]
bootstrap_threshold = 0.0
[budget]
max_lm_calls = {budget}
[tracking]
experiment = "tests"
{extra}
"""
    if "[optimizer_params]" not in extra:
        text += "[optimizer_params]\nmax_bootstrapped_demos = 1\n"
    path = where / "job.toml"
    path.write_text(text)
    return path


def run(
    config: Path,
    mlruns: Path,
    store: Store,
    respond: Responder | None = None,
    progress: Callable[[ProgressEvent], None] | None = None,
    lm: Any = None,
) -> RunSummary:
    """run_experiment of `config` with the scripted LM (answering with `respond`) or `lm` for every LM spec."""
    made = lm if lm is not None else scripted_lm(respond or cooperative())
    return run_experiment(config, mlruns=mlruns, store=store, lm_factory=lambda spec: made, progress=progress)
