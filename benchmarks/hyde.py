"""HyDE against its floor: retrieval with the LM's hypothetical passage for dense search, against the question
itself (the step `hyde` = "none"), paired on the same labelled examples, on the examples whose plan asks for
HyDE (conceptual questions). The shipped program runs HyDE only if its gain's 95% interval lies above zero.

    .venv/bin/python benchmarks/hyde.py --index .scoperag/sec-10q --traces datasets/sec-10q/traces --split train
    .venv/bin/python benchmarks/hyde.py ... --lm http://127.0.0.1:8080/v1 --json benchmarks/results/hyde.json

Scores per example: gold-document recall@10 and gold-page recall@10 of the chunks the plan's rounds retrieve
(as `scoperag evaluate --retrieval-only` does, with the passage given or not). The LM is the embedded model
unless `--lm` names another; DSPy's cache answers a question asked before.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from measure import log, table

ROOT = Path(__file__).resolve().parents[1]
SEED = 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--traces", type=Path, required=True)
    parser.add_argument("--split", default="train", help="never the test split for a choice (default: %(default)s)")
    parser.add_argument("--lm", help="another LM (LiteLLM string or base URL); default: the embedded model")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    import dspy

    from pipeline.cli.common import model_cache_dir
    from pipeline.evaluation.compare import paired_bootstrap
    from pipeline.evaluation.examples import load_example_set
    from pipeline.evaluation.labels import resolve_example
    from pipeline.evaluation.metrics import page_recall_at_k, recall_at_k
    from pipeline.execution.rounds import QuestionRetrieval
    from pipeline.intake.planner import plan_in_scope
    from pipeline.program.calls import call_once
    from pipeline.program.lm import make_lm
    from pipeline.settings import CoreConfig, ProgramSettings
    from pipeline.store import open_store
    from signatures import HyDE

    store = open_store(args.index)
    config = CoreConfig().model_copy(update={"chunks_k": 10})
    doc_types = frozenset(d.doc_type for d in store.catalog.documents.values())
    predictor = dspy.Predict(HyDE)
    budget = ProgramSettings().max_tokens["hyde"]
    lm = make_lm(args.lm, cache_dir=model_cache_dir())
    load = os.getloadavg()
    rows: list[dict[str, Any]] = []
    examples = load_example_set(args.traces, split=args.split)
    log(f"{len(examples)} examples ({args.split}); load average {load[0]:.2f}")
    for example in examples:
        resolved = resolve_example(example, store)
        _, plan, scoped = plan_in_scope(example.question, resolved.scope, store, doc_types, config.planner)
        if not any(r.use_hyde for r in plan.retrieval_rounds):
            continue
        started = time.perf_counter()
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            outcome = call_once("hyde", predictor, budget, question=plan.goal)
        passage = getattr(outcome.prediction, "passage", None) or None
        scores: dict[str, Any] = {"example": example.id, "case": example.case, "lm_seconds": outcome.seconds}
        for side, given in (("floor", None), ("hyde", passage)):
            chunks = QuestionRetrieval(store, scoped, plan, config, passage=given).retrieve(plan.goal).chunks
            ranked = [h.chunk.document_id for h in chunks]
            pages = [(h.chunk.document_id, h.chunk.page) for h in chunks]
            scores[f"{side}_recall_at_10"] = recall_at_k(ranked, resolved.gold, 10)
            scores[f"{side}_page_recall_at_10"] = page_recall_at_k(pages, resolved.gold_pages, 10)
        rows.append(scores)
        log(f"{len(rows)}: {example.question[:70]} ({time.perf_counter() - started:.1f} s)")
    if not rows:
        log("no example of this split plans HyDE: nothing to compare")
        return
    summary = []
    for metric in ("recall_at_10", "page_recall_at_10"):
        floor = [r[f"floor_{metric}"] if r[f"floor_{metric}"] is not None else 0.0 for r in rows]
        hyde = [r[f"hyde_{metric}"] if r[f"hyde_{metric}"] is not None else 0.0 for r in rows]
        mean, low, high = paired_bootstrap(floor, hyde, seed=SEED)
        summary.append(
            {
                "metric": metric,
                "floor": sum(floor) / len(floor),
                "hyde": sum(hyde) / len(hyde),
                "difference": mean,
                "ci_low": low,
                "ci_high": high,
                "n": len(rows),
                "hyde_wins": low > 0,
            }
        )
    print(table("HyDE against its floor (no passage), paired", summary, list(summary[0])))
    if args.json:
        record = {
            "benchmark": "hyde",
            "index": str(args.index),
            "traces": str(args.traces),
            "split": args.split,
            "lm": args.lm or "embedded",
            "python": platform.python_version(),
            "load_average": {"start": load, "end": os.getloadavg()},
            "summary": summary,
            "examples": rows,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
