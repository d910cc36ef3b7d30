"""`scoperag runs|export|champion|ui|reference`: the commands on logged runs (registered by experiments.cli)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.cli.common import Commands, console, json_option, mlruns_option, output, quiet_environment, styled

# The runs table fits a terminal this wide (--wide and --json carry the rest).
RUNS_WIDTH = 80
# How long `scoperag ui` waits for MLflow's server to answer (3 s on 2 idle cores; far more under load).
UI_STARTUP_SECONDS = 300.0


def register(commands: Commands) -> None:
    """Add `runs`, `export`, `ui`, `champion` and `reference`."""
    p = commands.add_parser(
        "runs",
        parents=[mlruns_option(), json_option()],
        help="optimisation runs: examples per case, metric before/after with its 95%% CI, what each exported "
        "program runs and why",
    )
    p.add_argument("--experiment", help="only this MLflow experiment")
    p.add_argument("--wide", action="store_true", help="every column: per-case metrics, safety, LM calls, prompts")
    p.add_argument(
        "--compare",
        nargs=2,
        metavar=("RUN_A", "RUN_B"),
        help="B's compiled program minus A's, paired per example, with a 95%% bootstrap CI per case (a run by its id "
        "or a unique prefix, its name, or its config's name when one run has it)",
    )
    p.set_defaults(func=cmd_runs)

    p = commands.add_parser(
        "export",
        parents=[mlruns_option()],
        help="copy a run's selected program (scoperag-program/v3) to a directory",
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

    p = commands.add_parser(
        "reference",
        parents=[mlruns_option()],
        help="make these runs the reference runs shipped in the repository (mlruns/reference/), replacing the set",
    )
    p.add_argument(
        "run_ids", nargs="+", metavar="RUN", help="run ids or unique prefixes, as `scoperag runs` prints, or run names"
    )
    p.add_argument("--out", help="where the set is written (default: reference/ under --mlruns)")
    p.set_defaults(func=cmd_reference)


def tracking_uri(args: argparse.Namespace) -> str:
    """The tracking URI of a command with `mlruns_option` (experiments.tracking.resolve_tracking_uri)."""
    from experiments.tracking import resolve_tracking_uri

    return resolve_tracking_uri(args.tracking_uri, Path(args.mlruns))


def cmd_runs(args: argparse.Namespace) -> int:
    from experiments.runs import compare_runs, list_runs

    if args.compare:
        run_a, run_b = args.compare
        compared = compare_runs(run_a, run_b, Path(args.mlruns), uri=tracking_uri(args))
        if args.json:
            print(compared.to_json(orient="records", indent=2))
        else:
            measure = compared.attrs.get("measure", compared.attrs.get("metric", ""))
            run_a, run_b = compared.attrs.get("run_a", run_a), compared.attrs.get("run_b", run_b)
            notices = console()
            notices.print(
                styled(f"run {run_b} (B) - run {run_a} (A): {measure}, paired per example, 95% bootstrap CI"),
                soft_wrap=True,
            )
            for name, side in compared.attrs.get("sides", {}).items():
                notices.print(styled((f"{name}: ", "bold"), side), soft_wrap=True)
            for note in compared.attrs.get("notes", []):
                notices.print(styled(("note: ", "yellow"), note), soft_wrap=True)
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
    steps = contents.manifest.config.program.get("steps")
    floors = {k: v for k, v in steps.items() if v != "lm"} if isinstance(steps, dict) else {}
    # demos of a step that runs its floor are never read: say so, or "compiled" would name what never runs
    unused = [name for name in counts if counts[name] and name in floors]
    runs = f"; {', '.join(f'{n} runs floor {floors[n]}' for n in unused)}, so its demos are not used" if unused else ""
    if contents.manifest.config.experiment.get("selected") is False:
        return f"the uncompiled baseline (the candidate was rejected); demos: {demos}{runs}"
    return f"the compiled candidate; demos: {demos}{runs}"


def cmd_ui(args: argparse.Namespace) -> int:
    """MLflow's UI on the store (--mlruns, or --tracking-uri), offline settings applied; its addresses are printed
    once it answers, and Ctrl-C (or a SIGTERM) stops it."""
    import os
    import signal
    import subprocess

    from experiments.store import open_tracker
    from experiments.tracking import is_local_store
    from experiments.ui import runs_links, server_environment, ui_command, wait_until_listening

    quiet_environment()  # LiteLLM's price list, MLflow telemetry: fetched at start-up unless switched off
    uri = tracking_uri(args)
    command = ui_command(uri, args.host, args.port)
    mlruns = Path(args.mlruns)
    address = f"http://{args.host}:{args.port}"
    notices = console()
    fresh = is_local_store(uri, mlruns) and not (mlruns / "mlflow.db").is_file()
    tracker = open_tracker(mlruns, uri) if fresh else None  # a new store is made (and given the reference runs) first
    environment = {**os.environ, **server_environment(uri, (mlruns / "artifacts").resolve())}
    notices.print(styled((f"starting MLflow's UI on {uri} ...", "dim")), soft_wrap=True)
    server = subprocess.Popen(command, env=environment)

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        # while the server starts (the other core), the runs lists it will show
        links = runs_links(tracker or open_tracker(mlruns, uri), address)
        if not wait_until_listening(address, server, UI_STARTUP_SECONDS):
            code = server.poll()
            said = f"exited with {code}" if code is not None else f"did not answer in {UI_STARTUP_SECONDS:.0f} s"
            notices.print(styled((f"MLflow's UI {said}: nothing is listening on {address}", "red")), soft_wrap=True)
            return 1
        notices.print(styled(f"MLflow UI on {address} (store {uri}), listening"), soft_wrap=True)
        for name, link in links:
            notices.print(styled((f"runs of {name}: ", "bold"), link), soft_wrap=True)
        notices.print(
            styled(
                (
                    "each experiment's runs with their val.* metrics; Prompts: scoperag-<module> versions; Ctrl-C "
                    "stops it",
                    "dim",
                )
            ),
            soft_wrap=True,
        )
        return server.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def cmd_champion(args: argparse.Namespace) -> int:
    from experiments.runs import champion

    versions = champion(args.run_id, Path(args.mlruns), uri=tracking_uri(args))
    moved = ", ".join(f"scoperag-{m} v{v}" for m, v in versions.items())
    console().print(f"alias 'champion' now on {moved}", highlight=False)
    return 0


def cmd_reference(args: argparse.Namespace) -> int:
    from experiments.reference import reference_dir, write_reference
    from experiments.runs import open_existing

    out = Path(args.out) if args.out else reference_dir(Path(args.mlruns))
    records = write_reference(open_existing(Path(args.mlruns), tracking_uri(args)), args.run_ids, out)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    notices = console()
    notices.print(styled(f"reference runs in {out} ({size / 1024:,.0f} KiB):"), soft_wrap=True)
    for record in records:
        notices.print(styled(f"  {record.run_id[:8]} {record.run_name} ({record.experiment}, {record.status})"))
    notices.print(styled(("commit the folder: every clone's store then holds these runs", "dim")))
    return 0
