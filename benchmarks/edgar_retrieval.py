"""Hybrid against BM25 alone on the EDGAR traces, retrieval only (no LM): the dense weight chosen on
train+dev, then checked on test.

    .venv/bin/scoperag index .scoperag/edgar/edgar-filings --manifest datasets/edgar/corpus.toml \\
        --out .scoperag/edgar-index
    .venv/bin/python benchmarks/edgar_retrieval.py --json benchmarks/results/edgar-retrieval.json

Every example is scored as `scoperag evaluate --retrieval-only` scores it (pipeline.evaluation.scoring:
the program's plan and rounds, the question as its one sub-question, top 10 chunks): gold-document and
gold-page recall@10 and wrong-entity chunks, per case. Each hybrid setting (`[core.planner] dense_weight`:
the dense half's fusion weight for a question that favours neither retriever) is compared with BM25 alone
on the same examples, paired, with the seeded bootstrap 95% interval of pipeline.evaluation.compare.
Chosen on train+dev: the setting with the best mean gold-page recall@10 among those whose interval's lower
end against BM25 is at least -0.01 in every case for both recalls; then test is reported for each setting.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from measure import log, table

ROOT = Path(__file__).resolve().parents[1]
METRICS = ("recall_at_10", "page_recall_at_10")
MARGIN = -0.01


def _rows(results: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": r.example.id,
            "case": r.example.case,
            "recall_at_10": r.scores.recall_at_10,
            "page_recall_at_10": r.scores.page_recall_at_10,
            "wrong": r.scores.wrong_property_citations,
            "invalid": r.scores.invalid_ids,
        }
        for r in results
    ]


def score(examples: Sequence[Any], store: Any, mode: str, dense_weight: float, threads: int) -> list[dict[str, Any]]:
    from pipeline.evaluation.scoring import evaluate
    from pipeline.settings import CoreConfig, PlannerConfig

    core = CoreConfig(planner=PlannerConfig(dense_weight=dense_weight))
    return _rows(evaluate(examples, store, mode=mode, threads=threads, core=core))  # type: ignore[arg-type]


def compare(baseline: list[dict[str, Any]], candidate: list[dict[str, Any]], label: str) -> list[dict[str, Any]]:
    from pipeline.evaluation.compare import compare_rows

    out = []
    for metric in METRICS:
        for d in compare_rows(baseline, candidate, metric, seed=0):
            out.append(
                {
                    "setting": label,
                    "metric": metric,
                    "case": d.case,
                    "n": d.n,
                    "bm25": d.baseline,
                    "hybrid": d.candidate,
                    "difference": d.difference,
                    "ci_low": d.low,
                    "ci_high": d.high,
                }
            )
    wrong = sum(r["wrong"] for r in candidate)
    invalid = sum(r["invalid"] for r in candidate)
    for row in out:
        row["wrong_entity_chunks"], row["invalid_ids"] = wrong, invalid
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=ROOT / ".scoperag" / "edgar-index")
    parser.add_argument("--traces", type=Path, default=ROOT / "datasets" / "edgar" / "traces")
    parser.add_argument("--weights", type=float, nargs="+", default=[0.5, 0.35, 0.25, 0.15])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from pipeline.evaluation.examples import load_example_set
    from pipeline.store import open_store

    store = open_store(args.index)
    load = os.getloadavg()
    report: dict[str, Any] = {"benchmark": "edgar-retrieval", "load_average_start": load, "weights": args.weights}
    selection: list[dict[str, Any]] = []
    train_dev = load_example_set(args.traces, split="train") + load_example_set(args.traces, split="dev")
    test = load_example_set(args.traces, split="test")
    log(f"{len(train_dev)} train+dev and {len(test)} test examples; load average {load[0]:.2f}")
    bm25 = score(train_dev, store, "bm25", 0.5, args.threads)
    candidates: dict[float, list[dict[str, Any]]] = {}
    for weight in args.weights:
        log(f"train+dev: hybrid, dense weight {weight}")
        hybrid = score(train_dev, store, "hybrid", weight, args.threads)
        candidates[weight] = compare(bm25, hybrid, f"dense {weight}")
        selection.extend(candidates[weight])
    admissible = [
        w
        for w, rows in candidates.items()
        if all(r["ci_low"] >= MARGIN for r in rows) and rows[0]["wrong_entity_chunks"] == 0
    ]
    pool = admissible or list(candidates)

    def mean_pages(weight: float) -> float:
        return next(
            r["hybrid"] for r in candidates[weight] if r["metric"] == "page_recall_at_10" and r["case"] == "all"
        )

    chosen = max(pool, key=lambda w: (mean_pages(w), -w))
    log(f"chosen dense weight {chosen} (admissible: {admissible})")
    checks: list[dict[str, Any]] = []
    bm25_test = score(test, store, "bm25", 0.5, args.threads)
    for weight in args.weights:
        log(f"test: hybrid, dense weight {weight}")
        checks.extend(compare(bm25_test, score(test, store, "hybrid", weight, args.threads), f"dense {weight}"))
    columns = [
        "setting",
        "metric",
        "case",
        "n",
        "bm25",
        "hybrid",
        "difference",
        "ci_low",
        "ci_high",
        "wrong_entity_chunks",
    ]
    print(table("train+dev: hybrid minus BM25, paired, 95% CI", selection, columns))
    print(table("test: hybrid minus BM25, paired, 95% CI", checks, columns))
    print(f"chosen on train+dev: dense weight {chosen}; admissible: {admissible}")
    report.update(
        {
            "selection": selection,
            "admissible": admissible,
            "chosen": chosen,
            "test": checks,
            "load_average_end": os.getloadavg(),
        }
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
