"""Shared fixtures of the dataset-builder tests: the SEC 10-Q filings' pages, read once per session."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.scripts import load_script

SEC_SHARED = ROOT.parent / "shared" / "data" / "sec-10q"


@pytest.fixture(scope="session")
def sec_pages() -> dict[str, Sequence[str]]:
    """Every SEC 10-Q filing's pages as the index reads them (skips when the filings are not beside the project)."""
    docs: Path = SEC_SHARED / "docs"
    if not docs.is_dir():
        pytest.skip(f"{docs} not present")
    return dict(load_script("make_sec_traces").filing_texts(docs))
