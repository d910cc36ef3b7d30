"""`scoperag index` (an index from a directory of documents) and `scoperag search` (ranked chunks or documents)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from pipeline.cli.common import (
    MODES,
    Commands,
    console,
    index_option,
    json_option,
    output,
    plain,
    ray_option,
    scope_options,
    styled,
)
from pipeline.settings import DEFAULT_INDEX_DIR


def register(commands: Commands) -> None:
    """Add `index` and `search`."""
    p = commands.add_parser(
        "index",
        parents=[json_option(), ray_option()],
        help="build (or rebuild) an index from a directory of documents",
    )
    p.add_argument("source", help="directory with .md, .txt, .pdf and .html files (and optionally corpus.toml)")
    p.add_argument("--out", default=str(DEFAULT_INDEX_DIR), help="index directory (default: %(default)s)")
    p.add_argument("--manifest", help="corpus manifest (default: SOURCE/corpus.toml when present)")
    p.add_argument(
        "--embedder",
        choices=["minilm", "static", "hash"],
        default="static",
        help="static: a static model (default; ~100x faster, better hybrid recall on the SEC set); "
        "minilm: all-MiniLM-L6-v2 int8 (better dense-only recall)",
    )
    p.add_argument("--hash-dim", type=int, default=64, help=argparse.SUPPRESS)
    p.add_argument(
        "--threads",
        type=int,
        default=0,
        help="minilm: embedding processes, one session each (default: 0, one per core)",
    )
    p.add_argument("--read-workers", type=int, default=0, help="processes reading PDFs (default: 0, one per core)")
    p.add_argument("--chunk-words", type=int, default=120)
    p.add_argument("--chunk-overlap", type=int, default=30)
    p.add_argument("--strict", action="store_true", help="fail on the first unreadable file")
    p.add_argument(
        "--allow-unmatched",
        action="store_true",
        help="build even when rules of the manifest match no file (by default that stops the build)",
    )
    p.add_argument("--yes", action="store_true", help="replace an index built from another folder without asking")
    p.set_defaults(func=cmd_index)

    p = commands.add_parser(
        "search",
        parents=[index_option(), scope_options(), json_option()],
        help="ranked chunks (or documents) for a query",
    )
    p.add_argument("query")
    p.add_argument("--mode", choices=MODES, default="hybrid")
    p.add_argument("-k", type=int, default=5)
    p.add_argument("--documents", action="store_true", help="search documents (summaries, filenames)")
    p.set_defaults(func=cmd_search)


def cmd_index(args: argparse.Namespace) -> int:
    from pipeline.cli.build_phases import BuildPhases
    from pipeline.cli.progress import StageProgress
    from pipeline.cluster import ray_session
    from pipeline.files import storage_errors
    from pipeline.settings import BuildSettings
    from pipeline.store.build import build_index
    from pipeline.store.embedder_pool import EmbedderPool
    from pipeline.store.embedders import Embedder, HashEmbedder, MiniLMEmbedder, StaticEmbedder
    from pipeline.store.fanout import RayEmbedder, RayReader
    from pipeline.store.reading import SourceReader, read_sources
    from pipeline.store.vector_cache import CACHE_NAME

    notices = console()
    if not replacing_confirmed(Path(args.source), Path(args.out), args.yes, notices):
        notices.print(styled(f"nothing was built; {args.out} is unchanged"), soft_wrap=True)
        return 1
    started = time.monotonic()
    had_cache = (Path(args.out) / CACHE_NAME).is_file()
    with contextlib.ExitStack() as resources:
        embedder: Embedder
        reader: SourceReader = read_sources
        if args.ray:  # reading and embedding on Ray; this process writes and publishes
            notices.print(f"starting Ray ({plain(args.ray)}) ...", highlight=False)
            resources.enter_context(ray_session(args.ray))
            notices.print(
                "Ray is up: files go to its workers to be read and embedded (each worker starts first)",
                highlight=False,
            )
            chosen = {"hash": f"hash-{args.hash_dim}", "static": StaticEmbedder.name, "minilm": MiniLMEmbedder.name}
            dims = {"hash": args.hash_dim, "static": StaticEmbedder.dim, "minilm": MiniLMEmbedder.dim}
            embedder, reader = RayEmbedder(chosen[args.embedder], dims[args.embedder]), RayReader()
        elif args.embedder == "hash":
            embedder = HashEmbedder(args.hash_dim)
        elif args.embedder == "static":
            embedder = StaticEmbedder()
        elif (workers := args.threads or len(os.sched_getaffinity(0))) > 1:
            embedder = resources.enter_context(EmbedderPool(MiniLMEmbedder.name, MiniLMEmbedder.dim, workers))
        else:
            embedder = MiniLMEmbedder(threads=1)
        bar = resources.enter_context(StageProgress(notices))
        phases = resources.enter_context(BuildPhases(bar.update))
        kept = "nothing was published: the index there is as it was"
        resources.enter_context(storage_errors("the index", args.out, kept))
        report = build_index(
            Path(args.source),
            Path(args.out),
            embedder,
            manifest_path=Path(args.manifest) if args.manifest else None,
            settings=BuildSettings(
                chunk_words=args.chunk_words, chunk_overlap=args.chunk_overlap, read_workers=args.read_workers
            ),
            progress=phases,
            strict=args.strict,
            reader=reader,
            allow_unmatched=args.allow_unmatched,
        )
    for skipped in report.skipped:
        notices.print(f"[yellow]skipped[/] {plain(skipped.path)}: {plain(skipped.reason)}")
    for phrase, holders in report.shared_names:
        said = f"the name {phrase!r} is given to {' and '.join(holders)}: a question using it is asked which one"
        notices.print(f"[yellow]warning[/] {plain(said)}")
    for word, name in report.too_common:
        said = (
            f"the name {word!r} of {name} is written in other organisations' documents too: a question names {name}"
            " with it only in capitals or with more of the name"
        )
        notices.print(f"[yellow]note[/] {plain(said)}")
    for rule in report.unmatched_rules:
        notices.print(f"[yellow]manifest rule matched no file:[/] {plain(rule)}")
    for relpath in report.screen_paged:
        notices.print(f"[yellow]no page breaks[/] in {plain(relpath)}: paged by screenfuls of text")
    for relpath, kinds in report.hidden:
        found = ", ".join(f"{count} {kind.replace('_', ' ')}" for kind, count in sorted(kinds.items()))
        notices.print(f"[yellow]hidden characters removed[/] from {plain(relpath)}: {found}")
    summary = {
        "index": args.out,
        "generation": report.manifest.generation,
        "documents": report.documents,
        "chunks": report.chunks,
        "skipped": [s.path for s in report.skipped],
        "hidden_characters_removed": dict(report.hidden),
        "screen_paged": list(report.screen_paged),
        "embedder": embedder.name,
        "pages": report.pages,
        "embedded": report.embedded,
        "reused": report.reused,
        "seconds": round(time.monotonic() - started, 2),
        "phases": phases.record(),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        notices.print(
            f"indexed {report.documents} documents ({report.pages} pages), {report.chunks} chunks into {args.out} "
            f"({report.manifest.generation}) in {summary['seconds']} s; {report.reused} files unchanged since the "
            f"last build, {embedded_words(report.embedded, had_cache)}; {len(report.skipped)} skipped",
            soft_wrap=True,
        )
        notices.print(phases.line(), highlight=False, markup=False, soft_wrap=True)
    return 0


def replacing_confirmed(source: Path, out: Path, yes: bool, notices: Any) -> bool:
    """Whether to build into `out`: yes unless it holds an index of another source folder, which is replaced
    only when confirmed (`yes`, or an answer at a terminal); off a terminal without `yes`, IndexSourceError."""
    import sys

    from pipeline.errors import IndexCorruptError, IndexSourceError
    from pipeline.store.generations import MANIFEST_NAME, read_manifest

    if yes or not (out / MANIFEST_NAME).is_file():
        return True
    try:
        built_from = read_manifest(out).source
    except IndexCorruptError:
        return True  # an unusable index: the build replaces it, as it always did
    if built_from is None or Path(built_from) == source.resolve():
        return True
    if not sys.stdin.isatty():
        raise IndexSourceError(str(out), built_from, str(source.resolve()))
    said = f"{out} holds the index of {built_from}; this build is of {source.resolve()}"
    notices.print(styled(said), soft_wrap=True)
    return input(f"replace the index in {out}? [y/N] ").strip().lower() in ("y", "yes")


def embedded_words(embedded: int, had_cache: bool) -> str:
    """How many texts (chunks and document summaries, each distinct text once) were embedded, and whether a
    vector cache from an earlier build gave the rest."""
    if not had_cache:
        return f"{embedded} texts embedded"
    return (
        f"{embedded} texts embedded, the rest from the vector cache" if embedded else "every text from the vector cache"
    )


UUID_CHARS = 36


def cmd_search(args: argparse.Namespace) -> int:
    from rich.table import Table

    from pipeline.intake.scope import question_scope, resolve_scope
    from pipeline.settings import CoreConfig
    from pipeline.store import open_store

    store = open_store(Path(args.index))
    # The rule `ask` follows: selected documents (a chip) win over a property.
    scope = resolve_scope(store, document_ids=store.document_ids_for(args.doc_id) or None, property_ref=args.property)
    # The documents a question in that scope may read: the catalog's owners decide, as for `ask`.
    allowed = question_scope(scope, store).allowed
    document_ids = sorted(allowed) if allowed is not None else None
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
        # The page index weighs in as it does when a question is answered.
        core = CoreConfig()
        hits = store.search_chunks(
            args.query, args.k, document_ids, args.mode, page_weight=core.page_weight, figure_weight=core.figure_weight
        )
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
    import textwrap

    table = Table(title=f"{args.mode} search: {plain(args.query)}", show_lines=True)
    table.add_column("#", overflow="fold")
    # the document's id (a 36-character UUID, what --doc-id takes) is never folded over two lines: the column is
    # exactly as wide, and a longer file name is folded to it beforehand
    table.add_column("document", no_wrap=True, min_width=UUID_CHARS, max_width=UUID_CHARS)
    table.add_column("score", overflow="fold", max_width=12)
    table.add_column("text", overflow="fold", ratio=1)
    for row in rows:
        detail = " ".join(f"{k}={v}" for k, v in row["scores"].items())
        body = str(row.get("text") or row.get("summary"))
        page = f"\npage {row['page']}" if "page" in row else ""
        table.add_row(
            str(row["rank"]),
            "\n".join([*textwrap.wrap(plain(row["filename"]), UUID_CHARS), row["document_id"]]) + page,
            f"{row['score']}\n{detail}",
            plain(body[:300] + ("..." if len(body) > 300 else "")),
        )
    output().print(table)
    if not rows:
        print("no results")
    return 0
