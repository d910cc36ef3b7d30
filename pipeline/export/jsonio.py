"""Strict JSON in, canonical JSON out: the byte-level rules every export and profile file follows."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from pipeline.errors import ExportError

MAX_FILE_BYTES = 10 * 1024 * 1024
# Keys that would point a predictor at another LM endpoint or carry a credential.
FORBIDDEN_KEYS = frozenset({"lm", "api_base", "api_key", "base_url", "model", "model_list"})


def canonical_json(value: Any) -> bytes:
    """`value` as UTF-8 JSON with sorted keys and a final newline: same value, same bytes."""
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def sha256_hex(data: bytes) -> str:
    """The lower-case hex sha256 of `data`."""
    return hashlib.sha256(data).hexdigest()


def strict_loads(data: bytes, file: str) -> Any:
    """Parsed JSON; ExportError on non-UTF-8, invalid JSON, duplicate keys, NaN/Infinity or overflowing numbers."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _fail(file, f"is not UTF-8 text (byte {exc.start})", "")
    try:
        value = json.loads(
            text,
            object_pairs_hook=lambda pairs: _no_duplicates(pairs, file),
            parse_constant=lambda name: _no_constant(name, file),
            parse_float=lambda raw: _finite_float(raw, file),
        )
    except json.JSONDecodeError as exc:
        _fail(file, f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", "")
    except (RecursionError, ValueError) as exc:  # nesting too deep, integers too long to convert
        _fail(file, f"cannot be read as JSON ({type(exc).__name__}: {exc!s:.200})", "")
    try:  # a lone surrogate written as a \u escape parses, but is not text and cannot be written back
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        _fail(file, f"holds text that is not valid Unicode ({exc.reason})", "")
    return value


def read_limited(path: Path, file: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of regular file `path`; ExportError if missing, not a regular file or over `max_bytes`."""
    if not path.exists() and not path.is_symlink():
        _fail(file, "is missing", "")
    if path.is_symlink() or not path.is_file():
        _fail(file, "is not a regular file (symlinks and directories are refused)", "")
    try:
        size = path.stat().st_size
        if size > max_bytes:
            _too_large(file, size, max_bytes)
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)  # the file may have grown since stat
    except OSError as exc:
        _fail(file, f"cannot be read ({exc.strerror or exc})", "")
    if len(data) > max_bytes:
        _too_large(file, len(data), max_bytes)
    return data


def check_size(data: bytes, file: str, max_bytes: int) -> None:
    """ExportError if `data` is over `max_bytes`."""
    if len(data) > max_bytes:
        _too_large(file, len(data), max_bytes)


def forbidden_keys(value: Any, path: str) -> Iterator[str]:
    """Key paths under `value` whose key names an LM, an endpoint or a credential (case and '-' ignored)."""
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if str(key).casefold().replace("-", "_") in FORBIDDEN_KEYS:
                yield here
            yield from forbidden_keys(item, here)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from forbidden_keys(item, f"{path}[{index}]")


def _no_duplicates(pairs: list[tuple[str, Any]], file: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            others = ", ".join(sorted({k for k, _ in pairs} - {key}))[:200]
            raise ExportError(
                file,
                f"duplicate key {key!r} (in an object that also has: {others or 'nothing else'})",
                "Keep one value per key; the file was not written by scoperag or was edited by hand",
                key_path=key,
            )
        result[key] = value
    return result


def _no_constant(name: str, file: str) -> NoReturn:
    raise ExportError(file, f"contains {name}, which is not a JSON number", "Use a finite number")


def _finite_float(raw: str, file: str) -> float:
    value = float(raw)
    if not math.isfinite(value):
        raise ExportError(file, f"number {raw[:40]} overflows to infinity", "Use a finite number")
    return value


def _too_large(file: str, size: int, max_bytes: int) -> NoReturn:
    raise ExportError(
        file,
        f"is {size} bytes, over the {max_bytes}-byte limit",
        "Check that this is the right file; an export this large is not one scoperag wrote",
    )


def _fail(file: str, problem: str, key_path: str) -> NoReturn:
    raise ExportError(file, problem, "Re-create it with `scoperag export` (or re-download it)", key_path=key_path)
