"""The program shipped before answer lines against today's, on the same labelled examples, as a reader scores them.

    python benchmarks/answers_then_and_now.py --old OLD.jsonl --new EXAMPLES.csv \
        [--traces datasets/demo-traces --split test --index .scoperag/index] [--json PATH]

OLD.jsonl holds the old program's answers, one JSON line per example (`id`, `sections` with their `bullets`
and `sources`, `lm_calls`, `tokens`, `seconds`), as `scoperag ask --json` of that version gave them (the
script that made them is in benchmarks/README.md). Its first bullet counts as its answer line and the
others as its evidence; each quote's page is the one its inline citation names. EXAMPLES.csv is
`scoperag evaluate --out`'s per-example table of today's program. Both are scored with today's reader
metrics (pipeline.evaluation.metrics.reader_metrics) and compared paired by example id, seeded bootstrap
95% CI (pipeline.evaluation.compare).
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
import re
import statistics
from typing import Any

from pipeline.evaluation.compare import compare_rows, overall
from pipeline.evaluation.examples import load_example_set
from pipeline.evaluation.labels import resolve_example
from pipeline.evaluation.metrics import ReadSection, answer_line_correct, reader_metrics
from pipeline.guards.sanitise import strip_inline_citations
from pipeline.store import open_store

COMPARED = (
    "answer_line_correct",
    "fact_recall",
    "evidence_precision",
    "abstention",
    "words_per_section",
    "quotes_per_section",
)
_LABEL = re.compile(r"\[([^\[\]]+?), page (\d+)\]")


def old_sections(sections: list[dict[str, Any]]) -> list[ReadSection]:
    """The old sections as a reader reads them: the first bullet the answer line, the rest its evidence."""
    read = []
    for section in sections:
        bullets = list(section.get("bullets") or ())
        sources = {(s["filename"], s["page"]): s["document_id"] for s in section.get("sources") or ()}
        found = section.get("status") == "answered" and bool(sources)
        quotes = []
        for bullet in bullets[1:]:
            label = _LABEL.search(bullet)
            key = (label.group(1), int(label.group(2))) if label else None
            if key in sources:
                quotes.append((strip_inline_citations(bullet), sources[key], key[1]))
        read.append(ReadSection(strip_inline_citations(bullets[0]) if bullets else "", tuple(quotes), found))
    return read


def _id(row: dict[str, Any]) -> str:
    return str(row["id"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("--traces", default="datasets/demo-traces")
    parser.add_argument("--split", default="test")
    parser.add_argument("--index", default=".scoperag/index")
    parser.add_argument("--json", help="write the table and comparisons to this file")
    args = parser.parse_args()

    import pandas as pd

    store = open_store(Path(args.index))
    units = store.catalog.vocabulary.unit_words
    examples = {e.id: e for e in load_example_set(Path(args.traces), args.split)}
    old_rows = []
    for line in Path(args.old).read_text(encoding="utf-8").splitlines():
        recorded = json.loads(line)
        example = examples.get(recorded["id"])
        if example is None or "sections" not in recorded:
            continue
        resolved = resolve_example(example, store)
        read = old_sections(recorded["sections"])
        row: dict[str, Any] = {"id": example.id, "case": example.case}
        row.update(reader_metrics(read, example.answer_facts, resolved.gold_pages, example.expect_not_found, units))
        # the same line read without the 40-word limit: did the first bullet hold a fact at all?
        unlimited = [dataclasses.replace(s, answer=" ".join(s.answer.split()[:40])) for s in read]
        row["first_bullet_holds_fact"] = (
            None if example.expect_not_found else answer_line_correct(example.answer_facts, unlimited, units)
        )
        row.update(lm_calls=recorded.get("lm_calls"), tokens=recorded.get("tokens"), seconds=recorded["seconds"])
        old_rows.append(row)
    new_frame = pd.read_csv(args.new)
    new_rows = [{k: (None if pd.isna(v) else v) for k, v in row.items()} for row in new_frame.to_dict(orient="records")]
    ids = {r["id"] for r in old_rows} & {r["id"] for r in new_rows}
    old_rows = [r for r in old_rows if r["id"] in ids]
    new_rows = [r for r in new_rows if r["id"] in ids]

    def mean(rows: list[dict[str, Any]], name: str) -> float | None:
        values = [r[name] for r in rows if isinstance(r.get(name), int | float)]
        return round(statistics.fmean(values), 4) if values else None

    summary = {
        "then": {name: mean(old_rows, name) for name in (*COMPARED, "first_bullet_holds_fact", "lm_calls", "tokens")},
        "now": {name: mean(new_rows, name) for name in (*COMPARED, "lm_calls", "tokens")},
    }
    print(f"{len(ids)} examples paired ({args.traces}, {args.split})")
    print(f"{'metric':<26} {'then':>8} {'now':>8}   now - then [95% CI] (n)")
    comparisons = {}
    for name in COMPARED:
        total = overall(compare_rows(old_rows, new_rows, name, seed=0))
        comparisons[name] = dataclasses.asdict(total)
        print(
            f"{name:<26} {summary['then'][name]!s:>8} {summary['now'][name]!s:>8}   "
            f"{total.difference:+.3f} [{total.low:+.3f}, {total.high:+.3f}] ({total.n})"
        )
    print(f"{'first bullet holds a fact':<26} {summary['then']['first_bullet_holds_fact']!s:>8}")
    print(f"{'LM calls per question':<26} {summary['then']['lm_calls']!s:>8} {summary['now']['lm_calls']!s:>8}")
    if args.json:
        paired = [
            {"id": old["id"], "case": old["case"], **{f"{n}_then": old.get(n) for n in COMPARED}}
            | {f"{n}_now": new.get(n) for n in COMPARED}
            for old, new in zip(sorted(old_rows, key=_id), sorted(new_rows, key=_id), strict=True)
        ]
        out = {"summary": summary, "comparisons": comparisons, "examples": paired}
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
