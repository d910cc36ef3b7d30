"""Ownership and entity scope on labelled trace sets, retrieval only (no LM).

For each (index, traces) pair it measures:
- owned documents missing from their owner's scope (pipeline.evaluation.ownership: every document the
  catalog gives an entity, read in that entity's property scope through the tools `ask` uses);
- wrong-entity chunks in any top 10 (a forbidden or out-of-scope document among the chunks) and
  crashes (an example whose retrieval raised), over every example;
- gold-document recall@10 of the no-scope questions that name a recognised entity, as asked and in
  that entity's scope (a property scope for one entity; the entities' documents as a chip for several).

    .venv/bin/python benchmarks/entity_scope.py \\
        --set contracts .scoperag/contracts datasets/contracts-traces/dev.jsonl \\
        --set sec-10q .scoperag/sec-10q datasets/sec-10q/traces --json benchmarks/results/entity-scope.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.evaluation.examples import ExampleScope, LabelledExample, load_example_set, make_example
from pipeline.evaluation.labels import resolve_example
from pipeline.evaluation.ownership import ownership_gaps
from pipeline.evaluation.scoring import score_retrieval
from pipeline.intake.planner import plan_in_scope
from pipeline.store import Store, open_store
from pipeline.types import SearchMode


def named_entities(store: Store, example: LabelledExample) -> tuple[str, ...]:
    """The entities a no-scope question names, as intake finds them (() when it asks back first)."""
    doc_types = frozenset(d.doc_type for d in store.catalog.documents.values())
    _, plan, scope = plan_in_scope(example.question, resolve_example(example, store).scope, store, doc_types)
    return scope.implicit_entity_ids if plan.retrieval_rounds else ()


def in_entity_scope(store: Store, example: LabelledExample, entity_ids: tuple[str, ...]) -> LabelledExample:
    """The same question in the named entity's scope (several: their documents, as a chip)."""
    if len(entity_ids) == 1:
        scope = ExampleScope(property=store.catalog.entities[entity_ids[0]].slug)
    else:
        owned = dict.fromkeys(d for e in entity_ids for d in store.entity_scope(e))
        scope = ExampleScope(document_ids=tuple(owned))
    case = "property" if scope.property else "chip"
    fields = example.model_dump(exclude={"id", "scope", "case", "expected_plan"})
    return make_example(**{**fields, "case": case, "scope": scope.model_dump()})


def measure(name: str, index: Path, traces: Path, mode: SearchMode) -> dict[str, Any]:
    store = open_store(index)
    examples = load_example_set(traces)
    started = time.perf_counter()
    gaps = ownership_gaps(store)
    wrong = crashes = 0
    crashed: list[str] = []
    for example in examples:
        try:
            result = score_retrieval(store, resolve_example(example, store), mode)
            wrong += result.scores.wrong_property_citations
        except Exception as exc:
            crashes += 1
            crashed.append(f"{example.id}: {type(exc).__name__}: {exc}"[:300])
    asked, scoped = [], []
    for example in examples:
        if example.case not in ("no_scope", "wrong_property") or example.scope != ExampleScope():
            continue
        if not example.gold_documents:
            continue
        entity_ids = named_entities(store, example)
        if not entity_ids:
            continue
        as_asked = score_retrieval(store, resolve_example(example, store), mode).scores.recall_at_10
        other = in_entity_scope(store, example, entity_ids)
        in_scope = score_retrieval(store, resolve_example(other, store), mode).scores.recall_at_10
        if as_asked is not None and in_scope is not None:
            asked.append(as_asked)
            scoped.append(in_scope)
    n = len(asked)
    return {
        "set": name,
        "mode": mode,
        "examples": len(examples),
        "entities": len(store.catalog.entities),
        "owned_documents": sum(len(store.entity_document_ids(e)) for e in store.catalog.entities),
        "owned_missing_from_owner_scope": len(gaps),
        "gaps": [f"{g.entity}: {g.filename} ({g.reason})" for g in gaps][:20],
        "wrong_entity_chunks_top10": wrong,
        "crashes": crashes,
        "crashed": crashed[:10],
        "named_no_scope_questions": n,
        "recall10_no_scope": round(sum(asked) / n, 4) if n else None,
        "recall10_entity_scope": round(sum(scoped) / n, 4) if n else None,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", nargs=3, action="append", metavar=("NAME", "INDEX", "TRACES"), required=True)
    parser.add_argument("--mode", action="append", choices=["hybrid", "bm25", "dense"])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    load = os.getloadavg()
    rows = [
        measure(name, Path(index), Path(traces), mode)
        for name, index, traces in args.set
        for mode in (args.mode or ["hybrid"])
    ]
    print(f"load average at start {load[0]:.1f}, at end {os.getloadavg()[0]:.1f}")
    header = (
        "set", "mode", "examples", "owned_documents", "owned_missing_from_owner_scope",
        "wrong_entity_chunks_top10", "crashes", "named_no_scope_questions", "recall10_no_scope",
        "recall10_entity_scope",
    )  # fmt: skip
    print(" | ".join(header))
    for row in rows:
        print(" | ".join(str(row[h]) for h in header))
        for line in (*row["gaps"], *row["crashed"]):
            print(f"    {line}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"load": load, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
