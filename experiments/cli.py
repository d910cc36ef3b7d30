"""`scoperag optimize|runs|export|champion`: the experiment commands, added to the CLI through the
`scoperag.commands` entry-point group (pipeline/ never imports experiments/)."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.cli.common import (
    Commands,
    configure_dspy,
    console,
    json_option,
    mlruns_option,
    model_cache_dir,
    output,
    plain,
    quiet_environment,
    ray_option,
    styled,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from rich.console import Console

    from experiments.job import RunSummary
    from pipeline.program.calls import StopSignal


# The runs table fits a terminal this wide (--wide and --json carry the rest).
RUNS_WIDTH = 120


def register(commands: Commands) -> None:
    """Add `optimize`, `sweep`, `runs`, `export` and `champion`."""
    p = commands.add_parser(
        "optimize",
        parents=[mlruns_option(), json_option(), ray_option()],
        help="compile the program as an experiment config says; log to MLflow",
    )
    p.add_argument("config", help="experiment config, e.g. experiments/bootstrap_demo.toml")
    p.set_defaults(func=cmd_optimize)

    p = commands.add_parser(
        "sweep",
        parents=[mlruns_option(), json_option(), ray_option()],
        help="several experiment configs as one MLflow parent run; paired comparison with the first at the end",
    )
    p.add_argument("configs", nargs="+", metavar="CONFIG", help="experiment configs; the first is the reference")
    p.add_argument("--experiment", help="MLflow experiment of the sweep (default: the first config's)")
    p.set_defaults(func=cmd_sweep)

    p = commands.add_parser(
        "runs",
        parents=[mlruns_option(), json_option()],
        help="optimisation runs: examples per case, metric before/after with its 95%% CI, verdict and reason",
    )
    p.add_argument("--experiment", help="only this MLflow experiment")
    p.add_argument("--wide", action="store_true", help="every column: per-case metrics, safety, LM calls, prompts")
    p.add_argument(
        "--compare",
        nargs=2,
        metavar=("RUN_A", "RUN_B"),
        help="B's compiled program minus A's, paired per example, with a 95%% bootstrap CI per case",
    )
    p.set_defaults(func=cmd_runs)

    p = commands.add_parser(
        "export",
        parents=[mlruns_option()],
        help="copy a run's selected program (scoperag-program/v2) to a directory",
    )
    p.add_argument("run_id")
    p.add_argument("--out", required=True)
    p.add_argument("--overwrite", action="store_true")
    p.add_argument(
        "--baseline",
        action="store_true",
        help="a run whose candidate was rejected: export its uncompiled baseline anyway",
    )
    p.set_defaults(func=cmd_export)

    p = commands.add_parser(
        "ui",
        parents=[mlruns_option()],
        help="the MLflow UI on this project's store, offline (runs, metrics, prompt versions)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    p.add_argument("--port", type=int, default=5000, help="port (default: %(default)s)")
    p.set_defaults(func=cmd_ui)

    p = commands.add_parser(
        "champion",
        parents=[mlruns_option()],
        help="move prompt alias 'champion' to a run's prompt versions",
    )
    p.add_argument("run_id")
    p.set_defaults(func=cmd_champion)


def tracking_uri(args: argparse.Namespace) -> str:
    """The tracking URI of a command with `mlruns_option` (experiments.tracking.resolve_tracking_uri)."""
    from experiments.tracking import resolve_tracking_uri

    return resolve_tracking_uri(args.tracking_uri, Path(args.mlruns))


def cmd_optimize(args: argparse.Namespace) -> int:
    from experiments.runner import ProgressEvent, run_experiment
    from pipeline.cli.common import dspy_cache_dir
    from pipeline.cli.progress import LibraryOutput, StageProgress
    from pipeline.errors import JobInterrupted
    from pipeline.program.calls import StopSignal

    notices = console()
    configure_dspy()
    stop = StopSignal()
    try:
        with StageProgress(notices) as bar, stopping_on_interrupt(stop, notices):

            def progress(event: ProgressEvent) -> None:
                if event.warning:
                    notices.print(styled(("warning: ", "yellow bold"), event.message))
                    return
                if event.total is None and event.done == 0:
                    notices.print(styled((f"{event.phase}: ", "dim"), event.message))
                    return
                bar.update(event.phase, event.done, event.total, event.message)

            # DSPy's optimizers print and draw bars on stdout: to the log (-v shows it), so stdout keeps the
            # result (--json) and the terminal one progress display.
            with contextlib.redirect_stdout(LibraryOutput(logging.getLogger(__name__))):
                summary = run_experiment(
                    Path(args.config),
                    mlruns=Path(args.mlruns),
                    tracking_uri=tracking_uri(args),
                    progress=progress,
                    model_cache_dir=model_cache_dir(),
                    ray=args.ray,
                    stop=stop,
                    dspy_cache_dir=dspy_cache_dir(),
                )
    except JobInterrupted as exc:
        notices.print(styled((str(exc), "yellow")), soft_wrap=True)
        return 130
    if args.json:
        print(json.dumps(summary_json(summary), indent=2))
        return 0
    columns = ["n", "composite", "wrong_property_citations", "invalid_ids", "fact_recall", "failed"]
    label = "validation" if summary.stage == "end_to_end" else "end to end, validation sample"
    # Off a terminal Rich would wrap at 80 columns: tables and paths stay whole lines (soft_wrap).
    for title, table in (("baseline", summary.baseline), ("compiled", summary.result)):
        if table is not None:
            notices.print(f"\n[bold]{title}[/] ({label})")
            notices.print(table[columns].to_string(), highlight=False, soft_wrap=True)
    metric = "composite" if summary.stage == "end_to_end" else f"{summary.stage} stage metric"
    for title, table in (("validation", summary.comparison), ("test", summary.test_comparison)):
        if table is not None:
            notices.print(f"\n[bold]compiled - baseline[/], {metric}, {title} (paired, 95% bootstrap CI)")
            notices.print(table.to_string(index=False), highlight=False, soft_wrap=True)
    verdict = "selected" if summary.selected else f"[red]rejected[/]: {plain(summary.rejection)}; the baseline was kept"
    exported = (
        "the compiled candidate"
        if summary.selected
        else f"the uncompiled baseline (`scoperag export {summary.run_id} --out DIR --baseline` copies it)"
    )
    notices.print(
        f"\nrun {summary.run_id} ({summary.experiment}): candidate {verdict}\n"
        f"LM calls {summary.lm_calls} ({summary.new_lm_calls} not from cache), tokens {summary.tokens}\n"
        f"logged export: {exported}\n  {plain(summary.export_dir)}\nprompt versions "
        + ", ".join(f"{m} v{v}" for m, v in summary.prompt_versions.items()),
        highlight=False,
        soft_wrap=True,
    )
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from experiments.sweep import run_sweep

    notices = console()
    configure_dspy()
    notices.print(f"[dim]sweep:[/] {len(args.configs)} configs" + (f" on Ray ({plain(args.ray)})" if args.ray else ""))
    with contextlib.redirect_stdout(sys.stderr):  # DSPy's optimizers print; stdout carries the result
        sweep = run_sweep(
            [Path(c) for c in args.configs],
            mlruns=Path(args.mlruns),
            tracking_uri=tracking_uri(args),
            ray=args.ray,
            experiment=args.experiment,
            model_cache_dir=model_cache_dir(),
        )
    rows = [
        {
            "config": name,
            "run_id": child.run_id if child else None,
            "selected": child.selected if child else None,
            "composite": None if child is None or child.result is None else child.result.loc["all", "composite"],
            "error": error,
        }
        for name, child, error in zip(sweep.configs, sweep.children, sweep.errors, strict=True)
    ]
    if args.json:
        comparison = json.loads(sweep.comparison.to_json(orient="records"))
        print(json.dumps({"run_id": sweep.run_id, "configs": rows, "comparison": comparison}, indent=2))
        return 0 if not any(sweep.errors) else 1
    import pandas as pd

    notices.print(
        f"\n[bold]sweep run {plain(sweep.run_id)}[/] ({plain(sweep.experiment)}), Ray retries {sweep.retries}"
    )
    print(pd.DataFrame(rows).to_string(index=False))
    notices.print(f"\n[bold]each config - {plain(sweep.configs[0])}[/] (paired on validation, 95% bootstrap CI)")
    print(sweep.comparison.to_string(index=False) if len(sweep.comparison) else "(nothing to compare)")
    return 0 if not any(sweep.errors) else 1


@contextlib.contextmanager
def stopping_on_interrupt(stop: StopSignal, notices: Console) -> Iterator[None]:
    """While inside, the first Ctrl-C asks `stop` to stop the job at its next LM-call boundary (from a thread of
    its own, so the run is marked KILLED at once whatever the main thread is doing); a second one interrupts."""
    import signal
    import threading

    def interrupt(signum: int, frame: object) -> None:
        if stop.requested:
            raise KeyboardInterrupt
        notices.print(
            styled(
                (
                    "stopping: no new LM call will start; the calls under way finish first (Ctrl-C again to quit now)",
                    "yellow",
                )
            )
        )
        threading.Thread(target=stop.request, name="scoperag-stop").start()

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def summary_json(summary: RunSummary) -> dict[str, object]:
    """A job's summary as JSON-ready values (tables as {row: {column: value}})."""

    def table(frame: object) -> object:
        return None if frame is None else json.loads(frame.to_json(orient="index"))  # type: ignore[attr-defined]

    return {
        "run_id": summary.run_id,
        "experiment": summary.experiment,
        "stage": summary.stage,
        "selected": summary.selected,
        "rejection": summary.rejection,
        "lm_calls": summary.lm_calls,
        "new_lm_calls": summary.new_lm_calls,
        "tokens": summary.tokens,
        "export_dir": str(summary.export_dir),
        "prompt_versions": summary.prompt_versions,
        "baseline": table(summary.baseline),
        "result": table(summary.result),
        "comparison": None if summary.comparison is None else json.loads(summary.comparison.to_json(orient="records")),
        "test_comparison": None
        if summary.test_comparison is None
        else json.loads(summary.test_comparison.to_json(orient="records")),
    }


def cmd_runs(args: argparse.Namespace) -> int:
    from experiments.runs import compare_runs, list_runs

    if args.compare:
        run_a, run_b = args.compare
        compared = compare_runs(run_a, run_b, Path(args.mlruns), uri=tracking_uri(args))
        if args.json:
            print(compared.to_json(orient="records", indent=2))
        else:
            metric = compared.attrs.get("metric", "")
            run_a, run_b = compared.attrs.get("run_a", run_a), compared.attrs.get("run_b", run_b)
            console().print(
                f"run {plain(run_b)} - run {plain(run_a)}, {metric} (paired, 95% bootstrap CI)", soft_wrap=True
            )
            print(compared.to_string(index=False))
        return 0
    table = list_runs(Path(args.mlruns), experiment=args.experiment, uri=tracking_uri(args))
    if args.json:
        print(table.to_json(orient="records", indent=2))
    elif table.empty:
        console().print("no scoperag runs yet: run `scoperag optimize experiments/bootstrap_demo.toml`")
    elif args.wide:
        import pandas as pd

        with pd.option_context("display.width", 250, "display.max_columns", None, "display.max_colwidth", 60):
            print(table.to_string(index=False))
    else:
        from experiments.runs import compact_lines

        out = output()
        for line in compact_lines(table, width=RUNS_WIDTH):
            out.print(styled(line), soft_wrap=True)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from experiments.runs import export_run

    manifest = export_run(
        args.run_id,
        Path(args.out),
        Path(args.mlruns),
        overwrite=args.overwrite,
        uri=tracking_uri(args),
        baseline=args.baseline,
    )
    console().print(
        styled(f"exported run {manifest.run_id} ({manifest.format}) to {args.out}: {exported_program(Path(args.out))}"),
        soft_wrap=True,
    )
    return 0


def exported_program(export_dir: Path) -> str:
    """Which program an export holds, in words: the compiled candidate or the uncompiled baseline, and its demos."""
    from pipeline.export import PREDICTORS, read_export

    contents = read_export(export_dir)
    state = contents.program_state
    counts = {name: len(state[name]["demos"]) for name in PREDICTORS if name in state}
    demos = ", ".join(f"{name} {count}" for name, count in counts.items() if count) or "none"
    if contents.manifest.config.experiment.get("selected") is False:
        return f"the uncompiled baseline (the candidate was rejected); demos: {demos}"
    return f"the compiled candidate; demos: {demos}"


def cmd_ui(args: argparse.Namespace) -> int:
    """Replace this process with `mlflow ui` on the store (--mlruns, or --tracking-uri), offline settings applied."""
    import os

    from experiments.tracking import ui_command, ui_environment

    quiet_environment()  # LiteLLM's price list, MLflow telemetry: fetched at start-up unless switched off
    command = ui_command(tracking_uri(args), args.host, args.port)
    console().print(
        styled(
            f"MLflow UI on http://{args.host}:{args.port} (store {command[command.index('--backend-store-uri') + 1]})"
        ),
        styled(
            ("experiments: runs with their val.* metrics; Prompts: scoperag-<module> versions; Ctrl-C stops it", "dim")
        ),
        sep="\n",
        soft_wrap=True,  # the store's path stays one line, to copy
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(command[0], command, {**os.environ, **ui_environment()})
    return 0  # not reached: exec replaced the process


def cmd_champion(args: argparse.Namespace) -> int:
    from experiments.runs import champion

    versions = champion(args.run_id, Path(args.mlruns), uri=tracking_uri(args))
    moved = ", ".join(f"scoperag-{m} v{v}" for m, v in versions.items())
    console().print(f"alias 'champion' now on {moved}", highlight=False)
    return 0
