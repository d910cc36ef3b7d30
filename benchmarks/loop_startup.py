"""How soon the researcher's commands answer: `optimize --dry-run`, `runs`, `export`, `champion` and `ui` (until its
server answers), each run as a user runs it (a fresh process, on a scratch copy of the reference runs), and what
their start-up is made of (importing the command's modules, opening the tracking store). Wall seconds and CPU
seconds (the process and its children) per command, median of several runs, with the load average: on a busy
machine the wall time is the CPU time stretched by the load, so the CPU time is the idle machine's estimate.

    .venv/bin/python benchmarks/loop_startup.py [--runs 3] [--json benchmarks/results/loop-startup.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCOPERAG = str(ROOT / ".venv" / "bin" / "scoperag")
PYTHON = str(ROOT / ".venv" / "bin" / "python")
# A reference run whose candidate was selected (export without --baseline, champion allowed).
SELECTED_RUN = "f6cfba79"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one command run to its end; SystemExit when it fails."""
    cpu, started = children_cpu(), time.monotonic()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-1500:]}")
    return wall, children_cpu() - cpu


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def timed_ui(mlruns: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds from starting `scoperag ui` to the line that prints its addresses (printed once its server
    answers, which is checked again here); the server is stopped after."""
    port = free_port()
    command = [SCOPERAG, "ui", "--mlruns", str(mlruns), "--port", str(port)]
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    try:
        for line in process.stderr:
            if "listening" in line:
                wall = time.monotonic() - started
                with socket.create_connection(("127.0.0.1", port), timeout=5):
                    pass  # it is listening
                break
        else:
            raise SystemExit(f"scoperag ui exited {process.wait()} without listening")
        cpu = _tree_cpu(process.pid)
    finally:
        process.terminate()
        process.wait(30)
    return wall, cpu


def _tree_cpu(pid: int) -> float:
    """CPU seconds of a process and its live children so far (from /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        pending.extend(int(c) for c in children)
    return total


def module_import(module: str, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of importing `module` in a fresh interpreter, minus the interpreter's own start."""
    bare = timed([PYTHON, "-c", "pass"], env)
    with_module = timed([PYTHON, "-c", f"import {module}"], env)
    return with_module[0] - bare[0], with_module[1] - bare[1]


def tracker_open(mlruns: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of opening the project's store in a fresh interpreter, beyond importing its module."""
    code = f"from pathlib import Path\nfrom experiments.runs import open_existing\nopen_existing(Path({str(mlruns)!r}))"
    opened = timed([PYTHON, "-c", code], env)
    imported = timed([PYTHON, "-c", "import experiments.runs"], env)
    return opened[0] - imported[0], opened[1] - imported[1]


def measured_steps(mlruns: Path, out: Path, env: dict[str, str]) -> dict[str, Callable[[], tuple[float, float]]]:
    """What is measured, in order, on the store `mlruns` (the first `runs` makes it from the reference runs)."""
    store = ["--mlruns", str(mlruns)]
    return {
        "optimize --dry-run (quick_decompose)": lambda: timed(
            [SCOPERAG, "optimize", "experiments/quick_decompose.toml", "--dry-run", *store], env
        ),
        "runs (first, making the store)": lambda: timed([SCOPERAG, "runs", *store], env),
        "runs": lambda: timed([SCOPERAG, "runs", *store], env),
        "export": lambda: timed([SCOPERAG, "export", SELECTED_RUN, "--out", str(out), *store], env),
        "champion": lambda: timed([SCOPERAG, "champion", SELECTED_RUN, *store], env),
        "ui (until listening)": lambda: timed_ui(mlruns, env),
        "import experiments.runs": lambda: module_import("experiments.runs", env),
        "import experiments.runner": lambda: module_import("experiments.runner", env),
        "open the store (after import)": lambda: tracker_open(mlruns, env),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "MLFLOW_DISABLE_TELEMETRY": "true"}
    rows: dict[str, list[tuple[float, float]]] = {}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="startup-") as scratch:
        for run in range(args.runs):
            mlruns = Path(scratch) / f"mlruns-{run}"
            mlruns.mkdir()
            shutil.copytree(ROOT / "mlruns" / "reference", mlruns / "reference")
            steps = measured_steps(mlruns, Path(scratch) / f"export-{run}", env)
            for name, step in steps.items():
                rows.setdefault(name, []).append(step())
                loads.append(os.getloadavg()[0])
                print(f"run {run}: {name}: {rows[name][-1][0]:.1f} s wall, {rows[name][-1][1]:.1f} s CPU", flush=True)
    print(f"\n{'command':<40} {'wall s':>7} {'CPU s':>6}   (median of {args.runs})")
    table = {}
    for name, values in rows.items():
        wall, cpu = statistics.median(v[0] for v in values), statistics.median(v[1] for v in values)
        table[name] = {"wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2)}
        print(f"{name:<40} {wall:>7.1f} {cpu:>6.1f}")
    print(f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores")
    if args.json:
        result = {"runs": args.runs, "cores": os.cpu_count(), "load_average": [round(v, 2) for v in loads]}
        args.json.write_text(json.dumps(result | {"commands": table}, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
