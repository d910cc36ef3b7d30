"""How much a chooser among the floors' candidates could gain, measured without an LM: the shipped program made to
take its i-th candidate (i = 1..K) and the best of the first k counted per example (a perfect chooser).

    python benchmarks/choice_headroom.py spans --traces datasets/contracts-traces/dev.jsonl --index .scoperag/contracts
    python benchmarks/choice_headroom.py spans --traces datasets/sec-10q/traces --split dev --index .scoperag/sec-10q
    python benchmarks/choice_headroom.py figures --traces datasets/edgar/typed --split dev --index .scoperag/edgar-index

`spans`: the span floor's candidates (pipeline.answering.floors.span_choices), answer-line correctness; `figures`:
the figure reader's rows (pipeline.answering.figures.row_figures, distinct values), number correctness of the
typed number questions (chip case). Prints floor / best of k per k and how many examples a choice reaches.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

import pipeline.answering.figure_answers as figure_answers
import pipeline.answering.lines as lines
from pipeline.answering.figures import Figure, MetricAsk, row_figures
from pipeline.answering.floors import sentence_line, span_choices
from pipeline.evaluation.examples import load_example_set, of_kinds
from pipeline.evaluation.scoring import evaluate
from pipeline.evaluation.tables import results_frame
from pipeline.export.saving import load_export_with_settings
from pipeline.store import open_store
from pipeline.types import TableRow

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "pipeline" / "export" / "shipped"
K = 4


def span_pick(i: int) -> Callable[..., Any]:
    def pick(
        sentences: Sequence[Any], kind: Any, terms: Any, question: str, focus: Any = (), deadline: Any = None
    ) -> Any:
        chosen = span_choices(sentences, kind, terms, question, focus, deadline, limit=K)
        if not chosen:
            return sentence_line(sentences)
        return chosen[i] if i < len(chosen) else None

    return pick


def figure_pick(i: int) -> Callable[..., Figure | None]:
    def pick(
        ask: MetricAsk,
        rows_by_document: Mapping[str, Sequence[TableRow]],
        matching_documents: frozenset[str] = frozenset(),
        document_rank: Mapping[str, int] | None = None,
    ) -> Figure | None:
        rank = document_rank or {}
        found = []
        for document, rows in rows_by_document.items():
            for order, figure in enumerate(row_figures(ask, document, rows, document in matching_documents)):
                found.append(((-round(figure.label_score, 3), float(rank.get(document, len(rank))), order), figure))
        distinct: list[Figure] = []
        for _, figure in sorted(found, key=lambda f: f[0]):
            if all(figure.value != d.value for d in distinct):
                distinct.append(figure)
        return distinct[i] if i < len(distinct) else None

    return pick


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("candidates", choices=["spans", "figures"])
    parser.add_argument("--traces", type=Path, required=True)
    parser.add_argument("--split", default=None)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    store = open_store(args.index)
    program, _ = load_export_with_settings(SHIPPED, store)
    examples = load_example_set(args.traces, args.split, None)
    metric = "answer_line_correct"
    if args.candidates == "figures":
        examples, metric = of_kinds(load_example_set(args.traces, args.split, ["chip"]), ["number"]), "number_correct"
    columns = []
    for i in range(K):
        if args.candidates == "spans":
            setattr(lines, "span_line", span_pick(i))  # noqa: B010 (the floor this run replaces)
        else:
            setattr(figure_answers, "find_figure", figure_pick(i))  # noqa: B010 (the reader this run replaces)
        frame = results_frame(evaluate(examples, store, program=program, threads=args.threads))
        columns.append(frame.set_index("id")[metric])
    picks = pd.concat(columns, axis=1, keys=range(K))
    floor = picks[0].dropna()
    table: dict[str, Any] = {"n": int(floor.size), "metric": metric, "floor": round(float(floor.mean()), 3)}
    print(f"{args.candidates}, {args.traces} {args.split or ''}: {metric}, n = {floor.size}, floor {floor.mean():.3f}")
    for k in range(2, K + 1):
        best = picks.loc[floor.index, list(range(k))].max(axis=1)
        reached = int((best > floor).sum())
        table[f"best_of_{k}"] = {"value": round(float(best.mean()), 3), "reached": reached}
        print(f"best of the first {k}: {best.mean():.3f} ({reached} examples a choice reaches)")
    if args.json:
        args.json.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
