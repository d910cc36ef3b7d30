"""Two evaluations of the same labelled examples, paired: per metric, B minus A with its seeded bootstrap 95% CI,
per case and over all examples (pipeline.evaluation.compare).

    python benchmarks/paired.py A/examples-hybrid.csv B/examples-hybrid.csv \
        [--metric answer_line_correct --metric value_correct ...] [--json PATH]

A and B are `scoperag evaluate --out` per-example tables (the same traces and split), e.g. the program of an
earlier commit (run from a checkout of it) against today's. An example missing from either, or whose metric
does not apply (empty), is left out of that metric's comparison.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import csv
import dataclasses
import json
from typing import Any

from pipeline.evaluation.compare import compare_rows

DEFAULT_METRICS = (
    "answer_line_correct",
    "fact_recall",
    "evidence_precision",
    "abstention",
    "false_abstention",
    "words_per_section",
    "value_correct",
    "composite",
)
SEED = 20261128


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The per-example rows of an evaluation table, numbers as floats and empty cells as None."""
    rows = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            parsed: dict[str, Any] = {}
            for key, value in row.items():
                try:
                    parsed[key] = float(value) if value not in ("", None) and key not in ("id", "case") else value
                except ValueError:
                    parsed[key] = value
                if parsed[key] == "":
                    parsed[key] = None
            rows.append(parsed)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--metric", action="append", default=[])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    a, b = read_rows(args.a), read_rows(args.b)
    out: dict[str, list[dict[str, Any]]] = {}
    print(f"{'metric':<22} {'case':<15} {'n':>4} {'A':>8} {'B':>8} {'B - A [95% CI]':>28}")
    for metric in args.metric or DEFAULT_METRICS:
        if not any(metric in row for row in a) or not any(metric in row for row in b):
            continue
        differences = compare_rows(a, b, metric, seed=SEED)
        out[metric] = [dataclasses.asdict(d) for d in differences]
        for d in differences:
            interval = f"{d.difference:+.3f} [{d.low:+.3f}, {d.high:+.3f}]"
            print(f"{metric:<22} {d.case:<15} {d.n:>4} {d.baseline:>8.3f} {d.candidate:>8.3f} {interval:>28}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
