"""`scoperag evaluate`: the program (or retrieval alone) scored per case on labelled examples."""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.cli.common import (
    CASES,
    MODES,
    SPLITS,
    Commands,
    configure_dspy,
    console,
    index_option,
    lm_keys,
    lm_option,
    load_program,
    model_cache_dir,
    output,
    program_option,
    program_plan,
    ray_option,
    read_settings,
    settings_option,
    styled,
    timings_file,
)
from pipeline.errors import WorkStopped
from pipeline.settings import DEFAULT_PARALLEL
from pipeline.values.typed import KINDS

if TYPE_CHECKING:
    from rich.console import Console

    from pipeline.cli.eta import Eta
    from pipeline.cli.progress import StageProgress
    from pipeline.evaluation.examples import LabelledExample
    from pipeline.evaluation.scoring import ExampleResult
    from pipeline.export.choice import ProgramPlan
    from pipeline.program.module import ScopedQA
    from pipeline.settings import CoreConfig
    from pipeline.store import Store
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
    p.add_argument(
        "--kind",
        action="append",
        choices=KINDS,
        help="only examples expecting a typed value of this kind (repeatable; e.g. boolean for the yes/no questions)",
    )
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
    from pipeline.cli.progress import StageProgress
    from pipeline.cluster import ray_session
    from pipeline.evaluation.examples import load_example_set, of_kinds, stratified_sample
    from pipeline.store import open_store

    notices = console()
    examples = load_example_set(Path(args.traces), split=args.split, cases=args.case or None)
    if args.kind:
        examples = of_kinds(examples, args.kind)
    if args.limit:
        examples = stratified_sample(examples, args.limit, seed=0)
    if not examples:
        kinds = f" of kind {', '.join(args.kind)}" if args.kind else ""
        notices.print(f"no examples in {args.traces}{_split_words(args)} for case {args.case or 'any'}{kinds}")
        return 1
    if not args.verbose:  # per-example guard and tool-loop notes are in each example's result (-v shows them)
        for name in ("pipeline.execution", "pipeline.evaluation.scoring"):
            logging.getLogger(name).setLevel(logging.ERROR)
    settings = read_settings(args.settings)
    plan = None if args.retrieval_only else program_plan(args, settings)
    if plan is not None:  # said first: which program answers and which steps the LM runs
        notices.print(styled(plan.line()), soft_wrap=True)
    store = open_store(Path(args.index))
    configure_dspy()
    program = None
    lm = None
    if plan is not None:
        from pipeline.program.lm import make_lm

        program = load_program(store, plan)
        if not args.ray:  # on Ray each worker makes its own
            lm = make_lm(
                args.lm,
                cache_dir=model_cache_dir(),
                threads=args.lm_threads,
                parallel=max(1, args.threads),
                keys=lm_keys(),
            )
    modes: list[SearchMode] = (args.mode or list(MODES)) if args.retrieval_only else ["hybrid"]
    eta = None if args.ray else evaluation_eta(args, modes, len(examples), plan)
    cluster = ray_session(args.ray) if args.ray else contextlib.nullcontext()
    with cluster:
        for mode in modes:
            if args.ray:
                with StageProgress(notices) as bar:
                    results = _evaluate_on_ray(args, examples, program, mode, _advance(bar, mode), notices)
                _show(args, examples, mode, results)
                continue
            finished = _evaluate_here(args, examples, store, program, lm, mode, settings.core, notices, eta, plan)
            if isinstance(finished, WorkStopped):
                done = [finished.finished[i] for i in sorted(finished.finished)]
                try:
                    _show(args, examples, mode, done, stopped=True)  # type: ignore[arg-type]
                except (SystemExit, BrokenPipeError):  # Ctrl-C stopped `| tee` too: the files are written first
                    stdout_to_devnull()
                notices.print(
                    styled(
                        (f"stopped: {len(done)} of {finished.total} examples finished", "yellow"),
                        f"; written to {args.out}, marked partial" if args.out else " (--out writes them)",
                    ),
                    soft_wrap=True,
                )
                return 130
            _show(args, examples, mode, finished)
    return 0


def stdout_to_devnull() -> None:
    """Whatever is printed from now on is dropped: the reader of stdout is gone (rich does the same on a broken
    pipe; a plain print does not), so the interpreter's last flush does not fail again."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def evaluation_eta(
    args: argparse.Namespace, modes: list[SearchMode], examples: int, plan: ProgramPlan | None = None
) -> Eta:
    """One ETA over every mode's examples: a question at the rate measured here for this LM running the steps
    `plan` gives it (the benchmark's rate before any, for the one program it measured: the 0.5B model running every
    step), anything else learned from its first examples; scaled by the load when the work runs here (retrieval,
    the embedded model)."""
    from pipeline.cli.eta import Eta, Gauge, Work, available_cores
    from pipeline.program.lm import parse_lm_spec
    from pipeline.program.lm.factory import DEFAULT_EMBEDDED
    from pipeline.program.lm.timings import EMBEDDED_LOAD_EXPONENT, EMBEDDED_SECONDS, load_rates
    from pipeline.settings import STEP_NAMES

    kind = "retrieval" if args.retrieval_only else "question"
    spec = parse_lm_spec(args.lm)
    embedded = spec.kind == "embedded"
    rate = load_rates(timings_file(), _lm_name(args, plan), max(1, args.threads)).get(kind)
    benchmarked = plan is not None and all(plan.steps.uses_lm(name) for name in STEP_NAMES)
    if rate is None and embedded and spec.size == DEFAULT_EMBEDDED and benchmarked:
        rate = EMBEDDED_SECONDS["question"]
    if args.retrieval_only:
        gauge: Gauge | None = Gauge(max(1, args.threads))
    else:
        threads = args.lm_threads or available_cores()
        gauge = Gauge(threads, exponent=EMBEDDED_LOAD_EXPONENT) if embedded else None
    eta = Eta([Work(mode, examples, kind, rate, "example") for mode in modes], gauge=gauge)
    eta.start()
    return eta


def _lm_name(args: argparse.Namespace, plan: ProgramPlan | None) -> str:
    """The work as rates are kept for it: the LM's spec ("embedded" by default) and the steps it runs ("embedded
    [choose]", "embedded []" when every step runs its floor), since a question's time is the LM calls the program
    makes; "none" for retrieval alone."""
    from pipeline.settings import STEP_NAMES

    if args.retrieval_only:
        return "none"
    lm = args.lm or "embedded"
    if plan is None:
        return lm
    return f"{lm} [{','.join(name for name in STEP_NAMES if plan.steps.uses_lm(name))}]"


def _keep_rates(args: argparse.Namespace, eta: Eta, plan: ProgramPlan | None) -> None:
    """What this evaluation measured per question, kept for the next plan."""
    from pipeline.program.lm.timings import record_rates

    record_rates(timings_file(), _lm_name(args, plan), max(1, args.threads), eta.measured())


# What the first Ctrl-C says: nothing waits for the examples under way (an embedded-model call can take a minute).
STOPPING = "stopping: no new example or LM call starts; the finished ones are kept (Ctrl-C again to quit now)"


def _evaluate_here(
    args: argparse.Namespace,
    examples: list[LabelledExample],
    store: Store,
    program: ScopedQA | None,
    lm: Any,
    mode: SearchMode,
    core: CoreConfig,
    notices: Console,
    eta: Eta | None = None,
    plan: ProgramPlan | None = None,
) -> list[ExampleResult] | WorkStopped:
    """One mode's evaluation in this process, with a progress line per example and per LM call, and the whole
    evaluation's ETA (its measured rate kept for the program `plan` names); the finished results when Ctrl-C
    stopped it."""
    import dspy

    from pipeline.cli.interrupt import stopping_on_interrupt
    from pipeline.cli.progress import StageProgress
    from pipeline.evaluation.scoring import evaluate
    from pipeline.program.calls import LMCallCounter, StopSignal, counting

    stop = StopSignal()
    done = {"examples": 0}
    total = len(examples)
    with StageProgress(notices) as bar, stopping_on_interrupt(stop, notices, STOPPING):

        def show_eta(finished: int | None = None) -> None:
            if eta is not None:
                if finished is not None:
                    eta.advance(mode, finished)
                bar.job_eta(eta.text())

        def advance(finished: int, count: int) -> None:
            done["examples"] = finished
            show_eta(finished)
            bar.update(mode, finished, count, _calls(counter), rate_of=(finished, "examples"))

        def called(calls: int) -> None:  # a heartbeat while an example's LM calls run
            show_eta()
            bar.update(mode, done["examples"], total, _calls(counter), rate_of=(done["examples"], "examples"))

        counter = LMCallCounter(on_call=called, stop=stop)
        show_eta(0)
        bar.update(mode, 0, total)
        with contextlib.ExitStack() as inside:
            if lm is not None:
                inside.enter_context(dspy.context(lm=lm, adapter=dspy.JSONAdapter()))
                inside.enter_context(counting(counter))
            try:
                results = evaluate(
                    examples,
                    store,
                    program=program,
                    mode=mode,
                    threads=args.threads,
                    progress=advance,
                    core=core,
                    stop=stop,
                )
            except WorkStopped as stopped:
                return stopped
        # Only when the LM answered every call: DSPy's cache makes a question look faster than it is.
        if eta is not None and lm is not None and counter.calls > 0 and counter.new_calls == counter.calls:
            _keep_rates(args, eta, plan)
        return results


def _calls(counter: Any) -> str:
    return f"{counter.calls} LM calls" if counter.calls else ""


def _advance(bar: StageProgress, mode: str) -> Callable[[int, int], None]:
    return lambda done, total: bar.update(mode, done, total, rate_of=(done, "examples"))


def _split_words(args: argparse.Namespace) -> str:
    """ ", split dev", ", every split" (a trace directory without --split) or nothing (one trace file)."""
    if args.split:
        return f", split {args.split}"
    return ", every split" if Path(args.traces).is_dir() else ""


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
        lm = functools.partial(
            make_lm, args.lm, cache_dir=model_cache_dir(), threads=args.lm_threads, parallel=1, keys=lm_keys()
        )
        setup = program_setup(index_dir, program, lm)
    fanned = evaluate_on_ray(examples, setup, progress=advance)
    if fanned.retries:
        notices.print(f"[yellow]Ray ran {fanned.retries} task(s) again after worker failures[/]")
    return fanned.results


def _show(
    args: argparse.Namespace,
    examples: list[LabelledExample],
    mode: str,
    results: list[ExampleResult],
    stopped: bool = False,
) -> None:
    """The per-case table and failed examples of one mode; CSV and JSON files under --out, with a status file
    saying whether they hold every example (`stopped`: Ctrl-C ended the evaluation early)."""
    import json

    from pipeline.evaluation.tables import per_case_table, results_frame

    frame = results_frame(results)
    table = per_case_table(frame)
    # written before anything is printed: a terminal or pipe that is gone (Ctrl-C reached `| tee` too) loses no file
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        frame.to_csv(out / f"examples-{mode}.csv", index=False)
        table.to_csv(out / f"cases-{mode}.csv")
        (out / f"cases-{mode}.json").write_text(table.to_json(orient="index", indent=2))
        status = {
            "mode": mode,
            "complete": not stopped,
            "examples_finished": len(results),
            "examples_total": len(examples),
            "note": f"partial: stopped by the user (Ctrl-C) after {len(results)} of {len(examples)} examples"
            if stopped
            else "every example",
        }
        (out / f"status-{mode}.json").write_text(json.dumps(status, indent=2) + "\n")
    count = f"{len(results)} of {len(examples)}" if stopped else str(len(examples))
    source = f" ({count} examples from {args.traces}{_split_words(args)}{'; partial: stopped' if stopped else ''})"
    output().print(styled("\n", (mode, "bold"), source), soft_wrap=True)
    shown = table.dropna(axis=1, how="all")
    if args.retrieval_only:
        shown = shown.drop(columns=["composite", "abstention", "lm_calls", "tokens"], errors="ignore")
    if results:
        # "-": a metric that applies to no example of the case (e.g. gold-document recall where none is gold)
        print(shown.to_string(line_width=200, na_rep="-"))
    else:
        output().print("no example finished: nothing was scored", highlight=False)
    for result in results:
        for note in (*result.notes, *([result.error] if result.error else [])):
            output().print(styled((f"{result.example.id}: ", "yellow"), note))
    failures = frame[frame["failed"]] if len(frame) else frame
    if len(failures):
        listed = ", ".join(f"{r.id}({r.case})" for r in failures.itertuples())
        output().print(styled((f"{len(failures)} failed:", "yellow"), f" {listed}"))
