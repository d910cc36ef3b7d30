"""The choose step against its floor: the same program (the shipped one) with `choose = "span"` and with
`choose = "lm"` (experiments/choose_step/lm.toml), on the same examples, answer-line correctness paired with a
seeded bootstrap 95% CI, and seconds per question.

    python benchmarks/choose_step.py [--index .scoperag/contracts] [--traces datasets/contracts-traces/dev.jsonl]
        [--split SPLIT] [--model 0.5b|1.5b] [--threads N] [--no-cache] [--out DIR] [--json PATH]

--out writes each side's per-example table as `scoperag evaluate --out` does (floor/ and lm-MODEL/, each
examples-hybrid.csv), for benchmarks/paired.py. Seconds are wall time per question, one question at a time, with
the load average at the start and the end: with DSPy's cache on, questions it answered take no LM time (--no-cache
measures the model).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse

from step_benchmark import ROOT, add_options, compare_step

from pipeline.evaluation.examples import load_example_set
from pipeline.store import open_store

LM_SETTINGS = ROOT / "experiments" / "choose_step" / "lm.toml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", default=".scoperag/contracts")
    parser.add_argument("--traces", default="datasets/contracts-traces/dev.jsonl")
    parser.add_argument("--split", default=None, help="a split of a traces directory (default: every example)")
    add_options(parser)
    args = parser.parse_args()

    store = open_store(Path(args.index))
    examples = load_example_set(Path(args.traces), args.split, None)
    compare_step(
        args,
        store,
        examples,
        LM_SETTINGS,
        ("answer_line_correct", "abstention", "evidence_precision", "lm_calls"),
        f"{len(examples)} examples ({args.traces}, split {args.split or 'all'})",
        {"split": args.split},
    )


if __name__ == "__main__":
    main()
