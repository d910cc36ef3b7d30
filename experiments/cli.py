"""`scoperag optimize|sweep` and, from experiments.runs_cli, the commands on logged runs: the experiment
commands, added to the CLI through the `scoperag.commands` entry-point group (pipeline/ never imports
experiments/)."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from experiments import runs_cli
from experiments.runs_cli import tracking_uri
from pipeline.cli.common import (
    Commands,
    configure_dspy,
    console,
    json_option,
    lm_keys,
    mlruns_option,
    model_cache_dir,
    output,
    plain,
    ray_option,
    styled,
    timings_file,
)

if TYPE_CHECKING:
    from experiments.job import RunSummary


def register(commands: Commands) -> None:
    """Add `optimize` and `sweep`, and the commands on logged runs (experiments.runs_cli)."""
    p = commands.add_parser(
        "optimize",
        parents=[mlruns_option(), json_option(), ray_option()],
        help="compile the program as an experiment config says; log to MLflow",
    )
    p.add_argument("config", help="experiment config, e.g. experiments/bootstrap_demo.toml")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the examples per split and case, the LM calls and the time per phase; run nothing",
    )
    p.set_defaults(func=cmd_optimize)

    p = commands.add_parser(
        "sweep",
        parents=[mlruns_option(), json_option(), ray_option()],
        help="several experiment configs as one MLflow parent run; paired comparison with the first at the end",
    )
    p.add_argument("configs", nargs="+", metavar="CONFIG", help="experiment configs; the first is the reference")
    p.add_argument("--experiment", help="MLflow experiment of the sweep (default: the first config's)")
    p.set_defaults(func=cmd_sweep)
    runs_cli.register(commands)


def cmd_optimize(args: argparse.Namespace) -> int:
    from experiments.runner import ProgressEvent, run_experiment
    from pipeline.cli.common import dspy_cache_dir
    from pipeline.cli.interrupt import stopping_on_interrupt
    from pipeline.cli.progress import LibraryOutput, StageProgress
    from pipeline.errors import JobInterrupted
    from pipeline.program.calls import StopSignal

    if args.dry_run:
        return dry_run(args)
    notices = console()
    notices.file = sys.stderr  # this terminal, whatever the libraries' output is sent to below
    configure_dspy()
    stop = StopSignal()
    try:
        with StageProgress(notices) as bar, stopping_on_interrupt(stop, notices):

            def progress(event: ProgressEvent) -> None:
                if event.eta:
                    bar.job_eta(event.eta)
                if event.warning:
                    notices.print(styled(("warning: ", "yellow bold"), event.message))
                    return
                if event.total is None and event.done == 0:
                    notices.print(styled((f"{event.phase}: ", "dim"), event.message))
                    return
                bar.update(event.phase, event.done, event.total, event.message)

            # DSPy's optimizers print and draw tqdm bars on stdout and stderr: to the log (-v shows it), so stdout
            # keeps the result (--json) and the terminal one progress display.
            library = LibraryOutput(logging.getLogger(__name__))
            with contextlib.redirect_stdout(library), contextlib.redirect_stderr(library):
                summary = run_experiment(
                    Path(args.config),
                    mlruns=Path(args.mlruns),
                    tracking_uri=tracking_uri(args),
                    progress=progress,
                    model_cache_dir=model_cache_dir(),
                    ray=args.ray,
                    stop=stop,
                    dspy_cache_dir=dspy_cache_dir(),
                    timings=timings_file(),
                    keys=lm_keys(),
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
    if summary.ways is not None:
        notices.print(f"\n[bold]floors and the LM[/], {metric} (mean per split)")
        notices.print(summary.ways.to_string(), highlight=False, soft_wrap=True)
    for title, table in (("validation", summary.floor_comparison), ("test", summary.test_floor_comparison)):
        if table is not None:
            notices.print(f"\n[bold]LM - best floor[/], {metric}, {title} (paired, 95% bootstrap CI)")
            notices.print(table.to_string(index=False), highlight=False, soft_wrap=True)
    if summary.step is not None:
        way = "the LM" if summary.step == "lm" else f"its floor {summary.step} (no LM call)"
        notices.print(f"\nthe exported program runs the {summary.stage} step by {way}: {plain(summary.step_reason)}")
    verdict = "selected" if summary.selected else f"[red]rejected[/]: {plain(summary.rejection)}; the baseline was kept"
    exported = (
        "the compiled candidate"
        if summary.selected
        else f"the uncompiled baseline (`scoperag export {summary.run_id} --out DIR --baseline` copies it)"
    )
    notices.print(
        f"\nrun {summary.run_id} ({summary.experiment}): candidate {verdict}\n"
        f"LM calls {summary.lm_calls} ({summary.new_lm_calls} not from cache), tokens {summary.tokens}; "
        f"{took(summary)}\n"
        f"logged export: {exported}\n  {plain(summary.export_dir)}\nprompt versions "
        + ", ".join(f"{m} v{v}" for m, v in summary.prompt_versions.items()),
        highlight=False,
        soft_wrap=True,
    )
    return 0


def took(summary: RunSummary) -> str:
    """ "took 4 min (estimated 3 min)": the job's time against its estimate."""
    from pipeline.cli.eta import duration

    estimated = f" (estimated {duration(summary.estimate_seconds)})" if summary.estimate_seconds else ""
    return f"took {duration(summary.seconds)}{estimated}"


def dry_run(args: argparse.Namespace) -> int:
    """What `optimize CONFIG` would do: examples per split and case, LM calls and time per phase; nothing runs."""
    from experiments.config import load_config
    from experiments.data import prepare_job

    path = Path(args.config)
    config = load_config(path)
    plan = prepare_job(config, path, timings=timings_file()).plan
    if args.json:
        phases = [
            {"phase": p.name, p.unit.replace(" ", "_"): p.units, "lm_calls": p.calls, "seconds": plan.phase_seconds(p)}
            for p in plan.phases
        ]
        print(
            json.dumps(
                {
                    "config": config.name,
                    "examples": plan.examples,
                    "phases": phases,
                    "lm_calls": plan.lm_calls,
                    "seconds": plan.seconds,
                    "contention": round(plan.contention, 2),
                },
                indent=2,
            )
        )
        return 0
    from pipeline.cli.eta import duration

    out = output()
    out.print(
        styled(
            (f"{config.name}", "bold"),
            f": {config.optimizer} on {', '.join(config.modules)}, "
            f"{config.stage.replace('_', ' ')} job, LM {config.lm.task}, {config.lm.num_threads} at a time",
        )
    )
    cases = list(config.data.cases)
    out.print(styled(("\nexamples", "bold")))
    out.print(" ".join([f"{'split':<6}", *(f"{c:>14}" for c in cases), f"{'all':>5}"]), highlight=False)
    for role, counts in plan.examples.items():
        row = [f"{counts.get(c, 0):>14}" for c in cases]
        out.print(" ".join([f"{role:<6}", *row, f"{sum(counts.values()):>5}"]), highlight=False)
    out.print(styled(("\nphases", "bold")))
    out.print(f"{'phase':<14} {'work':>16} {'LM calls':>9} {'time':>9}", highlight=False)
    for p in plan.phases:
        work = f"{'<= ' if p.unit == 'LM calls' else ''}{p.units} {p.unit}"
        seconds = plan.phase_seconds(p)
        time = duration(seconds) if seconds is not None else "?"
        out.print(f"{p.name:<14} {work:>16} {p.calls:>9} {time:>9}", highlight=False)
    out.print(f"\nestimate: {plan.describe()}\nnothing was run (--dry-run)", highlight=False, soft_wrap=True)
    return 0


def sweep_row(child: RunSummary | None) -> dict[str, object]:
    """What the sweep table shows of one config's job: its verdict and, on validation, the metric it selects by
    (the composite, or a stage job's stage metric) before and after, with the paired difference and its CI."""
    if child is None or child.comparison is None or not len(child.comparison):
        return {"selected": None, "metric": None, "before": None, "after": None, "difference [95% CI]": None}
    total = child.comparison[child.comparison["case"] == "all"].iloc[0]
    return {
        "selected": child.selected,
        "metric": "composite" if child.stage == "end_to_end" else f"{child.stage} metric",
        "before": total["baseline"],
        "after": total["candidate"],
        "difference [95% CI]": f"{total['difference']:+.3f} [{total['ci_low']:+.3f}, {total['ci_high']:+.3f}]",
    }


def cmd_sweep(args: argparse.Namespace) -> int:
    from experiments.sweep import run_sweep
    from pipeline.cli.progress import StageLine

    notices = console()
    configure_dspy()
    notices.print(f"[dim]sweep:[/] {len(args.configs)} configs" + (f" on Ray ({plain(args.ray)})" if args.ray else ""))
    # DSPy's optimizers print; stdout carries the result. The line says what runs, and repeats while it lasts.
    with contextlib.redirect_stdout(sys.stderr), StageLine(notices) as line:
        sweep = run_sweep(
            [Path(c) for c in args.configs],
            mlruns=Path(args.mlruns),
            tracking_uri=tracking_uri(args),
            ray=args.ray,
            experiment=args.experiment,
            model_cache_dir=model_cache_dir(),
            progress=line.stage,
        )
    rows = [
        {"config": name, "run_id": child.run_id if child else None, **sweep_row(child), "error": error}
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
        "step": summary.step,
        "step_reason": summary.step_reason,
        "ways": table(summary.ways),
        "floor_comparison": table(summary.floor_comparison),
        "test_floor_comparison": table(summary.test_floor_comparison),
    }
