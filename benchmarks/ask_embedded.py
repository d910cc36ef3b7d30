"""Seconds, LM calls and tokens per question on the embedded model, over 10 demo questions.

    python benchmarks/ask_embedded.py [--index .scoperag/index] [--threads 1] [--json PATH]

Needs an index of the demo corpus built with the real embedder (`make demo` builds one).
DSPy's response cache is switched off so every call is real.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import dspy

from pipeline.intake.scope import resolve_scope
from pipeline.program.events import Completed
from pipeline.program.lm import default_model_cache_dir, make_lm
from pipeline.program.module import ScopedQA
from pipeline.store import open_store

# (question, property or None): the four kinds of scope a user gives
QUESTIONS: list[tuple[str, str | None]] = [
    ("What is the monthly rent for Banda Lane?", "Banda Lane"),
    ("Who is the tenant at Banda Road and when does the lease start?", "Banda Road"),
    ("What did the inspection of Mellifera Gardens find?", "Mellifera Gardens"),
    ("What is the market value of Dik Dik Lane?", None),
    ("Which firm valued Karen Ridge?", "Karen Ridge"),
    ("What is the offer price for Mvuli Road?", "Mvuli Road"),
    ("What is the parcel number of Othaya Road?", None),
    ("Summarise the Banda Lane offer letter", None),
    ("What is the land area of Mkungu Close?", "Mkungu Close"),
    ("Who is the landlord of Karen Ridges Court?", None),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", default=".scoperag/index")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--limit", type=int, default=len(QUESTIONS))
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args()

    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    store = open_store(Path(args.index))
    started = time.perf_counter()
    cache = Path(os.environ.get("SCOPERAG_CACHE_DIR", default_model_cache_dir()))
    lm = make_lm(None, cache_dir=cache, threads=args.threads)
    load_seconds = time.perf_counter() - started
    program = ScopedQA(store)
    rows: list[dict[str, Any]] = []
    print(f"model loaded in {load_seconds:.1f} s; {args.limit} questions, {args.threads} thread(s)")
    print(f"{'#':>2} {'scope':<9} {'calls':>5} {'prompt':>7} {'output':>7} {'seconds':>8}  {'fallbacks':<10} question")
    for number, (question, prop) in enumerate(QUESTIONS[: args.limit], start=1):
        scope = resolve_scope(store, property_ref=prop)
        begun = time.perf_counter()
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            events = list(program.stream(question, scope))
        seconds = time.perf_counter() - begun
        last = events[-1]
        trace = last.trace
        row = {
            "question": question,
            "scope": scope.kind,
            "lm_calls": trace.lm_calls,
            "prompt_tokens": trace.prompt_tokens,
            "completion_tokens": trace.completion_tokens,
            "seconds": round(seconds, 2),
            "fallbacks": len(trace.fallbacks),
            "completed": isinstance(last, Completed),
            "answer": getattr(last, "answer", ""),
        }
        rows.append(row)
        print(
            f"{number:>2} {scope.kind:<9} {row['lm_calls']:>5} {row['prompt_tokens']:>7} "
            f"{row['completion_tokens']:>7} {seconds:>8.1f}  {row['fallbacks']:<10} {question}"
        )
    seconds = [r["seconds"] for r in rows]
    tokens = [r["prompt_tokens"] + r["completion_tokens"] for r in rows]
    print(
        f"median {statistics.median(seconds):.1f} s/question (max {max(seconds):.1f}), "
        f"median {statistics.median(tokens):.0f} tokens/question, "
        f"{sum(r['completed'] for r in rows)}/{len(rows)} completed"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"load_seconds": load_seconds, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
