"""Inspecting a recorded answer: `history ID` shows each sub-question once with its chunks and scores, the
guards and timings; `label` takes gold documents from the user and shows what it stores before it does."""

from __future__ import annotations

import io
from pathlib import Path

import dspy
import pytest

from pipeline.cli.main import main
from pipeline.evaluation.examples import load_examples
from pipeline.evaluation.history import History
from pipeline.intake.scope import resolve_scope
from pipeline.program.module import ScopedQA
from pipeline.store import open_store
from pipeline.store.embedders import HashEmbedder
from tests.conftest import DEMO_DIR
from tests.support.fakes import cooperative, scripted_lm

SUB_QUESTIONS = ["What is the monthly rent?", "Who is the tenant?"]


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("inspect-index")
    assert main(["index", str(DEMO_DIR), "--out", str(out), "--embedder", "hash", "--json"]) == 0
    return out


def record(index_dir: Path, history: Path, question: str, property_ref: str, owned_only: bool = False) -> str:
    """Ask `question` in `property_ref`'s scope (`owned_only`: its own documents alone, as a chip) with a
    cooperative LM and record it; its history id."""
    store = open_store(index_dir, HashEmbedder(64))
    owned = store.entity_document_ids(store.resolve_entity(property_ref).entity_id) if owned_only else None
    with dspy.context(lm=scripted_lm(cooperative(SUB_QUESTIONS, score=7.5))):
        done = list(ScopedQA(store).stream(question, resolve_scope(store, owned, property_ref)))[-1]
    assert done.trace is not None
    return History(history).record(done.trace)


def test_history_id_shows_each_sub_question_once_with_chunks_scores_guards_and_timings(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "h.sqlite"
    answered = record(index_dir, history, "What is the monthly rent and who is the tenant?", "Banda Lane")
    capsys.readouterr()
    assert main(["history", answered[:8], "--history", str(history)]) == 0
    out = capsys.readouterr().out
    for number, sub_question in enumerate(SUB_QUESTIONS, start=1):
        assert out.count(sub_question) == 1 and f"{number}. {sub_question}" in out
    trace = History(history).get(answered).trace
    first = trace.sub_questions[0]
    assert f"{len(first.chunks)} retrieved, {sum(c.kept for c in first.chunks)} kept" in out
    assert "kept  relevance  retrieval  chunk" in out
    chunk = first.chunks[0]
    assert f"yes         7.5  {chunk.retrieval_score:9.4f}  {chunk.filename} p.{chunk.page}" in out
    assert "timings  decompose " in out and " score " in out and "total" in out
    assert "cost  3 LM calls (decompose 1, score 1, answer 1)" in out

    # Banda Road asked inside Banda Lane's own documents: the entity gate excludes every document, each
    # exclusion listed once.
    gated = record(index_dir, history, "What is the rent at Banda Road?", "Banda Lane", owned_only=True)
    capsys.readouterr()
    assert main(["history", gated[:8], "--history", str(history)]) == 0
    out = capsys.readouterr().out
    exclusions = History(history).get(gated).trace.interventions
    assert exclusions and "guards" in out
    for item in exclusions:
        assert out.count(f"{item.guard} {item.target}: {item.reason}") == 1
    assert "tool loop" in out and "given up" in out


def test_label_needs_gold_documents_from_the_user_and_names_the_candidates(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "h.sqlite"
    answered = record(index_dir, history, "What is the monthly rent?", "Banda Lane")
    traces = tmp_path / "labelled.jsonl"
    common = ["label", answered[:8], "--case", "property", "--traces", str(traces), "--index", str(index_dir)]
    common += ["--history", str(history), "--fact", "KSH 285,000"]
    capsys.readouterr()
    assert main([*common, "--yes"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    cited = err.split("the answer cited ", 1)[1].split(";", 1)[0]
    assert "--gold" in err and "banda-lane/lease.pdf" in cited and not traces.exists()
    assert main([*common, "--gold", "banda-lane/valuation.md", "--yes"]) == 0
    (example,) = load_examples(traces)
    assert example.gold_documents == ("banda-lane/valuation.md",)  # the user's, not the answer's citation (lease.pdf)
    assert not example.gold_pages  # valuation.md was not cited: no page is claimed for it


def test_label_shows_the_example_and_asks_before_appending(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "h.sqlite"
    answered = record(index_dir, history, "What is the monthly rent?", "Banda Lane")
    traces = tmp_path / "labelled.jsonl"
    command = ["label", answered[:8], "--case", "property", "--traces", str(traces), "--index", str(index_dir)]
    command += ["--history", str(history), "--fact", "KSH 285,000", "--gold", "banda-lane/lease.pdf"]

    # Not at a terminal and no --yes: shown, not appended.
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    capsys.readouterr()
    assert main(command) == 2
    err = capsys.readouterr().err
    assert f"this example will be appended to {traces}" in " ".join(err.split())
    assert '"KSH 285,000"' in err and '"banda-lane/lease.pdf"' in err and "--yes" in err and not traces.exists()

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    assert main(command) == 1 and not traces.exists()
    assert "nothing was appended" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    assert main(command) == 0
    (example,) = load_examples(traces)
    assert example.gold_documents == ("banda-lane/lease.pdf",) and example.answer_facts == ("KSH 285,000",)
