"""Exports for the export tests: a program with demos, a fully recorded save, edits of its files (the manifest
vouching for them or not) and the check that a load is refused with the program untouched."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dspy
import pytest

from pipeline.errors import ExportError
from pipeline.export import MANIFEST, PROGRAM, canonical_json, load_export, save_export
from pipeline.export.jsonio import sha256_hex
from pipeline.program.module import ScopedQA
from pipeline.settings import Settings
from pipeline.store import Store
from signatures.models import AnswerLine, GroupScores

# The scores an export records (any per-case metrics).
SCORES = {"case-1": {"recall": 1.0, "wrong_property_citations": 0.0}, "case-2": {"recall": 0.5}}


def with_demos(program: ScopedQA) -> ScopedQA:
    """`program` with hand-written demos on three predictors (as an optimizer would leave them)."""
    program.decompose.demos = [
        dspy.Example(question="Rent and tenant at Banda Lane?", sub_questions=["What is the rent?", "Who rents?"]),
        dspy.Example(question="Inspection result?", sub_questions=["What did the inspection find?"]),
    ]
    program.score.demos = [
        dspy.Example(groups=[], scores=[GroupScores(sub_question_index=0, scores=[8.0, 2.5])], augmented=True)
    ]
    program.answer.demos = [
        dspy.Example(
            sections_context=[],
            answers=[AnswerLine(sub_question_index=0, sentence_ids=[2], answer="Rent is ```1200``` a month")],
        )
    ]
    return program


def save_test_export(program: ScopedQA, out: Path, **kwargs: Any) -> Any:
    """save_export of `program` into `out` with a full record (settings, config, trainset hash, scores, run, LM);
    `kwargs` override any of them."""
    options: dict[str, Any] = {
        "settings": Settings(),
        "experiment_config": {"optimizer": "labeled_few_shot", "seed": 2},
        "trainset_hash": "sha256:" + "0" * 64,
        "scores": SCORES,
        "run_id": "run-123",
        "lm_name": "embedded:qwen2.5-coder-0.5b",
    }
    options.update(kwargs)
    return save_export(program, out, **options)


def read_json(path: Path) -> Any:
    """The JSON value of the file at `path`."""
    return json.loads(path.read_bytes())


def replace_vouched(export_dir: Path, name: str, data: bytes) -> None:
    """Overwrite one file and make the manifest vouch for it, so the check under test is the one that fires."""
    (export_dir / name).write_bytes(data)
    manifest = read_json(export_dir / MANIFEST)
    manifest["files"][name] = {"sha256": sha256_hex(data), "size": len(data)}
    (export_dir / MANIFEST).write_bytes(canonical_json(manifest))


def edit_program(export_dir: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """program.json changed by `edit`, with the manifest vouching for the change."""
    state = read_json(export_dir / PROGRAM)
    edit(state)
    replace_vouched(export_dir, PROGRAM, canonical_json(state))


def edit_manifest(export_dir: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """manifest.json changed by `edit`."""
    manifest = read_json(export_dir / MANIFEST)
    edit(manifest)
    (export_dir / MANIFEST).write_bytes(canonical_json(manifest))


def rejects(export_dir: Path, demo_store: Store, match: str) -> ExportError:
    """The ExportError loading `export_dir` raises (matching `match`), the fresh program left untouched and a way
    out given."""
    fresh = ScopedQA(demo_store)
    before = fresh.dump_state()
    with pytest.raises(ExportError, match=match) as caught:
        load_export(export_dir, fresh)
    assert fresh.dump_state() == before
    assert caught.value.fix  # every rejection says the way out
    return caught.value
