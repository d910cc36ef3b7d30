"""`scoperag serve`: questions answered over HTTP with streamed progress (server-sent events)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

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
    settings_option,
)

if TYPE_CHECKING:
    from pipeline.serving.hosts import AllowedHost


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
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        type=_allowed_host,
        metavar="NAME[:PORT]",
        help="a further name the server answers to (repeatable), e.g. the name a reverse proxy forwards; "
        "127.0.0.1, localhost and [::1] with the server's port are always answered, any other Host is refused",
    )
    p.set_defaults(func=cmd_serve)


def _allowed_host(text: str) -> AllowedHost:
    from pipeline.serving.hosts import parse_allowed_host

    try:
        return parse_allowed_host(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_serve(args: argparse.Namespace) -> int:
    from pipeline.serving.server import run

    configure_dspy()
    for entry in args.allowed_host:
        port = f":{entry.port}" if entry.port else " on any port"
        print(f"also answering Host {entry.name}{port}", file=sys.stderr)
    print(f"serving on http://{args.host}:{args.port} (the page at /, OpenAPI at /openapi.json)", file=sys.stderr)
    run(
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
        settings=read_settings(args.settings),
        announce=lambda line: print(line, file=sys.stderr),
        corpus=Path(args.corpus) if args.corpus else None,
        allowed_hosts=args.allowed_host,
    )
    return 0
