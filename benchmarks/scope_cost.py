"""What a question costs in a company's scope over real filings against a demo question, side by side.

    .venv/bin/python benchmarks/scope_cost.py --index .scoperag/edgar-index --json benchmarks/results/scope-cost.json

The whole program (plan, decomposition, retrieval rounds, scoring, answer) answers company-scope questions
of the EDGAR test split whose gold filing is a 10-K (the company's scope holds its 10-K and 10-Q, ~100-200
pages) and property-scope questions of the demo traces (a property's few short documents), taking turns,
in one process. The LM is the project's scripted LM (tests/support/fakes.py: it decomposes into the question
itself, scores every chunk and cites what it is shown), made to take `--ms-per-token` per prompt token
(tokens counted as characters / 4), so a question's time is the program's own work plus what the LM reads.
What the LM reads is capped by the plan (chunks per sub-question, characters per chunk), not by the scope:
the table gives prompt tokens, LM calls and seconds per question, and the ratio of the means.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dspy  # noqa: E402
from measure import log, table  # noqa: E402

from pipeline.evaluation.examples import LabelledExample, load_example_set  # noqa: E402
from pipeline.evaluation.labels import resolve_example  # noqa: E402
from pipeline.intake.scope import question_scope  # noqa: E402
from pipeline.program.events import Completed  # noqa: E402
from pipeline.program.module import ScopedQA  # noqa: E402
from pipeline.store import Store, open_store  # noqa: E402
from pipeline.store.build import build_index  # noqa: E402
from pipeline.store.embedders import StaticEmbedder  # noqa: E402
from tests.support.fakes import cooperative, scripted_lm  # noqa: E402

# Prompt tokens the scripted LM has read (characters / 4), over the run.
READ = {"tokens": 0.0}


def reading_lm(ms_per_token: float) -> Any:
    """The cooperative scripted LM taking `ms_per_token` per prompt token (characters / 4) before it answers."""
    respond = cooperative()

    def answer(prompt: str) -> Any:
        READ["tokens"] += len(prompt) / 4
        time.sleep(len(prompt) / 4 * ms_per_token / 1000)
        return respond(prompt)

    return scripted_lm(answer)


def ask(store: Store, example: LabelledExample) -> dict[str, Any]:
    """One question through the whole program: seconds, LM calls, prompt tokens read, chunks shown, scope size."""
    program = ScopedQA(store)
    resolved = resolve_example(example, store)
    allowed = question_scope(resolved.scope, store).allowed or frozenset(store.catalog.documents)
    read_before = READ["tokens"]
    started = time.perf_counter()
    last = None
    for event in program.stream(example.question, resolved.scope):
        last = event
    seconds = time.perf_counter() - started
    trace = last.trace if last is not None else None
    if trace is None:
        raise RuntimeError(f"no trace for {example.id}")
    return {
        "completed": isinstance(last, Completed),
        "seconds": seconds,
        "lm_calls": trace.lm_calls,
        "prompt_tokens": READ["tokens"] - read_before,
        "chunks_shown": sum(len(sq.chunks) for sq in trace.sub_questions),
        "scope_documents": len(allowed),
        "scope_pages": sum(store.catalog.documents[d].page_count for d in allowed),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=ROOT / ".scoperag" / "edgar-index", help="the EDGAR index")
    parser.add_argument("--questions", type=int, default=12, help="questions of each kind")
    parser.add_argument("--ms-per-token", type=float, default=1.0, help="scripted LM time per prompt token")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    edgar = open_store(args.index)
    tenk = [
        e
        for e in load_example_set(ROOT / "datasets" / "edgar" / "traces", split="test")
        if e.case == "property" and e.gold_documents[0].startswith("10-K/")
    ][: args.questions]
    demo_examples = [e for e in load_example_set(ROOT / "datasets" / "demo-traces") if e.case == "property"][
        : args.questions
    ]
    load = os.getloadavg()
    log(f"{len(tenk)} 10-K company-scope and {len(demo_examples)} demo questions; load average {load[0]:.2f}")
    rows: dict[str, list[dict[str, Any]]] = {"demo": [], "10-K": []}
    with tempfile.TemporaryDirectory(prefix="scope-cost-") as scratch:
        build_index(ROOT / "datasets" / "demo", Path(scratch) / "demo", StaticEmbedder())
        demo = open_store(Path(scratch) / "demo")
        with dspy.context(lm=reading_lm(args.ms_per_token), adapter=dspy.JSONAdapter()):
            ask(demo, demo_examples[0])  # warm-up: imports, first embedder call
            ask(edgar, tenk[0])
            for mine, theirs in zip(demo_examples, tenk, strict=False):  # taking turns: the same load for both
                rows["demo"].append(ask(demo, mine))
                rows["10-K"].append(ask(edgar, theirs))
    summary = []
    for kind, found in rows.items():
        n = len(found)
        summary.append(
            {
                "questions": kind,
                "n": n,
                "completed": sum(r["completed"] for r in found),
                "seconds": sum(r["seconds"] for r in found) / n,
                "prompt_tokens": sum(r["prompt_tokens"] for r in found) / n,
                "lm_calls": sum(r["lm_calls"] for r in found) / n,
                "chunks_shown": sum(r["chunks_shown"] for r in found) / n,
                "scope_documents": sum(r["scope_documents"] for r in found) / n,
                "scope_pages": sum(r["scope_pages"] for r in found) / n,
            }
        )
    demo_row, tenk_row = summary
    ratios = {key: tenk_row[key] / demo_row[key] for key in ("seconds", "prompt_tokens", "lm_calls")}
    print(
        table(
            f"per question, means (scripted LM at {args.ms_per_token} ms per prompt token)",
            summary,
            [
                "questions",
                "n",
                "completed",
                "scope_documents",
                "scope_pages",
                "chunks_shown",
                "lm_calls",
                "prompt_tokens",
                "seconds",
            ],
        )
    )
    print("10-K / demo: " + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items()))
    log(f"load average {load[0]:.2f} -> {os.getloadavg()[0]:.2f}")
    if args.json:
        record = {
            "benchmark": "scope-cost",
            "ms_per_token": args.ms_per_token,
            "load_average": {"start": load, "end": os.getloadavg()},
            "summary": summary,
            "ratios": ratios,
            "questions": rows,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
