"""`scoperag optimize|runs|export|champion`: the experiment commands, added to the CLI through the
`scoperag.commands` entry-point group (pipeline/ never imports experiments/)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from pipeline.cli.common import Commands, configure_dspy, console, json_option, mlruns_option, model_cache_dir


def register(commands: Commands) -> None:
    """Add `optimize`, `runs`, `export` and `champion`."""
    p = commands.add_parser(
        "optimize",
        parents=[mlruns_option(), json_option()],
        help="compile the program as an experiment config says; log to MLflow",
    )
    p.add_argument("config", help="experiment config, e.g. experiments/bootstrap_demo.toml")
    p.set_defaults(func=cmd_optimize)

    p = commands.add_parser(
        "runs",
        parents=[mlruns_option(), json_option()],
        help="table of optimisation runs: per-case metrics and prompt versions",
    )
    p.add_argument("--experiment", help="only this MLflow experiment")
    p.set_defaults(func=cmd_runs)

    p = commands.add_parser(
        "export",
        parents=[mlruns_option()],
        help="copy a run's compiled program (scoperag-program/v1) to a directory",
    )
    p.add_argument("run_id")
    p.add_argument("--out", required=True)
    p.add_argument("--overwrite", action="store_true")
    p.set_defaults(func=cmd_export)

    p = commands.add_parser(
        "champion",
        parents=[mlruns_option()],
        help="move prompt alias 'champion' to a run's prompt versions",
    )
    p.add_argument("run_id")
    p.set_defaults(func=cmd_champion)


def cmd_optimize(args: argparse.Namespace) -> int:
    from experiments.runner import ProgressEvent, run_experiment
    from pipeline.cli.progress import StageProgress

    notices = console()
    configure_dspy()
    with StageProgress(notices) as bar:

        def progress(event: ProgressEvent) -> None:
            if event.total is None and event.done == 0:
                notices.print(f"[dim]{event.phase}:[/] {event.message}", highlight=False)
                return
            bar.update(event.phase, event.done, event.total, event.message)

        # DSPy's optimizers print and draw tqdm bars on stdout; keep stdout for the result (--json).
        with contextlib.redirect_stdout(sys.stderr):
            summary = run_experiment(
                Path(args.config), mlruns=Path(args.mlruns), progress=progress, model_cache_dir=model_cache_dir()
            )
    if args.json:
        print(
            json.dumps(
                {
                    "run_id": summary.run_id,
                    "experiment": summary.experiment,
                    "selected": summary.selected,
                    "rejection": summary.rejection,
                    "lm_calls": summary.lm_calls,
                    "new_lm_calls": summary.new_lm_calls,
                    "tokens": summary.tokens,
                    "export_dir": str(summary.export_dir),
                    "prompt_versions": summary.prompt_versions,
                    "baseline": json.loads(summary.baseline.to_json(orient="index")),
                    "result": json.loads(summary.result.to_json(orient="index")),
                },
                indent=2,
            )
        )
        return 0
    columns = ["n", "composite", "wrong_property_citations", "invalid_ids", "fact_recall", "failed"]
    notices.print("\n[bold]baseline[/] (validation)")
    notices.print(summary.baseline[columns].to_string(), highlight=False)
    notices.print("\n[bold]compiled[/] (validation)")
    notices.print(summary.result[columns].to_string(), highlight=False)
    verdict = "selected" if summary.selected else f"[red]rejected[/]: {summary.rejection}; the baseline was kept"
    notices.print(
        f"\nrun {summary.run_id} ({summary.experiment}): candidate {verdict}\n"
        f"LM calls {summary.lm_calls} ({summary.new_lm_calls} not from cache), tokens {summary.tokens}\n"
        f"export {summary.export_dir}\nprompt versions "
        + ", ".join(f"{m} v{v}" for m, v in summary.prompt_versions.items()),
        highlight=False,
    )
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    from experiments.runs import list_runs

    table = list_runs(Path(args.mlruns), experiment=args.experiment)
    if args.json:
        print(table.to_json(orient="records", indent=2))
    elif table.empty:
        console().print("no scoperag runs yet: run `scoperag optimize experiments/bootstrap_demo.toml`")
    else:
        import pandas as pd

        with pd.option_context("display.width", 250, "display.max_columns", None, "display.max_colwidth", 60):
            print(table.to_string(index=False))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from experiments.runs import export_run

    manifest = export_run(args.run_id, Path(args.out), Path(args.mlruns), overwrite=args.overwrite)
    console().print(f"exported run {manifest.run_id} ({manifest.format}) to {args.out}", highlight=False)
    return 0


def cmd_champion(args: argparse.Namespace) -> int:
    from experiments.runs import champion

    versions = champion(args.run_id, Path(args.mlruns))
    moved = ", ".join(f"scoperag-{m} v{v}" for m, v in versions.items())
    console().print(f"alias 'champion' now on {moved}", highlight=False)
    return 0
