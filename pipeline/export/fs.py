"""Atomic publication: a directory or file appears complete or not at all; nothing is half-written."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from pipeline.errors import ExportError


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
            "Pass overwrite=True (CLI: --overwrite) to replace it, or choose another output directory",
        )


@contextlib.contextmanager
def staged_dir(out_dir: Path) -> Iterator[Path]:
    """A fresh temporary directory beside `out_dir` (same file system), removed unless published."""
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    except OSError as exc:
        raise _write_error(out_dir, exc) from exc
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # already gone once published


def write_files(directory: Path, files: Mapping[str, bytes]) -> None:
    """Each file written and flushed to disk inside `directory`."""
    try:
        for name, data in files.items():
            with (directory / name).open("xb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        _fsync_dir(directory)
    except OSError as exc:
        raise _write_error(directory, exc) from exc


def publish_dir(staging: Path, out_dir: Path, *, overwrite: bool) -> None:
    """`staging` renamed to `out_dir`; an existing non-empty `out_dir` is replaced only when `overwrite`."""
    check_target(out_dir, overwrite=overwrite)
    try:
        if _non_empty_dir(out_dir):
            old = out_dir.parent / f".{out_dir.name}.old-{secrets.token_hex(4)}"
            out_dir.rename(old)
            try:
                staging.rename(out_dir)
            except OSError:
                old.rename(out_dir)  # put the previous export back
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            staging.rename(out_dir)  # rename(2) replaces an empty directory atomically
        _fsync_dir(out_dir.parent)
    except OSError as exc:
        raise _write_error(out_dir, exc) from exc


def write_file_atomic(path: Path, data: bytes) -> None:
    """`path` holds `data` or its previous content, never a mix (temp file + fsync + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        temp.replace(path)
        _fsync_dir(path.parent)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _non_empty_dir(path: Path) -> bool:
    return path.is_dir() and any(path.iterdir())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_error(path: Path, exc: OSError) -> ExportError:
    return ExportError(
        str(path),
        f"could not be written ({exc.strerror or exc})",
        "Check the permissions and free space of its parent directory; nothing was replaced",
    )
