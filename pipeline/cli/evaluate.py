"""`scoperag evaluate`: the program (or retrieval alone) scored per case on labelled examples."""

from __future__ import annotations

import argparse
import contextlib
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.cli.common import (
    CASES,
    MODES,
    SPLITS,
    Commands,
    configure_dspy,
    console,
    index_option,
    lm_option,
    load_program,
    model_cache_dir,
    output,
    program_option,
    ray_option,
    read_settings,
    settings_option,
    styled,
)
from pipeline.settings import DEFAULT_PARALLEL

if TYPE_CHECKING:
    from rich.console import Console

    from pipeline.evaluation.examples import LabelledExample
    from pipeline.evaluation.scoring import ExampleResult
    from pipeline.program.module import ScopedQA
    from pipeline.types import SearchMode


def register(commands: Commands) -> None:
    """Add `evaluate`."""
    p = commands.add_parser(
        "evaluate",
        parents=[index_option(), program_option(), lm_option(), ray_option(), settings_option()],
        help="score the program (or retrieval alone) on labelled traces",
    )
    p.add_argument(
        "--traces",
        required=True,
        help="a JSONL trace file, or a directory of train/dev/test.jsonl (e.g. datasets/demo-traces)",
    )
    p.add_argument("--split", choices=SPLITS, default=None)
    p.add_argument("--case", action="append", choices=CASES)
    p.add_argument("--lm-threads", type=int, default=None, help="embedded model threads (default: every core)")
    p.add_argument(
        "--threads", type=int, default=DEFAULT_PARALLEL, help="examples evaluated in parallel (default: %(default)s)"
    )
    p.add_argument("--retrieval-only", action="store_true", help="score retrieval and guards, no LM call")
    p.add_argument(
        "--mode",
        action="append",
        choices=MODES,
        help="retrieval mode(s) for --retrieval-only (default: all three side by side)",
    )
    p.add_argument("--limit", type=int, help="only N examples, taken round-robin over the cases (seeded)")
    p.add_argument("--out", help="directory for CSV and JSON results")
    p.set_defaults(func=cmd_evaluate)


def cmd_evaluate(args: argparse.Namespace) -> int:
    import dspy

    from pipeline.cli.progress import StageProgress
    from pipeline.cluster import ray_session
    from pipeline.evaluation.examples import load_example_set, stratified_sample
    from pipeline.evaluation.scoring import evaluate
    from pipeline.store import open_store

    notices = console()
    examples = load_example_set(Path(args.traces), split=args.split, cases=args.case or None)
    if args.limit:
        examples = stratified_sample(examples, args.limit, seed=0)
    if not examples:
        notices.print(f"no examples in {args.traces} for split={args.split} case={args.case or 'any'}")
        return 1
    store = open_store(Path(args.index))
    settings = read_settings(args.settings)
    configure_dspy()
    program = None
    lm = None
    if not args.retrieval_only:
        from pipeline.program.lm import make_lm

        program = load_program(store, args.program, notices, settings, uncompiled=args.uncompiled, lm=args.lm)
        if not args.ray:  # on Ray each worker makes its own
            lm = make_lm(args.lm, cache_dir=model_cache_dir(), threads=args.lm_threads, parallel=max(1, args.threads))
    modes: list[SearchMode] = (args.mode or list(MODES)) if args.retrieval_only else ["hybrid"]
    cluster = ray_session(args.ray) if args.ray else contextlib.nullcontext()
    with cluster:
        for mode in modes:
            with StageProgress(notices) as bar:

                def advance(done: int, total: int, bar: StageProgress = bar, mode: str = mode) -> None:
                    bar.update(mode, done, total)

                if args.ray:
                    results = _evaluate_on_ray(args, examples, program, mode, advance, notices)
                else:
                    with (
                        dspy.context(lm=lm, adapter=dspy.JSONAdapter()) if lm is not None else contextlib.nullcontext()
                    ):
                        results = evaluate(
                            examples,
                            store,
                            program=program,
                            mode=mode,
                            threads=args.threads,
                            progress=advance,
                            core=settings.core,
                        )
            _show(args, examples, mode, results)
    return 0


def _evaluate_on_ray(
    args: argparse.Namespace,
    examples: list[LabelledExample],
    program: ScopedQA | None,
    mode: SearchMode,
    advance: Callable[[int, int], None],
    notices: Console,
) -> list[ExampleResult]:
    """The examples as Ray tasks; each worker makes the LM itself (the named endpoint, or the embedded model
    loaded once per worker)."""
    from pipeline.evaluation.fanout import WorkerSetup, evaluate_on_ray, program_setup
    from pipeline.program.lm import make_lm

    index_dir = Path(args.index).resolve()
    if program is None:
        setup = WorkerSetup(index_dir, settings=read_settings(args.settings), mode=mode)
    else:
        lm = functools.partial(make_lm, args.lm, cache_dir=model_cache_dir(), threads=args.lm_threads, parallel=1)
        setup = program_setup(index_dir, program, lm)
    fanned = evaluate_on_ray(examples, setup, progress=advance)
    if fanned.retries:
        notices.print(f"[yellow]Ray ran {fanned.retries} task(s) again after worker failures[/]")
    return fanned.results


def _show(args: argparse.Namespace, examples: list[LabelledExample], mode: str, results: list[ExampleResult]) -> None:
    """The per-case table and failed examples of one mode; CSV and JSON files under --out."""
    from pipeline.evaluation.tables import per_case_table, results_frame

    frame = results_frame(results)
    table = per_case_table(frame)
    source = f" ({len(examples)} examples from {args.traces}, split={args.split})"
    output().print(styled("\n", (mode, "bold"), source))
    shown = table.dropna(axis=1, how="all")
    if args.retrieval_only:
        shown = shown.drop(columns=["composite", "abstention", "lm_calls", "tokens"], errors="ignore")
    print(shown.to_string(line_width=200))
    for result in results:
        for note in (*result.notes, *([result.error] if result.error else [])):
            output().print(styled((f"{result.example.id}: ", "yellow"), note))
    failures = frame[frame["failed"]]
    if len(failures):
        listed = ", ".join(f"{r.id}({r.case})" for r in failures.itertuples())
        output().print(styled((f"{len(failures)} failed:", "yellow"), f" {listed}"))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        frame.to_csv(out / f"examples-{mode}.csv", index=False)
        table.to_csv(out / f"cases-{mode}.csv")
        (out / f"cases-{mode}.json").write_text(table.to_json(orient="index", indent=2))
