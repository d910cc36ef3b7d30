"""What benchmarks/judge_step.py and benchmarks/choose_step.py share: the shipped program with one learned step on
its floor and the same program with that step by an embedded model (a settings file naming the steps), run one
question at a time on the same examples, each metric paired with a seeded bootstrap 95% CI, and seconds per
question with the load average at the start and the end."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import itertools
import json
import math
import statistics
import time
from collections.abc import Sequence
from typing import Any

import dspy

from pipeline.evaluation.compare import compare_rows
from pipeline.evaluation.scoring import evaluate
from pipeline.evaluation.tables import results_frame
from pipeline.export.saving import load_export_with_settings
from pipeline.program.lm import QWEN_CODER_05B, QWEN_CODER_15B, default_model_cache_dir, make_embedded_lm
from pipeline.settings import available_cores, load_settings

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "pipeline" / "export" / "shipped"
MODELS = {"0.5b": QWEN_CODER_05B, "1.5b": QWEN_CODER_15B}
SEED = 20261128


def add_options(parser: argparse.ArgumentParser) -> None:
    """The options every step benchmark takes: the model, its threads, the cache, and where results go."""
    parser.add_argument("--model", choices=sorted(MODELS), default="0.5b")
    parser.add_argument("--threads", type=int, default=available_cores())
    parser.add_argument("--no-cache", action="store_true", help="call the LM every time (DSPy's cache off)")
    parser.add_argument("--out", type=Path, help="write each side's examples-hybrid.csv under this directory")
    parser.add_argument("--json", type=Path, help="write the table to this file")


def timed_run(program: Any, examples: list[Any], store: Any) -> tuple[list[Any], list[float]]:
    """The examples' results, one at a time, and the seconds each took."""
    stamps = [time.perf_counter()]
    results = evaluate(
        examples, store, program=program, threads=1, progress=lambda done, total: stamps.append(time.perf_counter())
    )
    return results, [b - a for a, b in itertools.pairwise(stamps)]


def compare_step(
    args: argparse.Namespace,
    store: Any,
    examples: list[Any],
    lm_settings: Path,
    metrics: Sequence[str],
    heading: str,
    described: dict[str, Any],
) -> None:
    """The shipped program against itself run with `lm_settings` (the step by the model `args` names) on
    `examples`: prints `heading`, each of `metrics` paired and the seconds per question; writes `--out`/`--json`
    as `add_options` describes (`described` goes into the JSON table)."""
    model, out, json_path = args.model, args.out, args.json
    if args.no_cache:
        dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    floor, _ = load_export_with_settings(SHIPPED, store)
    stepped, _ = load_export_with_settings(SHIPPED, store, load_settings(lm_settings))
    lm = make_embedded_lm(cache_dir=default_model_cache_dir(), threads=args.threads, parallel=1, model=MODELS[model])
    load = [os.getloadavg()[0]]
    sides: dict[str, tuple[list[Any], list[float]]] = {}
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        for name, program in (("floor", floor), (f"lm-{model}", stepped)):
            sides[name] = timed_run(program, examples, store)
    load.append(os.getloadavg()[0])
    frames = {name: results_frame(results) for name, (results, _) in sides.items()}
    # a metric that does not apply to an example is empty (NaN in the frame): left out of its comparison
    rows = {
        name: [{k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()} for row in records]
        for name, records in ((n, f.to_dict(orient="records")) for n, f in frames.items())
    }
    if out:
        for name, frame in frames.items():
            (out / name).mkdir(parents=True, exist_ok=True)
            frame.to_csv(out / name / "examples-hybrid.csv", index=False)
    floor_name, lm_name = list(sides)
    print(f"{heading}; model {model}")
    print(f"load average (1 min) {load[0]:.2f} at the start, {load[1]:.2f} at the end")
    table: dict[str, Any] = {"n": len(examples), "model": model, **described, "load": load}
    for metric in metrics:
        for d in compare_rows(rows[floor_name], rows[lm_name], metric, seed=SEED):
            if d.case == "all":
                print(
                    f"{metric:<14} n={d.n:<3} floor {d.baseline:.3f}  LM {d.candidate:.3f}  "
                    f"LM - floor {d.difference:+.3f} [{d.low:+.3f}, {d.high:+.3f}]"
                )
                table[metric] = {
                    "floor": d.baseline,
                    "lm": d.candidate,
                    "difference": d.difference,
                    "low": d.low,
                    "high": d.high,
                    "n": d.n,
                }
    for name, (_, seconds) in sides.items():
        median = statistics.median(seconds) if seconds else 0.0
        print(f"seconds per question, {name}: median {median:.2f}, max {max(seconds, default=0.0):.2f}")
        table[f"seconds_{name}"] = {"median": median, "max": max(seconds, default=0.0)}
    if json_path:
        json_path.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
