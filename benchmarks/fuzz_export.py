"""The `export` fuzz target (benchmarks/fuzz.py): load_export on mutated copies of a real export.

A real export (save_export of a ScopedQA over the demo corpus) has its files edited (bytes, JSON, vouched for by
the manifest or not, deep nesting, BOM/CRLF, or the file missing, a directory, a symlink or a FIFO); load_export
must either load it or raise a ScopeRagError naming a file of that directory, never anything else, and never
touch the caller's program.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from fuzz_inputs import ADD_KEYS, HUGE, RAW_TRAPS, Record, deep, shown
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's pipeline and tests

from pipeline.errors import ScopeRagError
from pipeline.export import MANIFEST, MAX_FILE_BYTES, PROGRAM, PROMPTS, canonical_json, load_export, render_prompts
from pipeline.export.jsonio import sha256_hex
from pipeline.program.module import ScopedQA
from pipeline.store import Store
from tests.support.properties import JSON_VALUES, edit_a_predictor, mutated_bytes, mutated_json, save_sample_export

MISSING, DIRECTORY, SYMLINK, DANGLING, FIFO = "missing", "directory", "symlink", "dangling symlink", "fifo"
FileContent = bytes | str  # bytes, or one of the special entries above
FILES = (MANIFEST, PROGRAM, PROMPTS)


def _vouch(files: dict[str, FileContent]) -> None:
    """Regenerate prompts.md from program.json and make the manifest vouch for both, where they still parse."""
    try:
        state = json.loads(files[PROGRAM])
        manifest = json.loads(files[MANIFEST])
    except (TypeError, ValueError, RecursionError):
        return
    with contextlib.suppress(KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError):
        files[PROMPTS] = render_prompts(state).encode("utf-8")
    listed = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(listed, dict):
        return
    for name in (PROGRAM, PROMPTS):
        content = files[name]
        if isinstance(content, bytes):
            listed[name] = {"sha256": sha256_hex(content), "size": len(content)}
    with contextlib.suppress(TypeError, ValueError, RecursionError):
        files[MANIFEST] = canonical_json(manifest)


@st.composite
def valid_program_edits(draw: st.DrawFn, program: bytes) -> bytes:
    """program.json (if it still parses) with one predictor's instructions and demos replaced by any text and
    JSON without LM keys: what an optimizer could legitimately write."""
    try:
        state = json.loads(program)
        edit_a_predictor(draw, state)
        return canonical_json(state)
    except (ValueError, RecursionError, KeyError, TypeError):
        return program


@st.composite
def export_edits(draw: st.DrawFn, base: dict[str, bytes]) -> tuple[dict[str, FileContent], list[str]]:
    """The export's files after 1-3 edits: byte edits, JSON edits (maybe vouched for by the manifest), any
    bytes or JSON, deep nesting, BOM/CRLF, or the file missing, a directory, a symlink or a FIFO."""
    files: dict[str, FileContent] = dict(base)
    edits = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(FILES))
        op = draw(
            st.sampled_from(
                [
                    "valid_edit",
                    "json_edit_vouched",
                    "json_edit_vouched",
                    "json_edit",
                    "bytes_edit",
                    "any_json",
                    "any_bytes",
                    "raw_trap",
                    "deep",
                    "bom",
                    "crlf",
                    "special",
                ]
            )
        )
        content = files[name]
        if op == "valid_edit" and isinstance(files[PROGRAM], bytes):
            files[PROGRAM] = draw(valid_program_edits(files[PROGRAM]))
            _vouch(files)
            name = PROGRAM
        elif op in ("json_edit", "json_edit_vouched") and isinstance(content, bytes):
            try:
                value = json.loads(content)
            except (ValueError, RecursionError):
                value = content.decode("utf-8", "replace")[:1000]
            try:
                files[name] = canonical_json(draw(mutated_json(value, huge=HUGE, max_nest=200, add_keys=ADD_KEYS)))
            except (TypeError, ValueError, RecursionError):  # a value canonical JSON cannot write (huge int, depth)
                files[name] = json.dumps(draw(JSON_VALUES)).encode()
            if op == "json_edit_vouched":
                _vouch(files)
        elif op == "bytes_edit" and isinstance(content, bytes):
            files[name] = draw(mutated_bytes(content, duplicate=True, max_cut=64))
        elif op == "any_json":
            files[name] = json.dumps(draw(JSON_VALUES), indent=draw(st.sampled_from([None, 2]))).encode()
        elif op == "any_bytes":
            files[name] = draw(st.binary(max_size=300))
        elif op == "raw_trap":
            files[name] = draw(st.sampled_from(RAW_TRAPS))
        elif op == "deep":
            files[name] = deep(draw(st.sampled_from([100, 900, 1100, 5000, 200_000])))
        elif op == "bom" and isinstance(content, bytes):
            files[name] = b"\xef\xbb\xbf" + content
        elif op == "crlf" and isinstance(content, bytes):
            files[name] = content.replace(b"\n", b"\r\n")
        else:
            files[name] = draw(st.sampled_from([MISSING, DIRECTORY, SYMLINK, DANGLING, FIFO]))
        edits.append(f"{op}:{name}")
    return files, edits


def _write_export(directory: Path, files: dict[str, FileContent], original: Path) -> None:
    directory.mkdir()
    for name, content in files.items():
        path = directory / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif content == DIRECTORY:
            path.mkdir()
        elif content == SYMLINK:
            path.symlink_to(original / name)  # a symlink to the valid file: refused all the same
        elif content == DANGLING:
            path.symlink_to(directory / "nowhere")
        elif content == FIFO:
            os.mkfifo(path)  # opening it would block: the loader must refuse it before reading


@dataclass
class ExportTarget:
    """load_export on mutated copies of a real export: loads, or a ScopeRagError; the caller's program intact."""

    store: Store
    workdir: Path
    name: str = "export"
    base: dict[str, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        save_sample_export(self.store, self.workdir / "original")
        self.base = {name: (self.workdir / "original" / name).read_bytes() for name in FILES}
        self.program = ScopedQA(self.store)
        self.before = self.program.dump_state()

    def check(self, data: st.DataObject, record: Record) -> str:
        files, edits = data.draw(export_edits(self.base), label="files")
        limit = data.draw(st.sampled_from([MAX_FILE_BYTES, 64 * 1024, 2048]), label="max_file_bytes")
        record.update(edits=edits, max_file_bytes=limit)
        record["files"] = {n: shown(c) if isinstance(c, bytes) else f"<{c}>" for n, c in files.items()}
        case = self.workdir / "case"
        shutil.rmtree(case, ignore_errors=True)
        _write_export(case, files, self.workdir / "original")
        try:
            loaded = load_export(case, self.program, max_file_bytes=limit)
            outcome = "loaded"
            assert loaded.program is not self.program
        except ScopeRagError as exc:
            outcome = type(exc).__name__
            where = getattr(exc, "file", "")
            assert str(case) in where, f"the error does not name a file of the export: {exc}"
        finally:
            assert self.program.dump_state() == self.before, "load_export changed the caller's program"
        return outcome
