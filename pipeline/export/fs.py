"""Atomic publication: a directory or file appears complete or not at all; nothing is half-written."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import glob
import os
import re
import secrets
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pipeline.errors import ExportError
from pipeline.files import fsync_path, host_tag, process_alive

_AT_FDCWD = -100  # renameat2: paths relative to the working directory
_RENAME_EXCHANGE = 2  # renameat2: swap the two paths atomically


def check_target(out_dir: Path, *, overwrite: bool) -> None:
    """ExportError if `out_dir` is not a directory, or is a non-empty one and `overwrite` is False."""
    if out_dir.name in ("", ".", ".."):
        raise ExportError(str(out_dir), "is not a named directory", "Give a directory path such as exports/run-1")
    if out_dir.is_symlink() or (out_dir.exists() and not out_dir.is_dir()):
        raise ExportError(str(out_dir), "exists and is not a directory", "Choose another output directory")
    if not overwrite and _non_empty_dir(out_dir):
        raise ExportError(
            str(out_dir),
            "already exists and is not empty",
            "Replace it with --overwrite, or choose another output directory",
        )


def _owner_tag() -> str:
    """host-pid of this process, as written into the names of its scratch directories."""
    return f"{host_tag()}-{os.getpid()}"


def remove_abandoned(out_dir: Path) -> list[Path]:
    """Scratch directories beside `out_dir` left by a killed process of this host, removed.

    A directory is abandoned only when its name carries a host and pid that `process_alive` says
    are gone; one of a live process, of another host, or without an owner in its name is left alone.
    """
    removed = []
    for path in out_dir.parent.glob(f".{glob.escape(out_dir.name)}.*-*-*-*"):
        match = re.fullmatch(rf"\.{re.escape(out_dir.name)}\.(?:tmp|old)-([A-Za-z0-9_.]+)-(\d+)-\w+", path.name)
        if match is None or not path.is_dir() or path.is_symlink():
            continue
        if not process_alive(match.group(1), int(match.group(2))):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


@contextlib.contextmanager
def staged_dir(out_dir: Path) -> Iterator[Path]:
    """A fresh temporary directory beside `out_dir` (same file system), removed unless published.

    Its name carries this host and pid, so the next export to `out_dir` removes it if a SIGKILL
    left it behind.
    """
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        remove_abandoned(out_dir)
        staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-{_owner_tag()}-", dir=out_dir.parent))
    except OSError as exc:
        raise _write_error(out_dir, exc) from exc
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # already gone once published (a SIGKILL leaves it)


def write_files(directory: Path, files: Mapping[str, bytes]) -> None:
    """Each file written and flushed to disk inside `directory`."""
    try:
        for name, data in files.items():
            with (directory / name).open("xb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        fsync_path(directory)
    except OSError as exc:
        raise _write_error(directory, exc) from exc


def publish_dir(staging: Path, out_dir: Path, *, overwrite: bool) -> None:
    """`staging` renamed to `out_dir`; an existing non-empty `out_dir` is replaced only when `overwrite`.

    The replacement is one atomic exchange of the two directories (Linux renameat2 RENAME_EXCHANGE), so a
    process killed at any moment leaves `out_dir` holding the previous or the new content. Where that
    is not available, `out_dir` is renamed aside and `staging` renamed in: a kill between the two
    renames leaves no `out_dir` (the previous content is in `.<name>.old-*` beside it).
    """
    check_target(out_dir, overwrite=overwrite)
    try:
        previous: Path | None = None  # where the replaced content is once `staging` is published
        if not _non_empty_dir(out_dir):
            staging.rename(out_dir)  # rename(2) replaces an empty directory atomically
        elif _exchange(staging, out_dir):
            previous = staging
        else:
            previous = out_dir.parent / f".{out_dir.name}.old-{_owner_tag()}-{secrets.token_hex(4)}"
            out_dir.rename(previous)
            try:
                staging.rename(out_dir)
            except OSError:
                previous.rename(out_dir)  # put the previous export back
                raise
        fsync_path(out_dir.parent)
        if previous is not None:
            shutil.rmtree(previous, ignore_errors=True)
    except OSError as exc:
        raise _write_error(out_dir, exc) from exc


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths atomically (renameat2 RENAME_EXCHANGE); False where that is unsupported."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):  # old kernel, or a file system without it
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))


@functools.cache
def _renameat2() -> Any:
    """libc's renameat2 (Linux, glibc >= 2.28), or None."""
    if not sys.platform.startswith("linux"):
        return None
    function = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if function is not None:
        function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        function.restype = ctypes.c_int
    return function


def _non_empty_dir(path: Path) -> bool:
    return path.is_dir() and any(path.iterdir())


def _write_error(path: Path, exc: OSError) -> ExportError:
    return ExportError(
        str(path),
        f"could not be written ({exc.strerror or exc})",
        "Check the permissions and free space of its parent directory; nothing was replaced",
    )
