"""The `scoperag` command: each subcommand parses arguments and calls one library function."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.errors import ScopeRagError
from pipeline.settings import DEFAULT_HISTORY, DEFAULT_INDEX_DIR, DEFAULT_PROFILES

if TYPE_CHECKING:
    from rich.console import Console

    from pipeline.export.profiles import ProfilePaths
    from pipeline.program.module import ScopedQA
    from pipeline.store import Store
    from pipeline.types import SearchMode


def _quiet_environment() -> None:
    # Nothing may reach the network at start-up: LiteLLM's cost map and MLflow telemetry.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def _console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def cmd_index(args: argparse.Namespace) -> int:
    from pipeline.cli.progress import StageProgress
    from pipeline.settings import BuildSettings
    from pipeline.store.build import build_index
    from pipeline.store.embedders import HashEmbedder, MiniLMEmbedder

    embedder = HashEmbedder(args.hash_dim) if args.embedder == "hash" else MiniLMEmbedder(threads=args.threads)
    console = _console()
    with StageProgress(console) as bar:
        report = build_index(
            Path(args.source),
            Path(args.out),
            embedder,
            manifest_path=Path(args.manifest) if args.manifest else None,
            settings=BuildSettings(chunk_words=args.chunk_words, chunk_overlap=args.chunk_overlap),
            progress=bar.update,
            strict=args.strict,
        )
    for skipped in report.skipped:
        console.print(f"[yellow]skipped[/] {skipped.path}: {skipped.reason}")
    for rule in report.unmatched_rules:
        console.print(f"[yellow]manifest rule matched no file:[/] {rule}")
    for relpath, kinds in report.hidden:
        found = ", ".join(f"{count} {kind.replace('_', ' ')}" for kind, count in sorted(kinds.items()))
        console.print(f"[yellow]hidden characters removed[/] from {relpath}: {found}")
    summary = {
        "index": args.out,
        "generation": report.manifest.generation,
        "documents": report.documents,
        "chunks": report.chunks,
        "skipped": [s.path for s in report.skipped],
        "hidden_characters_removed": dict(report.hidden),
        "embedder": embedder.name,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        console.print(
            f"indexed {report.documents} documents, {report.chunks} chunks into {args.out} "
            f"({report.manifest.generation}); {len(report.skipped)} skipped"
        )
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from rich.table import Table

    from pipeline.store import open_store

    store = open_store(Path(args.index))
    document_ids: list[str] | None = list(args.doc_id) if args.doc_id else None
    if args.property:
        entity = store.resolve_entity(args.property)
        document_ids = sorted(set(document_ids or []) | set(store.entity_document_ids(entity.entity_id)))
    rows: list[dict[str, Any]]
    if args.documents:
        doc_hits = store.search_documents(args.query, args.k, document_ids, args.mode)
        rows = [
            {
                "rank": i,
                "document_id": h.document.document_id,
                "filename": h.document.filename,
                "type": h.document.doc_type,
                "score": round(h.score, 4),
                "scores": {k: round(v, 4) for k, v in h.scores.items()},
                "summary": h.document.summary,
            }
            for i, h in enumerate(doc_hits, start=1)
        ]
    else:
        hits = store.search_chunks(args.query, args.k, document_ids, args.mode)
        rows = [
            {
                "rank": i,
                "document_id": h.chunk.document_id,
                "filename": h.filename,
                "page": h.chunk.page,
                "score": round(h.score, 4),
                "scores": {k: round(v, 4) for k, v in h.scores.items()},
                "text": h.chunk.text,
            }
            for i, h in enumerate(hits, start=1)
        ]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    table = Table(title=f"{args.mode} search: {args.query}", show_lines=True)
    for column in ("#", "document", "page", "score", "text"):
        table.add_column(column, overflow="fold")
    for row in rows:
        detail = " ".join(f"{k}={v}" for k, v in row["scores"].items())
        body = str(row.get("text") or row.get("summary"))
        table.add_row(
            str(row["rank"]),
            f"{row['filename']}\n{row['document_id']}",
            str(row.get("page", "-")),
            f"{row['score']}\n{detail}",
            body[:300] + ("..." if len(body) > 300 else ""),
        )
    from rich.console import Console

    Console().print(table)
    if not rows:
        print("no results")
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    import dspy
    from rich.console import Console
    from rich.markdown import Markdown

    from pipeline.evaluation.history import History
    from pipeline.intake.scope import resolve_scope
    from pipeline.program.events import Completed, Failed
    from pipeline.program.lm import make_lm
    from pipeline.store import open_store

    console = _console()
    _configure_dspy()
    store = open_store(Path(args.index))
    scope = resolve_scope(store, document_ids=args.doc_id or None, property_ref=args.property)
    cache_dir = _model_cache_dir()
    with console.status("loading the language model...") as status:
        lm = make_lm(args.lm, cache_dir=cache_dir, threads=args.threads)
        program = _program(store, args.program, console)
        state: dict[str, object] = {}
        final: Completed | Failed | None = None
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            for event in program.stream(args.question, scope, state):
                status.update(_describe(event))
                if isinstance(event, Completed | Failed):
                    final = event
    trace = state.get("trace")
    history_id = None
    if trace is not None:
        history = History(Path(args.history))
        history_id = history.record(trace)  # type: ignore[arg-type]
        history.close()
    if isinstance(final, Failed) or final is None:
        console.print(f"[red]error:[/] {final.message if final else 'no answer'}")
        return 1
    if args.json:
        print(final.model_copy(update={"history_id": history_id}).model_dump_json(indent=2))
        return 0
    out = Console()
    for section in final.sections:
        out.print(Markdown(f"## {section.index + 1}. {section.sub_question}"))
        if section.status == "error":
            out.print(f"  [red]{section.error}[/]")
        for bullet in section.bullets:
            out.print(f"  - {bullet}", highlight=False)
        if section.sources:
            names = "; ".join(f"{s.filename} p.{s.page}" for s in section.sources)
            out.print(f"  [dim]sources: {names}[/]", highlight=False)
        out.print()
    out.print(
        f"[dim]{final.lm_calls} LM calls, {final.tokens} tokens, {final.seconds:.1f} s; "
        f"scope: {scope.kind}; history: {history_id}[/]"
    )
    return 0


def _describe(event: object) -> str:
    from pipeline.program.events import Decomposed, GeneratingSubquestion

    if isinstance(event, Decomposed):
        return f"decomposed into {len(event.sub_questions)} sub-question(s); retrieving..."
    if isinstance(event, GeneratingSubquestion):
        return f"answering {event.index + 1}: {event.sub_question}"
    return f"{getattr(event, 'phase', 'working')}..."


def cmd_history(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from pipeline.evaluation.history import History

    history = History(Path(args.history))
    if args.id:
        entry = history.get(args.id)
        if args.json:
            print(entry.trace.model_dump_json(indent=2))
        else:
            console = Console()
            console.print(f"[bold]{entry.question}[/]  ({entry.created_at}, {entry.history_id})")
            console.print(entry.answer or "(no answer)", highlight=False)
            trace = entry.trace
            for sq in trace.sub_questions:
                kept = sum(1 for c in sq.chunks if c.kept)
                console.print(
                    f"  sub-question {sq.index + 1}: {sq.sub_question} - {len(sq.chunks)} retrieved, {kept} kept"
                )
            for item in trace.interventions:
                console.print(f"  [yellow]{item.guard}[/] {item.target}: {item.reason}", highlight=False)
            for item in trace.fallbacks:
                console.print(f"  [magenta]fallback {item.guard}[/] {item.target}: {item.reason}", highlight=False)
            console.print(f"  {entry.lm_calls} LM calls, {entry.tokens} tokens, {entry.seconds:.1f} s")
        return 0
    entries = history.recent(args.limit)
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "id": e.history_id,
                        "created_at": e.created_at,
                        "question": e.question,
                        "lm_calls": e.lm_calls,
                        "tokens": e.tokens,
                        "seconds": e.seconds,
                    }
                    for e in entries
                ],
                indent=2,
            )
        )
        return 0
    table = Table(title="recent questions")
    for column in ("id", "when", "question", "LM calls", "tokens", "s"):
        table.add_column(column)
    for e in entries:
        table.add_row(
            e.history_id[:8],
            e.created_at,
            e.question[:70],
            str(e.lm_calls),
            str(e.tokens),
            f"{e.seconds:.1f}",
        )
    Console().print(table)
    return 0


def _silence_libraries() -> None:
    # bm25s sets its own logger to DEBUG when imported; import it first so this sticks.
    import bm25s  # noqa: F401

    for noisy in ("bm25s", "pypdf", "faiss", "LiteLLM", "httpx"):
        logging.getLogger(noisy).setLevel(logging.ERROR)


def cmd_evaluate(args: argparse.Namespace) -> int:
    import dspy
    from rich.console import Console

    from pipeline.cli.progress import StageProgress
    from pipeline.evaluation.examples import load_example_set, stratified_sample
    from pipeline.evaluation.scoring import evaluate
    from pipeline.evaluation.tables import per_case_table, results_frame
    from pipeline.store import open_store

    console = _console()
    examples = load_example_set(Path(args.traces), split=args.split, cases=args.case or None)
    if args.limit:
        examples = stratified_sample(examples, args.limit, seed=0)
    if not examples:
        console.print(f"no examples in {args.traces} for split={args.split} case={args.case or 'any'}")
        return 1
    store = open_store(Path(args.index))
    _configure_dspy()
    program = None
    lm = None
    if not args.retrieval_only:
        from pipeline.program.lm import make_lm

        program = _program(store, args.program, console)
        lm = make_lm(args.lm, cache_dir=_model_cache_dir(), threads=args.lm_threads)
    tables = {}
    modes: list[SearchMode] = (args.mode or ["bm25", "dense", "hybrid"]) if args.retrieval_only else ["hybrid"]
    for mode in modes:
        with StageProgress(console) as bar:

            def advance(done: int, total: int, bar: StageProgress = bar, mode: str = mode) -> None:
                bar.update(mode, done, total)

            with dspy.context(lm=lm, adapter=dspy.JSONAdapter()) if lm is not None else contextlib.nullcontext():
                results = evaluate(
                    examples,
                    store,
                    program=program,
                    mode=mode,
                    threads=args.threads,
                    progress=advance,
                )
        frame = results_frame(results)
        table = per_case_table(frame)
        tables[mode] = table
        Console().print(f"\n[bold]{mode}[/] ({len(examples)} examples from {args.traces}, split={args.split})")
        shown = table.dropna(axis=1, how="all")
        if args.retrieval_only:
            shown = shown.drop(columns=["composite", "abstention", "lm_calls", "tokens"], errors="ignore")
        print(shown.to_string(line_width=200))
        failures = frame[frame["failed"]]
        if len(failures):
            listed = ", ".join(f"{r.id}({r.case})" for r in failures.itertuples())
            Console().print(f"[yellow]{len(failures)} failed:[/] {listed}", highlight=False)
        if args.out:
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            frame.to_csv(out / f"examples-{mode}.csv", index=False)
            table.to_csv(out / f"cases-{mode}.csv")
            (out / f"cases-{mode}.json").write_text(table.to_json(orient="index", indent=2))
    return 0


def cmd_optimize(args: argparse.Namespace) -> int:
    from experiments import ProgressEvent, run_experiment
    from pipeline.cli.progress import StageProgress

    console = _console()
    _configure_dspy()
    with StageProgress(console) as bar:

        def progress(event: ProgressEvent) -> None:
            if event.total is None and event.done == 0:
                console.print(f"[dim]{event.phase}:[/] {event.message}", highlight=False)
                return
            bar.update(event.phase, event.done, event.total, event.message)

        # DSPy's optimizers print and draw tqdm bars on stdout; keep stdout for the result (--json).
        with contextlib.redirect_stdout(sys.stderr):
            summary = run_experiment(
                Path(args.config), mlruns=Path(args.mlruns), progress=progress, model_cache_dir=_model_cache_dir()
            )
    if args.json:
        print(
            json.dumps(
                {
                    "run_id": summary.run_id,
                    "experiment": summary.experiment,
                    "selected": summary.selected,
                    "rejection": summary.rejection,
                    "lm_calls": summary.lm_calls,
                    "new_lm_calls": summary.new_lm_calls,
                    "tokens": summary.tokens,
                    "export_dir": str(summary.export_dir),
                    "prompt_versions": summary.prompt_versions,
                    "baseline": json.loads(summary.baseline.to_json(orient="index")),
                    "result": json.loads(summary.result.to_json(orient="index")),
                },
                indent=2,
            )
        )
        return 0
    columns = ["n", "composite", "wrong_property_citations", "invalid_ids", "fact_recall", "failed"]
    console.print("\n[bold]baseline[/] (validation)")
    console.print(summary.baseline[columns].to_string(), highlight=False)
    console.print("\n[bold]compiled[/] (validation)")
    console.print(summary.result[columns].to_string(), highlight=False)
    verdict = "selected" if summary.selected else f"[red]rejected[/]: {summary.rejection}; the baseline was kept"
    console.print(
        f"\nrun {summary.run_id} ({summary.experiment}): candidate {verdict}\n"
        f"LM calls {summary.lm_calls} ({summary.new_lm_calls} not from cache), tokens {summary.tokens}\n"
        f"export {summary.export_dir}\nprompt versions "
        + ", ".join(f"{m} v{v}" for m, v in summary.prompt_versions.items()),
        highlight=False,
    )
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    from experiments import list_runs

    table = list_runs(Path(args.mlruns), experiment=args.experiment)
    if args.json:
        print(table.to_json(orient="records", indent=2))
    elif table.empty:
        _console().print("no scoperag runs yet: run `scoperag optimize experiments/bootstrap_demo.toml`")
    else:
        import pandas as pd

        with pd.option_context("display.width", 250, "display.max_columns", None, "display.max_colwidth", 60):
            print(table.to_string(index=False))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from experiments import export_run

    manifest = export_run(args.run_id, Path(args.out), Path(args.mlruns), overwrite=args.overwrite)
    _console().print(f"exported run {manifest.run_id} ({manifest.format}) to {args.out}", highlight=False)
    return 0


def cmd_champion(args: argparse.Namespace) -> int:
    from experiments import champion

    versions = champion(args.run_id, Path(args.mlruns))
    moved = ", ".join(f"scoperag-{m} v{v}" for m, v in versions.items())
    _console().print(f"alias 'champion' now on {moved}", highlight=False)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from pipeline.serving.server import run

    _configure_dspy()
    print(f"serving on http://{args.host}:{args.port} (OpenAPI at /openapi.json)", file=sys.stderr)
    run(
        index_dir=Path(args.index),
        lm_spec=args.lm,
        cache_dir=_model_cache_dir(),
        program_dir=Path(args.program) if args.program else None,
        profiles=_profile_paths(),
        history=Path(args.history),
        host=args.host,
        port=args.port,
        lm_threads=args.threads,
        announce=lambda line: print(line, file=sys.stderr),
    )
    return 0


def cmd_label(args: argparse.Namespace) -> int:
    from pipeline.evaluation.history import History
    from pipeline.evaluation.labelling import append_example, example_from_history
    from pipeline.store import open_store

    entry = History(Path(args.history)).get(args.id)
    store = open_store(Path(args.index))
    example = example_from_history(
        entry,
        store.catalog,
        case=args.case,
        answer_facts=args.fact,
        gold_documents=args.gold or None,
        forbidden_documents=args.forbidden,
        expect_not_found=args.not_found,
        split=args.split,
    )
    line = append_example(Path(args.traces), example)
    print(f"labelled {entry.history_id[:8]} as {args.case} example {example.id} ({args.traces}, line {line})")
    return 0


def cmd_profile(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from pipeline.export import profiles
    from pipeline.files import write_file_atomic

    paths = _profile_paths()
    console = Console()
    if args.action == "list":
        table = Table(title="prompt profiles")
        for column in ("", "name", "program", "created", "note"):
            table.add_column(column)
        for info in profiles.list_profiles(paths):
            table.add_row("*" if info.active else "", info.name, str(info.program), info.created_at, info.note)
        console.print(table)
    elif args.action == "add":
        info = profiles.add_profile(paths, args.name, Path(args.export_dir), note=args.note, confirm_overwrite=args.yes)
        console.print(f"added profile '{info.name}' -> {info.program}")
    elif args.action == "activate":
        info = profiles.activate(paths, args.name)
        console.print(f"active profile: '{info.name}' ({info.program})")
    elif args.action == "export":
        if args.all == bool(args.name):
            console.print("give a profile name or --all (not both)")
            return 2
        data = profiles.export_all(paths) if args.all else profiles.export_profile(paths, args.name)
        payload = profiles.profile_json(data)
        if args.out:
            write_file_atomic(Path(args.out), payload)
            console.print(f"wrote {args.out} ({len(payload)} bytes)")
        else:
            sys.stdout.buffer.write(payload)
    elif args.action == "import":
        info = profiles.import_profile(paths, Path(args.file).read_bytes(), args.name, confirm_overwrite=args.yes)
        console.print(f"imported profile '{info.name}' (active profile unchanged)")
    return 0


def _profile_paths() -> ProfilePaths:
    from pipeline.export.profiles import ProfilePaths

    return ProfilePaths(registry=DEFAULT_PROFILES / "profiles.json", root=DEFAULT_PROFILES / "programs")


def _program(store: Store, program_dir: str | None, console: Console) -> ScopedQA:
    """The program `choose_program` picks (--program, else the active profile, else uncompiled); says which."""
    from rich.markup import escape

    from pipeline.export.choice import choose_program

    choice = choose_program(store, Path(program_dir) if program_dir else None, _profile_paths())
    console.print(f"[dim]program: {escape(choice.source)}[/]")
    return choice.program


def _configure_dspy() -> None:
    """DSPy's response cache may only unpickle a known-safe set of types (it lives on disk)."""
    import dspy

    cache_dir = os.environ.get("DSPY_CACHEDIR", str(Path.home() / ".dspy_cache"))
    dspy.configure_cache(disk_cache_dir=cache_dir, restrict_pickle=True)


def _model_cache_dir() -> Path:
    return Path(os.environ.get("SCOPERAG_CACHE_DIR", Path.home() / ".cache" / "scoperag")) / "models"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scoperag", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="build (or rebuild) an index from a directory of documents")
    p.add_argument("source", help="directory with .md, .txt and .pdf files (and optionally corpus.toml)")
    p.add_argument("--out", default=str(DEFAULT_INDEX_DIR), help="index directory (default: %(default)s)")
    p.add_argument("--manifest", help="corpus manifest (default: SOURCE/corpus.toml when present)")
    p.add_argument("--embedder", choices=["minilm", "hash"], default="minilm")
    p.add_argument("--hash-dim", type=int, default=64, help=argparse.SUPPRESS)
    p.add_argument("--threads", type=int, default=1, help="embedding threads (default: 1)")
    p.add_argument("--chunk-words", type=int, default=120)
    p.add_argument("--chunk-overlap", type=int, default=30)
    p.add_argument("--strict", action="store_true", help="fail on the first unreadable file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("search", help="ranked chunks (or documents) for a query")
    p.add_argument("query")
    p.add_argument("--index", default=str(DEFAULT_INDEX_DIR))
    p.add_argument("--doc-id", action="append", default=[], metavar="ID", help="restrict to this document")
    p.add_argument("--property", help="restrict to one entity's documents (name, slug, alias or id)")
    p.add_argument("--mode", choices=["bm25", "dense", "hybrid"], default="hybrid")
    p.add_argument("-k", type=int, default=5)
    p.add_argument("--documents", action="store_true", help="search documents (summaries, filenames)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("ask", help="answer a question with sectioned, cited answers")
    p.add_argument("question")
    p.add_argument("--index", default=str(DEFAULT_INDEX_DIR))
    p.add_argument("--doc-id", action="append", default=[], metavar="ID", help="chip: only these documents")
    p.add_argument("--property", help="only this entity's documents (name, slug, alias or id)")
    p.add_argument(
        "--lm",
        default=os.environ.get("SCOPERAG_LM"),
        help="'embedded' (default), a LiteLLM model string (openai/..., ollama_chat/...) or an http(s) base URL",
    )
    p.add_argument("--threads", type=int, default=1, help="embedded model threads (default: 1)")
    p.add_argument("--program", help="an exported program directory (default: the active profile, if any)")
    p.add_argument("--history", default=str(DEFAULT_HISTORY))
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("evaluate", help="score the program (or retrieval alone) on labelled traces")
    p.add_argument(
        "--traces",
        required=True,
        help="a JSONL trace file, or a directory of train/dev/test.jsonl (e.g. datasets/demo-traces)",
    )
    p.add_argument("--index", default=str(DEFAULT_INDEX_DIR))
    p.add_argument("--split", choices=["train", "dev", "test"], default=None)
    p.add_argument("--case", action="append", choices=["no_scope", "chip", "property", "wrong_property"])
    p.add_argument("--program", help="an exported program directory (scoperag-program/v1)")
    p.add_argument("--lm", default=os.environ.get("SCOPERAG_LM"))
    p.add_argument("--lm-threads", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="examples evaluated in parallel")
    p.add_argument("--retrieval-only", action="store_true", help="score retrieval and guards, no LM call")
    p.add_argument(
        "--mode",
        action="append",
        choices=["bm25", "dense", "hybrid"],
        help="retrieval mode(s) for --retrieval-only (default: all three side by side)",
    )
    p.add_argument("--limit", type=int, help="only N examples, taken round-robin over the cases (seeded)")
    p.add_argument("--out", help="directory for CSV and JSON results")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("optimize", help="compile the program as an experiment config says; log to MLflow")
    p.add_argument("config", help="experiment config, e.g. experiments/bootstrap_demo.toml")
    p.add_argument("--mlruns", default="mlruns", help="MLflow store directory (default: %(default)s)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_optimize)

    p = sub.add_parser("runs", help="table of optimisation runs: per-case metrics and prompt versions")
    p.add_argument("--experiment", help="only this MLflow experiment")
    p.add_argument("--mlruns", default="mlruns")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_runs)

    p = sub.add_parser("export", help="copy a run's compiled program (scoperag-program/v1) to a directory")
    p.add_argument("run_id")
    p.add_argument("--out", required=True)
    p.add_argument("--mlruns", default="mlruns")
    p.add_argument("--overwrite", action="store_true")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("champion", help="move prompt alias 'champion' to a run's prompt versions")
    p.add_argument("run_id")
    p.add_argument("--mlruns", default="mlruns")
    p.set_defaults(func=cmd_champion)

    p = sub.add_parser("serve", help="answer questions over HTTP with streamed progress (server-sent events)")
    p.add_argument("--index", default=str(DEFAULT_INDEX_DIR))
    p.add_argument("--program", help="an exported program directory (default: the active profile, if any)")
    p.add_argument("--lm", default=os.environ.get("SCOPERAG_LM"))
    p.add_argument("--threads", type=int, default=1, help="embedded model threads (default: 1)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--history", default=str(DEFAULT_HISTORY))
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("label", help="turn a recorded question (scoperag history) into a labelled example")
    p.add_argument("id", help="history id or unique prefix")
    p.add_argument("--case", required=True, choices=["no_scope", "chip", "property", "wrong_property"])
    p.add_argument("--fact", action="append", default=[], help="a fact a correct answer must state (repeat)")
    p.add_argument("--gold", action="append", default=[], help="gold document (default: the cited ones)")
    p.add_argument("--forbidden", action="append", default=[], help="a document that must never be cited")
    p.add_argument("--not-found", action="store_true", help="the answer is not in scope")
    p.add_argument("--split", choices=["train", "dev", "test"])
    p.add_argument("--traces", required=True, help="JSONL file to append to")
    p.add_argument("--index", default=str(DEFAULT_INDEX_DIR))
    p.add_argument("--history", default=str(DEFAULT_HISTORY))
    p.set_defaults(func=cmd_label)

    p = sub.add_parser("profile", help="named prompt profiles pointing at exported programs")
    actions = p.add_subparsers(dest="action", required=True)
    q = actions.add_parser("list", help="list profiles (* marks the active one)")
    q = actions.add_parser("add", help="register an exported program under a name")
    q.add_argument("name")
    q.add_argument("export_dir")
    q.add_argument("--note", default="")
    q.add_argument("--yes", action="store_true", help="replace an existing profile of that name")
    q = actions.add_parser("activate", help="make a profile the one ask/evaluate/serve use")
    q.add_argument("name")
    q = actions.add_parser("export", help="one profile (or --all) as versioned JSON")
    q.add_argument("name", nargs="?", help="the profile to export")
    q.add_argument("--all", action="store_true", help="every profile and which one is active")
    q.add_argument("--out", help="file to write (default: stdout)")
    q = actions.add_parser("import", help="import a profile JSON under a name")
    q.add_argument("file")
    q.add_argument("--name", required=True)
    q.add_argument("--yes", action="store_true", help="confirm overwriting an existing profile")
    p.set_defaults(func=cmd_profile)

    p = sub.add_parser("history", help="list recent questions, or show one with its trace")
    p.add_argument("id", nargs="?", help="history id (or a unique prefix)")
    p.add_argument("--history", default=str(DEFAULT_HISTORY))
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_history)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _quiet_environment()
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    _silence_libraries()
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except ScopeRagError as exc:
        print(f"scoperag: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("scoperag: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
