"""The embedded chat models end to end, paired over the same labelled questions.

    python benchmarks/models.py [--runs 0.5b:shipped 0.5b:uncompiled 1.5b:uncompiled gemma-270m:uncompiled]
        [--split dev] [--limit 40] [--threads N] [--parallel 2] [--cache DIR] [--json PATH]

Each run (MODEL:PROGRAM) answers the same stratified sample of questions with the whole program: as written
with every step by the model (`uncompiled`: the signatures' own prompts, `[program.steps]` all "lm", the
default settings), or the shipped program (`shipped`, compiled on the 0.5B model) with the steps its export
records. Each run's first line says which steps its model runs (pipeline.export.choice.steps_words): while the
shipped program runs every step's floor it makes no LM call, so its run is the floors' baseline and the same
whatever the model. MODEL is a size `--lm embedded:SIZE` names, or a model shipped only for this comparison.
Printed per run: fact recall, citation precision,
abstention, composite, failed examples, safety counts and seconds per question; then each run
against the first one and against the first model's run of the same program, paired over the same examples
with a seeded bootstrap 95% CI (`--report JSON` prints them again from a saved run and refreshes its comparisons).

Models are loaded one after another (never two at once: on 2 cores they slow each other down).
DSPy's cache is off: every call is real. A model other than the default is read from
`<cache>/<its file name>` (size and sha256 checked) or assembled from its installed parts
(pipeline/program/lm/model_file.py lists the packages). Needs the demo index (`make demo`).
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse
import gc
import json
import statistics
import time
from pathlib import Path
from typing import Any

import dspy

from pipeline.evaluation.compare import compare_rows, differences_frame
from pipeline.evaluation.examples import load_examples, stratified_sample
from pipeline.evaluation.scoring import ExampleResult, evaluate
from pipeline.export.choice import SHIPPED_PROGRAM, choose_program, steps_words
from pipeline.program.lm import GEMMA3_270M, default_model_cache_dir, make_embedded_lm
from pipeline.program.lm.factory import EMBEDDED_MODELS
from pipeline.settings import Settings, available_cores
from pipeline.store import open_store

MODELS = {**EMBEDDED_MODELS, "gemma-270m": GEMMA3_270M}
PROGRAMS = ("uncompiled", "shipped")
DEFAULT_RUNS = ("0.5b:shipped", "0.5b:uncompiled", "1.5b:uncompiled", "gemma-270m:uncompiled")
COMPARED = ("fact_recall", "citation_precision", "composite")


def run_spec(text: str) -> tuple[str, str]:
    """MODEL:PROGRAM, e.g. 1.5b:uncompiled."""
    model, _, program = text.partition(":")
    if model not in MODELS or program not in PROGRAMS:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected MODEL:PROGRAM with MODEL one of {', '.join(MODELS)} and PROGRAM one of "
            f"{', '.join(PROGRAMS)}"
        )
    return model, program


def _mean(values: list[Any]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return round(statistics.fmean(present), 4) if present else None


def run_row(model: str, program: str, results: list[ExampleResult], seconds: float) -> dict[str, Any]:
    """One run's summary and its per-example scores."""
    per_example = [
        {
            "id": r.example.id,
            "case": r.example.case,
            "composite": r.composite,
            "fact_recall": r.scores.fact_recall,
            "citation_precision": r.scores.citation_precision,
            "abstention": r.scores.abstention,
            "failed": r.failed,
            "lm_calls": r.scores.lm_calls,
        }
        for r in results
    ]
    return {
        "model": model,
        "program": program,
        "n": len(results),
        **{name: _mean([e[name] for e in per_example]) for name in (*COMPARED, "abstention")},
        "failed": sum(e["failed"] for e in per_example),
        "errors": sum(r.error is not None for r in results),
        "wrong_property_citations": sum(r.scores.wrong_property_citations or 0 for r in results),
        "invalid_ids": sum(r.scores.invalid_ids or 0 for r in results),
        "lm_calls": sum(e["lm_calls"] or 0 for e in per_example),
        "seconds_per_question": round(seconds / max(1, len(results)), 1),
        "per_example": per_example,
    }


def paired(first: dict[str, Any], other: dict[str, Any], metric: str) -> Any:
    """`other` - `first` on `metric`, over the examples where both have a value, per case and overall."""
    return differences_frame(compare_rows(first["per_example"], other["per_example"], metric, seed=0))


def pairs_to_compare(runs: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each run against the first, and against the first model's run of the same program (a model
    compared with a model, compiling held equal)."""
    first = runs[0]
    pairs = [(first, other) for other in runs[1:]]
    for other in runs[1:]:
        same = next((r for r in runs if r["model"] == first["model"] and r["program"] == other["program"]), None)
        if same is not None and same is not first and other["model"] != first["model"]:
            pairs.append((same, other))
    return pairs


def report(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Print the runs' table and the paired differences; return the differences by label and metric."""
    print(
        f"\n{'model':<10} {'program':<10} {'n':>3} {'facts':>6} {'cite_p':>6} {'abst':>6} {'comp':>6} "
        f"{'failed':>6} {'unsafe':>6} {'s/q':>6}"
    )
    for r in runs:
        unsafe = r["wrong_property_citations"] + r["invalid_ids"]
        print(
            f"{r['model']:<10} {r['program']:<10} {r['n']:>3} {r['fact_recall']!s:>6} {r['citation_precision']!s:>6} "
            f"{r['abstention']!s:>6} {r['composite']!s:>6} {r['failed']:>6} {unsafe:>6} {r['seconds_per_question']:>6}"
        )
    comparisons: dict[str, dict[str, Any]] = {}
    for first, other in pairs_to_compare(runs):
        label = f"{other['model']}/{other['program']} - {first['model']}/{first['program']}"
        comparisons[label] = {}
        for metric in COMPARED:
            frame = paired(first, other, metric)
            comparisons[label][metric] = frame.to_dict(orient="records")  # type: ignore[attr-defined]
            print(f"\n{label}, {metric} (paired, 95% bootstrap CI)")
            print(frame.to_string(index=False))  # type: ignore[attr-defined]
    return comparisons


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", default=".scoperag/index")
    parser.add_argument("--traces", default="datasets/demo-traces")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--runs", nargs="+", type=run_spec, default=[run_spec(r) for r in DEFAULT_RUNS])
    parser.add_argument("--cache", default=str(default_model_cache_dir()), help="where the model files are")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--threads", type=int, default=available_cores())
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument(
        "--report", metavar="JSON", help="print an earlier run's tables and refresh its comparisons; run nothing"
    )
    args = parser.parse_args()
    if args.report:
        saved = json.loads(Path(args.report).read_text())
        saved["comparisons"] = report(saved["runs"])
        Path(args.report).write_text(json.dumps(saved, indent=2))
        return

    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    store = open_store(Path(args.index))
    examples = stratified_sample(load_examples(Path(args.traces) / f"{args.split}.jsonl"), args.limit, seed=0)
    # the default settings run every step by the LM; the shipped program's export sets its own steps
    programs = {
        name: choose_program(store, None, None, Settings(), shipped=SHIPPED_PROGRAM, uncompiled=name == "uncompiled")
        for name in PROGRAMS
    }
    print(
        f"{len(examples)} examples from {args.traces} ({args.split}); {args.threads} threads, {args.parallel} at a time"
    )
    for name in dict.fromkeys(p for _, p in args.runs):
        print(f"{name}: {steps_words(programs[name].steps)}")
    runs: list[dict[str, Any]] = []
    loads: dict[str, float] = {}
    for model in dict.fromkeys(m for m, _ in args.runs):  # each model loaded once, in order of first mention
        began = time.perf_counter()
        lm = make_embedded_lm(
            cache_dir=Path(args.cache), threads=args.threads, parallel=args.parallel, model=MODELS[model], cache=False
        )
        loads[model] = round(time.perf_counter() - began, 1)
        for name in [p for m, p in args.runs if m == model]:
            choice = programs[name]
            began = time.perf_counter()
            with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
                results = evaluate(examples, store, program=choice.program, threads=args.parallel)
            row = run_row(model, name, results, time.perf_counter() - began)
            runs.append(row)
            print(
                f"{model:<10} {name:<10} n={row['n']} fact_recall={row['fact_recall']} "
                f"citation_precision={row['citation_precision']} abstention={row['abstention']} "
                f"composite={row['composite']} failed={row['failed']} errors={row['errors']} "
                f"wrong_property={row['wrong_property_citations']} invalid_ids={row['invalid_ids']} "
                f"s/question={row['seconds_per_question']}",
                flush=True,
            )
        del lm
        gc.collect()

    comparisons = report(runs)
    if args.json:
        meta = {
            "split": args.split,
            "limit": args.limit,
            "threads": args.threads,
            "parallel": args.parallel,
            "load_seconds": loads,
            "steps": {name: steps_words(programs[name].steps) for name in dict.fromkeys(p for _, p in args.runs)},
            "load_average": os.getloadavg(),
        }
        Path(args.json).write_text(json.dumps({"meta": meta, "runs": runs, "comparisons": comparisons}, indent=2))


if __name__ == "__main__":
    main()
