"""How good a job's time estimates are: `scoperag optimize CONFIG` run as a user runs it (its own process, output
not a terminal, a fresh DSPy response cache so every call reaches the model), reading what it prints as it prints
it. Per config: the plan printed before the job starts, the first ETA shown, when it was shown, the time the job
actually took from then, and the load average meanwhile (sampled every few seconds), in one table.

    .venv/bin/python benchmarks/eta.py experiments/quick_decompose.toml [...] [--mlruns DIR] \
        [--json benchmarks/results/eta.json]

The plan uses this machine's measured rates (the project's cache, `timings.json`), so the second job of a kind
is planned by what the first one measured here.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCOPERAG = ROOT / ".venv" / "bin" / "scoperag"
# "about 12 min" / "about 42 s" / "about 1 h 05 min" as the plan and the notes write a duration
DURATION = re.compile(r"about (?:(\d+) h (\d+) min|(\d+) min|(\d+) s)")
ETA = re.compile(r"job ETA (\d+(?::\d\d){1,2})")


@dataclass
class Measured:
    """One job as its user saw it."""

    config: str
    planned_seconds: float | None = None
    first_eta_seconds: float | None = None
    first_eta_at: float | None = None  # seconds after the command started
    seconds: float = 0.0  # the command's whole time
    exit_code: int = 0
    load: list[float] = field(default_factory=list)
    etas: list[tuple[float, float]] = field(default_factory=list)  # (when, ETA) of every ETA shown

    @property
    def actual_after_first_eta(self) -> float | None:
        return None if self.first_eta_at is None else self.seconds - self.first_eta_at

    @property
    def ratio(self) -> float | None:
        """The first ETA over the time the job took from then (1 = exact; within 0.5-2 is the target)."""
        actual = self.actual_after_first_eta
        if self.first_eta_seconds is None or not actual:
            return None
        return self.first_eta_seconds / actual


def parse_duration(text: str) -> float | None:
    found = DURATION.search(text)
    if found is None:
        return None
    hours, minutes_of_hour, minutes, seconds = found.groups()
    if hours is not None:
        return int(hours) * 3600 + int(minutes_of_hour) * 60
    return int(minutes) * 60 if minutes is not None else float(seconds)


def parse_clock(text: str) -> float:
    parts = [int(p) for p in text.split(":")]
    seconds = 0
    for part in parts:
        seconds = seconds * 60 + part
    return float(seconds)


def run(config: Path, mlruns: Path, scratch: Path) -> Measured:
    """The job in its own process (a DSPy response cache of its own, empty), its stderr read line by line."""
    measured = Measured(config=str(config))
    cache = Path(tempfile.mkdtemp(prefix="dspy-", dir=scratch))
    env = {**os.environ, "DSPY_CACHEDIR": str(cache), "PYTHONUNBUFFERED": "1"}
    started = time.monotonic()
    done = threading.Event()

    def sample_load() -> None:
        while not done.wait(5.0):
            measured.load.append(round(os.getloadavg()[0], 2))

    sampler = threading.Thread(target=sample_load, daemon=True)
    measured.load.append(round(os.getloadavg()[0], 2))
    sampler.start()
    process = subprocess.Popen(
        [str(SCOPERAG), "optimize", str(config), "--mlruns", str(mlruns)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    for line in process.stderr:
        now = time.monotonic() - started
        sys.stderr.write(f"  {now:7.1f}s | {line}")
        if "estimate: up to" in line and measured.planned_seconds is None:
            measured.planned_seconds = parse_duration(line)
        found = ETA.search(line)
        if found is not None:
            eta = parse_clock(found.group(1))
            measured.etas.append((round(now, 1), eta))
            if measured.first_eta_seconds is None:
                measured.first_eta_seconds, measured.first_eta_at = eta, round(now, 1)
    measured.exit_code = process.wait()
    measured.seconds = round(time.monotonic() - started, 1)
    done.set()
    measured.load.append(round(os.getloadavg()[0], 2))
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="+", type=Path)
    parser.add_argument("--mlruns", type=Path, help="the MLflow store the runs go to (default: a scratch one)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="eta-") as scratch:
        mlruns = args.mlruns or Path(scratch) / "mlruns"
        for config in args.configs:
            rows.append(run(config, mlruns, Path(scratch)))
    header = f"{'config':<34} {'planned':>8} {'first ETA':>9} {'shown at':>8} {'actual':>7} {'ETA/act':>7}  load"
    print(header)
    for r in rows:
        load = f"{min(r.load):.1f}-{max(r.load):.1f}" if r.load else "-"
        ratio = f"{r.ratio:.2f}" if r.ratio is not None else "-"
        print(
            f"{Path(r.config).name:<34} {_s(r.planned_seconds):>8} {_s(r.first_eta_seconds):>9} "
            f"{_s(r.first_eta_at):>8} {_s(r.actual_after_first_eta):>7} {ratio:>7}  {load}"
            + (f"  (exit {r.exit_code})" if r.exit_code else "")
        )
    print("planned: the estimate printed before the job; first ETA: the first one shown, `shown at` seconds after the")
    print("command started; actual: the job's time from then to its end; ETA/act: within 0.5-2 is the target")
    if args.json:
        cores = os.cpu_count()
        result = {"cores": cores, "jobs": [asdict(r) | {"ratio": r.ratio} for r in rows]}
        args.json.write_text(json.dumps(result, indent=2) + "\n")


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} s"


if __name__ == "__main__":
    main()
