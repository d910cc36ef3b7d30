"""Strict JSON in, canonical JSON out: the byte-level rules every export and profile file follows."""

from __future__ import annotations

import hashlib
import json
import math
import unicodedata
from pathlib import Path
from typing import Any, NoReturn

from pipeline.errors import ExportError
from pipeline.files import UnreadableFile, read_regular

MAX_FILE_BYTES = 10 * 1024 * 1024
# Keys that look like LM settings, endpoints or credentials, compared in their normal form (`normal_key`: NFKC,
# case-folded, letters and digits only, so apiBase, api_base, API-BASE and OPENAI_API_BASE all meet "apibase").
# Loading refuses every key its schema does not know; these only make the refusal say what such a key is.
# Keys that choose an LM.
FORBIDDEN_KEYS = frozenset({"lm", "model", "modellist", "provider"})
# Keys naming an endpoint or carrying a credential.
ENDPOINT_KEYS = frozenset({"url", "uri", "host", "headers", "proxy", "proxies", "server"})
# Parts of a key that make it one of those wherever they occur (azure_endpoint, openai_api_key, api_base_url).
ENDPOINT_KEY_PARTS = (
    "apibase",
    "baseurl",
    "apiurl",
    "apihost",
    "endpoint",
    "apikey",
    "apitoken",
    "authtoken",
    "accesstoken",
    "secret",
    "password",
    "credential",
    "authorization",
    "bearer",
)


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
    """The bytes of regular file `path`; ExportError if missing, not a regular file (a symlink included) or over
    `max_bytes` (pipeline.files.read_regular: never reads more than `max_bytes + 1` bytes and never blocks)."""
    try:
        return read_regular(path, max_bytes, follow_symlinks=False)
    except UnreadableFile as exc:
        if exc.size is not None:
            _too_large(file, exc.size, max_bytes)
        _fail(file, exc.problem, "")


def check_size(data: bytes, file: str, max_bytes: int) -> None:
    """ExportError if `data` is over `max_bytes`."""
    if len(data) > max_bytes:
        _too_large(file, len(data), max_bytes)


def normal_key(key: str) -> str:
    """`key` as keys are compared: NFKC, case-folded, with every character but letters and digits removed."""
    return "".join(c for c in unicodedata.normalize("NFKC", key).casefold() if c.isalnum())


def is_forbidden_key(key: str) -> bool:
    """True for a key that chooses an LM or names an endpoint or a credential (only the wording of a refusal
    depends on it: every key an export's schema does not know is refused, whatever it looks like)."""
    normal = normal_key(key)
    return normal in ENDPOINT_KEYS or normal in FORBIDDEN_KEYS or any(part in normal for part in ENDPOINT_KEY_PARTS)


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
