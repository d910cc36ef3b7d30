"""`scoperag index` as a newcomer runs it: a manifest whose rules match no file stops the build (the folder of
the manifest was named instead of the documents'), a build into an index of another folder asks first, and the
summary credits the vector cache only when there was one."""

from __future__ import annotations

import builtins
import shutil
import sys
from pathlib import Path

import pytest

from pipeline.cli.main import main
from pipeline.store.generations import read_manifest
from tests.conftest import DEMO_DIR, ROOT

HASH = ["--embedder", "hash"]


def test_a_manifest_whose_rules_match_no_file_stops_the_build_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sec"
    # What the README's Ray line once did: the folder of the SEC manifest, not the folder of the filings.
    assert main(["index", str(ROOT / "datasets" / "sec-10q"), "--out", str(out), *HASH]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "rules of the manifest" in said and "match no file under" in said and "--allow-unmatched" in said
    assert not (out / "MANIFEST.json").exists()  # nothing was written
    assert main(["index", str(ROOT / "datasets" / "sec-10q"), "--out", str(out), *HASH, "--allow-unmatched"]) == 0
    assert "manifest rule matched no file" in capsys.readouterr().err
    assert read_manifest(out).source == str((ROOT / "datasets" / "sec-10q").resolve())


def test_a_build_into_the_index_of_another_folder_asks_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "index"
    assert main(["index", str(DEMO_DIR), "--out", str(out), *HASH]) == 0
    first = read_manifest(out)
    assert first.source == str(DEMO_DIR.resolve())
    other = tmp_path / "other"
    shutil.copytree(DEMO_DIR / "banda-lane", other / "banda-lane")
    capsys.readouterr()
    # Off a terminal: refused, naming both folders and the way out.
    assert main(["index", str(other), "--out", str(out), *HASH]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert f"holds the index of {DEMO_DIR.resolve()}" in said and "--yes" in said
    assert read_manifest(out).generation == first.generation
    # At a terminal: asked; "no" keeps it.
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    answers = iter(["n", "y"])
    monkeypatch.setattr(builtins, "input", lambda prompt: next(answers))
    assert main(["index", str(other), "--out", str(out), *HASH]) == 1
    assert read_manifest(out).generation == first.generation and "is unchanged" in capsys.readouterr().err
    assert main(["index", str(other), "--out", str(out), *HASH]) == 0  # "y"
    assert read_manifest(out).source == str(other.resolve())
    # The same folder again, or --yes: no question.
    monkeypatch.setattr(builtins, "input", lambda prompt: pytest.fail("asked again"))
    assert main(["index", str(other), "--out", str(out), *HASH]) == 0
    assert main(["index", str(DEMO_DIR), "--out", str(out), *HASH, "--yes"]) == 0
    assert read_manifest(out).source == str(DEMO_DIR.resolve())


def test_the_summary_credits_the_vector_cache_only_when_there_was_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "index"
    capsys.readouterr()
    assert main(["index", str(DEMO_DIR), "--out", str(out), *HASH]) == 0
    first = " ".join(capsys.readouterr().err.split())
    assert "texts embedded;" in first and "cache" not in first
    assert main(["index", str(DEMO_DIR), "--out", str(out), *HASH]) == 0
    assert "every text from the vector cache" in " ".join(capsys.readouterr().err.split())
