"""Loading an export leaves the caller's program untouched, refuses another shape and older formats (with the
way out), and removes the scratch directories of dead exports."""

from __future__ import annotations

import json
import os
from pathlib import Path

import dspy
import pytest

from pipeline.errors import ExportError
from pipeline.export import MANIFEST, load_export
from pipeline.program.module import ScopedQA
from pipeline.store import Store
from tests.support.export_edits import edit_manifest, edit_program, rejects, save_test_export


def test_callers_program_is_untouched_by_a_failed_load(export_dir: Path, demo_store: Store) -> None:
    edit_program(export_dir, lambda s: s["hyde"].update(lm={"api_key": "sk-x"}))
    mine = ScopedQA(demo_store)
    mine.hyde.demos = [dspy.Example(question="mine", passage="my passage")]
    before = json.dumps(mine.dump_state(), sort_keys=True)
    with pytest.raises(ExportError):
        load_export(export_dir, mine)
    assert json.dumps(mine.dump_state(), sort_keys=True) == before


def test_callers_program_is_untouched_by_a_successful_load(export_dir: Path, demo_store: Store) -> None:
    mine = ScopedQA(demo_store)
    before = mine.dump_state()
    loaded = load_export(export_dir, mine).program
    assert mine.dump_state() == before and loaded.decompose.demos


def test_rejects_a_program_of_another_shape(export_dir: Path, demo_store: Store) -> None:
    other = ScopedQA(demo_store)
    other.rerank = dspy.Predict("question -> answer")
    with pytest.raises(ExportError, match="the program has predictors"):
        load_export(export_dir, other)


def test_scratch_directories_of_dead_exports_are_removed(tmp_path: Path, program: ScopedQA) -> None:
    import re
    import socket
    import subprocess
    import sys

    out = tmp_path / "program"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    host = re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname())
    dead = tmp_path / f".program.tmp-{host}-{gone.pid}-abc123"
    dead_old = tmp_path / f".program.old-{host}-{gone.pid}-00ff"
    alive = tmp_path / f".program.tmp-{host}-{os.getpid()}-def456"
    elsewhere = tmp_path / f".program.tmp-otherhost-{gone.pid}-abc123"
    unowned = tmp_path / ".program.tmp-x1y2z3"
    for path in (dead, dead_old, alive, elsewhere, unowned):
        path.mkdir()
        (path / MANIFEST).write_text("{}")
    save_test_export(program, out)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(p.name for p in (alive, elsewhere, unowned, out))


@pytest.mark.parametrize("old", ["scoperag-program/v1", "scoperag-program/v2"])
def test_an_export_from_before_answer_lines_is_refused_with_the_way_out(
    export_dir: Path, demo_store: Store, old: str
) -> None:
    edit_manifest(export_dir, lambda m: m.update(format=old))
    error = rejects(export_dir, demo_store, "is not supported")
    assert error.key_path == "format" and "re-export" in error.fix
