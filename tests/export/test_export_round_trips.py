"""The scoperag-program/v3 export written and read back: round trips byte for byte, what the manifest,
program.json and prompts.md hold, and writing (atomic overwrite, refused outputs and values)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dspy
import pytest

from pipeline.errors import ExportError
from pipeline.export import MANIFEST, PROGRAM, PROMPTS, load_export, read_export, render_prompts
from pipeline.export.jsonio import sha256_hex
from pipeline.program.module import ScopedQA
from pipeline.settings import Settings
from pipeline.store import Store
from tests.support.export_edits import SCORES, read_json, save_test_export


def test_round_trip_into_fresh_program(export_dir: Path, program: ScopedQA, demo_store: Store) -> None:
    fresh = ScopedQA(demo_store)
    loaded, manifest = load_export(export_dir, fresh)
    assert loaded is not fresh and fresh.decompose.demos == []
    assert loaded.dump_state() == program.dump_state()
    assert loaded.store is demo_store  # the heavy store is shared, not copied
    assert manifest.run_id == "run-123"


def test_export_load_export_is_byte_identical(export_dir: Path, tmp_path: Path, demo_store: Store) -> None:
    loaded = load_export(export_dir, ScopedQA(demo_store)).program
    again = tmp_path / "again"
    save_test_export(loaded, again)
    for name in (PROGRAM, PROMPTS):
        assert (again / name).read_bytes() == (export_dir / name).read_bytes()


def test_manifest_records_versions_config_scores_and_hashes(export_dir: Path) -> None:
    manifest = read_json(export_dir / MANIFEST)
    assert manifest["format"] == "scoperag-program/v3"
    assert manifest["versions"]["dspy"] == dspy.__version__
    assert manifest["versions"]["lm"] == "embedded:qwen2.5-coder-0.5b"
    # the program's settings once, under "program" (the ones it runs), not also inside the job's settings
    assert manifest["config"]["settings"] == Settings().model_dump(mode="json", exclude={"program"})
    assert manifest["config"]["experiment"] == {"optimizer": "labeled_few_shot", "seed": 2}
    assert manifest["config"]["program"]["relevance_threshold"] == 5.0
    assert manifest["scores"] == SCORES
    assert manifest["run_id"] == "run-123"
    for name in (PROGRAM, PROMPTS):
        data = (export_dir / name).read_bytes()
        assert manifest["files"][name] == {"sha256": sha256_hex(data), "size": len(data)}


def test_program_json_is_dspy_state_without_lm(export_dir: Path) -> None:
    state = read_json(export_dir / PROGRAM)
    assert set(state) == {"decompose", "score", "answer", "hyde", "compute", "judge", "choose", "metadata"}
    assert set(state["decompose"]) == {"traces", "train", "demos", "signature", "lm"}
    assert all(state[name]["lm"] is None for name in ("decompose", "score", "answer", "hyde", "judge", "choose"))
    assert state["decompose"]["demos"][1] == {
        "question": "Inspection result?",
        "sub_questions": ["What did the inspection find?"],
    }


def test_program_json_loads_with_plain_dspy(export_dir: Path, program: ScopedQA, demo_store: Store) -> None:
    fresh = ScopedQA(demo_store)
    fresh.load(str(export_dir / PROGRAM))  # DSPy's own loader reads the same file (json, never pickle)
    assert fresh.dump_state() == program.dump_state()


def test_prompts_md_is_readable_and_generated(export_dir: Path) -> None:
    text = (export_dir / PROMPTS).read_text(encoding="utf-8")
    assert "## decompose" in text and "### Demos (2)" in text and "Break the question into" in text
    assert "- question (input): prefix" in text and "- sub_questions (output)" in text
    assert "````json" in text  # a demo holding ``` gets a longer fence
    assert text == render_prompts(read_json(export_dir / PROGRAM))


def test_lm_set_on_a_predictor_is_not_exported(program: ScopedQA, tmp_path: Path) -> None:
    program.hyde.lm = dspy.LM("openai/gpt-4o-mini", api_base="http://evil.example", api_key="sk-secret")
    save_test_export(program, tmp_path / "out")
    raw = (tmp_path / "out" / PROGRAM).read_text(encoding="utf-8")
    assert "evil.example" not in raw and "sk-secret" not in raw and "gpt-4o-mini" not in raw
    assert program.hyde.lm is not None  # the caller's program is not changed by saving


# -- writing ------------------------------------------------------------------------------------


def test_refuses_to_overwrite_a_non_empty_directory(export_dir: Path, program: ScopedQA) -> None:
    before = {p.name: p.read_bytes() for p in export_dir.iterdir()}
    with pytest.raises(ExportError, match=r"already exists and is not empty.*--overwrite"):
        save_test_export(program, export_dir)
    assert {p.name: p.read_bytes() for p in export_dir.iterdir()} == before


def test_overwrite_replaces_atomically_and_leaves_no_temp(export_dir: Path, program: ScopedQA) -> None:
    (export_dir / "stale.txt").write_text("old", encoding="utf-8")
    save_test_export(program, export_dir, run_id="run-456", overwrite=True)
    assert sorted(p.name for p in export_dir.iterdir()) == [MANIFEST, PROGRAM, PROMPTS]
    assert read_json(export_dir / MANIFEST)["run_id"] == "run-456"
    assert [p.name for p in export_dir.parent.iterdir()] == [export_dir.name]


def test_writes_into_an_existing_empty_directory(tmp_path: Path, program: ScopedQA) -> None:
    (tmp_path / "empty").mkdir()
    save_test_export(program, tmp_path / "empty")
    assert read_export(tmp_path / "empty").manifest.trainset_hash.startswith("sha256:")


def test_refuses_a_file_as_output(tmp_path: Path, program: ScopedQA) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(ExportError, match="exists and is not a directory"):
        save_test_export(program, tmp_path / "file")


def test_refuses_an_unnamed_output_directory(tmp_path: Path, program: ScopedQA) -> None:
    with pytest.raises(ExportError, match="is not a named directory"):
        save_test_export(program, tmp_path / "sub" / "..", overwrite=True)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"scores": {"c": {"recall": float("nan")}}}, "cannot be written as JSON"),
        ({"scores": {"c": {"recall": float("inf")}}}, "cannot be written as JSON"),
        ({"experiment_config": {"when": object()}}, "cannot be written as JSON"),
        ({"trainset_hash": ""}, "trainset_hash"),
    ],
)
def test_save_rejects_bad_values_and_writes_nothing(
    tmp_path: Path, program: ScopedQA, kwargs: dict[str, Any], match: str
) -> None:
    with pytest.raises(ExportError, match=match):
        save_test_export(program, tmp_path / "out", **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_save_refuses_demos_naming_an_lm_key(tmp_path: Path, program: ScopedQA) -> None:
    program.decompose.demos = [dspy.Example(question="q", sub_questions=["q"], api_key="sk-secret")]
    with pytest.raises(ExportError, match=r"decompose\.demos\[0\]\.api_key"):
        save_test_export(program, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []
