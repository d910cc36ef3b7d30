"""Write datasets/sec-10q/traces/{train,dev,test}.jsonl and its card from the SEC 10-Q question set.

Run from the repository root:

    python scripts/make_sec_traces.py                 # facts checked against the filings' text
    python scripts/make_sec_traces.py --no-verify     # facts as the reviewed answers state them

The output depends only on qna_data.csv and the filings: splits come from a hash of each
question, so a rerun writes the same files.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from pipeline.ingest.readers import read_source
from pipeline.metrics import number_values
from pipeline.sec_traces import SEC_DOCUMENTS, read_questions, sec_examples, unverified_facts
from pipeline.traces import LabelledExample, counts_table, write_trace_set

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "sec-10q"
DEFAULT_OUT = ROOT / "datasets" / "sec-10q" / "traces"


def filing_texts(docs_dir: Path) -> dict[str, str]:
    """Every known filing's text (pages joined), read the way the index reads it."""
    return {name: "\n".join(read_source(docs_dir / name, name).pages) for name in SEC_DOCUMENTS}


def derived_facts(examples: Sequence[LabelledExample], texts: dict[str, str]) -> list[tuple[str, str]]:
    """(question, fact) for each chip example's fact whose numbers are not in its filings as written."""
    numbers = {d: number_values(t) for d, t in texts.items()}
    out = []
    for e in examples:
        if e.case == "chip":
            known = set().union(*(numbers[d] for d in e.gold_documents))
            out += [(e.question, f) for f in unverified_facts(e.answer_facts, known)]
    return out


def card(examples: Sequence[LabelledExample], questions: int, derived: list[tuple[str, str]] | None) -> str:
    """The dataset card: what the examples are, counts per case and split, how to regenerate."""
    chips = [e for e in examples if e.case == "chip"]
    with_facts = sum(1 for e in chips if e.answer_facts)
    n_facts = sum(len(e.answer_facts) for e in chips)
    if derived is None:
        fact_note = ["They were not checked against the filings (generated with `--no-verify`)."]
    else:
        fact_note = [
            "Facts whose numbers occur in the text of the gold filings (pypdf, millions and billions",
            "equated) are preferred to figures that do not; one of those is kept only when the answer has",
            f"no more than 6 facts. {len(derived)} of {n_facts} facts are not in the filings as written: sums",
            "and ratios the reviewer computed, or rounded figures (an answer must state them as written to",
            "score on them):",
            "",
            *[f"- {fact}: {question}" for question, fact in derived],
        ]
    lines = [
        "# SEC 10-Q labelled traces",
        "",
        f"Labelled traces (`pipeline.traces.LabelledExample`, JSONL) built from the {questions} reviewed questions",
        "of `../shared/data/sec-10q/qna_data.csv` over the 20 filings in `../shared/data/sec-10q/docs`",
        "(five companies, four quarters; entities as in `datasets/sec-10q/corpus.toml`). Documents are named",
        'by file name ("2023 Q3 AAPL.pdf"), scopes by company slug ("aapl").',
        "",
        "## Counts",
        "",
        *counts_table(examples),
        "",
        "## What each question becomes",
        "",
        "- `chip`: scope = the filings the `Source Docs` glob names (= gold documents).",
        "- `property`: scope = the owning company (every question here is about one company).",
        "- `no_scope`: no scope; two-step plan expected.",
        "- `wrong_property` (two per question, tags `wrong_entity`, `not_in_scope`): the same question over",
        "  another company's filings, as a chip of that company's filings for the same quarters",
        "  (`scope:chip`) or as that company's scope (`scope:property`). The answer is not in scope:",
        "  `expect_not_found`, no gold documents, and `forbidden_documents` = the true filings plus the",
        "  filings in scope (they are about another company, so citing them answers the wrong question).",
        "",
        "Answerable examples list every filing of the other four companies as `forbidden_documents`.",
        f"Answer facts (at most 6; {with_facts} of {questions} questions have any) come from the reviewed answers:",
        "amounts, percentages and numbers with units first, then period dates. Questions without figures",
        "(risk factors, qualitative changes) have no facts; they are scored on documents and citations.",
        *fact_note,
        "",
        "Tags: `multi_doc`, `single_doc_single_chunk`, `single_doc_multi_chunk` (CSV `Question Type`),",
        "`chunk:table` / `chunk:text` (CSV `Source Chunk Type`), `wrong_entity`, `not_in_scope`,",
        "`scope:none` / `scope:chip` / `scope:property` (the scope asked in).",
        "",
        "## Splits",
        "",
        "Fixed on disk. A question goes to train / dev / test by sha256 of its text (60/20/20 buckets), so",
        "all five variants of a question share a split and adding questions never moves existing ones.",
        "",
        "## Regenerate",
        "",
        "```",
        "python scripts/make_sec_traces.py            # from the repository root",
        "```",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, default=SHARED / "qna_data.csv")
    parser.add_argument("--docs", type=Path, default=SHARED / "docs", help="the 20 filings (for fact checks)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--no-verify", action="store_true", help="do not check answer facts against the filings")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if not args.no_verify:
        print(f"reading the {len(SEC_DOCUMENTS)} filings in {args.docs} (a few minutes) ...")
    texts = None if args.no_verify else filing_texts(args.docs)
    examples = sec_examples(args.csv, texts)
    questions = len(read_questions(args.csv))
    for split, count in write_trace_set(args.out, examples).items():
        print(f"{split}: {count} examples")
    derived = derived_facts(examples, texts) if texts is not None else None
    (args.out / "README.md").write_text(card(examples, questions, derived), encoding="utf-8")
    print(f"wrote {len(examples)} examples from {questions} questions to {args.out}")


if __name__ == "__main__":
    main()
