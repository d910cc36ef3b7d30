"""A compiled-looking export for serving tests: the program with one decomposition demo a fake LM can see."""

from __future__ import annotations

from pathlib import Path

import dspy

from pipeline.export import save_export
from pipeline.program.module import ScopedQA
from pipeline.settings import Settings
from pipeline.store import Store

# The demo's question: an LM shown the whole conversation finds it only in a compiled program's prompts.
DEMO_QUESTION = "Which demo question marks the compiled program?"


def save_program_export(
    program: ScopedQA,
    out: Path,
    trainset_hash: str = "sha256:" + "0" * 64,
    run_id: str | None = None,
    lm_name: str | None = "fake",
) -> Path:
    """`out`, an export of `program` as written (no optimizer, no scores) under the default settings."""
    save_export(
        program,
        out,
        settings=Settings(),
        experiment_config={"optimizer": "none"},
        trainset_hash=trainset_hash,
        scores={},
        run_id=run_id,
        lm_name=lm_name,
    )
    return out


def save_demo_export(store: Store, out: Path, trainset_hash: str = "sha256:" + "1" * 64) -> Path:
    """`out`, an export of ScopedQA over `store` whose decomposition carries the DEMO_QUESTION demo."""
    program = ScopedQA(store)
    program.decompose.demos = [dspy.Example(question=DEMO_QUESTION, sub_questions=[DEMO_QUESTION])]
    save_export(
        program,
        out,
        settings=Settings(),
        experiment_config={"optimizer": "none"},
        trainset_hash=trainset_hash,
        scores={"chip": {"recall": 1.0}},
        lm_name="fake",
    )
    return out
