"""The `scoperag` command: each subcommand parses arguments and calls one library function."""

from __future__ import annotations

import argparse
import logging
import sqlite3
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points

from pipeline.cli import ask, evaluate, indexing, profile, serve
from pipeline.cli.common import Commands, quiet_environment, silence_libraries
from pipeline.errors import ScopeRagError

# Installed packages add commands here: `<name> = "package.module:register"`, where register(commands)
# adds subparsers (experiments/ adds optimize, runs, export and champion this way).
COMMAND_GROUP = "scoperag.commands"
BUILT_IN: tuple[Callable[[Commands], None], ...] = (
    indexing.register,
    ask.register,
    evaluate.register,
    serve.register,
    profile.register,
)


def build_parser(*, plugins: bool = True) -> argparse.ArgumentParser:
    """The full parser: built-in commands and, with `plugins`, those of the `scoperag.commands` group."""
    parser, commands = _built_in()
    if plugins:
        add_plugins(commands)
    return parser


def add_plugins(commands: Commands) -> None:
    """Every installed `scoperag.commands` entry point registers its commands (a broken one is reported)."""
    for point in sorted(entry_points(group=COMMAND_GROUP), key=lambda p: p.name):
        try:
            register = point.load()
        except ImportError as exc:
            print(f"scoperag: commands of {point.value} unavailable: {exc}", file=sys.stderr)
            continue
        register(commands)


def _built_in() -> tuple[argparse.ArgumentParser, Commands]:
    parser = argparse.ArgumentParser(prog="scoperag", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
    commands = parser.add_subparsers(dest="command", required=True)
    for register in BUILT_IN:
        register(commands)
    return parser, commands


def _parser_for(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser for `argv`: plugins are imported only when the command is not built in.

    A plugin may be heavy to import (experiments/ imports MLflow, ~2 s); `index`, `search` and `ask`
    should not pay for it. The top-level parser has no option taking a value, so the command is the
    first argument not starting with '-'.
    """
    parser, commands = _built_in()
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    if command not in commands.choices:
        add_plugins(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    quiet_environment()
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = _parser_for(arguments).parse_args(arguments)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    silence_libraries()
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except ScopeRagError as exc:
        from pipeline.escapes import strip_controls

        # errors quote what was given (a property, a path, a key): no escape sequence reaches the terminal
        print(f"scoperag: error: {strip_controls(str(exc))}", file=sys.stderr)
        return 2
    except (OSError, sqlite3.Error) as exc:  # a full or read-only disk where no command said what it was writing
        from pipeline.escapes import strip_controls
        from pipeline.files import storage_problem

        problem = storage_problem(exc)
        if problem is None:
            raise
        where = getattr(exc, "filename", None)
        said = f"cannot write{f' {where}' if where else ''}: {problem[0]}; {problem[1]}"
        print(f"scoperag: error: {strip_controls(said)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("scoperag: interrupted", file=sys.stderr)
        return 130


def run() -> None:
    """The console script: `main`, then exit without a garbage collection over every object the imported
    libraries made (LiteLLM, DSPy, pandas: ~1-4 s on a busy machine, so a command that said it stopped or
    finished would linger). Whichever way the command ends (done, failed, stopped by Ctrl-C, its output's reader
    gone), an embedded model it loaded is shut down first, while the interpreter is whole: a process that exits
    with llama.cpp still decoding crashes in its C++ teardown (exit 139). Objects are still finalised and atexit
    handlers still run, unless work stopped by the user is still inside a call: the interpreter is then left at
    once, the same when the command failed; what finished was written and is flushed first."""
    import gc
    import os
    import threading
    import traceback

    from pipeline.evaluation.parallel import WORKER_PREFIX

    def abandoned() -> bool:
        return any(t.name.startswith(WORKER_PREFIX) and t.is_alive() for t in threading.enumerate())

    try:
        code = main()
    except BaseException as exc:  # also argparse's and rich's SystemExit (the reader of stdout gone) and Ctrl-C
        shut_down_models(quiet=abandoned())
        if not abandoned():
            raise
        # Ended while stopped work is still inside a call: reported, then the same quick exit as below.
        if isinstance(exc, SystemExit):
            code = exc.code if isinstance(exc.code, int) else 1
        elif isinstance(exc, KeyboardInterrupt):
            code = 130
        else:
            traceback.print_exc()
            code = 1
    shut_down_models(quiet=abandoned())
    if abandoned():
        flush_quietly()
        os._exit(code)
    gc.freeze()
    sys.exit(code)


def shut_down_models(*, quiet: bool = False) -> None:
    """Every embedded model this process loaded, shut down (pipeline.program.lm.engine.release_models); a
    process that never imported the engine loaded none and imports nothing here. `quiet`: the work was stopped
    and said so, and the calls the shutdown cuts would only log their failure after it."""
    engine = sys.modules.get("pipeline.program.lm.engine")
    if engine is None:
        return
    if quiet:
        logging.disable(logging.CRITICAL)
    engine.release_models()


def flush_quietly() -> None:
    """stdout and stderr flushed, whatever their reader did (a pipe whose reader is gone raises)."""
    import contextlib

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe; a stream already closed
            stream.flush()


if __name__ == "__main__":
    run()
