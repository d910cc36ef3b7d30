"""What every command group shares: the console, DSPy's cache, the model cache, the program choice and options.

Options used by several commands are argparse parent parsers, so a flag is spelled, defaulted and
explained once. Each is built on call: `--lm`'s default reads SCOPERAG_LM when the parser is built.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from pipeline.settings import DEFAULT_HISTORY, DEFAULT_INDEX_DIR, DEFAULT_PROFILES

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import dspy
    from rich.console import Console
    from rich.text import Text

    from pipeline.export.choice import ProgramPlan
    from pipeline.export.profiles import ProfilePaths
    from pipeline.program.lm.keys import LMKeys
    from pipeline.program.module import ScopedQA
    from pipeline.settings import Settings
    from pipeline.store import Store
    from pipeline.types import SearchMode

# What a command group's `register(commands)` adds its subcommands to.
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
CASES = ["no_scope", "chip", "property", "wrong_property"]
SPLITS = ["train", "dev", "test"]
MODES: list[SearchMode] = ["bm25", "dense", "hybrid"]


def quiet_environment() -> None:
    """Nothing may reach the network at start-up (LiteLLM's cost map, MLflow telemetry, the HF hub), and
    a command shows one progress display: DSPy's own tqdm bars are off (tqdm reads TQDM_DISABLE when
    imported, so this runs before anything imports it)."""
    os.environ.setdefault("TQDM_DISABLE", "1")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    # MLflow logs at INFO by default ("Creating initial MLflow database tables..." when a store is made)
    os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def silence_libraries() -> None:
    """Libraries that log below ERROR on their own are quietened."""
    # bm25s sets its own logger to DEBUG when imported; import it first so this sticks.
    import bm25s  # noqa: F401

    for noisy in ("bm25s", "pypdf", "faiss", "LiteLLM", "httpx"):
        logging.getLogger(noisy).setLevel(logging.ERROR)


def console() -> Console:
    """The console for status and notices: stderr, so stdout carries only results (tables, --json)."""
    from rich.console import Console

    return Console(stderr=True, emoji=False)


def output() -> Console:
    """The console for results on stdout; ":name:" in data never becomes an emoji."""
    from rich.console import Console

    return Console(emoji=False)


def plain(value: object) -> str:
    """`value` as text Rich prints literally inside markup: brackets are never markup, and no escape
    sequence or control character reaches the terminal."""
    from rich.markup import escape

    from pipeline.escapes import strip_controls

    return escape(strip_controls(str(value)))


def styled(*parts: str | tuple[str, str]) -> Text:
    """A Rich Text of `parts` (plain strings, or (string, style) pairs): what data holds is never read as
    markup, an emoji or a link, and loses escape sequences and control characters."""
    from rich.text import Text

    from pipeline.escapes import strip_controls

    return Text.assemble(
        *(strip_controls(part) if isinstance(part, str) else (strip_controls(part[0]), part[1]) for part in parts)
    )


def configure_dspy() -> None:
    """DSPy's response cache lives in `dspy_cache_dir()` and may only unpickle a known-safe set of types."""
    import dspy

    dspy.configure_cache(disk_cache_dir=str(dspy_cache_dir()), restrict_pickle=True)


def dspy_cache_dir() -> Path:
    """DSPy's response cache: $DSPY_CACHEDIR when set, else `dspy/` in the project's cache directory (not
    DSPy's own ~/.dspy_cache, which any other program or clone may have filled)."""
    configured = os.environ.get("DSPY_CACHEDIR")
    return Path(configured) if configured else cache_root() / "dspy"


def cache_root() -> Path:
    """The project's cache directory: $SCOPERAG_CACHE_DIR, else ~/.cache/scoperag."""
    from pipeline.program.lm import default_model_cache_dir

    root = os.environ.get("SCOPERAG_CACHE_DIR")
    return Path(root) if root else default_model_cache_dir().parent


def timings_file() -> Path:
    """This machine's measured rates of LM work (pipeline.program.lm.timings), in the project's cache directory."""
    from pipeline.program.lm.timings import TIMINGS_FILE

    return cache_root() / TIMINGS_FILE


def model_cache_dir() -> Path:
    """Where the embedded LM is assembled: `models/` in the project's cache directory."""
    return cache_root() / "models"


def profile_paths() -> ProfilePaths:
    """The prompt-profile registry of this working directory."""
    from pipeline.export.profiles import ProfilePaths

    return ProfilePaths(registry=DEFAULT_PROFILES / "profiles.json", root=DEFAULT_PROFILES / "programs")


def program_plan(args: argparse.Namespace, settings: Settings) -> ProgramPlan:
    """The program --program, --uncompiled, a typed --lm and the active profile choose (pipeline.export.choice),
    read but not loaded: $SCOPERAG_LM alone is a standing default, so an active profile still answers with it."""
    from pipeline.export.choice import plan_program, shipped_for

    return plan_program(
        Path(args.program) if args.program else None,
        profile_paths(),
        settings,
        shipped=shipped_for(args.lm),
        uncompiled=args.uncompiled,
        lm=args.lm if args.lm_typed else None,
    )


def load_program(store: Store, plan: ProgramPlan) -> ScopedQA:
    """The planned program over `store`."""
    from pipeline.export.choice import build_program

    return build_program(plan, store).program


def read_settings(path: str | None) -> Settings:
    """The settings in TOML file `path` (--settings), else the defaults."""
    from pipeline.settings import Settings, load_settings

    return load_settings(Path(path)) if path else Settings()


# -- options shared by several commands (argparse parents) ------------------------------------------


def _option(flag: str, **spec: Any) -> argparse.ArgumentParser:
    """A parent parser holding the one option `flag` (argparse.add_argument's keywords in `spec`)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument(flag, **spec)
    return parser


def index_option() -> argparse.ArgumentParser:
    """--index: the index directory to read."""
    return _option("--index", default=str(DEFAULT_INDEX_DIR))


def scope_options() -> argparse.ArgumentParser:
    """--doc-id (repeatable) and --property: the scope, resolved as `ask` resolves it (a chip wins)."""
    parser = _option(
        "--doc-id",
        action="append",
        default=[],
        metavar="ID",
        help="chip: only these documents (a document id, or its path relative to the corpus folder)",
    )
    parser.add_argument("--property", help="only this entity's documents (name, slug, alias or id)")
    return parser


def lm_option() -> argparse.ArgumentParser:
    """--lm: which language model answers (default $SCOPERAG_LM, else the embedded one); `lm_typed` says whether
    the flag was typed, since a typed --lm also chooses the program (pipeline.export.choice) and a default does not."""
    parser = _option(
        "--lm",
        default=os.environ.get("SCOPERAG_LM"),
        action=_TypedLM,
        help="'embedded' (default: the 0.5B model; 'embedded:0.5b' or 'embedded:1.5b' name one), a LiteLLM model "
        "string (openai/..., ollama_chat/...) or an http(s) base URL; runs the program compiled for that LM, else "
        "every step by it uncompiled, whatever profile is active",
    )
    parser.set_defaults(lm_typed=False)
    return parser


class _TypedLM(argparse.Action):
    """Stores --lm's value and notes that it was typed."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        namespace.lm_typed = True


# The API key of an OpenAI-compatible server on the loopback (`scoperag lm-serve` writes its key to a file).
LM_KEY_ENV = "SCOPERAG_LM_KEY"


def lm_keys() -> LMKeys:
    """The keys for OpenAI-compatible servers named by --lm, from the environment: $SCOPERAG_LM_KEY for a loopback
    address only, $SCOPERAG_LM_KEY_<HOST>_<PORT> for any other (pipeline.program.lm.keys)."""
    from pipeline.program.lm.keys import keys_from

    return keys_from(os.environ)


def asking_lm(
    args: argparse.Namespace, settings: Settings, on_load: Callable[[bool], None], parallel: int = 1
) -> dspy.LM:
    """The LM `ask` answers with (--lm, its --threads, the settings' request bounds, the keys of lm_keys), loaded
    by the first call that reaches it (`on_load` is told when loading starts and ends)."""
    from pipeline.program.lm import make_lm

    return make_lm(
        args.lm,
        cache_dir=model_cache_dir(),
        threads=args.threads,
        requests=settings.lm_requests,
        keys=lm_keys(),
        parallel=parallel,
        deferred=True,
        on_load=on_load,
    )


def lm_threads_option() -> argparse.ArgumentParser:
    """--threads: threads of the embedded model."""
    from pipeline.settings import available_cores

    cores = available_cores()
    return _option("--threads", type=int, default=cores, help=f"embedded model threads (default: every core, {cores})")


def settings_option() -> argparse.ArgumentParser:
    """--settings: a settings TOML file (pipeline.settings.Settings; any section may be left out)."""
    return _option("--settings", metavar="TOML", help="settings file, e.g. [lm_requests] retries and timeout_seconds")


def program_option() -> argparse.ArgumentParser:
    """--program: an exported program directory; --uncompiled: none, the program as written."""
    parser = _option(
        "--program",
        help="an exported program directory, run by the LM --lm names (default: the program for a typed --lm, else "
        "the active profile, else the shipped compiled program)",
    )
    parser.add_argument(
        "--uncompiled",
        action="store_true",
        help="the signatures' own prompts, every step by the LM (unless --settings names [program.steps]), to compare",
    )
    return parser


def history_option() -> argparse.ArgumentParser:
    """--history: the question history database."""
    return _option("--history", default=str(DEFAULT_HISTORY))


def json_option() -> argparse.ArgumentParser:
    """--json: print the result as JSON on stdout instead of a table."""
    return _option("--json", action="store_true")


def mlruns_option() -> argparse.ArgumentParser:
    """--mlruns: the local MLflow directory; --tracking-uri: a tracking server instead of its sqlite store."""
    parser = _option(
        "--mlruns",
        default="mlruns",
        help="local MLflow directory: the default store and scratch (default: %(default)s)",
    )
    parser.add_argument(
        "--tracking-uri",
        metavar="URI",
        help="MLflow tracking server or store, e.g. http://mlflow.internal:5000 "
        "(default: $MLFLOW_TRACKING_URI, else sqlite under --mlruns)",
    )
    return parser


def ray_option() -> argparse.ArgumentParser:
    """--ray [ADDRESS]: fan the work out over Ray ('local' or no value: a local Ray with 2 CPUs)."""
    return _option(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="run on Ray: a cluster address (ray://head:10001, auto) or 'local' (the default: 2 CPUs here)",
    )
