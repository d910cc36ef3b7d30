"""File-system helpers shared by index builds, the embedder check, exports, profiles, labels and question files:
bounded reads of regular files, hashing, fsync, atomic writes, locked appends in place, advisory locks (flock: one
writer at a time, released when the holder exits or is killed) and whether the process that left something behind
(a scratch directory, a RUNNING run) still lives."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import socket
import sqlite3
import stat
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, TypeVar

from pydantic import BaseModel, ValidationError

from pipeline.errors import LockHeld, ScopeRagError, StorageError

M = TypeVar("M", bound=BaseModel)


class UnreadableFile(ScopeRagError):
    """A file refused before it is read (missing, not a regular file, over a size bound) or that could not be read;
    `problem` says why as a phrase after the file's name, `size` is its size when that was the reason."""

    def __init__(self, path: Path, problem: str, size: int | None = None) -> None:
        super().__init__(f"{path} {problem}")
        self.path = path
        self.problem = problem
        self.size = size


def read_regular(path: Path, max_bytes: int, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file `path`, at most `max_bytes` of them; UnreadableFile otherwise.

    Never reads more than `max_bytes + 1` bytes and never blocks: a device (/dev/zero), a FIFO or a directory is
    refused by what the opened descriptor is, so nothing can be swapped in between a check and the read. Without
    `follow_symlinks`, a symlink is refused too."""
    if not path.exists() and not path.is_symlink():
        raise UnreadableFile(path, "is missing")
    links = "" if follow_symlinks else "symlinks, "
    if (not follow_symlinks and path.is_symlink()) or not path.is_file():
        raise UnreadableFile(path, f"is not a regular file ({links}directories, devices and pipes are refused)")
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow_symlinks else getattr(os, "O_NOFOLLOW", 0))
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        raise UnreadableFile(path, f"cannot be read ({exc.strerror or exc})") from None
    with os.fdopen(descriptor, "rb") as handle:
        try:
            status = os.fstat(handle.fileno())
            if not stat.S_ISREG(status.st_mode):
                raise UnreadableFile(path, "is not a regular file (devices, pipes and sockets are refused)")
            if status.st_size > max_bytes:
                raise UnreadableFile(path, _over(status.st_size, max_bytes), status.st_size)
            data = handle.read(max_bytes + 1)  # the file may have grown since fstat
        except OSError as exc:
            raise UnreadableFile(path, f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise UnreadableFile(path, _over(len(data), max_bytes), len(data))
    return data


def _over(size: int, max_bytes: int) -> str:
    return f"is {size} bytes, over the {max_bytes}-byte limit"


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fsync_path(path: Path) -> None:
    """fsync a file or a directory (a directory's fsync makes renames inside it durable)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_output(path: Path, mode: int | None = None, suffix: str = "") -> Iterator[BinaryIO]:
    """A binary handle whose bytes replace `path` only when the block ends without an exception.

    The bytes go to a uniquely named temp file beside `path` (so a crash or a concurrent writer never
    sees half a file), are fsynced, renamed over `path`, and the directory is fsynced; on any
    exception the temp file is removed and `path` keeps its previous content. `mode` sets the
    file's permission bits (mkstemp creates 0600); `suffix` ends the temp file's name.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.tmp-", suffix=suffix, dir=path.parent)
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            temp.chmod(mode)
        temp.replace(path)
        fsync_path(path.parent)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def write_file_atomic(path: Path, data: bytes) -> None:
    """`path` holds `data` or its previous content, never a mix (temp file + fsync + rename)."""
    with atomic_output(path) as handle:
        handle.write(data)


# Why writing failed, by errno, and the way out: a full disk, a read-only file system, no permission.
_STORAGE_PROBLEMS = {
    errno.ENOSPC: ("the disk is full", "free some space, or write elsewhere"),
    errno.EDQUOT: ("the disk quota is used up", "free some space, or write elsewhere"),
    errno.EROFS: ("the file system is read-only", "write to a writable place"),
    errno.EACCES: ("permission denied", "check the permissions of it and of its folder, or write elsewhere"),
    errno.EPERM: ("the operation is not permitted", "check the permissions of it and of its folder"),
}
# What SQLite says for the same (its errors carry no errno).
_SQLITE_PROBLEMS = (
    ("disk is full", errno.ENOSPC),
    ("readonly database", errno.EROFS),
    ("read-only", errno.EROFS),
    ("unable to open database file", errno.EACCES),
)


def storage_problem(exc: BaseException, path: Path | str | None = None) -> tuple[str, str] | None:
    """(why, way out) when `exc` is a failure to write to storage (an OSError of a full or read-only disk or of
    permissions, or SQLite's word for one: a file SQLite cannot open on a read-only file system at `path` is said
    to be read-only); None for any other error."""
    code = exc.errno if isinstance(exc, OSError) else None
    if code is None and isinstance(exc, sqlite3.Error):
        text = str(exc).casefold()
        code = next((c for words, c in _SQLITE_PROBLEMS if words in text), None)
        if code == errno.EACCES and path is not None and _read_only_at(Path(path)):
            code = errno.EROFS
    return _STORAGE_PROBLEMS.get(code) if code is not None else None


def _read_only_at(path: Path) -> bool:
    """Whether the file system holding `path` (or its nearest existing folder) is mounted read-only."""
    for place in (path, *path.parents):
        try:
            return bool(os.statvfs(place).f_flag & os.ST_RDONLY)
        except OSError:
            continue
    return False


@contextlib.contextmanager
def storage_errors(what: str, path: Path | str, kept: str = "") -> Iterator[None]:
    """Inside the block, a failure to write to storage becomes StorageError naming `what` and the file it failed on
    (else `path`), and saying what was `kept`."""
    try:
        yield
    except (OSError, sqlite3.Error) as exc:
        where = getattr(exc, "filename", None) or path
        problem = storage_problem(exc, where)
        if problem is None:
            raise
        raise StorageError(what, where, *problem, kept=kept) from exc


def append_locked(path: Path, extend: Callable[[bytes], bytes]) -> bytes:
    """Append to the file `path` names the bytes `extend(what it holds)` returns, under an exclusive lock (flock)
    held from the read to the write; returns what the file held before.

    The file is the one a symlink points to, written in place: its other hard links, its mode and its owner stay
    as they are (a new file is created 0644 less the umask). Two writers, threads or processes, never interleave
    or lose one another's bytes. `extend` raising appends nothing; a write that fails (a full disk) is cut back,
    so the file holds what it held, and a file this call created is removed again.
    """
    target = path.resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    while True:
        created = False
        try:
            fd = os.open(target, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
            created = True
        except FileExistsError:
            fd = os.open(target, os.O_RDWR | os.O_APPEND)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # a device or a FIFO would never end or never hold it
                raise ScopeRagError(f"{target} is not a regular file: labels are appended to a file")
            fcntl.flock(fd, fcntl.LOCK_EX)
            if not _still_at(fd, target):  # removed or replaced while we waited for the lock: open it again
                continue
            current = _read_all(fd)
            try:
                data = extend(current)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            except BaseException:
                os.ftruncate(fd, len(current))
                if created and not current:
                    target.unlink(missing_ok=True)
                raise
            return current
        finally:
            os.close(fd)


def _still_at(fd: int, path: Path) -> bool:
    """Whether the open file `fd` is still the file at `path`."""
    try:
        named = path.stat()
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    parts = []
    while block := os.read(fd, 1 << 20):
        parts.append(block)
    return b"".join(parts)


@contextlib.contextmanager
def exclusive_lock(path: Path, *, wait: bool) -> Iterator[None]:
    """Hold an exclusive lock on the file `path` (created if missing) for the `with` block.

    With `wait` the call blocks until the lock is free; without, LockHeld is raised at once. The
    holder's pid is written into the file so a refused caller can say who holds it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise LockHeld(path, os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def host_tag(host: str | None = None) -> str:
    """`host` (default: this machine's name) fit for a file name: letters, digits, '_' and '.' only (no '-')."""
    return re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname() if host is None else host) or "host"


def process_start(pid: int) -> str | None:
    """The start time of process `pid` in clock ticks since boot (Linux /proc), None if unknown."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None  # field 22 of stat; fields[0] is field 3


def process_alive(host: str, pid: int, start: str | None = None) -> bool:
    """False only when process `pid` of `host` is known to be gone; True while it may still run.

    Gone means: `host` is this machine and no process `pid` exists, or the one that does started at
    another time than `start` (when both are known: the pid was reused). Another host's process
    cannot be checked from here, so it counts as alive.
    """
    if not host or host_tag(host) != host_tag():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    current = process_start(pid)
    return start is None or current is None or current == start


def read_toml_model(path: Path, model: type[M], what: str, error: type[ScopeRagError]) -> M:
    """The TOML file at `path` validated as `model`; `error` names the file, what it is and every problem."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise error(f"{path}: cannot read {what}: {exc}") from exc
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise error(f"{path}: invalid {what}:\n{exc}") from exc
