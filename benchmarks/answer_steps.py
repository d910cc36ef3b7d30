"""The answer step's ways side by side on the same labelled inputs: its floors (no LM) and the LM.

    python benchmarks/answer_steps.py [--index .scoperag/index] [--traces datasets/demo-traces]
        [--split dev] [--limit 60] [--variants span+support sentence+support lm+lm lm+support]
        [--model 0.5b] [--threads N] [--parallel 2] [--no-cache] [--json PATH]

A variant is `<answer>+<abstain>` (ProgramSettings.steps): answer "span" | "sentence" | "lm", abstain
"support" | "lm". Each example's context is its gold pages' chunks plus retrieved distractors (the answer
stage's inputs, pipeline.evaluation.stage_inputs; an example whose answer is not in scope gets
distractors only), so the numbers measure the answer step alone: answer-line correctness, evidence
precision, abstention both ways, words per section, the stage value, seconds per example. Every variant
is compared with the first one, paired over the same examples (seeded bootstrap, 95% CI). The LM's
answers go through DSPy's response cache unless --no-cache.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import dataclasses
import json
import statistics
import time
from typing import Any

import dspy

from optimizers.stages import StageProgram, evaluate_stage
from pipeline.evaluation.compare import compare_rows, overall
from pipeline.evaluation.examples import load_example_set, stratified_sample
from pipeline.evaluation.labels import resolve_example
from pipeline.evaluation.stage_inputs import gold_chunk_rows, missing_label, stage_example
from pipeline.program.lm import QWEN_CODER_05B, QWEN_CODER_15B, default_model_cache_dir, make_embedded_lm
from pipeline.program.module import ScopedQA
from pipeline.settings import ProgramSettings, Settings, StepChoices, available_cores
from pipeline.store import open_store

MODELS = {"0.5b": QWEN_CODER_05B, "1.5b": QWEN_CODER_15B}
REPORTED = (
    "value",
    "answer_line_correct",
    "evidence_precision",
    "abstention",
    "fact_recall",
    "brevity",
    "line_fact_recall",
    "abstained_when_absent",
    "false_abstention",
    "words_per_section",
    "quotes_per_section",
)
COMPARED = ("value", "answer_line_correct", "evidence_precision", "abstention")


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.fmean(present), 4) if present else None


def variant_settings(variant: str) -> ProgramSettings:
    """The program settings of a variant `<answer>+<abstain>`."""
    answer, _, abstain = variant.partition("+")
    compute = "lm" if answer == "lm" else "rows"  # a floor computes with the rows floor: no LM at all
    return ProgramSettings(steps=StepChoices(answer=answer, abstain=abstain or "support", compute=compute))  # type: ignore[arg-type]


def rows_of(results: list[Any]) -> list[dict[str, Any]]:
    """One row per example: id, case and every reported metric."""
    out = []
    for r in results:
        row = {"id": r.item.example.id, "case": r.item.example.case, "value": r.value}
        row.update(dict(r.scores.metrics))
        row.update(dict(r.scores.details))
        out.append(row)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", default=".scoperag/index")
    parser.add_argument("--traces", default="datasets/demo-traces")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--variants", nargs="+", default=["span+support", "sentence+support", "lm+lm"])
    parser.add_argument("--model", choices=sorted(MODELS), default="0.5b")
    parser.add_argument("--threads", type=int, default=available_cores())
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--no-cache", action="store_true", help="call the LM every time (DSPy's cache off)")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()

    if args.no_cache:
        dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    store = open_store(Path(args.index))
    examples = load_example_set(Path(args.traces), args.split)
    resolved = [resolve_example(e, store) for e in examples]
    rows = [gold_chunk_rows(store, r) for r in resolved]
    usable = [i for i, e in enumerate(examples) if missing_label("answer", e, rows[i]) is None]
    picked = {e.id for e in stratified_sample([examples[i] for i in usable], args.limit, seed=0)}
    items = [stage_example(store, resolved[i], rows[i]) for i in usable if examples[i].id in picked]
    lm = None
    if any(v.startswith("lm") for v in args.variants):
        lm = make_embedded_lm(
            cache_dir=default_model_cache_dir(), threads=args.threads, parallel=args.parallel, model=MODELS[args.model]
        )
    print(f"{len(items)} examples from {args.traces} ({args.split}); model {args.model if lm else '(none)'}")
    results: dict[str, list[dict[str, Any]]] = {}
    summary: list[dict[str, Any]] = []
    for variant in args.variants:
        program = ScopedQA(store, Settings(program=variant_settings(variant)))
        started = time.perf_counter()
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            scored = evaluate_stage(StageProgram(program, "answer"), items, threads=args.parallel if lm else 1)
        seconds = time.perf_counter() - started
        results[variant] = rows_of(scored)
        row = {"variant": variant, "n": len(scored), "seconds_per_example": round(seconds / max(1, len(scored)), 3)}
        row.update({name: _mean([r.get(name) for r in results[variant]]) for name in REPORTED})
        summary.append(row)
    print(f"{'variant':<18} {'n':>3} " + " ".join(f"{name[:11]:>11}" for name in REPORTED) + "   s/ex")
    for row in summary:
        cells = " ".join(f"{row[name]!s:>11}" for name in REPORTED)
        print(f"{row['variant']:<18} {row['n']:>3} {cells} {row['seconds_per_example']:>6}")
    comparisons: dict[str, Any] = {}
    base = args.variants[0]
    for variant in args.variants[1:]:
        for metric in COMPARED:
            total = overall(compare_rows(results[base], results[variant], metric, seed=0))
            comparisons[f"{variant} - {base}: {metric}"] = dataclasses.asdict(total)
            print(
                f"{variant} - {base}, {metric}: {total.difference:+.3f} [{total.low:+.3f}, {total.high:+.3f}] "
                f"(n={total.n})"
            )
    if args.json:
        Path(args.json).write_text(
            json.dumps({"args": vars(args), "summary": summary, "comparisons": comparisons, "rows": results}, indent=2)
        )


if __name__ == "__main__":
    main()
