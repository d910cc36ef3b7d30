"""Typed examples of the Enterprise RAG Challenge round 1 (datasets/erc-round1): all 40 questions.

Run from the repository root (the data folder holds `erc-round1/`):

    python scripts/make_erc_set.py [--data ../shared/data]

Writes `datasets/erc-round1/corpus.toml` (each company whose report is present an entity owning its PDF, named
as `reports.csv` names it) and `datasets/erc-round1/traces/dev.jsonl`: every question of `answers.json` as a
no-scope example whose expected value is the organisers' first accepted answer, the others accepted too
(`also`): "N/A" is the absent value, a number is in units (a percentage in percent). A question whose only
accepted answer is "N/A" expects the program to say the reports do not state it. Tags say which quoted companies
have no report here (`missing:<name>`): the organisers' answers assumed all 20 reports, and 8 are not here, so
an answer that needs a missing report cannot be found (`needs_missing_report`). The set is development data:
its questions are read while rules are made; the program is also measured on reports and questions not here.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pipeline.evaluation.examples import ExpectedValue, LabelledExample, make_example, write_example_set  # noqa: E402
from pipeline.text import normalise  # noqa: E402

CORPUS = "erc-round1"
OUT = ROOT / "datasets" / "erc-round1"
QUOTED = re.compile(r'"([^"]+)"')
# Metrics the questions ask as a percentage (the organisers' answers are in percent: 15.63, -45.42).
PERCENT_METRICS = ("margin", "return on", "roa", "roe", "ratio")


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", normalise(name)).strip("-")[:60]


def read_reports(data: Path) -> list[dict[str, str]]:
    with (data / "erc-round1" / "reports.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def expected_of(question: str, schema: str, answers: list[Any]) -> ExpectedValue:
    """The first accepted answer as the expected value, the others in `also`."""
    percent = schema == "number" and any(m in question.casefold() for m in PERCENT_METRICS)
    values = [_one(schema, a, percent) for a in answers]
    return values[0].model_copy(update={"also": tuple(values[1:])})


def _one(schema: str, answer: Any, percent: bool) -> ExpectedValue:
    if isinstance(answer, str) and answer.strip().casefold() in ("n/a", "na"):
        return ExpectedValue(kind="number" if schema == "number" else "name", absent=True)
    if schema == "number":
        return ExpectedValue(kind="number", value=float(answer), unit="%" if percent else None)
    return ExpectedValue(kind="name", value=str(answer))


def _needs_missing(accepted: list[Any], schema: str, quoted: list[str], missing: list[str]) -> bool:
    """Whether every accepted answer needs a report that is not here: a figure of a missing company, or the name
    of one ("N/A" accepted needs none)."""
    if any(isinstance(a, str) and a.strip().casefold() in ("n/a", "na") for a in accepted):
        return False
    gone = {normalise(m) for m in missing}
    if schema == "number":
        return bool(quoted) and all(normalise(q) in gone for q in quoted)
    return all(normalise(str(a)) in gone for a in accepted)


def examples(data: Path, reports: list[dict[str, str]]) -> list[LabelledExample]:
    present = {normalise(r["name"]): r for r in reports if r["pdf_present"] == "True"}
    answers = json.loads((data / "erc-round1" / "answers.json").read_text(encoding="utf-8"))
    out = []
    for item in answers:
        question, schema, accepted = item["question"], item["schema"], item["answer"]
        quoted = QUOTED.findall(question)
        documents = [f"{present[normalise(q)]['sha1']}.pdf" for q in quoted if normalise(q) in present]
        missing = [q for q in quoted if normalise(q) not in present]
        only_absent = all(isinstance(a, str) and a.strip().casefold() in ("n/a", "na") for a in accepted)
        expected = expected_of(question, schema, accepted)
        tags = [f"schema:{schema}", *(f"missing:{slug(q)}" for q in missing)]
        if item.get("category"):
            tags.append(f"category:{item['category']}")
        if _needs_missing(accepted, schema, quoted, missing):
            tags.append("needs_missing_report")
        out.append(
            make_example(
                corpus=CORPUS,
                case="no_scope",
                question=question,
                gold_documents=() if only_absent else tuple(documents),
                expect_not_found=only_absent,
                expected_plan="two_step",
                expected_value=expected,
                tags=tuple(tags),
                split="dev",
            )
        )
    return out


def manifest(reports: list[dict[str, str]]) -> str:
    lines = [
        "# Generated by scripts/make_erc_set.py - edit the script, not this file.",
        "# Index with: scoperag index ../shared/data/erc-round1/pdfs --manifest datasets/erc-round1/corpus.toml \\",
        "#   --out .scoperag/erc-round1",
        'format = "scoperag-corpus/v1"',
        f'name = "{CORPUS}"',
        'entity_kind = "company"',
        "",
        "[vocabulary]",
        'generic_words = ["company", "companies", "corporation", "group", "report", "reports", "annual"]',
        "",
    ]
    for report in reports:
        if report["pdf_present"] != "True":
            continue
        lines += ["[[entities]]", f"slug = {json.dumps(slug(report['name']))}", f"name = {json.dumps(report['name'])}"]
        lines += ["aliases = []", ""]
    for report in reports:
        if report["pdf_present"] != "True":
            continue
        lines += ["[[documents]]", f"path = {json.dumps(report['sha1'] + '.pdf')}", 'type = "annual report"']
        lines += [f"title = {json.dumps(report['name'] + ' annual report')}"]
        lines += [f"entities = [{json.dumps(slug(report['name']))}]", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data", help="folder holding erc-round1/")
    args = parser.parse_args()
    reports = read_reports(args.data)
    (OUT / "traces").mkdir(parents=True, exist_ok=True)
    (OUT / "corpus.toml").write_text(manifest(reports) + "\n", encoding="utf-8")
    counts = write_example_set(OUT / "traces", examples(args.data, reports))
    print(f"examples per split: {counts}")


if __name__ == "__main__":
    main()
