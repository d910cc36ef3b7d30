"""The embedded model's file: assembled from its parts through a temp file and a rename, verified by size and
sha256, trusted by a cache marker afterwards; missing parts named with the pinned reinstall (small fake parts)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

import pipeline.program.lm.model_file as model_file
from pipeline.errors import ModelError
from pipeline.program.lm import ShippedModel, assemble, cached_file_is_valid, ensure_model_file, locate_parts

PART_BYTES = (b"GGUF-part-one-", b"part-two-", b"part-three")
WHOLE = b"".join(PART_BYTES)
WHOLE_SHA = hashlib.sha256(WHOLE).hexdigest()


@pytest.fixture
def part_files(tmp_path: Path) -> list[Path]:
    paths = []
    for n, data in enumerate(PART_BYTES, start=1):
        path = tmp_path / "parts" / f"part0{n}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        paths.append(path)
    return paths


def test_assemble_writes_the_verified_file_via_a_temp_file_and_rename(
    part_files: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renames: list[tuple[Path, Path]] = []
    original = Path.replace

    def spy(self: Path, target: Any) -> Path:
        renames.append((self, Path(target)))
        return original(self, target)

    monkeypatch.setattr(Path, "replace", spy)
    target = tmp_path / "cache" / "model.gguf"
    assert assemble(part_files, target, size=len(WHOLE), sha256=WHOLE_SHA, fix="reinstall") == target
    assert target.read_bytes() == WHOLE
    temp = next(src for src, dst in renames if dst == target)
    assert temp.parent == target.parent and temp.name.endswith(".partial")
    assert sorted(p.name for p in target.parent.iterdir()) == ["model.gguf", "model.gguf.verified.json"]


@pytest.mark.parametrize(
    ("size", "sha256", "message"),
    [
        (len(WHOLE) + 1, WHOLE_SHA, "add up to"),
        (len(WHOLE), "0" * 64, "sha256"),
    ],
)
def test_assemble_refuses_a_mismatch_and_leaves_no_file(
    part_files: list[Path], tmp_path: Path, size: int, sha256: str, message: str
) -> None:
    target = tmp_path / "cache" / "model.gguf"
    target.parent.mkdir()
    target.write_bytes(b"previous model")
    with pytest.raises(ModelError, match=message) as caught:
        assemble(part_files, target, size=size, sha256=sha256, fix="Reinstall the pinned parts")
    assert "Reinstall the pinned parts" in str(caught.value)
    assert target.read_bytes() == b"previous model"  # the old file is never half-replaced
    assert [p.name for p in target.parent.iterdir()] == ["model.gguf"]  # no temp file left behind


def _fake_package_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ShippedModel:
    """Three importable fake part packages on sys.path, laid out like the real wheels."""
    site = tmp_path / "site"
    for n, data in enumerate(PART_BYTES, start=1):
        package = site / f"scoperag_fake_part{n}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("raise RuntimeError('part packages must never be imported')\n")
        (package / "data" / f"part0{n}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(site))
    return ShippedModel(
        file_name="fake.gguf",
        size=len(WHOLE),
        sha256=WHOLE_SHA,
        parts=tuple((f"scoperag_fake_part{n}", f"data/part0{n}.bin") for n in range(1, 4)),
        requirements=tuple(f"fake-part{n}==1.0" for n in range(1, 4)),
    )


def test_ensure_model_file_assembles_once_then_trusts_the_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _fake_package_model(tmp_path, monkeypatch)
    cache_dir = tmp_path / "models"
    path = ensure_model_file(cache_dir, model)
    assert path.read_bytes() == WHOLE
    marker = json.loads((cache_dir / "fake.gguf.verified.json").read_text())
    assert marker["sha256"] == WHOLE_SHA and marker["size"] == len(WHOLE)

    def no_hash(path: Path) -> str:
        raise AssertionError("a vouched-for cached file must not be rehashed")

    monkeypatch.setattr(model_file, "file_sha256", no_hash)
    assert ensure_model_file(cache_dir, model) == path


def test_a_touched_cached_file_is_rehashed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _fake_package_model(tmp_path, monkeypatch)
    path = ensure_model_file(tmp_path / "models", model)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    hashed: list[Path] = []
    real_hash = model_file.file_sha256

    def counting_hash(path: Path) -> str:
        hashed.append(path)
        return real_hash(path)

    monkeypatch.setattr(model_file, "file_sha256", counting_hash)
    assert cached_file_is_valid(path, model.size, model.sha256)
    assert cached_file_is_valid(path, model.size, model.sha256)
    assert hashed == [path]


def test_a_corrupt_cached_file_is_reassembled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _fake_package_model(tmp_path, monkeypatch)
    path = ensure_model_file(tmp_path / "models", model)
    path.write_bytes(b"X" * len(WHOLE))  # same size, wrong bytes, new mtime
    assert not cached_file_is_valid(path, model.size, model.sha256)
    assert ensure_model_file(tmp_path / "models", model).read_bytes() == WHOLE


def test_wrong_size_is_rejected_without_hashing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"short")
    monkeypatch.setattr(model_file, "file_sha256", lambda p: pytest.fail("size mismatch must not hash"))
    assert not cached_file_is_valid(path, 1000, WHOLE_SHA)


def test_missing_parts_are_named_with_the_pinned_reinstall(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _fake_package_model(tmp_path, monkeypatch)
    broken = ShippedModel(
        model.file_name,
        model.size,
        model.sha256,
        (*model.parts[:2], ("scoperag_no_such_part3", "data/part03.bin")),
        model.requirements,
    )
    with pytest.raises(ModelError, match="scoperag_no_such_part3") as caught:
        locate_parts(broken)
    assert "pip install --force-reinstall fake-part1==1.0 fake-part2==1.0 fake-part3==1.0" in str(caught.value)
    assert not (tmp_path / "models").exists()
