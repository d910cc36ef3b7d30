"""How soon an LM-backed `scoperag evaluate` exits after Ctrl-C, while an LM call is under way (held a minute by
the project's test LM server): seconds from SIGINT to exit over several runs, with the load average.

    .venv/bin/python benchmarks/evaluate_stop.py --runs 5 [--json benchmarks/results/evaluate-stop.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the test LM server lives with the tests

from pipeline.store.build import build_index  # noqa: E402
from pipeline.store.embedders import HashEmbedder  # noqa: E402
from tests.optimizers.test_optimizers import demo_examples  # noqa: E402
from tests.support.evaluate_stop import interrupt_evaluate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    seconds = []
    with tempfile.TemporaryDirectory(prefix="evaluate-stop-") as scratch:
        index = Path(scratch) / "index"
        build_index(ROOT / "datasets" / "demo", index, HashEmbedder(64))
        loads = []
        for run in range(args.runs):
            where = Path(scratch) / f"run-{run}"
            where.mkdir()
            loads.append(os.getloadavg()[0])
            stopped = interrupt_evaluate(demo_examples()[:4], index, where, where / "out")
            if stopped.returncode != 130:
                raise SystemExit(f"run {run}: exit {stopped.returncode}: {stopped.stderr[-500:]}")
            seconds.append(stopped.seconds)
            print(f"run {run}: {stopped.seconds:.2f} s from Ctrl-C to exit (load {loads[-1]:.1f})")
    result = {
        "runs": args.runs,
        "seconds": [round(s, 3) for s in seconds],
        "median_seconds": round(statistics.median(seconds), 3),
        "max_seconds": round(max(seconds), 3),
        "load_average": [round(v, 2) for v in loads],
    }
    print(f"median {result['median_seconds']} s, max {result['max_seconds']} s, load {min(loads):.1f}-{max(loads):.1f}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
