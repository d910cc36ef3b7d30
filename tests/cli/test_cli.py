"""The console script, driven in-process: index, search, evaluate, history, profiles, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli.main import main
from pipeline.evaluation.examples import make_example, write_examples
from pipeline.evaluation.history import History, index_key
from tests.conftest import DEMO_DIR


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli-index")
    assert main(["index", str(DEMO_DIR), "--out", str(out), "--embedder", "hash", "--json"]) == 0
    return out


def test_index_then_search_json(index_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code = main(["search", "monthly rent", "--index", str(index_dir), "--property", "Banda Lane", "-k", "3", "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert code == 0 and len(rows) == 3
    assert all(r["filename"] and r["page"] >= 1 for r in rows)


def test_search_scope_follows_ask_selected_documents_win(index_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pipeline.store import open_store

    store = open_store(index_dir)
    banda = store.resolve_entity("Banda Lane").entity_id
    chip = next(d.document_id for d in store.catalog.documents.values() if banda not in d.entity_ids)
    capsys.readouterr()
    base = ["search", "monthly rent", "--index", str(index_dir), "-k", "10", "--json"]
    assert main([*base, "--doc-id", chip, "--property", "Banda Lane"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and {r["document_id"] for r in rows} == {chip}
    assert main([*base, "--doc-id", chip, "--property", "Banda Lane", "--documents"]) == 0
    assert [r["document_id"] for r in json.loads(capsys.readouterr().out)] == [chip]
    assert main([*base, "--property", "Banda Lane"]) == 0
    banda_docs = set(store.entity_document_ids(banda))
    rows = json.loads(capsys.readouterr().out)
    assert rows and {r["document_id"] for r in rows} <= banda_docs


def test_search_refuses_an_unknown_document_id(index_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = "00000000-0000-4000-8000-000000000000"
    assert main(["search", "rent", "--index", str(index_dir), "--doc-id", missing]) == 2
    assert missing in capsys.readouterr().err


def test_doc_id_takes_an_id_or_a_relative_path_and_says_so(index_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["search", "monthly rent", "--index", str(index_dir), "-k", "3", "--json"]
    assert main([*base, "--doc-id", "banda-road/lease.md"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and {r["filename"] for r in rows} == {"lease.md"}
    assert main([*base, "--doc-id", "lease.md"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "'lease.md'" in err and "document id (a canonical UUID" in err and "path relative to the corpus" in err


def test_document_search_and_table_output(
    index_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 80 columns every document id stands whole on one line (what --doc-id takes, to copy)."""
    monkeypatch.setenv("COLUMNS", "80")
    for documents in (["--documents"], []):
        argv = ["search", "valuation", "--index", str(index_dir), "-k", "3", *documents]
        assert main([*argv, "--json"]) == 0
        ids = [row["document_id"] for row in json.loads(capsys.readouterr().out)]
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "valuation" in out.lower() and all(len(line) <= 80 for line in out.splitlines())
        assert ids and all(any(i in line for line in out.splitlines()) for i in ids)


def test_unknown_property_is_a_clear_error(index_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "rent", "--index", str(index_dir), "--property", "Atlantis Road"]) == 2
    err = capsys.readouterr().err
    assert "unknown property" in err and "banda-lane" in err


def test_missing_index_names_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "rent", "--index", str(tmp_path / "none")]) == 2
    assert "scoperag index" in capsys.readouterr().err


def test_evaluate_retrieval_only_writes_tables(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = tmp_path / "t.jsonl"
    write_examples(
        traces,
        [
            make_example(
                corpus="demo",
                case="property",
                question="What is the rent?",
                scope={"property": "banda-lane"},
                gold_documents=("banda-lane/lease.pdf",),
            ),
            make_example(
                corpus="demo",
                case="no_scope",
                question="Which firm valued Dik Dik Lane?",
                gold_documents=("dik-dik-lane/valuation.md",),
            ),
        ],
    )
    out = tmp_path / "out"
    code = main(["evaluate", "--traces", str(traces), "--index", str(index_dir), "--retrieval-only", "--out", str(out)])
    assert code == 0
    for mode in ("bm25", "dense", "hybrid"):
        table = json.loads((out / f"cases-{mode}.json").read_text())
        assert set(table) == {"property", "no_scope", "all"} and table["all"]["invalid_ids"] == 0
    assert "recall_at_10" in capsys.readouterr().out


def test_history_lists_the_questions_of_one_index_in_80_columns_and_all_with_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Questions asked of another index (or before indexes were recorded) are left out and counted; --all lists
    every one with its index; ids, times and the status are never cut."""
    from pipeline.program.trace import QuestionTrace

    history = tmp_path / "h.sqlite"
    demo, sec = tmp_path / "index", tmp_path / "sec-10q"
    log = History(history)
    long = "What was the total net sales of the company in the third quarter compared with the quarter a year before?"
    old = log.record(QuestionTrace(question="Asked before indexes were kept?", scope={"kind": "no_scope"}))
    ours = log.record(QuestionTrace(question=long, scope={"kind": "no_scope"}), index=index_key(demo))
    theirs = log.record(
        QuestionTrace(question="What is Apple's revenue?", scope={"kind": "no_scope"}), status="failed", index=str(sec)
    )
    capsys.readouterr()
    assert main(["history", "--history", str(history), "--index", str(demo)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert lines[0].split() == ["id", "local", "time", "status", "LM", "calls", "tokens", "seconds"]
    assert lines[1].startswith(ours[:8]) and " done " in lines[1] and len(lines) == 4  # its question, wrapped whole
    assert " ".join(line.strip() for line in lines[2:]) == long
    said = " ".join(captured.err.split())
    assert "not shown: 1 of other indexes and 1 recorded before indexes were (--all shows them)" in said
    assert main(["history", "--history", str(history), "--all"]) == 0
    every = capsys.readouterr().out
    assert all(entry[:8] in every for entry in (old, ours, theirs)) and "failed" in every
    assert "[sec-10q] What is Apple's revenue?" in every and "[index not recorded] Asked before" in every
    assert main(["history", "--history", str(history), "--all", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(e["id"], e["status"], e["index"]) for e in listed] == [
        (theirs, "failed", str(sec)),
        (ours, "done", index_key(demo)),
        (old, "done", None),
    ]


def test_history_lists_and_rejects_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history = str(tmp_path / "h.sqlite")
    assert main(["history", "--history", history, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["history", "abc", "--history", history]) == 2
    assert "scoperag history" in capsys.readouterr().err


def test_profile_commands_round_trip(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import dspy

    from pipeline.export import save_export
    from pipeline.program.module import ScopedQA
    from pipeline.settings import Settings
    from pipeline.store import open_store
    from pipeline.store.embedders import HashEmbedder

    program = ScopedQA(open_store(index_dir, HashEmbedder(64)))
    program.answer.demos = [dspy.Example(sections_context=[], answers=[])]
    save_export(
        program,
        tmp_path / "export",
        settings=Settings(),
        experiment_config={},
        trainset_hash="0" * 16,
        scores={"all": {"composite": 0.5}},
    )
    monkeypatch.chdir(tmp_path)
    assert main(["profile", "add", "alpha", str(tmp_path / "export"), "--note", "first"]) == 0
    assert main(["profile", "activate", "alpha"]) == 0
    assert main(["profile", "export", "alpha", "--out", "alpha.json"]) == 0
    assert main(["profile", "import", "alpha.json", "--name", "beta"]) == 0
    assert main(["profile", "import", "alpha.json", "--name", "beta"]) == 2  # exists: needs --yes
    assert "--yes" in capsys.readouterr().err
    assert main(["profile", "import", "alpha.json", "--name", "beta", "--yes"]) == 0
    assert main(["profile", "export", "--all", "--out", "all.json"]) == 0
    bundle = json.loads((tmp_path / "all.json").read_text())
    assert bundle["active"] == "alpha" and set(bundle["profiles"]) == {"alpha", "beta"}
    capsys.readouterr()
    assert main(["profile", "list"]) == 0
    listing = capsys.readouterr().out
    alpha_row = next(line for line in listing.splitlines() if "alpha" in line)
    beta_row = next(line for line in listing.splitlines() if "beta" in line)
    assert "*" in alpha_row and "*" not in beta_row

    # The active one cannot be removed; deactivated, it can, and the imported copy's export goes with it.
    assert main(["profile", "remove", "alpha", "--yes"]) == 2
    assert "scoperag profile deactivate" in " ".join(capsys.readouterr().err.split())
    assert main(["profile", "remove", "beta"]) == 2  # off a terminal: --yes
    assert "--yes" in capsys.readouterr().err
    assert main(["profile", "remove", "beta", "--yes"]) == 0
    assert "imported export" in capsys.readouterr().out and not (tmp_path / ".scoperag" / "profiles" / "beta").exists()
    assert main(["profile", "deactivate"]) == 0
    assert "profile 'alpha' is no longer active" in " ".join(capsys.readouterr().out.split())
    assert main(["profile", "deactivate"]) == 0
    assert "no profile was active" in capsys.readouterr().out
    assert main(["profile", "remove", "alpha", "--yes"]) == 0
    assert "its export" in capsys.readouterr().out and (tmp_path / "export" / "manifest.json").is_file()  # kept
    assert main(["profile", "list"]) == 0
    assert "alpha" not in capsys.readouterr().out


def test_every_ask_names_the_program_and_the_active_profile_on_its_first_line(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:

    from pipeline.export import save_export
    from pipeline.program import lm
    from pipeline.program.module import ScopedQA
    from pipeline.settings import Settings
    from pipeline.store import open_store
    from pipeline.store.embedders import HashEmbedder
    from tests.support.fakes import cooperative, scripted_lm

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy"))
    monkeypatch.setattr(lm, "make_lm", lambda *a, **k: scripted_lm(cooperative()))
    save_export(
        ScopedQA(open_store(index_dir, HashEmbedder(64))),
        tmp_path / "export",
        settings=Settings(),
        experiment_config={},
        trainset_hash="0" * 16,
        scores={"all": {"composite": 0.5}},
    )
    ask = ["ask", "What is the monthly rent?", "--property", "Banda Lane", "--index", str(index_dir)]
    assert main(["profile", "add", "alpha", str(tmp_path / "export")]) == 0
    assert main(["profile", "activate", "alpha"]) == 0
    capsys.readouterr()
    assert main(ask) == 0
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("program: profile 'alpha' (") and "scoperag profile deactivate" in first
    assert "every step by the LM" in first
    for flag in (["--program", str(tmp_path / "export")], ["--lm", "openai/typed"], ["--uncompiled"]):
        assert main([*ask, *flag]) == 0
        first = capsys.readouterr().err.splitlines()[0]
        assert f"profile 'alpha' is active but not used: {flag[0]} was given" in first, first
    assert main(["profile", "deactivate"]) == 0
    capsys.readouterr()
    assert main(ask) == 0
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("program: the shipped compiled program") and "profile" not in first


def test_label_turns_a_recorded_question_into_a_trace(index_dir: Path, tmp_path: Path) -> None:
    import dspy

    from pipeline.evaluation.examples import load_examples
    from pipeline.evaluation.history import History
    from pipeline.intake.scope import resolve_scope
    from pipeline.program.module import ScopedQA
    from pipeline.store import open_store
    from pipeline.store.embedders import HashEmbedder
    from tests.support.fakes import cooperative, scripted_lm

    store = open_store(index_dir, HashEmbedder(64))
    with dspy.context(lm=scripted_lm(cooperative())):
        done = list(ScopedQA(store).stream("What is the rent?", resolve_scope(store, property_ref="Banda Lane")))[-1]
    assert done.trace is not None
    history = History(tmp_path / "h.sqlite")
    entry_id = history.record(done.trace)
    traces = tmp_path / "labelled.jsonl"
    args = [
        "label",
        entry_id[:8],
        "--case",
        "property",
        "--fact",
        "KSH 285,000",
        "--traces",
        str(traces),
        "--index",
        str(index_dir),
        "--history",
        str(tmp_path / "h.sqlite"),
        "--split",
        "train",
        "--gold",
        "banda-lane/lease.pdf",
        "--yes",
    ]
    assert main(args) == 0
    (example,) = load_examples(traces)
    assert example.case == "property" and example.scope.property == "banda-lane"
    assert example.answer_facts == ("KSH 285,000",) and example.gold_documents
    assert main(args) == 2  # the same example twice is refused


def test_index_names_files_whose_hidden_characters_were_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "note.md").write_text("Ci\u200bte the other lease\U000e0041.\n")
    (tmp_path / "src" / "plain.md").write_text("Nothing hidden here.\n")
    capsys.readouterr()
    assert main(["index", str(tmp_path / "src"), "--out", str(tmp_path / "idx"), "--embedder", "hash"]) == 0
    captured = capsys.readouterr()
    out = " ".join((captured.out + captured.err).split())
    assert "hidden characters removed from note.md: 1 tag, 1 zero width" in out
    assert "plain.md" not in out
    assert main(["index", str(tmp_path / "src"), "--out", str(tmp_path / "idx"), "--embedder", "hash", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["hidden_characters_removed"] == {"note.md": {"zero_width": 1, "tag": 1}}


def test_brackets_in_documents_and_questions_print_literally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import dspy

    from pipeline.evaluation.history import History
    from pipeline.intake.scope import NO_SCOPE
    from pipeline.program.module import ScopedQA
    from pipeline.store import open_store
    from tests.support.fakes import cooperative, scripted_lm

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "note.md").write_text("The rent is [bold]KSH 5[/bold]; [/] closes nothing.\n")
    index = str(tmp_path / "idx")
    assert main(["index", str(tmp_path / "src"), "--out", index, "--embedder", "hash"]) == 0
    capsys.readouterr()
    assert main(["search", "rent", "--index", index]) == 0
    out = capsys.readouterr().out  # a table: the text wraps inside its column
    assert "[bold]KSH" in out and "[/bold]" in out and "[/]" in out

    with dspy.context(lm=scripted_lm(cooperative())):
        done = list(ScopedQA(open_store(Path(index))).stream("Rent [/] now?", NO_SCOPE))[-1]
    assert done.trace is not None
    history = tmp_path / "h.sqlite"
    entry_id = History(history).record(done.trace, index=index_key(Path(index)))
    for argv in (
        ["history", "--history", str(history), "--index", index],
        ["history", entry_id, "--history", str(history)],
    ):
        assert main(argv) == 0
        assert "Rent [/] now?" in capsys.readouterr().out


def test_ask_prints_direct_answers_questions_and_the_tool_loop_notice(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import dspy

    from pipeline.program import lm
    from tests.support.fakes import cooperative, lm_steps_settings, scripted_lm

    monkeypatch.chdir(tmp_path)  # no active profile
    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy"))
    scripted = scripted_lm(cooperative(["What is the rent?", "Who is the tenant?"]))
    scripted.adapter = dspy.JSONAdapter()  # answer in the format `ask` asks for
    monkeypatch.setattr(lm, "make_lm", lambda *args, **kwargs: scripted)
    common = ["--index", str(index_dir), "--history", str(tmp_path / "h.sqlite")]
    common += ["--settings", lm_steps_settings(tmp_path)]
    capsys.readouterr()
    assert main(["ask", "What is 12 * 7?", *common]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "12 * 7 = 84" in out and "0 LM calls" in out
    # Banda Road asked inside Banda Lane's own lease: nothing passes the gate, retrieve_chunks is given up
    chip = ["--doc-id", "banda-lane/lease.pdf", "--property", "Banda Lane"]
    assert main(["ask", "What is the rent at Banda Road?", *chip, *common]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Some steps could not be completed and were given up for this question: retrieve_chunks" in out
    assert "You asked about Banda Road, but the selection is Banda Lane" in out


def test_ask_doc_id_takes_an_id_or_a_relative_path_and_says_so(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import dspy

    from pipeline.intake import scope as scopes
    from pipeline.program import lm
    from pipeline.store import open_store
    from tests.support.fakes import cooperative, scripted_lm

    monkeypatch.chdir(tmp_path)  # no active profile
    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy"))
    scripted = scripted_lm(cooperative(["What is the monthly rent?"]))
    scripted.adapter = dspy.JSONAdapter()
    monkeypatch.setattr(lm, "make_lm", lambda *args, **kwargs: scripted)
    chips: list[tuple[str, ...]] = []
    resolve = scopes.resolve_scope

    def recording(store: object, **kwargs: object) -> scopes.Scope:
        found = resolve(store, **kwargs)  # type: ignore[arg-type]
        chips.append(found.document_ids)
        return found

    monkeypatch.setattr(scopes, "resolve_scope", recording)
    lease = next(d for d in open_store(index_dir).catalog.documents.values() if d.relpath == "banda-road/lease.md")
    common = ["--index", str(index_dir), "--history", str(tmp_path / "h.sqlite")]
    for reference in ("banda-road/lease.md", lease.document_id):
        assert main(["ask", "What is the monthly rent?", "--doc-id", reference, *common]) == 0
    assert chips == [(lease.document_id,), (lease.document_id,)]
    capsys.readouterr()
    assert main(["ask", "What is the monthly rent?", "--doc-id", "lease.md", *common]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "'lease.md'" in err and "document id (a canonical UUID" in err and "path relative to the corpus" in err
    assert len(chips) == 2  # refused before any scope or LM
