"""What both fuzz targets (benchmarks/fuzz_export.py, benchmarks/fuzz_request.py) draw from or record: huge
values, hand-made JSON traps, any text, and how a failing input is written down.
"""

from __future__ import annotations

import base64
from typing import Any, Protocol

from hypothesis import strategies as st

Record = dict[str, Any]


class Target(Protocol):
    """One fuzz target: draws an input from `data`, records it in `record`, checks it and names the outcome."""

    name: str

    def check(self, data: st.DataObject, record: Record) -> str: ...


# Bigger than the property tests' HUGE_VALUES (and nesting 200 deep, not 50): the fuzzer can afford them.
HUGE = ("x" * 100_000, 10**400, -(2**63) - 1, 1e308, [None] * 5000, {"k" * 300: 1}, "\x00" * 50, "\u202e" * 50)
RAW_TRAPS = (
    b"",
    b"null",
    b'{"a": 1, "a": 2}',
    b'{"a": NaN}',
    b'{"a": -Infinity}',
    b'{"a": 1e999}',
    b'{"a": "\\ud800"}',
    b'{"a": ' + b"9" * 5000 + b"}",
    b"\xef\xbb\xbf{}",
    b"{}\x00",
    b"\xff\xfe{\x00}\x00",
)
# Keys an added JSON member may have: any text, or one an LM config or the export format uses.
ADD_KEYS = st.text(max_size=10) | st.sampled_from(["lm", "fields", "api_key", "model", "metadata"])
ANY_TEXT = st.text(alphabet=st.one_of(st.characters(), st.sampled_from(["\ud800", "\udfff", "\u200b", "\u202e"])))


def deep(depth: int) -> bytes:
    """A JSON array nested `depth` deep."""
    return b"[" * depth + b"]" * depth


def shown(data: bytes, limit: int = 4000) -> str:
    """Bytes for a failure file: text when they are UTF-8, else base64 (both cut at `limit` bytes)."""
    try:
        return data[:limit].decode("utf-8")
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(data[:limit]).decode()
