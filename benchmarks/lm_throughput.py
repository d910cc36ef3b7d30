"""LM throughput on the embedded model, old path against new, in one run.

    python benchmarks/lm_throughput.py [--questions 4] [--stage-examples 6] [--json PATH]

old: one llama.cpp thread, one slot, examples one after another, scoring shows each chunk's
first 900 characters (what the program did before). new: every core, two slots with two examples
at once, scoring shows 360 characters (the defaults now). Both paths run every step by the LM, the
answer step as it is today (answer lines with their evidence): the recorded run in
benchmarks/README.md also wrote the old path's answers as prose, an answer mode the program no
longer has. Printed per path:

1. the floor: raw llama.cpp prompt and generation tokens/s on a fixed ~1,400-token prompt (and,
   for the new path, two such requests at once);
2. seconds per question end to end (demo dev questions, the program's four cases);
3. evaluated examples per hour of each stage job (pipeline.evaluation.stage_inputs inputs, one
   LM call each) and of an end-to-end job.

DSPy's cache is off and every model is loaded fresh, so every number comes from real LM calls.
Needs the demo index built with the real embedder (`make demo`).
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy

from optimizers.stages import StageProgram, evaluate_stage
from pipeline.evaluation.examples import load_examples, stratified_sample
from pipeline.evaluation.labels import resolve_example
from pipeline.evaluation.scoring import evaluate
from pipeline.evaluation.stage_inputs import gold_chunk_rows, missing_label, stage_example
from pipeline.evaluation.stage_metrics import STAGES
from pipeline.program.lm import (
    QWEN_CODER_05B,
    LoadOptions,
    default_model_cache_dir,
    ensure_model_file,
    load_local_model,
    make_embedded_lm,
)
from pipeline.program.module import ScopedQA
from pipeline.settings import DEFAULT_PARALLEL, ProgramSettings, Settings, available_cores
from pipeline.store import Store, open_store

FLOOR_TEXT = " ".join(f"The rent of house {i} is KSH {i * 1000} per month, payable in advance." for i in range(60))


@dataclass(frozen=True)
class RunPath:
    """One way of running the LM: threads, slots (= examples at once) and the scoring excerpt."""

    name: str
    threads: int
    parallel: int
    score_chunk_chars: int


def floor(threads: int, parallel: int, cache: Path) -> dict[str, Any]:
    """Raw llama.cpp tokens/s for one request, and (parallel > 1) for `parallel` requests at once."""
    path = ensure_model_file(cache, QWEN_CODER_05B)
    # context_size differs from the program's so this is a model instance of its own (a cold prompt cache)
    model = load_local_model(path, "floor", LoadOptions(threads=threads, context_size=4096, parallel=parallel))

    def body(tag: int) -> dict[str, Any]:
        question = f"What is the rent of house {tag}? Explain at length."
        messages = [
            {"role": "system", "content": f"[{tag}] Answer briefly."},
            {"role": "user", "content": f"{FLOOR_TEXT}\n{question}"},
        ]
        return {"messages": messages, "max_tokens": 96, "temperature": 0, "cache_prompt": False}

    timings: dict[int, dict[str, Any]] = {}

    def run(tag: int) -> None:
        timings[tag] = model.chat(body(tag))["timings"]

    run(0)
    one = timings[0]
    out: dict[str, Any] = {
        "prompt_tokens": one["prompt_n"],
        "prompt_tokens_per_s": round(one["prompt_per_second"], 1),
        "generation_tokens_per_s": round(one["predicted_per_second"], 1),
    }
    if parallel > 1:
        started = time.perf_counter()
        workers = [threading.Thread(target=run, args=(tag,)) for tag in range(1, parallel + 1)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        seconds = time.perf_counter() - started
        tokens = sum(timings[t]["prompt_n"] + timings[t]["predicted_n"] for t in range(1, parallel + 1))
        single = (one["prompt_n"] / one["prompt_per_second"]) + (one["predicted_n"] / one["predicted_per_second"])
        out[f"{parallel}_at_once_seconds"] = round(seconds, 1)
        out["one_request_seconds"] = round(single, 1)
        out[f"{parallel}_at_once_tokens_per_s"] = round(tokens / seconds, 1)
    return out


def stage_items(store: Store, traces: Path, n: int) -> dict[str, list[Any]]:
    """`n` demo dev examples labelled for each stage, with their stage inputs."""
    examples = load_examples(traces / "dev.jsonl")
    resolved = [resolve_example(e, store) for e in examples]
    rows = [gold_chunk_rows(store, r) for r in resolved]
    out: dict[str, list[Any]] = {}
    for stage in STAGES:
        usable = [i for i, e in enumerate(examples) if missing_label(stage, e, rows[i]) is None]
        picked = {e.id for e in stratified_sample([examples[i] for i in usable], n, seed=0)}
        out[stage] = [stage_example(store, resolved[i], rows[i]) for i in usable if examples[i].id in picked]
    return out


def measure(
    path: RunPath, store: Store, items: dict[str, list[Any]], questions: list[Any], cache: Path
) -> dict[str, Any]:
    """Floor, seconds per question and examples per hour per stage for one path."""
    result: dict[str, Any] = {"path": path.name, "threads": path.threads, "parallel": path.parallel}
    result["floor"] = floor(path.threads, path.parallel, cache)
    lm = make_embedded_lm(cache_dir=cache, threads=path.threads, parallel=path.parallel, cache=False)
    settings = Settings(program=ProgramSettings(score_chunk_chars=path.score_chunk_chars))
    program = ScopedQA(store, settings)
    per_hour: dict[str, float] = {}
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        for stage, stage_examples in items.items():
            started = time.perf_counter()
            evaluate_stage(StageProgram(program, stage), stage_examples, threads=path.parallel)  # type: ignore[arg-type]
            per_hour[stage] = round(3600 * len(stage_examples) / (time.perf_counter() - started), 1)
        started = time.perf_counter()
        answers = evaluate(questions, store, program=program, threads=path.parallel)
        seconds = time.perf_counter() - started
    per_hour["end_to_end"] = round(3600 * len(questions) / seconds, 1)
    result["seconds_per_question"] = round(seconds / len(questions), 1)
    result["examples_per_hour"] = per_hour
    result["end_to_end_errors"] = sum(a.error is not None for a in answers)
    result["lm_calls_per_question"] = round(sum(a.scores.lm_calls for a in answers) / len(answers), 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", default=".scoperag/index")
    parser.add_argument("--traces", default="datasets/demo-traces")
    parser.add_argument("--questions", type=int, default=4, help="end-to-end questions per path")
    parser.add_argument("--stage-examples", type=int, default=6, help="examples per stage per path")
    parser.add_argument("--paths", nargs="+", choices=["old", "new"], default=["old", "new"])
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()

    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    cache = Path(os.environ.get("SCOPERAG_CACHE_DIR", default_model_cache_dir()))
    store = open_store(Path(args.index))
    items = stage_items(store, Path(args.traces), args.stage_examples)
    questions = stratified_sample(load_examples(Path(args.traces) / "dev.jsonl"), args.questions, seed=1)
    paths = {
        "old": RunPath("old", threads=1, parallel=1, score_chunk_chars=900),
        "new": RunPath("new", threads=available_cores(), parallel=DEFAULT_PARALLEL, score_chunk_chars=360),
    }
    load = [round(x, 2) for x in os.getloadavg()]
    results = [measure(paths[name], store, items, questions, cache) for name in args.paths]
    print(f"load average at start {load}, at end {[round(x, 2) for x in os.getloadavg()]}")
    print(
        f"{'path':<5} {'thr':>3} {'slots':>5} {'prompt t/s':>10} {'gen t/s':>8} "
        f"{'2-at-once t/s':>13} {'s/question':>10}"
    )
    for r in results:
        f = r["floor"]
        both = f.get(f"{r['parallel']}_at_once_tokens_per_s", "-")
        print(
            f"{r['path']:<5} {r['threads']:>3} {r['parallel']:>5} {f['prompt_tokens_per_s']:>10} "
            f"{f['generation_tokens_per_s']:>8} {both!s:>13} {r['seconds_per_question']:>10}"
        )
    stages = [*STAGES, "end_to_end"]
    print("\nevaluated examples per hour")
    print(f"{'path':<5} " + " ".join(f"{s:>11}" for s in stages))
    for r in results:
        print(f"{r['path']:<5} " + " ".join(f"{r['examples_per_hour'][s]:>11}" for s in stages))
    if args.json:
        meta = {
            "load_average_start": load,
            "load_average_end": list(os.getloadavg()),
            "cores": available_cores(),
            "questions": args.questions,
            "stage_examples": args.stage_examples,
        }
        Path(args.json).write_text(json.dumps({"meta": meta, "results": results}, indent=2))


if __name__ == "__main__":
    main()
