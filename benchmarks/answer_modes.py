"""The answer step on the embedded models against its floors, on labelled inputs.

    python benchmarks/answer_modes.py [--model 0.5b|1.5b|gemma-270m|smollm2-135m] [--modes lm span sentence]
        [--split dev] [--limit 40] [--threads N] [--parallel 2] [--cache DIR] [--json PATH]

Each example's context is its gold pages' chunks plus retrieved distractors (the answer stage's
inputs, pipeline.evaluation.stage_inputs), so the numbers measure the answer step alone: fact
recall, citation precision, correct abstention and seconds per example, one LM call each.
Needs the demo index built with the real embedder (`make demo`). DSPy's cache is off: every
call is real. A model other than the default is read from `<cache>/<its file name>` (size and
sha256 checked) or assembled from its installed parts (pipeline/program/lm/model_file.py).

A mode is a way the answer step runs (ProgramSettings.steps.answer): `lm`, the model writes the answer
lines with their evidence (and says when nothing answers); `span` and `sentence`, its floors, plain
code with no LM call (abstaining by support), the baseline a model must beat. The modes the recorded
runs in benchmarks/README.md compared (`write`, `select`, `lead`, and `--sentence-order`) were answer
modes of a program that answered before answer lines existed; today's program has none of them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import json
import statistics
import time
from typing import Any

import dspy

from optimizers.stages import StageProgram, evaluate_stage
from pipeline.evaluation.compare import compare_rows, differences_frame
from pipeline.evaluation.examples import load_examples, stratified_sample
from pipeline.evaluation.labels import resolve_example
from pipeline.evaluation.stage_inputs import gold_chunk_rows, missing_label, stage_example
from pipeline.program.lm import (
    GEMMA3_270M,
    QWEN_CODER_05B,
    QWEN_CODER_15B,
    SMOLLM2_135M,
    default_model_cache_dir,
    make_embedded_lm,
)
from pipeline.program.module import ScopedQA
from pipeline.settings import ProgramSettings, Settings, StepChoices, available_cores
from pipeline.store import open_store

MODELS = {"0.5b": QWEN_CODER_05B, "1.5b": QWEN_CODER_15B, "gemma-270m": GEMMA3_270M, "smollm2-135m": SMOLLM2_135M}


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.fmean(present), 4) if present else None


def mode_settings(mode: str) -> ProgramSettings:
    """The program settings that run the answer step as `mode`: by the LM (which also says when nothing
    answers), or by one of its floors with the support floor abstaining and nothing else by the LM."""
    if mode == "lm":
        return ProgramSettings(steps=StepChoices(answer="lm", abstain="lm"))
    return ProgramSettings(steps=StepChoices(answer=mode, abstain="support", compute="rows"))  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", default=".scoperag/index")
    parser.add_argument("--traces", default="datasets/demo-traces")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--model", choices=sorted(MODELS), default="0.5b")
    parser.add_argument("--cache", default=str(default_model_cache_dir()), help="where the model file is")
    parser.add_argument("--modes", nargs="+", choices=["lm", "span", "sentence"], default=["lm", "span"])
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--threads", type=int, default=available_cores())
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()

    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    store = open_store(Path(args.index))
    examples = load_examples(Path(args.traces) / f"{args.split}.jsonl")
    resolved = [resolve_example(e, store) for e in examples]
    rows = [gold_chunk_rows(store, r) for r in resolved]
    usable = [i for i, e in enumerate(examples) if missing_label("answer", e, rows[i]) is None]
    picked = {e.id for e in stratified_sample([examples[i] for i in usable], args.limit, seed=0)}
    items = [stage_example(store, resolved[i], rows[i]) for i in usable if examples[i].id in picked]
    started = time.perf_counter()
    lm = None
    if "lm" in args.modes:
        lm = make_embedded_lm(
            cache_dir=Path(args.cache),
            threads=args.threads,
            parallel=args.parallel,
            model=MODELS[args.model],
            cache=False,
        )
    print(
        f"model {args.model if lm else '(none)'} loaded in {time.perf_counter() - started:.1f} s; {len(items)} "
        f"examples, {args.threads} threads, {args.parallel} at once"
    )
    results: list[dict[str, Any]] = []
    print(f"{'mode':<8} {'n':>3} {'value':>6} {'facts':>6} {'cite_p':>6} {'abstain':>7} {'s/example':>9}")
    for mode in args.modes:
        program = ScopedQA(store, Settings(program=mode_settings(mode)))
        begun = time.perf_counter()
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            scored = evaluate_stage(StageProgram(program, "answer"), items, threads=args.parallel)
        seconds = time.perf_counter() - begun
        row = {
            "model": args.model if mode == "lm" else "none",
            "mode": mode,
            "n": len(scored),
            "value": _mean([r.value for r in scored]),
            "fact_recall": _mean([r.scores.metrics.get("fact_recall") for r in scored]),
            "citation_precision": _mean([r.scores.metrics.get("citation_precision") for r in scored]),
            "abstention": _mean([r.scores.metrics.get("abstention") for r in scored]),
            "errors": sum(r.error is not None for r in scored),
            "gate_failures": sum(not r.scores.gates_passed for r in scored),
            "seconds_per_example": round(seconds / max(1, len(scored)), 2),
            "per_example": [
                {"id": r.item.example.id, "case": r.item.example.case, "value": r.value, **r.scores.metrics}
                for r in scored
            ],
        }
        results.append(row)
        print(
            f"{mode:<8} {row['n']:>3} {row['value']!s:>6} {row['fact_recall']!s:>6} "
            f"{row['citation_precision']!s:>6} {row['abstention']!s:>7} {row['seconds_per_example']:>9}"
        )
    if len(results) == 2:
        first, second = results
        for metric in ("value", "fact_recall"):
            diffs = compare_rows(first["per_example"], second["per_example"], metric, seed=0)
            print(f"\n{second['mode']} - {first['mode']}, {metric} (paired, 95% bootstrap CI)")
            print(differences_frame(diffs).to_string(index=False))  # type: ignore[attr-defined]
    if args.json:
        meta = {
            "model": args.model,
            "split": args.split,
            "threads": args.threads,
            "parallel": args.parallel,
            "load_average": os.getloadavg(),
        }
        Path(args.json).write_text(json.dumps({"meta": meta, "results": results}, indent=2))


if __name__ == "__main__":
    main()
