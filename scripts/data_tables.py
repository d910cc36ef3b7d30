"""Checks for the tables the dataset builders read from their TOML data files.

A builder's data file (scripts/demo_corpus/, scripts/demo_traces/, scripts/contract_corpus/) is checked when
it is loaded, so a typo stops the run with an error that names the file, the table and the field rather than
surfacing later as a wrong label. `where` is that name so far ("dev.toml: examples[3]"); each check adds the
field it looked at. Every error is a ValueError.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


def load(path: Path) -> dict[str, Any]:
    """The TOML file at `path`; ValueError names the file when it is no valid TOML."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path.name}: {exc}") from exc


def table(raw: Any, fields: set[str], required: set[str], where: str) -> dict[str, Any]:
    """`raw` when it is a table with only `fields` and all of `required`; ValueError names what differs."""
    if not isinstance(raw, dict) or set(raw) - fields or required - set(raw):
        found = sorted(raw) if isinstance(raw, dict) else type(raw).__name__
        raise ValueError(
            f"{where}: expected fields {sorted(required)} (optional {sorted(fields - required)}), got {found}"
        )
    return raw


def tables(data: dict[str, Any], key: str, where: str) -> list[Any]:
    """The array of tables `data[key]` (empty when absent); ValueError when it is something else."""
    raw = data.get(key, [])
    if not isinstance(raw, list):
        raise ValueError(f"{where}.{key}: expected an array of tables, got {raw!r}")
    return raw


def text(raw: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
    """The string `raw[key]` (`default` when absent and a default is given)."""
    value = raw.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"{where}.{key}: expected a string, got {value!r}")
    return value


def texts(raw: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    """The list of strings `raw[key]` as a tuple (empty when absent)."""
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}.{key}: expected a list of strings, got {value!r}")
    return tuple(value)


def one_of(value: Any, allowed: Any, where: str) -> Any:
    """`value` when it is in `allowed` (a collection of names); ValueError lists them otherwise."""
    if value not in allowed:
        raise ValueError(f"{where}: expected one of {sorted(allowed)}, got {value!r}")
    return value
