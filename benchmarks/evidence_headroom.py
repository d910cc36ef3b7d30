"""Where the facts of wrong answers are, measured without an LM: of the answerable examples the shipped program
answers wrong (answer-line correctness 0), how many have a gold fact in a chunk the score step kept (a chooser of
sentences or spans could reach it), in a chunk retrieved but not kept (a better scorer could), or in no retrieved
chunk (retrieval missed it: no learned step after retrieval can help).

    python benchmarks/evidence_headroom.py --traces datasets/sec-10q/traces --split dev --index .scoperag/sec-10q

Facts that are dates alone ("September 30, 2023") are left out of the search: every table header states one.
Prints one row per case and writes the counts with --json.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import json
from collections import Counter
from collections.abc import Sequence

from pipeline.evaluation.examples import CASES, LabelledExample, load_example_set
from pipeline.evaluation.labels import resolve_example
from pipeline.evaluation.metrics import fact_present
from pipeline.evaluation.scoring import score_prediction
from pipeline.export.choice import SHIPPED_PROGRAM
from pipeline.export.saving import load_export_with_settings
from pipeline.program.events import Completed
from pipeline.program.trace import QuestionTrace
from pipeline.store import Store, open_store
from pipeline.values.periods import find_dates

PLACES = ("right", "kept", "retrieved", "missed")


def _date_alone(fact: str) -> bool:
    """Whether `fact` is a written date and nothing else ("September 30, 2023")."""
    text = fact.strip()
    return any(start == 0 and end == len(text) for start, end, _ in find_dates(text))


def place(example: LabelledExample, trace: QuestionTrace, store: Store) -> str:
    """Where the example's first findable fact is: "kept", "retrieved" (not kept) or "missed"."""
    facts = [f for f in example.answer_facts if not _date_alone(f)]
    chunks = [c for sq in trace.sub_questions for c in sq.chunks]
    kept = {c.row for c in chunks if c.kept}
    texts = {c.row: c.text for c in store.catalog.chunks([c.row for c in chunks])}
    holding = {row for row, text in texts.items() if any(fact_present(f, text) for f in facts)}
    if holding & kept:
        return "kept"
    return "retrieved" if holding else "missed"


def classify(examples: Sequence[LabelledExample], store: Store) -> Counter[tuple[str, str]]:
    program, _ = load_export_with_settings(SHIPPED_PROGRAM, store)
    counts: Counter[tuple[str, str]] = Counter()
    for example in examples:
        resolved = resolve_example(example, store)
        last = None
        for event in program.stream(example.question, resolved.scope):
            last = event
        if not isinstance(last, Completed) or last.trace is None:
            counts[(example.case, "missed")] += 1
            continue
        scored = score_prediction(
            store, resolved, answer=last.answer, sections=last.sections, value=last.value, trace=last.trace
        )
        right = scored.scores.answer_line_correct == 1.0
        counts[(example.case, "right" if right else place(example, last.trace, store))] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", type=Path, required=True)
    parser.add_argument("--split", default=None)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--cases", nargs="*", default=list(CASES))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    store = open_store(args.index)
    examples = [
        e for e in load_example_set(args.traces, args.split, args.cases) if e.answer_facts and not e.expect_not_found
    ]
    counts = classify(examples, store)
    print(f"{args.traces} {args.split or ''}: answerable examples, where the gold fact of a wrong answer is")
    print(f"{'case':<16}" + "".join(f"{p:>11}" for p in PLACES) + f"{'n':>6}")
    table: dict[str, dict[str, int]] = {}
    for case in [*args.cases, "all"]:
        row = {p: sum(n for (c, q), n in counts.items() if q == p and case in (c, "all")) for p in PLACES}
        table[case] = row
        print(f"{case:<16}" + "".join(f"{row[p]:>11}" for p in PLACES) + f"{sum(row.values()):>6}")
    if args.json:
        args.json.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
