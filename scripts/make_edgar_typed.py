"""Write datasets/edgar/typed/{train,dev,test}.jsonl and its card: typed questions over the EDGAR filings (a
figure with currency and scale, yes or no, a name, names, a comparison across companies, and the question's own
absent value), each with its expected typed value, from the filings' inline XBRL. No LM.

Run from the repository root:

    python scripts/make_edgar_typed.py          # unpacks the archive into .scoperag/edgar/ first if needed

The filings are read as the index reads them (scripts/make_edgar_traces.py: `read_filings`, `candidate_facts`),
so a fact's page is the page the index holds; the cover's names (exchanges, tickers, state of incorporation,
auditor) are the filing's `dei:` facts, found on the pages that print them. Question forms and the concepts
that settle each kind are in scripts/edgar_typed.toml. Splits are those of datasets/edgar/traces (by group of
close companies: a test company is never in train or dev). Every choice is drawn by a hash of the filing and
the question or by a generator seeded with the split's name: a rerun writes the same files.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # scripts/ is no package: its builders import each other by name

import make_edgar_traces as edgar  # noqa: E402
from edgar_typed_comparisons import comparison_questions  # noqa: E402
from edgar_typed_questions import (  # noqa: E402
    KIND_ORDER,
    MAX_TICKERS,
    Kind,
    TypedQuestion,
    absent_questions,
    absent_value,
    balanced,
    boolean_questions,
    name_questions,
    number_questions,
    pick,
    stable_hash,
)

from pipeline.evaluation.examples import (  # noqa: E402
    ExpectedValue,
    LabelledExample,
    Split,
    counts_table,
    make_example,
    write_example_set,
)

log = logging.getLogger(__name__)

OUT = edgar.ROOT / "datasets" / "edgar" / "typed"
SPLITS: tuple[Split, ...] = ("train", "dev", "test")
# Questions kept per kind in a split (train has three times the companies of test, and every no-scope example
# lists every other company's filing as forbidden: the cap keeps each file of the set within a few MB).
MAX_QUESTIONS: dict[str, dict[str, int]] = {
    "train": {"number": 130, "boolean": 60, "name": 30, "names": 30, "absent": 40},
}


# ---- examples --------------------------------------------------------------------------------------------


def _absent_expected(q: TypedQuestion) -> ExpectedValue:
    """What a question expects where nothing in scope states its value: the absent value it names."""
    kind = "name" if q.kind == "comparison" else q.expected.kind
    return ExpectedValue(kind=kind, value=absent_value(q.question), absent=True, currency=q.expected.currency)


def question_examples(q: TypedQuestion, filings: Sequence[edgar.Filing], split: Split) -> list[LabelledExample]:
    """The scope cases of one question: chip, company scope, no scope and one wrong entity for a question
    about one company; no scope, chip and a wrong chip for a comparison."""
    if q.company is None:
        return comparison_examples(q, filings, split)
    company = q.company
    filing = q.filings[0]
    own = [f.relpath for f in filings if f.company == company]
    others = [f.relpath for f in filings if f.company != company]
    group = {c.ticker for c in edgar.GROUPS[edgar.GROUP_OF[company.ticker]]}
    close = [f.relpath for f in filings if f.company.ticker in group and f.company != company]
    tags = (
        f"kind:{q.kind}",
        f"family:{q.family}",
        f"form:{filing.form}",
        f"period:{q.period}",
        f"group:{edgar.GROUP_OF[company.ticker]}",
        f"company:{company.ticker}",
        *q.tags,
    )
    common: dict[str, Any] = {"corpus": edgar.CORPUS, "question": q.question, "split": split}
    labels: dict[str, Any] = {**common, "expected_value": q.expected}
    if q.stated:
        labels |= {"gold_documents": (filing.relpath,), "gold_pages": q.gold_pages, "answer_facts": q.answer_facts}
    else:
        labels |= {"expect_not_found": True}
    out = [
        make_example(
            case="chip",
            scope={"document_ids": (filing.relpath,)},
            forbidden_documents=tuple(close),
            expected_plan="one_step",
            tags=(*tags, "scope:chip"),
            **labels,
        ),
        make_example(
            case="property",
            scope={"property": company.slug},
            forbidden_documents=tuple(close),
            expected_plan="one_step",
            tags=(*tags, "scope:property"),
            **labels,
        ),
        make_example(
            case="no_scope",
            forbidden_documents=tuple(others),
            expected_plan="two_step",
            tags=(*tags, "scope:none"),
            **labels,
        ),
    ]
    other = edgar._other(company, filings, q.question)
    if other is None:
        return out
    theirs = [f.relpath for f in filings if f.company == other]
    wrong: dict[str, Any] = {
        **common,
        "expect_not_found": True,
        "expected_plan": "one_step",
        "expected_value": _absent_expected(q),
    }
    wrong_tags = (*tags, "wrong_entity", "not_in_scope", f"other:{other.ticker}")
    if stable_hash(q.question, "wrong-scope") % 2:
        same_form = [r for r in theirs if r.startswith(filing.form + "/")] or theirs
        chip = pick(same_form, q.question, "chip")
        out.append(
            make_example(
                case="wrong_property",
                scope={"document_ids": (chip,)},
                forbidden_documents=tuple(sorted({*own, chip})),
                tags=(*wrong_tags, "scope:chip"),
                **wrong,
            )
        )
    else:
        out.append(
            make_example(
                case="wrong_property",
                scope={"property": other.slug},
                forbidden_documents=tuple(sorted({*own, *theirs})),
                tags=(*wrong_tags, "scope:property"),
                **wrong,
            )
        )
    return out


def comparison_examples(q: TypedQuestion, filings: Sequence[edgar.Filing], split: Split) -> list[LabelledExample]:
    """A comparison with no scope (the question names the companies), with a chip of the quoted companies'
    filings of the form compared, and with a chip of as many filings of other companies of the split (wrong
    entity: none of them is the question's)."""
    form = q.filings[0].form
    named = {c.ticker for c in q.compared}
    mine = [f.relpath for f in filings if f.company.ticker in named]
    others = [f.relpath for f in filings if f.company.ticker not in named]
    tags = ("kind:comparison", f"family:{q.family}", f"form:{form}", f"period:{q.period}", *q.tags)
    compared = [e.document for e in q.expected.entities if e.status == "compared" and e.document]
    labels: dict[str, Any] = {
        "corpus": edgar.CORPUS,
        "question": q.question,
        "split": split,
        "expected_value": q.expected,
        "gold_documents": tuple(compared),
        "gold_pages": q.gold_pages,
        "answer_facts": q.answer_facts,
    }
    chip = tuple(f.relpath for f in q.filings)
    out = [
        make_example(
            case="no_scope",
            forbidden_documents=tuple(others),
            expected_plan="two_step",
            tags=(*tags, "scope:none"),
            **labels,
        ),
        make_example(
            case="chip", scope={"document_ids": chip}, expected_plan="one_step", tags=(*tags, "scope:chip"), **labels
        ),
    ]
    pool = sorted(
        (f for f in filings if f.company.ticker not in named and f.form == form and f.source.facts),
        key=lambda f: stable_hash(q.question, "wrong-chip", f.relpath),
    )
    if len(pool) >= len(chip):
        wrong_chip = tuple(f.relpath for f in pool[: len(chip)])
        out.append(
            make_example(
                case="wrong_property",
                scope={"document_ids": wrong_chip},
                corpus=edgar.CORPUS,
                question=q.question,
                split=split,
                expected_value=_absent_expected(q),
                expect_not_found=True,
                forbidden_documents=tuple(sorted({*mine, *wrong_chip})),
                expected_plan="one_step",
                tags=(*tags, "wrong_entity", "not_in_scope", "scope:chip"),
            )
        )
    return out


def typed_questions(filings: Sequence[edgar.Filing], folder: Path) -> dict[Split, list[TypedQuestion]]:
    """Every question of every split, in filing order (comparisons last), yes/no balanced per split."""
    splits = edgar.split_of_groups()
    out: dict[Split, list[TypedQuestion]] = {s: [] for s in SPLITS}
    for split in SPLITS:
        mine = [f for f in filings if splits[edgar.GROUP_OF[f.company.ticker]] == split]
        questions: list[TypedQuestion] = []
        booleans: list[TypedQuestion] = []
        covered: set[str] = set()
        for filing in mine:
            if not filing.source.facts:
                continue
            own = [f for f in mine if f.company == filing.company]
            questions += number_questions(filing)
            booleans += boolean_questions(filing)
            annual = [f for f in own if f.form == "10-K" and f.source.facts]
            if filing.company.ticker not in covered and (filing.form == "10-K" or not annual):
                covered.add(filing.company.ticker)
                questions += name_questions(filing, folder)
            questions += absent_questions(filing, own)
        caps = MAX_QUESTIONS.get(split, {})
        kept = set(map(id, balanced(booleans, caps.get("boolean", 0) // 2 or None)))
        questions += [q for q in booleans if id(q) in kept]
        questions += comparison_questions(mine, split)
        out[split] = capped(questions, caps)
    return out


def capped(questions: Sequence[TypedQuestion], caps: Mapping[str, int]) -> list[TypedQuestion]:
    """At most caps[kind] questions of each kind (those first in hash order), in their order."""
    kept: set[int] = set()
    for kind in KIND_ORDER:
        mine = [q for q in questions if q.kind == kind]
        if kind in caps:
            mine = sorted(mine, key=lambda q: stable_hash("typed-cap", q.question))[: caps[kind]]
        kept.update(map(id, mine))
    return [q for q in questions if id(q) in kept]


def typed_examples(
    filings: Sequence[edgar.Filing], folder: Path
) -> tuple[list[LabelledExample], dict[Split, list[TypedQuestion]]]:
    """Every example and the questions they come from (a question repeating another's text is kept once)."""
    by_split = typed_questions(filings, folder)
    examples: list[LabelledExample] = []
    seen: set[str] = set()
    for split, questions in by_split.items():
        unique = []
        for q in questions:
            made = question_examples(q, filings, split)
            if any(e.id in seen for e in made):
                log.warning("the question %r repeats another; kept once", q.question)
                continue
            seen.update(e.id for e in made)
            unique.append(q)
            examples.extend(made)
        by_split[split] = unique
    return examples, by_split


# ---- the card --------------------------------------------------------------------------------------------


def _kind_table(by_split: Mapping[Split, Sequence[TypedQuestion]]) -> list[str]:
    """Questions per kind (rows) and split (columns): answerable ones, and (after /) those whose value is the
    question's absent value."""
    rows = ["| questions | " + " | ".join(SPLITS) + " | all |", "|" + " --- |" * (len(SPLITS) + 2)]
    for kind in KIND_ORDER:
        counts = [sum(1 for q in by_split[s] if q.kind == kind) for s in SPLITS]
        rows.append(f"| {kind} | " + " | ".join(map(str, counts)) + f" | {sum(counts)} |")
    answerable = [sum(1 for q in by_split[s] if q.kind != "absent" and q.expected.value is not False) for s in SPLITS]
    rows.append(
        "| answerable (a value stated: not absent, not False) | "
        + " | ".join(map(str, answerable))
        + f" | {sum(answerable)} |"
    )
    total = [len(by_split[s]) for s in SPLITS]
    rows.append("| all | " + " | ".join(map(str, total)) + f" | {sum(total)} |")
    return rows


def _detail(by_split: Mapping[Split, Sequence[TypedQuestion]], kind: Kind, key: str) -> str:
    """ "train: a 3, b 2; dev: ..." of a tag's values (tag `key:VALUE`) or families (`key` "family")."""
    parts = []
    for split in SPLITS:
        counts: Counter[str] = Counter()
        for q in by_split[split]:
            if q.kind != kind:
                continue
            if key == "family":
                counts[q.family] += 1
            counts.update(t.split(":", 1)[1] for t in q.tags if t.startswith(key + ":"))
        parts.append(f"{split}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return "; ".join(parts)


CARD = """# EDGAR typed questions

Typed questions over the EDGAR filings (`datasets/edgar/corpus.toml`: the same 113 filings of 65 companies as
`datasets/edgar/traces`): a figure with currency and scale, yes or no, a name, a list of names, a comparison across
companies, and the question's own absent value ("If data is not available, return 'N/A'.", "If there is no
mention, return False."), asked as people ask filings questions. Made without an LM from the filings' inline XBRL
by `scripts/make_edgar_typed.py` (question forms: `scripts/edgar_typed.toml`). Each example
(`pipeline.evaluation.examples.LabelledExample`, JSONL) carries `expected_value` (an `ExpectedValue`), gold
documents and pages, `answer_facts` where a fact string applies, forbidden documents and tags. `scoperag evaluate
--traces datasets/edgar/typed --split test --index .scoperag/edgar-index` scores it: `value_correct`, a column per
kind, `false_absent`, `page_reference` and `gold_page_cited` (`pipeline.evaluation.value_metrics`).

## Counts

Examples per scope case:

{cases}

Questions per kind (each gives the examples of its scope cases, below):

{kinds}

- number, by family: {numbers}.
- yes/no, by answer: {answers}; by evidence: {evidence}; by event: {events}.
- name, by what is asked: {name}; names: {names}.
- comparisons, by variant: {variants}.
- absent, by reason: {absent}; by topic: {topics}.

## What the expected value is

`ExpectedValue`: `kind` (number, boolean, name, names), `value`, `absent`, `currency` (ISO code), `unit` ("%": a
percentage in percent, 12.5 not 0.125; "per share"), `tolerance` (relative; 0.01), `scale` (the scale the question
asks the answer in: "million" for "Answer in USD millions"; `value` stays in units), `aliases` (other accepted forms
of an expected name: "NYSE" for "New York Stock Exchange", "DE" for "Delaware"), and for a comparison `compare`
(lowest or highest) and `entities` (`ComparedEntity`: the name as quoted, the corpus entity's slug and name, the
document its figure is read from, and the figure; no entity: not a company of the corpus; no figure: excluded).

- **number**: a figure of the filing's own period (a 10-K's fiscal year, a 10-Q's quarter, else its year to date,
  or the balance-sheet date), untagged by dimensions and with one value wherever printed (`candidate_facts` of
  `scripts/make_edgar_traces.py`), in units and signed as the filing reports it ("$45,754 million" is 45754000000;
  net cash used in investing activities is negative); currency USD; gold pages: every page that prints it. Per
  10-K also one margin (%): operating or net income over revenue of the fiscal year, times 100 (unit "%"; gold
  pages: both figures'). Forms: "(in USD)", "Answer in USD millions" (`scale`), "within the last period", "at the
  end of the period", a long prompt with a role, a definition and the statement to use.
- **boolean** (share repurchases, dividends, acquisitions): True when the event's figure (payments for repurchases
  of common stock; dividends declared or paid; payments to acquire businesses) of the filing's own period is above
  zero (gold pages: where printed); False when that figure is printed as zero and no figure of the event is positive
  in the period (`evidence:zero`; gold pages: the zero's), or when no figure of the event is reported in any period
  of the filing (`evidence:none`: the absent value, `expect_not_found`). Where neither holds (a related figure
  only, a prior year's event only) there is no question. True and False are balanced per split (the larger side
  cut in hash order).
- **names** from the cover's `dei:` facts, each only where a page prints it: the exchanges the company's securities
  trade on and its trading symbols (a company with more than {max_tickers} symbols is not asked); a **name**: its
  state (or country) of incorporation and, in a 10-K, its auditor (`dei:AuditorName`, which these filings carry).
  Gold pages: the first of the first five pages that prints them, the cover (the state only where the page says
  it is the state of incorporation: on the cover, or in Item 1 when the cover's cell is not among the page's text
  as the index reads it); for the auditor, every page naming it. Names are matched case-blind without legal
  forms ("Ernst & Young LLP" is "Ernst and Young"), a list as a set.
- **comparison**: 3-5 companies of one split with filings of one form, the lowest or highest figure of a family
  each reports for its own period (10-K: fiscal year or year-end balance; 10-Q: quarter or balance); value: the
  winning company's name as the corpus manifest names it (aliases: its short name and others). Variants: `plain`;
  `excluded` (one quoted company's filings neither report the concept nor mention it: it must be left out);
  `unknown` (one quoted name is no company of the corpus: the answer must name it as unknown). Gold documents and
  pages: each compared company's filing and the pages that print its figure.
- **absent**: a figure none of the company's filings reports or mentions (none of its concepts, none of its words
  on any page: `scripts/absence.py`; R&D, inventories, goodwill and advertising first, else bitcoin mined, oil
  production, aircraft deliveries or comparable sales), or a present figure asked in a currency the filing does
  not use ("in EUR" of a USD filer; `currency` holds the code asked). Value: the question's absent value ('N/A'),
  `expect_not_found`, no gold document.

## Scope cases

A question about one company, as in `datasets/edgar/traces`: `chip` (the filing selected), `property` (the
company's scope: all its filings; every question names the report it asks about, so the other filing in scope
does not answer it), `no_scope`; forbidden documents: the close companies' filings (chip, company scope), every
other company's filing (no scope). One `wrong_property` per question (by hash: a close company's filing of the same
form as chip, or that company's scope; tags `wrong_entity`, `not_in_scope`, `other:TICKER`), which expects the
question's absent value ('N/A', False, or none) and `expect_not_found`.

A comparison names several companies, so no one company's scope fits it: `no_scope` (the question names them;
forbidden: every filing of a company not quoted), `chip` (the quoted corpus companies' filings of the form
compared, the excluded company's included), and `wrong_property` (a chip of as many filings of that form of other
companies of the split, none of them quoted; the absent value expected, `expect_not_found`; forbidden: the quoted
companies' filings). No `property` case.

Tags: `kind:number|boolean|name|names|comparison|absent`, `family:NAME`, `form:10-K|10-Q`,
`period:year|quarter|ytd|instant|cover|report`, `group:NAME`, `company:TICKER` (the company asked about),
`scope:none|chip|property`, `wording:N`, `scale:million`, `margin`, `answer:true|false`,
`evidence:figure|zero|none`, `absent:topic|currency`, `topic:NAME`, `currency:CODE`, `compare:lowest|highest`,
`variant:plain|excluded|unknown`, `companies:N`, `wrong_entity`, `not_in_scope`, `other:TICKER`.

## Splits

By group of close companies, exactly as `datasets/edgar/traces` (`split_of_groups`); a comparison only among
companies of one split. No company is in two splits. Train, with three times the companies of test, keeps
at most these questions of each kind (the first in hash order): {train_caps}, and 30 comparisons; so each file
stays within a few MB (every no-scope example lists every other company's filing as forbidden).

{splits}

## Regenerate

```
python scripts/make_edgar_typed.py   # unpacks the archive into .scoperag/edgar/ when needed
```
"""


def card(
    examples: Sequence[LabelledExample],
    by_split: Mapping[Split, Sequence[TypedQuestion]],
    filings: Sequence[edgar.Filing],
) -> str:
    """The dataset card (README.md of the typed set)."""
    splits = edgar.split_of_groups()
    companies = sorted({f.company.ticker for f in filings})
    members = {s: [t for t in companies if splits[edgar.GROUP_OF[t]] == s] for s in SPLITS}
    return CARD.format(
        cases="\n".join(counts_table(examples)),
        kinds="\n".join(_kind_table(by_split)),
        numbers=_detail(by_split, "number", "family"),
        answers=_detail(by_split, "boolean", "answer"),
        evidence=_detail(by_split, "boolean", "evidence"),
        events=_detail(by_split, "boolean", "family"),
        name=_detail(by_split, "name", "family"),
        names=_detail(by_split, "names", "family"),
        variants=_detail(by_split, "comparison", "variant"),
        absent=_detail(by_split, "absent", "absent"),
        topics=_detail(by_split, "absent", "topic"),
        max_tickers=MAX_TICKERS,
        train_caps=", ".join(f"{n} {k}" for k, n in MAX_QUESTIONS["train"].items()),
        splits="\n".join(f"- {split}: {', '.join(members[split])}" for split in SPLITS),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, default=edgar.ARCHIVE)
    parser.add_argument("--filings", type=Path, help="an unpacked edgar-filings folder (default: unpack the archive)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    folder = args.filings or edgar.unpack(args.archive, edgar.SCRATCH)
    print(f"reading the filings in {folder} ...")
    filings = edgar.read_filings(folder)
    examples, by_split = typed_examples(filings, folder)
    for split, count in write_example_set(args.out, examples).items():
        print(f"{split}: {count} examples from {len(by_split[split])} questions")
    (args.out / "README.md").write_text(card(examples, by_split, filings), encoding="utf-8")
    print(f"wrote {len(examples)} examples to {args.out}")


if __name__ == "__main__":
    main()
