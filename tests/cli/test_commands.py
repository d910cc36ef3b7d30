"""The command set: every flag of every command, the experiment commands added by entry point, and layering."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli.main import COMMAND_GROUP, build_parser, main
from pipeline.serving.hosts import AllowedHost
from pipeline.settings import DEFAULT_HISTORY, DEFAULT_INDEX_DIR, DEFAULT_PARALLEL, available_cores
from tests.conftest import ROOT

INDEX = str(DEFAULT_INDEX_DIR)
HISTORY = str(DEFAULT_HISTORY)

# Each command with every flag given, and what it parses to (defaults where a flag is left out).
PARSED = [
    (
        (
            "index src --out o --manifest m.toml --embedder hash --hash-dim 8 --threads 2 --read-workers 3 "
            "--chunk-words 50 --chunk-overlap 5 --strict --json --ray --allow-unmatched --yes"
        ).split(),
        {
            "source": "src",
            "out": "o",
            "manifest": "m.toml",
            "embedder": "hash",
            "hash_dim": 8,
            "threads": 2,
            "read_workers": 3,
            "chunk_words": 50,
            "chunk_overlap": 5,
            "strict": True,
            "json": True,
            "ray": "local",
            "allow_unmatched": True,
            "yes": True,
        },
    ),
    (
        "search q --index i --doc-id a --doc-id b --property p --mode bm25 -k 3 --documents --json".split(),
        {
            "query": "q",
            "index": "i",
            "doc_id": ["a", "b"],
            "property": "p",
            "mode": "bm25",
            "k": 3,
            "documents": True,
            "json": True,
        },
    ),
    (
        (
            "ask q --index i --doc-id a --property p --lm openai/x --threads 2 --program e --settings s.toml "
            "--history h --json"
        ).split(),
        {
            "question": "q",
            "index": "i",
            "doc_id": ["a"],
            "property": "p",
            "lm": "openai/x",
            "lm_typed": True,
            "threads": 2,
            "program": "e",
            "settings": "s.toml",
            "uncompiled": False,
            "history": "h",
            "json": True,
            "questions": None,
            "out": None,
            "parallel": 1,
        },
    ),
    (
        "ask --questions q.jsonl --out a.jsonl --parallel 2 --property p --threads 1".split(),
        {
            "question": None,
            "index": INDEX,
            "doc_id": [],
            "property": "p",
            "lm": None,
            "lm_typed": False,
            "threads": 1,
            "program": None,
            "settings": None,
            "uncompiled": False,
            "history": HISTORY,
            "json": False,
            "questions": "q.jsonl",
            "out": "a.jsonl",
            "parallel": 2,
        },
    ),
    (
        (
            "evaluate --traces t --index i --split dev --case chip --case property --program e --lm "
            "openai/x --lm-threads 2 --threads 3 --retrieval-only --mode bm25 --mode dense --limit 4 "
            "--out o --ray ray://head:10001 --settings s.toml --kind boolean"
        ).split(),
        {
            "traces": "t",
            "index": "i",
            "split": "dev",
            "case": ["chip", "property"],
            "kind": ["boolean"],
            "program": "e",
            "uncompiled": False,
            "lm": "openai/x",
            "lm_typed": True,
            "lm_threads": 2,
            "threads": 3,
            "retrieval_only": True,
            "mode": ["bm25", "dense"],
            "limit": 4,
            "out": "o",
            "ray": "ray://head:10001",
            "settings": "s.toml",
        },
    ),
    (
        ["evaluate", "--traces", "t"],
        {
            "traces": "t",
            "index": INDEX,
            "split": None,
            "case": None,
            "kind": None,
            "program": None,
            "uncompiled": False,
            "lm": None,
            "lm_typed": False,
            "lm_threads": None,  # every core: make_lm resolves it
            "threads": DEFAULT_PARALLEL,
            "retrieval_only": False,
            "mode": None,
            "limit": None,
            "out": None,
            "ray": None,
            "settings": None,
        },
    ),
    (
        (
            "serve --index i --program e --lm openai/x --threads 2 --settings s.toml --host 0.0.0.0 --port 9000 "
            "--history h --corpus c --allowed-host rag.internal:8443 --allowed-host RAG.example "
            "--label-to labels.jsonl --tracking-uri http://127.0.0.1:5000"
        ).split(),
        {
            "index": "i",
            "program": "e",
            "uncompiled": False,
            "lm": "openai/x",
            "lm_typed": True,
            "threads": 2,
            "settings": "s.toml",
            "host": "0.0.0.0",
            "port": 9000,
            "history": "h",
            "corpus": "c",
            "allowed_host": [AllowedHost("rag.internal", 8443), AllowedHost("rag.example")],
            "label_to": "labels.jsonl",
            "tracking_uri": "http://127.0.0.1:5000",
        },
    ),
    (
        ["serve"],
        {
            "index": INDEX,
            "program": None,
            "uncompiled": False,
            "lm": None,
            "lm_typed": False,
            "threads": available_cores(),
            "settings": None,
            "host": "127.0.0.1",
            "port": 8000,
            "history": HISTORY,
            "corpus": None,
            "allowed_host": [],
            "label_to": None,
            "tracking_uri": None,
        },
    ),
    (
        (
            "label abc --case chip --fact f1 --fact f2 --gold g --forbidden x --not-found --split test "
            "--traces t.jsonl --index i --history h"
        ).split(),
        {
            "id": "abc",
            "case": "chip",
            "fact": ["f1", "f2"],
            "gold": ["g"],
            "forbidden": ["x"],
            "not_found": True,
            "split": "test",
            "traces": "t.jsonl",
            "index": "i",
            "history": "h",
            "yes": False,
        },
    ),
    (
        "label abc --case chip --gold g --traces t.jsonl --yes".split(),
        {
            "id": "abc",
            "case": "chip",
            "fact": [],
            "gold": ["g"],
            "forbidden": [],
            "not_found": False,
            "split": None,
            "traces": "t.jsonl",
            "index": INDEX,
            "history": HISTORY,
            "yes": True,
        },
    ),
    (["history"], {"id": None, "history": HISTORY, "index": INDEX, "all": False, "limit": 20, "json": False}),
    (
        ["history", "abc", "--history", "h", "--limit", "5", "--json", "--all"],
        {"id": "abc", "history": "h", "index": INDEX, "limit": 5, "json": True, "all": True},
    ),
    (["profile", "list"], {"action": "list"}),
    (
        ["profile", "add", "n", "d", "--note", "x", "--yes"],
        {"action": "add", "name": "n", "export_dir": "d", "note": "x", "yes": True},
    ),
    (["profile", "activate", "n"], {"action": "activate", "name": "n"}),
    (["profile", "export", "--all", "--out", "o"], {"action": "export", "name": None, "all": True, "out": "o"}),
    (
        ["profile", "import", "f", "--name", "n", "--yes"],
        {"action": "import", "file": "f", "name": "n", "yes": True},
    ),
    (
        ["optimize", "c.toml", "--mlruns", "m", "--json", "--tracking-uri", "http://127.0.0.1:5000", "--ray", "auto"],
        {
            "config": "c.toml",
            "mlruns": "m",
            "json": True,
            "tracking_uri": "http://127.0.0.1:5000",
            "ray": "auto",
            "dry_run": False,
        },
    ),
    (
        ["optimize", "c.toml", "--dry-run"],
        {"config": "c.toml", "mlruns": "mlruns", "json": False, "tracking_uri": None, "ray": None, "dry_run": True},
    ),
    (
        ["sweep", "a.toml", "b.toml", "--ray", "--experiment", "x", "--tracking-uri", "http://h:5000"],
        {
            "configs": ["a.toml", "b.toml"],
            "ray": "local",
            "experiment": "x",
            "mlruns": "mlruns",
            "tracking_uri": "http://h:5000",
            "json": False,
        },
    ),
    (
        ["runs", "--experiment", "x", "--mlruns", "m", "--json"],
        {"experiment": "x", "mlruns": "m", "json": True, "compare": None, "tracking_uri": None, "wide": False},
    ),
    (
        ["runs", "--compare", "a", "b"],
        {
            "experiment": None,
            "mlruns": "mlruns",
            "json": False,
            "compare": ["a", "b"],
            "tracking_uri": None,
            "wide": False,
        },
    ),
    (
        ["runs", "--wide"],
        {"experiment": None, "mlruns": "mlruns", "json": False, "compare": None, "tracking_uri": None, "wide": True},
    ),
    (
        ["export", "r", "--out", "o", "--mlruns", "m", "--overwrite"],
        {"run_id": "r", "out": "o", "mlruns": "m", "overwrite": True, "tracking_uri": None, "baseline": False},
    ),
    (
        ["export", "r", "--out", "o", "--baseline"],
        {"run_id": "r", "out": "o", "mlruns": "mlruns", "overwrite": False, "tracking_uri": None, "baseline": True},
    ),
    (
        ["champion", "r", "--mlruns", "m", "--tracking-uri", "sqlite:///x.db"],
        {"run_id": "r", "mlruns": "m", "tracking_uri": "sqlite:///x.db"},
    ),
    (["ui"], {"mlruns": "mlruns", "tracking_uri": None, "host": "127.0.0.1", "port": 5000}),
    (
        ["ui", "--mlruns", "m", "--port", "5001"],
        {"mlruns": "m", "tracking_uri": None, "host": "127.0.0.1", "port": 5001},
    ),
]


@pytest.mark.parametrize(("argv", "expected"), PARSED, ids=[" ".join(a[:2]) for a, _ in PARSED])
def test_every_flag_parses_as_before(
    argv: list[str], expected: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SCOPERAG_LM", raising=False)
    parsed = vars(build_parser().parse_args(argv))
    assert callable(parsed.pop("func"))
    assert parsed == {"verbose": False, "command": argv[0], **expected}


def test_lm_default_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCOPERAG_LM", "openai/from-env")
    parser = build_parser()
    for argv in (["ask", "q"], ["evaluate", "--traces", "t"], ["serve"]):
        parsed = parser.parse_args(argv)
        assert parsed.lm == "openai/from-env" and parsed.lm_typed is False  # a default: it does not choose the program
        typed = parser.parse_args([*argv, "--lm", "openai/from-env"])
        assert typed.lm == "openai/from-env" and typed.lm_typed is True


@pytest.mark.parametrize("command", ["optimize", "sweep", "runs", "export", "champion", "ui", "reference"])
def test_experiment_commands_come_from_the_entry_point(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    usage = capsys.readouterr().out
    assert f"usage: scoperag {command}" in usage and "--mlruns" in usage and "--tracking-uri" in usage


def test_the_experiments_entry_point_is_installed() -> None:
    from importlib.metadata import entry_points

    from experiments.cli import register

    (point,) = [p for p in entry_points(group=COMMAND_GROUP) if p.name == "experiments"]
    assert point.load() is register


def test_built_in_commands_do_not_import_experiments(tmp_path: Path) -> None:
    # A fresh interpreter: this test session has imported experiments/ elsewhere.
    script = (
        "import sys\n"
        "from pipeline.cli.main import main\n"
        "code = main(['history', '--history', sys.argv[1], '--json'])\n"
        "print(json.dumps([code, 'experiments' in sys.modules, 'mlflow' in sys.modules, 'ray' in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", "import json\n" + script, str(tmp_path / "h.sqlite")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert json.loads(done.stdout.splitlines()[-1]) == [0, False, False, False]  # Ray only when asked for
    listing = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "--help"], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout
    choices = re.findall(r"\{([a-z,-]+)\}", listing)[0]
    assert set(choices.split(",")) == {
        *("index", "search", "ask", "history", "label", "evaluate", "serve", "lm-serve", "profile"),
        *("optimize", "sweep", "runs", "export", "champion", "ui", "reference"),
    }


def test_pipeline_never_imports_experiments() -> None:
    offenders = []
    for path in sorted((ROOT / "pipeline").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno}" for n in names if n.split(".")[0] == "experiments"]
    assert offenders == []
