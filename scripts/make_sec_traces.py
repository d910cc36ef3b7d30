"""Write datasets/sec-10q/traces/{train,dev,test}.jsonl and its card from the SEC 10-Q question set.

Run from the repository root:

    python scripts/make_sec_traces.py                 # facts checked against the filings' text
    python scripts/make_sec_traces.py --no-verify     # facts as the reviewed answers state them
    python scripts/make_sec_traces.py --index .scoperag/sec-10q   # absent facts checked in its chunks too

The output depends only on qna_data.csv and the filings: splits come from a hash of each
question, so a rerun writes the same files.

Labelled traces from the SEC 10-Q question set (qna_data.csv) in all four scope cases.

Each reviewed question becomes a chip example (its source filings selected), a property
example (the owning company as scope), a no-scope example and two wrong-entity examples (the
same question asked over another company's filings: chip and company scope) that expect
"not found". Answer facts are the amounts, percentages and period dates of the reviewed
answer. Splits are fixed by hashing the question, so every variant of a question lands in
the same split and no question leaks from train into dev or test.

Beside the question set: computed-figure questions (scripts/sec_computed.py: margins, ratios, sums,
changes and averages worked out from the statements of operations, every operand read from the
filings and every answer recomputed) and unanswerable-in-scope questions (scripts/sec_absent.py: the
right filing or company in scope, the fact asked stated in none of its filings, checked).
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import json
import logging
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # scripts/ is no package: its builders import each other by name

from absence import index_chunks  # noqa: E402
from sec_absent import absent_examples  # noqa: E402
from sec_answer_facts import MAX_FACT_PAGES, MIN_LOCATING_DIGITS, extract_facts, gold_pages, unverified_facts  # noqa: E402
from sec_computed import computed_examples  # noqa: E402
from sec_filings import CORPUS, SEC_DOCUMENTS, names_company, other_tickers, split_of, swap_company, ticker_of  # noqa: E402

from pipeline.errors import ExamplesError  # noqa: E402
from pipeline.evaluation.examples import LabelledExample, counts_table, make_example, write_example_set  # noqa: E402
from pipeline.evaluation.metrics import number_values  # noqa: E402
from pipeline.files import write_file_atomic  # noqa: E402
from pipeline.store.reading import read_source  # noqa: E402

log = logging.getLogger(__name__)

CSV_COLUMNS = ("Question", "Source Docs", "Question Type", "Source Chunk Type", "Answer")

_QUESTION_TYPE_TAGS = {
    "Multi-Doc RAG": "multi_doc",
    "Single-Doc Single-Chunk RAG": "single_doc_single_chunk",
    "Single-Doc Multi-Chunk RAG": "single_doc_multi_chunk",
}


@dataclass(frozen=True)
class SecQuestion:
    """One row of qna_data.csv with its source glob resolved to filings."""

    row: int
    question: str
    source_glob: str
    question_type: str
    chunk_type: str
    answer: str
    documents: tuple[str, ...]

    @property
    def tickers(self) -> tuple[str, ...]:
        """The companies whose filings answer the question, sorted."""
        return tuple(sorted({ticker_of(d) for d in self.documents}))


def resolve_glob(pattern: str, documents: Sequence[str] = SEC_DOCUMENTS) -> tuple[str, ...]:
    """The known filings a Source Docs glob names (sorted); ExamplesError when it names none."""
    matched = tuple(sorted(d for d in documents if fnmatch.fnmatchcase(d, pattern.strip())))
    if not matched:
        raise ExamplesError(f"source glob {pattern!r} matches none of the {len(documents)} known filings")
    return matched


def read_questions(csv_path: Path, documents: Sequence[str] = SEC_DOCUMENTS) -> list[SecQuestion]:
    """Every row of qna_data.csv (BOM tolerated); ExamplesError names a bad row."""
    with csv_path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ExamplesError(f"{csv_path}: missing columns {missing}")
        rows = list(reader)
    out: list[SecQuestion] = []
    for number, row in enumerate(rows, start=2):  # line 1 is the header
        question = " ".join(row["Question"].split())
        if not question:
            raise ExamplesError(f"{csv_path}:{number}: empty question")
        try:
            docs = resolve_glob(row["Source Docs"], documents)
        except ExamplesError as exc:
            raise ExamplesError(f"{csv_path}:{number}: {exc}") from exc
        out.append(
            SecQuestion(
                number,
                question,
                row["Source Docs"].strip(),
                row["Question Type"].strip(),
                row["Source Chunk Type"].strip(),
                row["Answer"],
                docs,
            )
        )
    return out


def question_examples(
    q: SecQuestion,
    pages: Mapping[str, Sequence[AbstractSet[str]]] | None = None,
    documents: Sequence[str] = SEC_DOCUMENTS,
) -> list[LabelledExample]:
    """The chip, property, no-scope and wrong-entity examples of one question.

    `pages` maps each filing to the number values of each of its pages; given, it verifies the facts
    and locates the gold pages.
    """
    known = set().union(*(n for d in q.documents for n in pages[d])) if pages is not None else None
    facts = extract_facts(q.answer, known=known)
    tickers = q.tickers
    other_docs = tuple(d for d in documents if ticker_of(d) not in tickers)
    tags = (_QUESTION_TYPE_TAGS.get(q.question_type, q.question_type), f"chunk:{q.chunk_type.lower()}")
    split = split_of(q.question)
    common = {"corpus": CORPUS, "question": q.question, "split": split}
    answerable = {
        **common,
        "gold_documents": q.documents,
        "gold_pages": gold_pages(facts, q.documents, pages) if pages is not None else (),
        "answer_facts": facts,
        "forbidden_documents": other_docs,
    }
    out = [
        make_example(
            case="chip",
            scope={"document_ids": q.documents},
            expected_plan="one_step",
            tags=(*tags, "scope:chip"),
            **answerable,
        ),
        make_example(case="no_scope", expected_plan="two_step", tags=(*tags, "scope:none"), **answerable),
    ]
    if len(tickers) == 1:
        own = tickers[0]
        out.insert(
            1,
            make_example(
                case="property",
                scope={"property": own.lower()},
                expected_plan="one_step",
                tags=(*tags, "scope:property"),
                **answerable,
            ),
        )
        if names_company(q.question, own):
            chip_ticker, property_ticker = other_tickers(q.question, tickers)
            chip = swap_company(q.documents, chip_ticker, documents)
            scoped = tuple(d for d in documents if ticker_of(d) == property_ticker)
            wrong = {**common, "expect_not_found": True, "expected_plan": "one_step"}
            out.append(
                make_example(
                    case="wrong_property",
                    scope={"document_ids": chip},
                    forbidden_documents=tuple(sorted({*q.documents, *chip})),
                    tags=(*tags, "wrong_entity", "not_in_scope", "scope:chip"),
                    **wrong,
                )
            )
            out.append(
                make_example(
                    case="wrong_property",
                    scope={"property": property_ticker.lower()},
                    forbidden_documents=tuple(sorted({*q.documents, *scoped})),
                    tags=(*tags, "wrong_entity", "not_in_scope", "scope:property"),
                    **wrong,
                )
            )
        else:
            log.warning("row %d does not name its company; no wrong-entity variants: %s", q.row, q.question)
    return out


def sec_examples(
    csv_path: Path, texts: Mapping[str, Sequence[str]] | None = None, documents: Sequence[str] = SEC_DOCUMENTS
) -> list[LabelledExample]:
    """Every example of qna_data.csv, in row order; `texts` (filing -> its pages' text) verifies answer
    facts and locates gold pages."""
    pages = {d: [number_values(page) for page in t] for d, t in texts.items()} if texts is not None else None
    examples: list[LabelledExample] = []
    seen: dict[str, int] = {}
    for q in read_questions(csv_path, documents):
        for example in question_examples(q, pages, documents):
            if example.id in seen:
                log.warning("row %d repeats the example of row %d (%s); kept once", q.row, seen[example.id], q.question)
                continue
            seen[example.id] = q.row
            examples.append(example)
    return examples


ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "sec-10q"
DEFAULT_OUT = ROOT / "datasets" / "sec-10q" / "traces"


def filing_texts(docs_dir: Path) -> dict[str, tuple[str, ...]]:
    """Every known filing's pages, read the way the index reads them."""
    return {name: read_source(docs_dir / name, name).pages for name in SEC_DOCUMENTS}


FIGURES_FILE = "computed_figures.jsonl"


@dataclass(frozen=True)
class AddedExamples:
    """The examples written beside the question set's: computed figures (with, per question, the record of
    its operands and expression) and facts absent from the scope."""

    computed: tuple[LabelledExample, ...]
    figures: tuple[dict[str, Any], ...]
    absent: tuple[LabelledExample, ...]

    @property
    def all(self) -> tuple[LabelledExample, ...]:
        return (*self.computed, *self.absent)


def added_examples(texts: Mapping[str, Sequence[str]], index: Path | None = None) -> AddedExamples:
    """The computed-figure and unanswerable-in-scope examples from the filings' pages; with `index`, the
    absent facts are also checked against that index's chunks."""
    computed, figures = computed_examples(texts)
    absent = absent_examples(texts, index_chunks(index) if index is not None else None)
    return AddedExamples(tuple(computed), tuple(figures), tuple(absent))


def write_figures(path: Path, figures: Sequence[dict[str, Any]]) -> None:
    """The computed figures' records as JSONL, written atomically."""
    lines = "".join(json.dumps(f, ensure_ascii=False, sort_keys=True) + "\n" for f in figures)
    write_file_atomic(path, lines.encode("utf-8"))


def added_card(added: AddedExamples) -> list[str]:
    """The card's sections on the computed-figure and unanswerable-in-scope examples."""
    tags = Counter(t for e in added.all for t in e.tags)
    ops = sorted(t for t in tags if t.startswith("op:"))
    formats = sorted(t for t in tags if t.startswith("format:"))
    absent_questions = [e for e in added.absent if e.case == "chip"]
    return [
        "## Computed figures",
        "",
        f"{len(added.figures)} questions whose answer is a figure worked out from two or more figures the filings",
        "report, each asked as a chip (the operands' filings selected), with the company as scope and without",
        "scope (tag `computed`):",
        "",
        *counts_table(added.computed),
        "",
        "Operations (`op:<name>`, examples): " + ", ".join(f"`{t}` {tags[t]}" for t in ops) + ".",
        "`margin`: gross, operating or net margin; `ratio`: a line as a percentage of another (R&D or services over",
        "revenue, tax over income before taxes); `sum`: operating expense lines added up; `change`: a",
        "difference in USD; `pct_change`: a percentage change (on the same quarter a year earlier, in the",
        "same filing, or between two quarters' filings); `average`: the mean over the four filings' quarters.",
        "Format instructions the question carries (`format:<name>`): "
        + ", ".join(f"`{t}` {tags[t]}" for t in formats)
        + ".",
        "Without an instruction, a percentage is stated to one decimal place and an amount in whole USD millions.",
        "",
        "Every operand is read by `scripts/sec_statements.py` from the filing's condensed consolidated",
        "statement of operations (its page as the index reads it), never typed; the answer is evaluated by",
        "`pipeline.execution.direct.evaluate_arithmetic` and rounded to the nearest (a value exactly halfway",
        "is refused: the question must ask another precision). `answer_facts` holds the one figure;",
        "`gold_documents` and `gold_pages` the filings and statement pages holding the operands. Before",
        "writing, each operand is re-read from the line of its gold page that names it and the answer",
        f"recomputed. `{FIGURES_FILE}` records, per question, its operands (document, page, line,",
        "quarter, value as printed), the formula and the expression with the values: what an answer line must",
        "compute and cite.",
        "",
        "## Unanswerable in scope",
        "",
        f"{len(absent_questions)} facts a reader of a 10-Q would ask for that no filing of the company states,",
        "each asked with the filing of the quarter asked about selected (`scope:chip`) and, in another",
        "wording, with the company as scope (`scope:property`); tags `absent_in_scope`, `not_in_scope`,",
        "`topic:<fact>`, `expect_not_found`, no gold documents, the other companies' filings forbidden:",
        "",
        *counts_table(added.absent),
        "",
        "Facts (`topic:`, companies asked): "
        + ", ".join(f"{t.split(':', 1)[1]} {n // 2}" for t, n in sorted(tags.items()) if t.startswith("topic:"))
        + ".",
        "Each fact is named by markers",
        "(`scripts/sec_absent.py`: regular expressions for the words a filing stating it would use, such as",
        '"units sold", "backlog", a number followed by "employees"); the build stops if any marker occurs in',
        "any page of a filing in scope, or, with `--index`, in any chunk of it (`scripts/absence.py`).",
        "",
    ]


def derived_facts(examples: Sequence[LabelledExample], texts: Mapping[str, Sequence[str]]) -> list[tuple[str, str]]:
    """(question, fact) for each chip example's fact whose numbers are not in its filings as written."""
    numbers = {d: number_values("\n".join(t)) for d, t in texts.items()}
    out = []
    for e in examples:
        if e.case == "chip":
            known = set().union(*(numbers[d] for d in e.gold_documents))
            out += [(e.question, f) for f in unverified_facts(e.answer_facts, known)]
    return out


def card(
    examples: Sequence[LabelledExample],
    questions: int,
    derived: list[tuple[str, str]] | None,
    added: AddedExamples | None = None,
) -> str:
    """The dataset card: what the examples are, counts per case and split, how to regenerate.

    `examples` are those of the question set; `added` the computed-figure and unanswerable-in-scope ones.
    """
    chips = [e for e in examples if e.case == "chip"]
    located = sum(len({p.document for p in e.gold_pages}) for e in chips)
    page_note = [
        f"Gold pages ({located} of {sum(len(e.gold_documents) for e in chips)} gold filings of the {len(chips)} "
        "questions have some) are",
        "the pages of a gold filing that state one of the answer's figures: an amount, percentage or count",
        f"whose every number has at least {MIN_LOCATING_DIGITS} digits, found on at most {MAX_FACT_PAGES} "
        "pages of that filing (a figure",
        "on more pages is common there and locates nothing). A filing with no such figure has no gold page:",
        "any of its pages may hold the answer, and gold-page recall leaves it out.",
    ]
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
        "Labelled examples (`pipeline.evaluation.examples.LabelledExample`, JSONL) built from the "
        f"{questions} reviewed questions",
        "of `../shared/data/sec-10q/qna_data.csv` over the 20 filings in `../shared/data/sec-10q/docs`",
        "(five companies, four quarters; entities as in `datasets/sec-10q/corpus.toml`), and from questions",
        "written by the script: computed figures and facts absent from the scope (sections below). Documents",
        'are named by file name ("2023 Q3 AAPL.pdf"), scopes by company slug ("aapl").',
        "",
        "## Counts",
        "",
        *counts_table([*examples, *(added.all if added else ())]),
        "",
        "Of these, from the question set:",
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
        *page_note,
        "",
        "Tags: `multi_doc`, `single_doc_single_chunk`, `single_doc_multi_chunk` (CSV `Question Type`),",
        "`chunk:table` / `chunk:text` (CSV `Source Chunk Type`), `wrong_entity`, `not_in_scope`,",
        "`scope:none` / `scope:chip` / `scope:property` (the scope asked in).",
        "",
        *(added_card(added) if added else []),
        "## Splits",
        "",
        "Fixed on disk. A question goes to train / dev / test by sha256 of its text (60/20/20 buckets), so",
        "all five variants of a question share a split and adding questions never moves existing ones.",
        "The computed-figure and unanswerable-in-scope questions are split by the same rule.",
        "",
        "## Regenerate",
        "",
        "```",
        "python scripts/make_sec_traces.py            # from the repository root",
        "# the same, and the absent facts also checked in the chunks of a built index:",
        "scoperag index ../shared/data/sec-10q/docs --manifest datasets/sec-10q/corpus.toml --out .scoperag/sec-10q",
        "python scripts/make_sec_traces.py --index .scoperag/sec-10q",
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
    parser.add_argument(
        "--index", type=Path, help="an index of the filings: absent facts are also checked against its chunks"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # Read in every case: the computed-figure and absent-fact examples are built from the filings' text.
    print(f"reading the {len(SEC_DOCUMENTS)} filings in {args.docs} ...")
    texts = filing_texts(args.docs)
    examples = sec_examples(args.csv, None if args.no_verify else texts)
    questions = len(read_questions(args.csv))
    added = added_examples(texts, args.index)
    everything = [*examples, *added.all]
    if len({e.id for e in everything}) != len(everything):
        raise ExamplesError("an added example has the id of another example: change its question")
    for split, count in write_example_set(args.out, everything).items():
        print(f"{split}: {count} examples")
    write_figures(args.out / FIGURES_FILE, added.figures)
    derived = derived_facts(examples, texts) if not args.no_verify else None
    (args.out / "README.md").write_text(card(examples, questions, derived, added), encoding="utf-8")
    print(
        f"wrote {len(everything)} examples to {args.out}: {len(examples)} from {questions} questions,"
        f" {len(added.computed)} computed-figure and {len(added.absent)} unanswerable-in-scope"
    )


if __name__ == "__main__":
    main()
