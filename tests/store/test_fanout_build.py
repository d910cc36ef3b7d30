"""An index built with reading and embedding on a local Ray (2 CPUs) is the single-process index, byte for byte."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder
from pipeline.store.fanout import RayEmbedder, RayReader
from pipeline.store.generations import IndexManifest
from tests.conftest import DEMO_DIR

pytestmark = pytest.mark.usefixtures("local_ray")


def _generation_files(index_dir: Path, manifest: IndexManifest) -> dict[str, bytes]:
    root = index_dir / manifest.generation
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_ray_build_equals_the_single_process_build(tmp_path: Path) -> None:
    alone = build_index(DEMO_DIR, tmp_path / "alone", HashEmbedder(64))
    reader, embedder = RayReader(), RayEmbedder("hash-64", 64)
    fanned = build_index(DEMO_DIR, tmp_path / "ray", embedder, reader=reader)  # type: ignore[arg-type]
    one, other = (
        _generation_files(tmp_path / "alone", alone.manifest),
        _generation_files(tmp_path / "ray", fanned.manifest),
    )
    assert sorted(one) == sorted(other) and "catalog.sqlite" in one and "chunks_dense/index.faiss" in one
    differing = [name for name in one if hashlib.sha256(one[name]).digest() != hashlib.sha256(other[name]).digest()]
    assert differing == []
    # the manifests differ only by the generation's name and time
    assert alone.manifest.model_dump(exclude={"generation", "created_at"}) == fanned.manifest.model_dump(
        exclude={"generation", "created_at"}
    )
    assert (fanned.documents, fanned.chunks, fanned.pages) == (alone.documents, alone.chunks, alone.pages)
    assert [s.path for s in fanned.skipped] == [s.path for s in alone.skipped]
    assert reader.retries == 0 and embedder.retries == 0


def test_index_command_on_ray_builds_the_same_catalog(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pipeline.cli.main import main

    common = ["index", str(DEMO_DIR), "--embedder", "hash", "--json"]
    assert main([*common, "--out", str(tmp_path / "one")]) == 0
    capsys.readouterr()
    assert main([*common, "--out", str(tmp_path / "ray"), "--ray"]) == 0
    said = " ".join(capsys.readouterr().err.split())  # not silent while Ray and its workers start
    assert "starting Ray (local)" in said and "Ray is up: files go to its workers" in said
    one = IndexManifest.model_validate_json((tmp_path / "one" / "MANIFEST.json").read_bytes())
    other = IndexManifest.model_validate_json((tmp_path / "ray" / "MANIFEST.json").read_bytes())
    assert _generation_files(tmp_path / "one", one) == _generation_files(tmp_path / "ray", other)
