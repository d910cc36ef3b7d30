"""The judge step against its floor on the yes/no questions of a typed trace set: the same program (the shipped
one) with `judge = "claims"` and with `judge = "lm"` (experiments/judge_step/lm.toml), on the same examples,
typed-value correctness paired with a seeded bootstrap 95% CI, and seconds per question.

    python benchmarks/judge_step.py [--index .scoperag/edgar-index] [--traces datasets/edgar/typed]
        [--split dev] [--case chip] [--model 0.5b|1.5b] [--threads N] [--no-cache] [--out DIR] [--json PATH]

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

from pipeline.evaluation.examples import load_example_set, of_kinds
from pipeline.store import open_store

LM_SETTINGS = ROOT / "experiments" / "judge_step" / "lm.toml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", default=".scoperag/edgar-index")
    parser.add_argument("--traces", default="datasets/edgar/typed")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--case", default="chip")
    add_options(parser)
    args = parser.parse_args()

    store = open_store(Path(args.index))
    examples = of_kinds(load_example_set(Path(args.traces), args.split, [args.case]), ["boolean"])
    compare_step(
        args,
        store,
        examples,
        LM_SETTINGS,
        ("value_correct", "boolean_true", "boolean_false", "lm_calls"),
        f"{len(examples)} yes/no examples ({args.traces}, {args.split}, {args.case})",
        {"split": args.split},
    )


if __name__ == "__main__":
    main()
