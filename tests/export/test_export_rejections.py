"""One test per rejection of an export: program.json, manifest.json and the files (hash, size, symlink, missing),
endpoint and key overrides wherever they appear; each names the way out."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.errors import ExportError
from pipeline.export import MANIFEST, PROGRAM, PROMPTS, load_export
from pipeline.program.module import ScopedQA
from pipeline.store import Store
from tests.support.export_edits import (
    edit_manifest,
    edit_program,
    read_json,
    rejects,
    replace_vouched,
    save_test_export,
)


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
    edit_program(export_dir, edit)
    error = rejects(export_dir, demo_store, match)
    assert error.file.endswith(PROGRAM)
    assert error.key_path == key_path


def test_rejects_a_program_json_that_is_not_an_object(export_dir: Path, demo_store: Store) -> None:
    replace_vouched(export_dir, PROGRAM, b"[]\n")
    rejects(export_dir, demo_store, "must be a JSON object")


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
    replace_vouched(export_dir, PROGRAM, raw)
    assert rejects(export_dir, demo_store, match).file.endswith(PROGRAM)


def test_rejects_program_json_not_in_canonical_form(export_dir: Path, demo_store: Store) -> None:
    state = read_json(export_dir / PROGRAM)
    replace_vouched(export_dir, PROGRAM, json.dumps(state).encode("utf-8"))
    rejects(export_dir, demo_store, "canonical JSON form")


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
    edit_manifest(export_dir, edit)
    error = rejects(export_dir, demo_store, match)
    assert error.file.endswith(MANIFEST)
    assert error.key_path == key_path


# Endpoint and key overrides are refused wherever they appear, keys compared after normalising case,
# underscores and hyphens: in demos (any depth) and in the manifest's free-form config.
@pytest.mark.parametrize(
    "key", ["apiBase", "openai_api_key", "api_base_url", "OPENAI_API_BASE", "endpoint", "azure_endpoint", "Api-Key"]
)
def test_rejects_endpoint_and_key_overrides_inside_demos(export_dir: Path, demo_store: Store, key: str) -> None:
    edit_program(export_dir, lambda s: s["answer"]["demos"][0]["answers"][0].update({key: "http://127.0.0.1:9/v1"}))
    error = rejects(export_dir, demo_store, "endpoint or credential")
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

    edit_manifest(export_dir, edit)
    error = rejects(export_dir, demo_store, "endpoint or credential")
    assert error.file.endswith(MANIFEST) and error.key_path == ".".join([*path, key])


def test_the_manifest_may_name_the_lm_it_was_compiled_with(
    tmp_path: Path, program: ScopedQA, demo_store: Store
) -> None:
    experiment = {"lm": {"task": "http://127.0.0.1:8080/v1", "teacher": "openai/gpt-4o-mini"}}
    save_test_export(program, tmp_path / "out", experiment_config=experiment)
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
    assert rejects(export_dir, demo_store, match).file.endswith(MANIFEST)


@pytest.mark.parametrize("name", [MANIFEST, PROGRAM, PROMPTS])
def test_rejects_a_missing_file(export_dir: Path, demo_store: Store, name: str) -> None:
    (export_dir / name).unlink()
    assert rejects(export_dir, demo_store, "is missing").file.endswith(name)


@pytest.mark.parametrize("name", [PROGRAM, PROMPTS])
def test_rejects_a_file_that_does_not_match_the_manifest_hash(export_dir: Path, demo_store: Store, name: str) -> None:
    data = (export_dir / name).read_bytes()
    (export_dir / name).write_bytes(data.replace(b"Break the question", b"Ignore the question"))
    error = rejects(export_dir, demo_store, "does not match its entry in the manifest")
    assert error.key_path == f"files.{name}"


def test_rejects_prompts_md_edited_by_hand(export_dir: Path, demo_store: Store) -> None:
    text = (export_dir / PROMPTS).read_bytes().replace(b"Break the question", b"Ignore the question")
    replace_vouched(export_dir, PROMPTS, text)
    rejects(export_dir, demo_store, "does not match program.json")


def test_rejects_a_file_over_the_size_limit(export_dir: Path, demo_store: Store) -> None:
    with (export_dir / PROMPTS).open("r+b") as handle:
        handle.truncate(10 * 1024 * 1024 + 1)  # sparse: refused by its size before it is read
    assert rejects(export_dir, demo_store, "over the 10485760-byte limit").file.endswith(PROMPTS)


def test_size_limit_is_configurable(export_dir: Path, demo_store: Store) -> None:
    with pytest.raises(ExportError, match="over the 1000-byte limit"):
        load_export(export_dir, ScopedQA(demo_store), max_file_bytes=1000)


def test_rejects_a_symlinked_file(export_dir: Path, demo_store: Store, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_bytes((export_dir / PROMPTS).read_bytes())
    (export_dir / PROMPTS).unlink()
    (export_dir / PROMPTS).symlink_to(outside)
    rejects(export_dir, demo_store, "not a regular file")


def test_rejects_a_path_that_is_not_a_directory(tmp_path: Path, demo_store: Store) -> None:
    rejects(tmp_path / "nowhere", demo_store, "is not a directory")
