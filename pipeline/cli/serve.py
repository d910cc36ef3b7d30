"""`scoperag serve`: questions answered over HTTP with streamed progress (server-sent events)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipeline.cli.common import (
    Commands,
    configure_dspy,
    history_option,
    index_option,
    lm_option,
    lm_threads_option,
    model_cache_dir,
    profile_paths,
    program_option,
    read_settings,
    settings_for_lm,
    settings_option,
)


def register(commands: Commands) -> None:
    """Add `serve`."""
    p = commands.add_parser(
        "serve",
        parents=[
            index_option(),
            program_option(),
            lm_option(),
            lm_threads_option(),
            settings_option(),
            history_option(),
        ],
        help="answer questions over HTTP with streamed progress (server-sent events)",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument(
        "--corpus",
        help="the folder the index was built from: the page then shows cited PDF pages as images "
        "and text pages with their line breaks (default: the indexed text only)",
    )
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    from pipeline.serving.server import run

    configure_dspy()
    print("loading the index, the program and the LM ...", file=sys.stderr, flush=True)

    def ready() -> None:
        print(f"serving on http://{args.host}:{args.port} (the page at /, OpenAPI at /openapi.json)", file=sys.stderr)
        sys.stderr.flush()

    run(
        ready=ready,
        index_dir=Path(args.index),
        lm_spec=args.lm,
        cache_dir=model_cache_dir(),
        program_dir=Path(args.program) if args.program else None,
        uncompiled=args.uncompiled,
        profiles=profile_paths(),
        history=Path(args.history),
        host=args.host,
        port=args.port,
        lm_threads=args.threads,
        settings=settings_for_lm(read_settings(args.settings), args.lm),
        announce=lambda line: print(line, file=sys.stderr),
        corpus=Path(args.corpus) if args.corpus else None,
    )
    return 0
