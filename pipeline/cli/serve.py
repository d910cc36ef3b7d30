"""`scoperag serve`: questions answered over HTTP with streamed progress (server-sent events); `scoperag
lm-serve`: the embedded model itself over llama.cpp's OpenAI-compatible HTTP server."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.cli.common import (
    LM_KEY_ENV,
    Commands,
    configure_dspy,
    history_option,
    index_option,
    lm_keys,
    lm_option,
    lm_threads_option,
    model_cache_dir,
    profile_paths,
    program_option,
    read_settings,
    settings_option,
)
from pipeline.settings import DEFAULT_PARALLEL

if TYPE_CHECKING:
    from pipeline.program.lm.factory import LMSpec
    from pipeline.serving.hosts import AllowedHost


def register(commands: Commands) -> None:
    """Add `serve` and `lm-serve`."""
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
        "--label-to",
        metavar="FILE",
        help="the JSONL traces file answers labelled on the page are appended to (the examples `scoperag label` "
        "writes); without it answers are not labelled on the page",
    )
    p.add_argument(
        "--tracking-uri",
        metavar="URL",
        help="the MLflow tracking server (e.g. the address `scoperag ui` prints) whose runs the page links to "
        "(default: $MLFLOW_TRACKING_URI when it is a server)",
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

    p = commands.add_parser(
        "lm-serve",
        parents=[lm_threads_option()],
        help="serve the embedded model over llama.cpp's OpenAI-compatible HTTP server, behind a key "
        "(for --lm http://HOST:PORT/v1: Ray workers and other programs share one model)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    p.add_argument("--port", type=int, default=8080, help="port (default: %(default)s)")
    p.add_argument(
        "--lm",
        default="embedded",
        metavar="EMBEDDED",
        help="which embedded model to serve: 'embedded' (the 0.5B model, the default), 'embedded:0.5b' or "
        "'embedded:1.5b'",
    )
    p.add_argument(
        "--parallel", type=int, default=DEFAULT_PARALLEL, help="requests decoded at once (default: %(default)s)"
    )
    p.add_argument("--context-size", type=int, default=8192, help="tokens per request (default: %(default)s)")
    p.add_argument(
        "--key-file",
        default=".scoperag/lm-serve.key",
        help="where the API key is written for clients, readable by you alone (default: %(default)s; "
        "$SCOPERAG_LM_KEY sets the key); the clients' settings (the embedded model's time bounds) beside it, .toml",
    )
    p.set_defaults(func=cmd_lm_serve)


# What `lm-serve` writes beside its key for its clients (`--settings`): the embedded model's time bounds, the ones
# experiments/settings/lm-steps.toml sets, since a question through it takes minutes on 2 cores (docs/results.md)
# and the default bound of 120 s stopped the README's own example. Steps are left to the program that runs.
CLIENT_SETTINGS = """\
# Written by `scoperag lm-serve` for its clients (scoperag ask --settings THIS_FILE --lm URL): the embedded model
# takes minutes per question on 2 cores (docs/results.md), longer than the default bound of 120 s.
[question]
seconds = 900

[lm_requests]
timeout_seconds = 900
"""


def served_model(text: str) -> LMSpec:
    """The embedded model `lm-serve --lm` names; ScopeRagError for any other LM, which this command cannot serve."""
    from pipeline.errors import ScopeRagError
    from pipeline.program.lm.factory import embedded_spellings, parse_lm_spec

    spec = parse_lm_spec(text)
    if spec.kind != "embedded":
        raise ScopeRagError(
            f"lm-serve serves an embedded model, not {text!r}: use --lm {embedded_spellings()}; "
            "another LM is named by clients directly (scoperag ask --lm ...)"
        )
    return spec


def client_program(lm: str) -> str:
    """The --program option a client of the served model `lm` adds: a base URL alone runs every step by the LM
    uncompiled, so when the program shipped for that model runs some step by the LM (the 1.5B's), clients name it;
    nothing when it runs none (the 0.5B's runs every floor: the served model would answer no call)."""
    from pipeline.export.choice import plan_program, shipped_for
    from pipeline.settings import STEP_NAMES

    program = shipped_for(lm)
    if program is None or not program.is_dir():
        return ""
    steps = plan_program(program, None).steps
    return f" --program {program}" if any(steps.uses_lm(name) for name in STEP_NAMES) else ""


def _allowed_host(text: str) -> AllowedHost:
    from pipeline.serving.hosts import parse_allowed_host

    try:
        return parse_allowed_host(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_serve(args: argparse.Namespace) -> int:
    import os

    from pipeline.serving.server import checked_label_file, run

    configure_dspy()
    label_to = checked_label_file(Path(args.label_to)) if args.label_to else None
    if label_to is not None:
        print(f"labels made on the page are appended to {label_to}", file=sys.stderr)
    tracking = args.tracking_uri or os.environ.get("MLFLOW_TRACKING_URI")
    if tracking and not tracking.startswith(("http://", "https://")):
        said = f"the page links no MLflow runs: {tracking} is a store, not a server (pass --tracking-uri URL)"
        print(said, file=sys.stderr)
        tracking = None
    for entry in args.allowed_host:
        port = f":{entry.port}" if entry.port else " on any port"
        print(f"also answering Host {entry.name}{port}", file=sys.stderr)
    print("loading the index, the program and the LM ...", file=sys.stderr, flush=True)

    def ready() -> None:
        print(f"serving on http://{args.host}:{args.port} (the page at /, OpenAPI at /openapi.json)", file=sys.stderr)
        sys.stderr.flush()

    run(
        ready=ready,
        index_dir=Path(args.index),
        lm_spec=args.lm,
        lm_typed=args.lm_typed,
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
        keys=lm_keys(),
        label_to=label_to,
        tracking=tracking.rstrip("/") if tracking else None,
    )
    return 0


def cmd_lm_serve(args: argparse.Namespace) -> int:
    """The embedded model on llama.cpp's own OpenAI-compatible server until Ctrl-C; its key written to a file, and
    beside it (same name, .toml) the settings its clients pass for the embedded model's time bounds."""
    import os
    import secrets
    import threading

    from pipeline.export.choice import lm_words
    from pipeline.files import write_file_atomic
    from pipeline.program.lm import key_variable, serve_embedded_model
    from pipeline.serving.hosts import LOOPBACK_NAMES

    spec = served_model(args.lm)
    key = os.environ.get(LM_KEY_ENV) or secrets.token_urlsafe(24)
    key_file = Path(args.key_file)
    write_file_atomic(key_file, key.encode())
    key_file.chmod(0o600)
    client_settings = key_file.with_suffix(".toml")
    write_file_atomic(client_settings, CLIENT_SETTINGS.encode())
    if args.host not in LOOPBACK_NAMES:
        print(
            f"warning: {args.host} is reachable from other machines: anyone holding the key may use the model",
            file=sys.stderr,
        )
    print(f"loading {lm_words(spec.value)} ...", file=sys.stderr, flush=True)
    server = serve_embedded_model(
        cache_dir=model_cache_dir(),
        host=args.host,
        port=args.port,
        key=key,
        threads=args.threads,
        context_size=args.context_size,
        parallel=args.parallel,
        model=spec.model,
    )
    url = f"http://{args.host}:{args.port}/v1"
    # SCOPERAG_LM_KEY goes to loopback addresses only: a server other machines reach has a variable of its own
    variable = LM_KEY_ENV if args.host in LOOPBACK_NAMES else key_variable(url)
    runs = client_program(spec.value)
    print(
        f"serving {lm_words(spec.value)} on {url} (OpenAI-compatible, {args.parallel} requests at once); its key is "
        f'in {key_file}\nclients: {variable}=$(cat {key_file}) scoperag ask "..." --settings {client_settings} '
        f"--lm {url}{runs}   "
        "(Ctrl-C stops it)",
        file=sys.stderr,
        flush=True,
    )
    if args.host not in LOOPBACK_NAMES:
        print(
            "clients on other machines name this machine's address in --lm, with the key in that address's own "
            "variable, SCOPERAG_LM_KEY_<HOST>_<PORT> (SCOPERAG_LM_KEY is sent to loopback addresses only)",
            file=sys.stderr,
        )
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    del server
    return 0
