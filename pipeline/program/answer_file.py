"""The answer file of `scoperag ask --questions`: one JSON line per answer, appended, flushed and fsynced as each
answer comes, so a kill loses at most the line being written and a rerun into the same file resumes after the
answers it holds (a last line a stop cut short is written again)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import ScopeRagError


class AnswerFileError(ScopeRagError):
    """An --out file that holds lines `ask --questions` did not write: it is left as it is."""


@dataclass(frozen=True)
class Resumed:
    """What an existing answer file holds: the phase of each id's last line ("completed" or "error"), how many
    bytes of it are whole lines, and the number of a last line a stop cut short (None: none was)."""

    phases: dict[str, str]
    keep_bytes: int
    cut_line: int | None = None

    @property
    def answered(self) -> set[str]:
        """The ids answered (a failed question is asked again)."""
        return {key for key, phase in self.phases.items() if phase == "completed"}


def read_answer_file(path: Path) -> Resumed:
    """The answers already in `path` (none when it does not exist); a last line without its line end is cut
    (a stop while it was written) unless it is a whole answer. AnswerFileError for a line no run wrote."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Resumed({}, 0)
    except OSError as exc:
        raise AnswerFileError(f"{path} cannot be read ({exc.strerror}): give another --out") from None
    *whole, last = data.split(b"\n")
    phases: dict[str, str] = {}
    for number, raw in enumerate(whole, start=1):
        if not raw.strip():
            continue
        record = _answer_record(raw)
        if record is None:
            raise AnswerFileError(
                f"{path} line {number} is not an answer `scoperag ask --questions` wrote: it was left as it is; "
                "give another --out (or move this file away) to start a new one"
            )
        phases[record[0]] = record[1]
    if not last.strip():
        return Resumed(phases, len(data))
    record = _answer_record(last)
    if record is None:  # cut short by a stop: it is written again
        return Resumed(phases, len(data) - len(last), cut_line=len(whole) + 1)
    phases[record[0]] = record[1]
    return Resumed(phases, len(data))


def _answer_record(raw: bytes) -> tuple[str, str] | None:
    """(id, phase) of an answer line, None when it is not one."""
    try:
        record = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(record, dict):
        return None
    key, phase = record.get("id"), record.get("phase")
    if not isinstance(key, str) or phase not in ("completed", "error"):
        return None
    return key, phase


class AnswerWriter:
    """Appends answer lines to a file: each one flushed and fsynced before the next is taken, so a kill loses at
    most the line being written. Safe from several threads; once closed, lines are refused (not written)."""

    def __init__(self, path: Path, keep_bytes: int) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        existed = path.exists()
        self.path = path
        self._file = path.open("ab")
        if self._file.tell() > keep_bytes:  # a line cut by a stop: it is written again from its start
            self._file.truncate(keep_bytes)
        elif keep_bytes and not _ends_with_newline(path):
            self._file.write(b"\n")  # a whole last line without its line end
        self._lock = threading.Lock()
        self._closed = False
        self.written = 0
        if not existed:
            _sync_directory(path.parent)

    def write(self, record: Mapping[str, Any]) -> bool:
        """Append `record` as one line and make it durable; False when the writer is closed (nothing written)."""
        data = json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n"
        with self._lock:
            if self._closed:
                return False
            self._file.write(data)
            self._file.flush()
            os.fsync(self._file.fileno())
            self.written += 1
            return True

    def close(self) -> None:
        """Write no further line (waits for a line being written to end)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._file.close()

    @property
    def lock(self) -> threading.Lock:
        """Held while a line is written: whoever records an answer elsewhere first takes it too."""
        return self._lock

    @property
    def closed(self) -> bool:
        return self._closed


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


def _sync_directory(directory: Path) -> None:
    """Make a new file's directory entry durable (best effort: not every platform can open a directory)."""
    try:
        handle = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)
