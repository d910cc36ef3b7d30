"""A full or read-only disk (issue 36, D9): every command says what it could not write, where, and the way out, with
no traceback, and what was there before is kept (a published index, a traces file).

The disks are real: a small tmpfs (full) and a read-only bind mount, each made in a mount namespace of the command's
own (`unshare -m`, as root), so nothing else on the machine sees them. Without that (not root, no unshare) these tests
skip and say why.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.store import open_store
from tests.conftest import DEMO_DIR
from tests.support.compromised_server import CooperativeLM, openai_compatible_server
from tests.support.serve_process import scoperag_command

ROOT = Path(__file__).resolve().parents[2]


def _why_not() -> str | None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return "needs root and unshare to make a full or read-only disk of its own"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    return None if probe.returncode == 0 else f"unshare -m is refused here: {probe.stderr.decode()[:200]}"


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")


def in_namespace(setup: str, argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`scoperag ARGV` after `setup` (mount commands) in a mount namespace of its own."""
    command = f"mount --make-rprivate / && {setup} && exec {shlex.join([*scoperag_command(), *argv])}"
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", command],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=300,
        check=False,
    )


def read_only(folder: Path) -> str:
    return f"mount --bind {shlex.quote(str(folder))} {shlex.quote(str(folder))} && mount -o remount,bind,ro {folder}"


def _said(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return " ".join(done.stderr.split())


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The demo corpus indexed once, in a folder of its own (made read-only by the tests that need it), and its
    generation."""
    index = tmp_path_factory.mktemp("kept") / "index"
    done = subprocess.run(
        [*scoperag_command(), "index", str(DEMO_DIR), "--out", str(index), "--embedder", "hash", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return index, json.loads(done.stdout)["generation"]


def test_a_build_onto_a_full_disk_says_so_and_publishes_nothing(tmp_path: Path) -> None:
    full = tmp_path / "full"
    full.mkdir()
    done = in_namespace(
        f"mount -t tmpfs -o size=300k tmpfs {full}",
        ["index", str(DEMO_DIR), "--out", str(full / "index"), "--embedder", "hash"],
    )
    said = _said(done)
    assert done.returncode == 2, said
    assert f"scoperag: error: cannot write the index at {full / 'index'}" in said
    assert "the disk is full; free some space, or write elsewhere" in said
    assert "nothing was published: the index there is as it was" in said


def test_a_build_onto_a_read_only_disk_says_so_and_the_index_there_still_opens(built: tuple[Path, str]) -> None:
    index, generation = built
    done = in_namespace(
        read_only(index.parent), ["index", str(DEMO_DIR), "--out", str(index), "--embedder", "hash", "--yes"]
    )
    said = _said(done)
    assert done.returncode == 2 and "the file system is read-only; write to a writable place" in said, said
    assert f"cannot write the index at {index}" in said
    assert open_store(index).manifest.generation == generation


@pytest.fixture
def lm_url() -> Iterator[str]:
    with openai_compatible_server(CooperativeLM(), "storage-lm") as url:
        yield url


def test_ask_and_label_on_a_read_only_disk_say_so_and_the_answer_is_still_shown(
    tmp_path: Path, lm_url: str, built: tuple[Path, str]
) -> None:
    index, locked = built[0], tmp_path / "locked"
    locked.mkdir()
    env = {"DSPY_CACHEDIR": str(tmp_path / "dspy"), "SCOPERAG_CACHE_DIR": str(tmp_path / "cache")}
    question = ["ask", "What is the monthly rent?", "--property", "Banda Lane", "--index", str(index)]
    asked = in_namespace(read_only(locked), [*question, "--lm", lm_url, "--history", str(locked / "h.sqlite")], env)
    said = _said(asked)
    assert asked.returncode == 0 and "1. What is the monthly rent?" in asked.stdout, said  # the answer is shown
    assert f"cannot write the question history at {locked / 'h.sqlite'}" in said and "not recorded" in said

    history = tmp_path / "h.sqlite"
    done = subprocess.run(
        [*scoperag_command(), *question, "--lm", lm_url, "--history", str(history), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **env},
        check=True,
    )
    history_id = json.loads(done.stdout)["history_id"]
    traces = locked / "labels.jsonl"
    traces.write_text("")
    label = ["label", history_id, "--case", "property", "--fact", "KSH 285,000", "--gold", "banda-lane/lease.pdf"]
    labelled = in_namespace(
        read_only(locked),
        [*label, "--traces", str(traces), "--history", str(history), "--index", str(index), "--yes"],
    )
    said = _said(labelled)
    assert labelled.returncode == 2, said
    assert f"cannot write the label at {traces}: the file system is read-only" in said
    assert "(the traces file is as it was)" in said and traces.read_text() == ""


def test_any_command_that_meets_a_read_only_disk_names_it_without_a_traceback(
    tmp_path: Path, built: tuple[Path, str]
) -> None:
    index, locked = built[0], tmp_path / "locked"
    locked.mkdir()
    evaluate = ["evaluate", "--traces", "datasets/demo-traces", "--split", "dev", "--retrieval-only", "--mode", "bm25"]
    done = in_namespace(
        read_only(locked), [*evaluate, "--limit", "4", "--index", str(index), "--out", str(locked / "out")]
    )
    said = _said(done)
    assert done.returncode == 2, said
    assert f"scoperag: error: cannot write {locked / 'out'}" in said
    assert "the file system is read-only; write to a writable place" in said
