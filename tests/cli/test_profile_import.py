"""`scoperag profile import FILE` reads at most the 1 MiB a profile may have, from regular files only: an
endless device, a huge file or a FIFO is refused at once, by name, and nothing is written."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from pipeline.cli.main import main
from pipeline.export.profiles import MAX_PROFILE_BYTES

PROFILES = Path(".scoperag") / "profiles"


def _import(path: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["profile", "import", path, "--name", "beta"])
    return code, capsys.readouterr().err


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_an_endless_device_is_refused_without_reading_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _import("/dev/zero", capsys)
    assert code == 2 and "/dev/zero" in err and "not a regular file" in err
    assert not PROFILES.exists()


def test_a_file_over_the_limit_is_refused_by_its_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:
        handle.truncate(300 * 1024 * 1024)  # sparse: 300 MB long, nothing on disk to read
    code, err = _import(str(huge), capsys)
    assert code == 2 and f"is {300 * 1024 * 1024} bytes, over the {MAX_PROFILE_BYTES}-byte limit" in err
    just_over = tmp_path / "over.json"
    just_over.write_bytes(b" " * (MAX_PROFILE_BYTES + 1))
    code, err = _import(str(just_over), capsys)
    assert code == 2 and f"over the {MAX_PROFILE_BYTES}-byte limit" in err
    assert not PROFILES.exists()


def test_a_fifo_is_refused_instead_of_waiting_for_a_writer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "profile.fifo"
    os.mkfifo(fifo)
    result: list[tuple[int, str]] = []
    worker = threading.Thread(target=lambda: result.append(_import(str(fifo), capsys)), daemon=True)
    worker.start()
    worker.join(30)
    if worker.is_alive():  # unblock the reader so the test process can end, then fail
        with fifo.open("wb"):
            pass
        pytest.fail("profile import blocked on a FIFO")
    ((code, err),) = result
    assert code == 2 and "not a regular file" in err


def test_a_directory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _import(str(tmp_path), capsys)
    assert code == 2 and "not a regular file" in err
