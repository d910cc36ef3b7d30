"""How soon an LM-backed `scoperag evaluate` exits after Ctrl-C, while an LM call is under way (held a minute by
the project's test LM server), after 0, 1 and 3 of 4 examples finished: seconds from SIGINT to exit (status file
written, exit 130) over several runs each, with the load average.

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
from tests.support.evaluate_stop import distinct_questions, interrupt_evaluate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per number of finished examples")
    parser.add_argument("--finished", type=int, nargs="+", default=[0, 1, 3], help="examples finished before Ctrl-C")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    examples = distinct_questions(demo_examples())[:4]
    rows = []
    with tempfile.TemporaryDirectory(prefix="evaluate-stop-") as scratch:
        index = Path(scratch) / "index"
        build_index(ROOT / "datasets" / "demo", index, HashEmbedder(64))
        for finished in args.finished:
            seconds, loads = [], []
            for run in range(args.runs):
                where = Path(scratch) / f"run-{finished}-{run}"
                where.mkdir()
                loads.append(os.getloadavg()[0])
                stopped = interrupt_evaluate(examples, index, where, where / "out", answered=finished)
                if stopped.returncode != 130 or not (where / "out" / "status-hybrid.json").is_file():
                    raise SystemExit(
                        f"{finished} finished, run {run}: exit {stopped.returncode}: {stopped.stderr[-500:]}"
                    )
                seconds.append(stopped.seconds)
            rows.append(
                {
                    "finished": finished,
                    "runs": args.runs,
                    "seconds": [round(s, 3) for s in seconds],
                    "median_seconds": round(statistics.median(seconds), 3),
                    "max_seconds": round(max(seconds), 3),
                    "load_average": [round(v, 2) for v in loads],
                }
            )
    print(f"{'finished':>8} {'runs':>4} {'median s':>8} {'max s':>6}  load")
    for row in rows:
        load = row["load_average"]
        print(
            f"{row['finished']:>8} {row['runs']:>4} {row['median_seconds']:>8.2f} {row['max_seconds']:>6.2f}  "
            f"{min(load):.1f}-{max(load):.1f}"
        )
    if args.json:
        args.json.write_text(json.dumps({"examples": len(examples), "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
