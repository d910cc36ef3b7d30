"""Typed examples of hand-labelled questions in the forms of the Enterprise RAG Challenge round 2, over the 12
annual reports of round 1 that are present (datasets/erc-forms).

Run from the repository root:

    python scripts/make_erc_forms_set.py

Reads `datasets/erc-forms/labels.jsonl` (one hand label a line: the company as `reports.csv` names it, its
report, the question's form and schema, the answer, the pages and a quote that state it, and how it was decided;
see the dataset card) and writes `datasets/erc-forms/{train,dev,test}.jsonl`. The examples search the index of
`datasets/erc-round1/corpus.toml` (corpus "erc-round1"):

- a question about one company is a `property` example scoped to that company's entity; a comparison across
  companies is a `no_scope` example (it quotes the companies);
- yes/no events expect a boolean, leadership questions a list of names (or the absent value for 'N/A'), metrics
  a number in units with its currency (a percentage in percent), comparisons the winner's name;
- gold documents and pages are the labelled ones when the answer is stated; an 'N/A' answer expects "not found";
- a label whose note says "Doubtful" (a careful reader could decide otherwise) is tagged `doubtful`;
- companies are split by the sha1 of their report: sorted, alternately dev and test, so dev and test share no
  company (a comparison only quotes companies of one split); train is empty.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pipeline.evaluation.examples import (  # noqa: E402
    ExpectedValue,
    GoldPage,
    LabelledExample,
    Split,
    make_example,
    write_example_set,
)
from pipeline.text import normalise  # noqa: E402

CORPUS = "erc-round1"
OUT = ROOT / "datasets" / "erc-forms"
LABELS = OUT / "labels.jsonl"
SCHEMAS = {"boolean", "names", "number", "name"}
ABSENT = ("n/a", "na")


def slug(name: str) -> str:
    """The entity slug of a company, as scripts/make_erc_set.py names it in datasets/erc-round1/corpus.toml."""
    return re.sub(r"[^a-z0-9]+", "-", normalise(name)).strip("-")[:60]


def read_labels(path: Path = LABELS) -> list[dict[str, Any]]:
    """The hand labels, one JSON object a line (blank lines skipped)."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def is_absent(answer: Any) -> bool:
    return isinstance(answer, str) and answer.strip().casefold() in ABSENT


def company_splits(labels: Sequence[dict[str, Any]]) -> dict[str, Split]:
    """Each company's split: companies sorted by their report's sha1, alternately dev and test."""
    documents = {label["company"]: label["document"] for label in labels if label.get("company")}
    ordered = sorted(documents, key=lambda company: documents[company])
    return {company: ("dev" if i % 2 == 0 else "test") for i, company in enumerate(ordered)}


def expected_of(label: dict[str, Any]) -> ExpectedValue:
    """The typed answer a label expects."""
    schema, answer = label["schema"], label["answer"]
    if schema not in SCHEMAS:
        raise ValueError(f"unknown schema {schema!r} in {label['question']!r}")
    if schema == "boolean":
        return ExpectedValue(kind="boolean", value=bool(answer))
    if schema == "names":
        if is_absent(answer):
            return ExpectedValue(kind="names", absent=True)
        return ExpectedValue(kind="names", value=[str(name) for name in answer])
    if schema == "name":
        return ExpectedValue(kind="name", value=str(answer))
    if is_absent(answer):
        return ExpectedValue(kind="number", absent=True)
    currency, unit = label.get("currency"), label.get("unit")
    also = tuple(ExpectedValue(kind="number", value=v, currency=currency, unit=unit) for v in label.get("also", ()))
    return ExpectedValue(kind="number", value=answer, currency=currency, unit=unit, also=also)


def doubtful(label: dict[str, Any]) -> tuple[str, ...]:
    """The tag of a label its note calls doubtful (a careful reader could answer otherwise)."""
    return ("doubtful",) if "Doubtful" in label.get("note", "") else ()


def example_of(label: dict[str, Any], splits: dict[str, Split]) -> LabelledExample:
    """The labelled example of one hand label."""
    form, expected = label["form"], expected_of(label)
    absent = expected.absent
    if label.get("company"):
        company, document = label["company"], label["document"]
        stated = not absent and not (label["schema"] == "boolean" and label["answer"] is False)
        pages = tuple(GoldPage(document=document, page=p) for p in label["pages"]) if stated else ()
        return make_example(
            corpus=CORPUS,
            case="property",
            question=label["question"],
            scope={"property": slug(company)},
            gold_documents=(document,) if stated else (),
            gold_pages=pages,
            expect_not_found=absent,
            expected_plan="one_step",
            expected_value=expected,
            tags=(f"form:{form}", f"company:{slug(company)}", "scope:property", *doubtful(label)),
            split=splits[company],
        )
    companies = label["companies"]
    split = {splits[c] for c in companies}
    if len(split) != 1:
        raise ValueError(f"a comparison quotes companies of both splits: {label['question']!r}")
    gold = tuple(GoldPage(document=g["document"], page=g["page"]) for g in label.get("gold", ()))
    return make_example(
        corpus=CORPUS,
        case="no_scope",
        question=label["question"],
        gold_documents=tuple(dict.fromkeys(g.document for g in gold)),
        gold_pages=gold,
        expected_plan="two_step",
        expected_value=expected,
        tags=(f"form:{form}", *(f"company:{slug(c)}" for c in companies), "scope:none", *doubtful(label)),
        split=split.pop(),
    )


def examples(labels: Sequence[dict[str, Any]]) -> list[LabelledExample]:
    """Every label as a labelled example, in the labels' order."""
    splits = company_splits(labels)
    return [example_of(label, splits) for label in labels]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labels", type=Path, default=LABELS, help="the hand labels (JSONL)")
    args = parser.parse_args()
    counts = write_example_set(OUT, examples(read_labels(args.labels)))
    print(f"examples per split: {counts}")


if __name__ == "__main__":
    main()
