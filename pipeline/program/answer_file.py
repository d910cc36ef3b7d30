"""The answer file of `scoperag ask --questions`: one JSON line per answer, appended, flushed and fsynced as each
answer comes, so a kill loses at most the line being written and a rerun into the same file resumes after the
answers it holds (a last line a stop cut short is written again).

One run holds the file under an exclusive lock (flock) from before it reads it to after its last line, so a
second run on the same file is refused by name instead of asking every question again beside it. What the file
holds is trusted only as far as it is shaped: every line is held to the schema of an answer (its id, its
question, then the event `ask --json` prints), and a file that holds anything else is left as it is. The only
bytes ever cut are those of an answer line a stop cut short: a last line that starts as answer lines start,
after at least one whole answer line. A symlink, a device (/dev/null), a pipe or a directory is refused as --out.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pipeline.errors import ScopeRagError
from pipeline.program.events import Completed, Failed

# How every answer line starts: json.dumps of a record whose first key is its id.
ANSWER_LINE_START = b'{"id": "'
MAX_ID_CHARS = 200


class AnswerFileError(ScopeRagError):
    """An --out file that cannot take this run's answers (another run holds it, it is no regular file, or it holds
    lines `ask --questions` did not write): it is left as it is."""


@dataclass(frozen=True)
class Resumed:
    """What an existing answer file holds: the phase of each id's last line ("completed" or "error") and the
    question it answered, how many bytes of it are whole lines, and the number of a last line a stop cut short
    (None: none was)."""

    phases: dict[str, str]
    keep_bytes: int
    cut_line: int | None = None
    questions: dict[str, str] = field(default_factory=dict)

    @property
    def answered(self) -> set[str]:
        """The ids answered (a failed question is asked again)."""
        return {key for key, phase in self.phases.items() if phase == "completed"}


def answer_line(raw: bytes) -> tuple[str, str, str] | None:
    """(id, phase, question) of a line `ask --questions` writes, held to its schema: an id and a question, then
    the completed event `ask --json` prints, or the error event with its history id; None for any other line."""
    try:
        record = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    key, question, phase = record.pop("id", None), record.pop("question", None), record.get("phase")
    if not isinstance(key, str) or not 0 < len(key) <= MAX_ID_CHARS or not isinstance(question, str):
        return None
    try:
        if phase == "completed":
            Completed.model_validate(record)
        elif phase == "error":
            if not isinstance(record.pop("history_id", None), str | None):
                return None
            Failed.model_validate(record)
        else:
            return None
    except ValidationError:
        return None
    return key, phase, question


def read_answers(path: Path, data: bytes) -> Resumed:
    """The answers `data` (the bytes of the answer file `path`) holds; AnswerFileError naming the first line no run
    wrote. A last line without its line end is a whole answer (kept), or one a stop cut short (written again) when
    it starts as answer lines start and a whole answer line precedes it; anything else is not ours."""
    *whole, last = data.split(b"\n")
    phases: dict[str, str] = {}
    questions: dict[str, str] = {}
    for number, raw in enumerate(whole, start=1):
        if not raw.strip():
            continue
        record = answer_line(raw)
        if record is None:
            raise AnswerFileError(
                f"{path} line {number} is not an answer `scoperag ask --questions` wrote: it was left as it is; "
                "give another --out (or move this file away) to start a new one"
            )
        phases[record[0]], questions[record[0]] = record[1], record[2]
    if not last.strip():
        return Resumed(phases, len(data), questions=questions)
    record = answer_line(last)
    if record is not None:
        phases[record[0]], questions[record[0]] = record[1], record[2]
        return Resumed(phases, len(data), questions=questions)
    if phases and last.startswith(ANSWER_LINE_START):  # an answer line a stop cut short: it is written again
        return Resumed(phases, len(data) - len(last), cut_line=len(whole) + 1, questions=questions)
    raise AnswerFileError(
        f"{path} line {len(whole) + 1} is not an answer `scoperag ask --questions` wrote, nor one a stop cut short: "
        "it was left as it is; give another --out (or move this file away) to start a new one"
    )


def read_answer_file(path: Path) -> Resumed:
    """What the answer file `path` holds, read without its lock (nothing when it does not exist); see
    `read_answers`."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Resumed({}, 0)
    except OSError as exc:
        raise AnswerFileError(f"{path} cannot be read ({exc.strerror}): give another --out") from None
    return read_answers(path, data)


class AnswerFile:
    """The --out file of one run, open and locked (flock, exclusive) until `close`: read once under the lock, then
    appended to by its writer. A file this run created and wrote nothing to is removed again on close."""

    def __init__(self, path: Path) -> None:
        self.path = path
        _refuse_other_kinds(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        nofollow = getattr(os, "O_NOFOLLOW", 0)
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | nofollow, 0o644)
            self.created = True
        except FileExistsError:
            self._fd = self._open_existing(path, os.O_RDWR | nofollow)
            self.created = False
        try:
            if not stat.S_ISREG(os.fstat(self._fd).st_mode):  # swapped for something else since the check
                raise AnswerFileError(f"--out {path} is not a regular file: name a file for the answers")
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise AnswerFileError(
                f"another `scoperag ask --questions` is writing to {path} (it holds the file's lock): wait for it "
                "to end, or give another --out"
            ) from None
        except BaseException:
            os.close(self._fd)
            raise
        self._closed = False
        self.written = 0

    @staticmethod
    def _open_existing(path: Path, flags: int) -> int:
        try:
            return os.open(path, flags)
        except OSError as exc:
            raise AnswerFileError(f"--out {path} cannot be opened ({exc.strerror}): give another --out") from None

    def read(self) -> Resumed:
        """What the file holds (see `read_answers`), read under the lock."""
        os.lseek(self._fd, 0, os.SEEK_SET)
        parts = []
        while block := os.read(self._fd, 1 << 20):
            parts.append(block)
        return read_answers(self.path, b"".join(parts))

    def writer(self, resumed: Resumed) -> AnswerWriter:
        """The writer of this run's lines: after the whole lines `resumed` found (the bytes of a line a stop cut
        short are cut first), a whole last line without its line end ended first."""
        size = os.fstat(self._fd).st_size
        if size > resumed.keep_bytes:
            os.ftruncate(self._fd, resumed.keep_bytes)
        elif resumed.keep_bytes and os.pread(self._fd, 1, resumed.keep_bytes - 1) != b"\n":
            os.lseek(self._fd, 0, os.SEEK_END)
            os.write(self._fd, b"\n")
        if self.created:
            _sync_directory(self.path.parent)
        return AnswerWriter(self)

    def append(self, data: bytes) -> None:
        """Append `data` and make it durable (called under the writer's lock)."""
        os.lseek(self._fd, 0, os.SEEK_END)
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        os.fsync(self._fd)
        self.written += 1

    def close(self) -> None:
        """Release the lock; a file this run created and wrote no answer to is removed."""
        if self._closed:
            return
        self._closed = True
        if self.created and self.written == 0 and os.fstat(self._fd).st_size == 0:
            self.path.unlink(missing_ok=True)
        os.close(self._fd)

    def __enter__(self) -> AnswerFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _refuse_other_kinds(path: Path) -> None:
    """AnswerFileError for an --out that is a symlink, or exists and is not a regular file."""
    try:
        status = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISLNK(status.st_mode):
        target = path.readlink()
        raise AnswerFileError(
            f"--out {path} is a symbolic link (to {target}): answers are not written through a link; name the file "
            "itself as --out"
        )
    if not stat.S_ISREG(status.st_mode):
        raise AnswerFileError(
            f"--out {path} is not a regular file (a directory, a device or a pipe): name a file for the answers"
        )


class AnswerWriter:
    """Appends answer lines to a locked answer file: each one flushed and fsynced before the next is taken, so a
    kill loses at most the line being written. Safe from several threads; once closed, lines are refused (not
    written)."""

    def __init__(self, file: AnswerFile) -> None:
        self._file = file
        self._lock = threading.Lock()
        self._closed = False

    def write(self, record: Mapping[str, Any]) -> bool:
        """Append `record` as one line and make it durable; False when the writer is closed (nothing written)."""
        data = json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n"
        with self._lock:
            if self._closed:
                return False
            self._file.append(data)
            return True

    def close(self) -> None:
        """Write no further line (waits for a line being written to end)."""
        with self._lock:
            self._closed = True

    @property
    def written(self) -> int:
        return self._file.written

    @property
    def lock(self) -> threading.Lock:
        """Held while a line is written: whoever records an answer elsewhere first takes it too."""
        return self._lock

    @property
    def closed(self) -> bool:
        return self._closed


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
