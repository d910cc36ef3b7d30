"""Fixtures of the export tests: a program with demos and its export."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.program.module import ScopedQA
from pipeline.store import Store
from tests.support.export_edits import save_test_export, with_demos


@pytest.fixture
def program(demo_store: Store) -> ScopedQA:
    """A program over the demo store with demos on three predictors."""
    return with_demos(ScopedQA(demo_store))


@pytest.fixture
def export_dir(tmp_path: Path, program: ScopedQA) -> Path:
    """`program` exported with a full record under tmp_path."""
    out = tmp_path / "export"
    save_test_export(program, out)
    return out
