"""The scoperag-program/v3 export (older formats are refused with the way out): round trips, atomic writes,
and one test per rejection."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dspy
import pytest

from pipeline.errors import ExportError
from pipeline.export import (
    MANIFEST,
    PROGRAM,
    PROMPTS,
    canonical_json,
    load_export,
    read_export,
    render_prompts,
    save_export,
)
from pipeline.export.jsonio import sha256_hex
from pipeline.program.module import ScopedQA
from pipeline.settings import Settings
from pipeline.store import Store
from signatures.models import AnswerLine, GroupScores

SCORES = {"case-1": {"recall": 1.0, "wrong_property_citations": 0.0}, "case-2": {"recall": 0.5}}


def _with_demos(program: ScopedQA) -> ScopedQA:
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


@pytest.fixture
def program(demo_store: Store) -> ScopedQA:
    return _with_demos(ScopedQA(demo_store))


def _save(program: ScopedQA, out: Path, **kwargs: Any) -> Any:
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


@pytest.fixture
def export_dir(tmp_path: Path, program: ScopedQA) -> Path:
    out = tmp_path / "export"
    _save(program, out)
    return out


def _read_json(path: Path) -> Any:
    return json.loads(path.read_bytes())


def _replace(export_dir: Path, name: str, data: bytes) -> None:
    """Overwrite one file and make the manifest vouch for it, so the check under test is the one that fires."""
    (export_dir / name).write_bytes(data)
    manifest = _read_json(export_dir / MANIFEST)
    manifest["files"][name] = {"sha256": sha256_hex(data), "size": len(data)}
    (export_dir / MANIFEST).write_bytes(canonical_json(manifest))


def _edit_program(export_dir: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    state = _read_json(export_dir / PROGRAM)
    edit(state)
    _replace(export_dir, PROGRAM, canonical_json(state))


def _edit_manifest(export_dir: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    manifest = _read_json(export_dir / MANIFEST)
    edit(manifest)
    (export_dir / MANIFEST).write_bytes(canonical_json(manifest))


def _rejects(export_dir: Path, demo_store: Store, match: str) -> ExportError:
    fresh = ScopedQA(demo_store)
    before = fresh.dump_state()
    with pytest.raises(ExportError, match=match) as caught:
        load_export(export_dir, fresh)
    assert fresh.dump_state() == before
    assert caught.value.fix  # every rejection says the way out
    return caught.value


# -- round trips --------------------------------------------------------------------------------


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
    _save(loaded, again)
    for name in (PROGRAM, PROMPTS):
        assert (again / name).read_bytes() == (export_dir / name).read_bytes()


def test_manifest_records_versions_config_scores_and_hashes(export_dir: Path) -> None:
    manifest = _read_json(export_dir / MANIFEST)
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
    state = _read_json(export_dir / PROGRAM)
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
    assert text == render_prompts(_read_json(export_dir / PROGRAM))


def test_lm_set_on_a_predictor_is_not_exported(program: ScopedQA, tmp_path: Path) -> None:
    program.hyde.lm = dspy.LM("openai/gpt-4o-mini", api_base="http://evil.example", api_key="sk-secret")
    _save(program, tmp_path / "out")
    raw = (tmp_path / "out" / PROGRAM).read_text(encoding="utf-8")
    assert "evil.example" not in raw and "sk-secret" not in raw and "gpt-4o-mini" not in raw
    assert program.hyde.lm is not None  # the caller's program is not changed by saving


# -- writing ------------------------------------------------------------------------------------


def test_refuses_to_overwrite_a_non_empty_directory(export_dir: Path, program: ScopedQA) -> None:
    before = {p.name: p.read_bytes() for p in export_dir.iterdir()}
    with pytest.raises(ExportError, match=r"already exists and is not empty.*--overwrite"):
        _save(program, export_dir)
    assert {p.name: p.read_bytes() for p in export_dir.iterdir()} == before


def test_overwrite_replaces_atomically_and_leaves_no_temp(export_dir: Path, program: ScopedQA) -> None:
    (export_dir / "stale.txt").write_text("old", encoding="utf-8")
    _save(program, export_dir, run_id="run-456", overwrite=True)
    assert sorted(p.name for p in export_dir.iterdir()) == [MANIFEST, PROGRAM, PROMPTS]
    assert _read_json(export_dir / MANIFEST)["run_id"] == "run-456"
    assert [p.name for p in export_dir.parent.iterdir()] == [export_dir.name]


def test_writes_into_an_existing_empty_directory(tmp_path: Path, program: ScopedQA) -> None:
    (tmp_path / "empty").mkdir()
    _save(program, tmp_path / "empty")
    assert read_export(tmp_path / "empty").manifest.trainset_hash.startswith("sha256:")


def test_refuses_a_file_as_output(tmp_path: Path, program: ScopedQA) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(ExportError, match="exists and is not a directory"):
        _save(program, tmp_path / "file")


def test_refuses_an_unnamed_output_directory(tmp_path: Path, program: ScopedQA) -> None:
    with pytest.raises(ExportError, match="is not a named directory"):
        _save(program, tmp_path / "sub" / "..", overwrite=True)


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
        _save(program, tmp_path / "out", **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_save_refuses_demos_naming_an_lm_key(tmp_path: Path, program: ScopedQA) -> None:
    program.decompose.demos = [dspy.Example(question="q", sub_questions=["q"], api_key="sk-secret")]
    with pytest.raises(ExportError, match=r"decompose\.demos\[0\]\.api_key"):
        _save(program, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


# -- rejections: program.json -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "match", "key_path"),
    [
        (lambda s: s.update(rerank=s["score"]), "unknown predictor.*'rerank'", "rerank"),
        (lambda s: s.pop("hyde"), "missing predictor.*'hyde'", "hyde"),
        (lambda s: s.pop("metadata"), "no 'metadata' entry", "metadata"),
        (lambda s: s["decompose"].update(config={"temperature": 2.0}), "unknown key", "decompose.config"),
        (lambda s: s["hyde"]["signature"].update(extra="x"), "unknown key", "hyde.signature.extra"),
        (lambda s: s["hyde"].update(demos=["not an object"]), "valid dictionary", "hyde.demos.0"),
        (lambda s: s["hyde"].pop("traces"), "Field required", "hyde.traces"),
        (lambda s: s["hyde"]["signature"]["fields"].pop(), "has 1 signature fields", "hyde.signature.fields"),
        (lambda s: s["hyde"].update(fields={}), "decision settings", "hyde.fields"),
        # the judge may be left out (older exports), but when it is there it is checked like the others
        (lambda s: s["judge"]["signature"]["fields"].pop(), "has 2 signature fields", "judge.signature.fields"),
        (
            lambda s: s["hyde"].update(lm={"model": "openai/gpt-4o", "api_base": "http://evil.example"}),
            r"LM override \(api_base, model\)",
            "hyde.lm",
        ),
        (lambda s: s["hyde"].update(lm="openai/gpt-4o"), "LM override", "hyde.lm"),
        (lambda s: s["decompose"]["demos"][0].update(api_key="sk-x"), "credential", "decompose.demos[0].api_key"),
        (
            lambda s: s["answer"]["demos"][0]["answers"][0].update(BASE_URL="http://x"),
            "endpoint",
            "answer.demos[0].answers[0].BASE_URL",
        ),
        (lambda s: s["score"]["demos"][0].update(model="gpt"), "model", "score.demos[0].model"),
        (lambda s: s["metadata"].update(lm={"x": 1}), "LM", "metadata.lm"),
    ],
)
def test_rejects_program_json(
    export_dir: Path,
    demo_store: Store,
    edit: Callable[[dict[str, Any]], None],
    match: str,
    key_path: str,
) -> None:
    _edit_program(export_dir, edit)
    error = _rejects(export_dir, demo_store, match)
    assert error.file.endswith(PROGRAM)
    assert error.key_path == key_path


def test_rejects_a_program_json_that_is_not_an_object(export_dir: Path, demo_store: Store) -> None:
    _replace(export_dir, PROGRAM, b"[]\n")
    _rejects(export_dir, demo_store, "must be a JSON object")


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (b'{"hyde": NaN}', "NaN"),
        (b'{"hyde": Infinity}', "Infinity"),
        (b'{"hyde": -Infinity}', "-Infinity"),
        (b'{"hyde": 1e999}', "overflows to infinity"),
        (b'{"hyde": 1, "hyde": 2}', "duplicate key 'hyde'"),
        (b"not json at all", "is not valid JSON"),
        (b'{"hyde": "\xff"}', "is not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "cannot be read as JSON"),
    ],
)
def test_rejects_program_json_that_is_not_strict_json(
    export_dir: Path, demo_store: Store, raw: bytes, match: str
) -> None:
    _replace(export_dir, PROGRAM, raw)
    assert _rejects(export_dir, demo_store, match).file.endswith(PROGRAM)


def test_rejects_program_json_not_in_canonical_form(export_dir: Path, demo_store: Store) -> None:
    state = _read_json(export_dir / PROGRAM)
    _replace(export_dir, PROGRAM, json.dumps(state).encode("utf-8"))
    _rejects(export_dir, demo_store, "canonical JSON form")


# -- rejections: manifest.json, files -------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "match", "key_path"),
    [
        (lambda m: m.update(extra=1), "unknown key", "extra"),
        (lambda m: m["versions"].update(endpoint="http://x"), "unknown key", "versions.endpoint"),
        (lambda m: m.update(format="scoperag-program/v9"), "'scoperag-program/v9' is not supported", "format"),
        (lambda m: m.update(format="legco-reranker-profile/v1"), "not a scoperag program export", "format"),
        (lambda m: m.pop("format"), "not a scoperag program export", "format"),
        (lambda m: m["files"].pop(PROMPTS), "Field required", "files.prompts.md"),
        (lambda m: m["files"][PROGRAM].update(sha256="XYZ"), "should match pattern", "files.program.json.sha256"),
        (lambda m: m.update(created_at="2026-04-27T12:00:00"), "UTC offset", "created_at"),
        (lambda m: m["scores"]["case-1"].update(recall="high"), "valid number", "scores.case-1.recall"),
    ],
)
def test_rejects_manifest(
    export_dir: Path,
    demo_store: Store,
    edit: Callable[[dict[str, Any]], None],
    match: str,
    key_path: str,
) -> None:
    _edit_manifest(export_dir, edit)
    error = _rejects(export_dir, demo_store, match)
    assert error.file.endswith(MANIFEST)
    assert error.key_path == key_path


# Endpoint and key overrides are refused wherever they appear, keys compared after normalising case,
# underscores and hyphens: in demos (any depth) and in the manifest's free-form config.
@pytest.mark.parametrize(
    "key", ["apiBase", "openai_api_key", "api_base_url", "OPENAI_API_BASE", "endpoint", "azure_endpoint", "Api-Key"]
)
def test_rejects_endpoint_and_key_overrides_inside_demos(export_dir: Path, demo_store: Store, key: str) -> None:
    _edit_program(export_dir, lambda s: s["answer"]["demos"][0]["answers"][0].update({key: "http://127.0.0.1:9/v1"}))
    error = _rejects(export_dir, demo_store, "endpoint or credential")
    assert error.file.endswith(PROGRAM) and error.key_path == f"answer.demos[0].answers[0].{key}"


@pytest.mark.parametrize(
    ("path", "key"),
    [
        (("config", "settings"), "api_base"),
        (("config", "settings", "core"), "apiBase"),
        (("config", "experiment"), "OPENAI_API_BASE"),
        (("config", "program"), "azure_endpoint"),
        (("config", "experiment"), "openai-api-key"),
    ],
)
def test_rejects_endpoint_and_key_overrides_in_the_manifest_config(
    export_dir: Path, demo_store: Store, path: tuple[str, ...], key: str
) -> None:
    def edit(manifest: dict[str, Any]) -> None:
        target = manifest
        for part in path:
            target = target[part]
        target[key] = "http://127.0.0.1:9/v1"

    _edit_manifest(export_dir, edit)
    error = _rejects(export_dir, demo_store, "endpoint or credential")
    assert error.file.endswith(MANIFEST) and error.key_path == ".".join([*path, key])


def test_the_manifest_may_name_the_lm_it_was_compiled_with(
    tmp_path: Path, program: ScopedQA, demo_store: Store
) -> None:
    experiment = {"lm": {"task": "http://127.0.0.1:8080/v1", "teacher": "openai/gpt-4o-mini"}}
    _save(program, tmp_path / "out", experiment_config=experiment)
    loaded = load_export(tmp_path / "out", ScopedQA(demo_store))
    assert loaded.manifest.config.experiment["lm"] == experiment["lm"]


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (b'{"format": "scoperag-program/v1", "format": "scoperag-program/v1"}', "duplicate key 'format'"),
        (b'{"scores": {"a": {"recall": NaN}}}', "NaN"),
        (b'{"scores": {"a": {"recall": Infinity}}}', "Infinity"),
        (b"format: scoperag-program/v1", "is not valid JSON"),
    ],
)
def test_rejects_manifest_that_is_not_strict_json(export_dir: Path, demo_store: Store, raw: bytes, match: str) -> None:
    (export_dir / MANIFEST).write_bytes(raw)
    assert _rejects(export_dir, demo_store, match).file.endswith(MANIFEST)


@pytest.mark.parametrize("name", [MANIFEST, PROGRAM, PROMPTS])
def test_rejects_a_missing_file(export_dir: Path, demo_store: Store, name: str) -> None:
    (export_dir / name).unlink()
    assert _rejects(export_dir, demo_store, "is missing").file.endswith(name)


@pytest.mark.parametrize("name", [PROGRAM, PROMPTS])
def test_rejects_a_file_that_does_not_match_the_manifest_hash(export_dir: Path, demo_store: Store, name: str) -> None:
    data = (export_dir / name).read_bytes()
    (export_dir / name).write_bytes(data.replace(b"Break the question", b"Ignore the question"))
    error = _rejects(export_dir, demo_store, "does not match its entry in the manifest")
    assert error.key_path == f"files.{name}"


def test_rejects_prompts_md_edited_by_hand(export_dir: Path, demo_store: Store) -> None:
    text = (export_dir / PROMPTS).read_bytes().replace(b"Break the question", b"Ignore the question")
    _replace(export_dir, PROMPTS, text)
    _rejects(export_dir, demo_store, "does not match program.json")


def test_rejects_a_file_over_the_size_limit(export_dir: Path, demo_store: Store) -> None:
    with (export_dir / PROMPTS).open("r+b") as handle:
        handle.truncate(10 * 1024 * 1024 + 1)  # sparse: refused by its size before it is read
    assert _rejects(export_dir, demo_store, "over the 10485760-byte limit").file.endswith(PROMPTS)


def test_size_limit_is_configurable(export_dir: Path, demo_store: Store) -> None:
    with pytest.raises(ExportError, match="over the 1000-byte limit"):
        load_export(export_dir, ScopedQA(demo_store), max_file_bytes=1000)


def test_rejects_a_symlinked_file(export_dir: Path, demo_store: Store, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_bytes((export_dir / PROMPTS).read_bytes())
    (export_dir / PROMPTS).unlink()
    (export_dir / PROMPTS).symlink_to(outside)
    _rejects(export_dir, demo_store, "not a regular file")


def test_rejects_a_path_that_is_not_a_directory(tmp_path: Path, demo_store: Store) -> None:
    _rejects(tmp_path / "nowhere", demo_store, "is not a directory")


# -- the caller's program -------------------------------------------------------------------------


def test_callers_program_is_untouched_by_a_failed_load(export_dir: Path, demo_store: Store) -> None:
    _edit_program(export_dir, lambda s: s["hyde"].update(lm={"api_key": "sk-x"}))
    mine = ScopedQA(demo_store)
    mine.hyde.demos = [dspy.Example(question="mine", passage="my passage")]
    before = json.dumps(mine.dump_state(), sort_keys=True)
    with pytest.raises(ExportError):
        load_export(export_dir, mine)
    assert json.dumps(mine.dump_state(), sort_keys=True) == before


def test_callers_program_is_untouched_by_a_successful_load(export_dir: Path, demo_store: Store) -> None:
    mine = ScopedQA(demo_store)
    before = mine.dump_state()
    loaded = load_export(export_dir, mine).program
    assert mine.dump_state() == before and loaded.decompose.demos


def test_rejects_a_program_of_another_shape(export_dir: Path, demo_store: Store) -> None:
    other = ScopedQA(demo_store)
    other.rerank = dspy.Predict("question -> answer")
    with pytest.raises(ExportError, match="the program has predictors"):
        load_export(export_dir, other)


def test_scratch_directories_of_dead_exports_are_removed(tmp_path: Path, program: ScopedQA) -> None:
    import re
    import socket
    import subprocess
    import sys

    out = tmp_path / "program"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    host = re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname())
    dead = tmp_path / f".program.tmp-{host}-{gone.pid}-abc123"
    dead_old = tmp_path / f".program.old-{host}-{gone.pid}-00ff"
    alive = tmp_path / f".program.tmp-{host}-{os.getpid()}-def456"
    elsewhere = tmp_path / f".program.tmp-otherhost-{gone.pid}-abc123"
    unowned = tmp_path / ".program.tmp-x1y2z3"
    for path in (dead, dead_old, alive, elsewhere, unowned):
        path.mkdir()
        (path / MANIFEST).write_text("{}")
    _save(program, out)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(p.name for p in (alive, elsewhere, unowned, out))


@pytest.mark.parametrize("old", ["scoperag-program/v1", "scoperag-program/v2"])
def test_an_export_from_before_answer_lines_is_refused_with_the_way_out(
    export_dir: Path, demo_store: Store, old: str
) -> None:
    _edit_manifest(export_dir, lambda m: m.update(format=old))
    error = _rejects(export_dir, demo_store, "is not supported")
    assert error.key_path == "format" and "re-export" in error.fix
