"""Write datasets/edgar/corpus.toml and datasets/edgar/traces/{train,dev,test}.jsonl (and the card) from
the inline XBRL facts of the EDGAR filings in ../shared/data/edgar-filings. No LM.

Run from the repository root:

    python scripts/make_edgar_traces.py          # unpacks the archive into .scoperag/edgar/ first if needed

Every filing is read the way the index reads it (pipeline.store.reading.read_source), so a fact's page
is the page the index holds. A fact of the filing's own period (the fiscal year of a 10-K, the quarter
or year to date of a 10-Q, or its balance-sheet date) without dimensions becomes a question from the
templates of its concept family, in one of several wordings; its value (scale and unit applied) is the
gold fact, its filing the gold document, every page printing it a gold page. Each fact gives a chip, a
company-scope and a no-scope example, and two wrong-entity examples over a close company's filings
(chip and company scope). Splits are drawn by group of close companies, so a test company never
appears in training. The output depends only on the filings: a rerun writes the same files.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tarfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # scripts/ is no package: its builders import each other by name

from edgar_catalog import COMPANIES, FAMILIES, GROUP_OF, GROUPS, Company, Family, split_of_groups, stable_hash  # noqa: E402

from pipeline.errors import ExamplesError, InputFileError  # noqa: E402
from pipeline.evaluation.examples import GoldPage, LabelledExample, Split, counts_table, make_example, write_example_set  # noqa: E402
from pipeline.store.reading import SourceFile, read_source  # noqa: E402
from pipeline.store.xbrl import PageFact, written_date  # noqa: E402

log = logging.getLogger(__name__)


CORPUS = "edgar"
ROOT = Path(__file__).resolve().parents[1]
ARCHIVE = ROOT.parent / "shared" / "data" / "edgar-filings" / "edgar-filings.tar.xz"
SCRATCH = ROOT / ".scoperag" / "edgar"
OUT = ROOT / "datasets" / "edgar"
DOCUMENT = "primary-document.html"
# Facts asked about per filing: different concept families, drawn by a hash of the filing.
FACTS_PER_FILING = {"10-K": 4, "10-Q": 3}


@dataclass(frozen=True)
class Filing:
    """One filing as the index reads it: its path in the corpus, company, form and pages."""

    relpath: str
    company: Company
    source: SourceFile

    @property
    def form(self) -> str:
        return self.relpath.split("/", 1)[0]

    @property
    def cover(self) -> dict[str, str]:
        return dict(self.source.own.attributes)


@dataclass(frozen=True)
class Question:
    """A fact made into a question: its family, period kind, the fact, its gold pages and wording."""

    filing: Filing
    family: Family
    period_kind: str
    fact: PageFact
    pages: tuple[int, ...]
    question: str
    wording: int
    answer: str


_ORDINALS = {"Q1": "first", "Q2": "second", "Q3": "third", "Q4": "fourth"}
_SCALE_WORDS = {3: "thousand", 6: "million", 9: "billion"}


def period_phrases(kind: str, attributes: Mapping[str, str], fact: PageFact) -> list[tuple[str, str]]:
    """(at a sentence's end, at its start) wordings of a fact's period: "for fiscal 2023" / "In fiscal
    2023", "for the quarter ended July 1, 2023", "as of July 1, 2023", ...; none without a period end."""
    end = written_date(attributes.get("period_end"))
    if end is None:
        return []
    year = attributes.get("fiscal_year", "").removeprefix("FY")
    quarter = attributes.get("fiscal_period", "").rsplit(" ", 1)[-1]
    if kind == "year":
        out = [(f"for the fiscal year ended {end}", f"For the fiscal year ended {end}")]
        if year:
            out += [(f"for fiscal {year}", f"In fiscal {year}"), (f"in fiscal year {year}", f"In fiscal year {year}")]
        return out
    if kind == "quarter":
        out = [(f"for the quarter ended {end}", f"For the quarter ended {end}")]
        out.append((f"in the three months ended {end}", f"In the three months ended {end}"))
        if year and quarter in _ORDINALS:
            words = f"the {_ORDINALS[quarter]} quarter of fiscal {year}"
            out.append((f"in {words}", f"In {words}"))
        return out
    if kind == "ytd" and fact.period_start:
        days = (date.fromisoformat(fact.period_end or "") - date.fromisoformat(fact.period_start)).days
        months = {6: "six", 9: "nine", 12: "twelve"}.get(round(days / 30.4))
        return [(f"for the {months} months ended {end}", f"For the {months} months ended {end}")] if months else []
    out = [(f"as of {end}", f"As of {end}"), (f"at {end}", f"At {end}")]
    if kind == "instant" and attributes.get("form") == "10-K" and year:
        out.append((f"at the end of fiscal {year}", f"At the end of fiscal {year}"))
    return out


def answer_fact(fact: PageFact) -> str | None:
    """The gold fact as the filing states it, with scale and unit: "$45,754 million", "$2.47 per share",
    "15,634,232 thousand shares"; None for a figure shown without digits (a dash for zero)."""
    if not any(c.isdigit() for c in fact.shown):
        return None
    word = _SCALE_WORDS.get(fact.scale, "")
    unit = (fact.unit or "").casefold()
    if unit == "usd":
        return f"${fact.shown}" + (f" {word}" if word else "")
    if unit == "usd/shares":
        return f"${fact.shown} per share"
    if unit == "shares":
        return f"{fact.shown}" + (f" {word}" if word else "") + " shares"
    return f"{fact.shown} {word}".strip()


def unpack(archive: Path, scratch: Path) -> Path:
    """The folder of filings, unpacked from `archive` into `scratch` unless it is there already."""
    folder = scratch / "edgar-filings"
    if not folder.is_dir():
        if not archive.is_file():
            raise ExamplesError(f"{archive} not found: pass --archive or --filings")
        scratch.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tar:
            tar.extractall(scratch, filter="data")
    return folder


def read_filings(folder: Path) -> list[Filing]:
    """Every filing of a known company under `folder`, read as the index reads it, in path order."""
    out = []
    for path in sorted(folder.glob(f"*/*/*/{DOCUMENT}")):
        relpath = path.relative_to(folder).as_posix()
        ticker = relpath.split("/")[1]
        if ticker not in COMPANIES:
            raise ExamplesError(f"{relpath}: company {ticker} is not in scripts/edgar_companies.toml")
        try:
            out.append(Filing(relpath, COMPANIES[ticker], read_source(path, relpath)))
        except InputFileError as exc:
            raise ExamplesError(f"{relpath}: {exc.reason}") from exc
    return out


def period_kind(fact: PageFact, attributes: Mapping[str, str], form: str) -> str | None:
    """ "year", "quarter", "ytd" or "instant" when the fact is of the filing's own period, else None."""
    end = attributes.get("period_end")
    if fact.period_end != end or end is None:
        return None
    if fact.period_start is None:
        return "instant"
    days = (date.fromisoformat(end) - date.fromisoformat(fact.period_start)).days
    if form == "10-K" and 350 <= days <= 380:
        return "year"
    if form == "10-Q" and 80 <= days <= 100:
        return "quarter"
    if form == "10-Q" and 170 <= days <= 380:
        return "ytd"
    return None


def candidate_facts(filing: Filing) -> dict[str, tuple[PageFact, str, tuple[int, ...]]]:
    """Family -> (fact, period kind, pages printing it) for each family the filing reports for its own
    period without dimensions and with one value; a 10-Q's quarter is preferred to its year to date."""
    found: dict[str, tuple[PageFact, str, tuple[int, ...]]] = {}
    facts = [f for f in filing.source.facts if not f.dimensions and answer_fact(f) is not None]
    for family in FAMILIES:
        for concept in family.concepts:
            kinds: dict[str, list[PageFact]] = {}
            for fact in facts:
                if fact.concept != concept:
                    continue
                kind = period_kind(fact, filing.cover, filing.form)
                if kind is not None and (kind == "instant") == family.instant:
                    kinds.setdefault(kind, []).append(fact)
            for kind in ("quarter", "year", "ytd", "instant"):
                same = kinds.get(kind, [])
                if same and len({f.value for f in same}) == 1:
                    found[family.name] = (same[0], kind, tuple(sorted({f.page for f in same})))
                    break
            if family.name in found:
                break
    return found


def possessive(name: str) -> str:
    """ "Apple's", "General Dynamics'"."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def filing_questions(filing: Filing) -> list[Question]:
    """The questions of one filing: FACTS_PER_FILING facts of different families drawn by hash, half of
    them (rounded up) of core families when the filing reports that many."""
    candidates = candidate_facts(filing)
    count = FACTS_PER_FILING.get(filing.form, 3)
    families = {f.name: f for f in FAMILIES}
    order = sorted(candidates, key=lambda name: stable_hash(filing.relpath, name))
    core = [n for n in order if families[n].core][: (count + 1) // 2]
    chosen = core + [n for n in order if n not in core][: count - len(core)]
    out = []
    for name in chosen:
        fact, kind, pages = candidates[name]
        family = families[name]
        phrases = period_phrases(kind, filing.cover, fact)
        answer = answer_fact(fact)
        if not phrases or answer is None:
            continue
        wording = stable_hash(filing.relpath, name, "wording") % (len(family.templates) * len(phrases))
        template = family.templates[wording % len(family.templates)]
        trailing, leading = phrases[wording // len(family.templates)]
        text = template.format(co=filing.company.short, period=trailing, Period=leading)
        text = text.replace(f"{filing.company.short}'s", possessive(filing.company.short))
        out.append(Question(filing, family, kind, fact, pages, text, wording, answer))
    return out


def _other(company: Company, filings: Sequence[Filing], salt: str) -> Company | None:
    """A close company (same group) with filings, drawn by hash; None when the group has no other."""
    tickers = sorted({f.company.ticker for f in filings})
    group = [c.ticker for c in GROUPS[GROUP_OF[company.ticker]] if c.ticker != company.ticker and c.ticker in tickers]
    return COMPANIES[group[stable_hash(salt, company.ticker) % len(group)]] if group else None


def question_examples(q: Question, filings: Sequence[Filing], split: Split) -> list[LabelledExample]:
    """The chip, company-scope, no-scope and two wrong-entity examples of one question."""
    company = q.filing.company
    own = [f.relpath for f in filings if f.company == company]
    others = [f.relpath for f in filings if f.company != company]
    group = {c.ticker for c in GROUPS[GROUP_OF[company.ticker]]}
    close = [f.relpath for f in filings if f.company.ticker in group and f.company != company]
    tags = (
        f"family:{q.family.name}",
        f"form:{q.filing.form}",
        f"period:{q.period_kind}",
        f"wording:{q.wording}",
        f"group:{GROUP_OF[company.ticker]}",
    )
    common = {"corpus": CORPUS, "question": q.question, "split": split}
    answerable = {
        **common,
        "gold_documents": (q.filing.relpath,),
        "gold_pages": tuple(GoldPage(document=q.filing.relpath, page=p) for p in q.pages),
        "answer_facts": (q.answer,),
    }
    out = [
        make_example(
            case="chip",
            scope={"document_ids": (q.filing.relpath,)},
            forbidden_documents=tuple(close),
            expected_plan="one_step",
            tags=(*tags, "scope:chip"),
            **answerable,
        ),
        make_example(
            case="property",
            scope={"property": company.slug},
            forbidden_documents=tuple(close),
            expected_plan="one_step",
            tags=(*tags, "scope:property"),
            **answerable,
        ),
        make_example(
            case="no_scope",
            forbidden_documents=tuple(others),
            expected_plan="two_step",
            tags=(*tags, "scope:none"),
            **answerable,
        ),
    ]
    other = _other(company, filings, q.question)
    if other is None:
        log.warning("%s has no close company with filings; no wrong-entity examples", company.ticker)
        return out
    theirs = [f.relpath for f in filings if f.company == other]
    same_form = [r for r in theirs if r.startswith(q.filing.form + "/")] or theirs
    chip = same_form[stable_hash(q.question, "chip") % len(same_form)]
    wrong = {**common, "expect_not_found": True, "expected_plan": "one_step"}
    wrong_tags = (*tags, "wrong_entity", "not_in_scope", f"other:{other.ticker}")
    out.append(
        make_example(
            case="wrong_property",
            scope={"document_ids": (chip,)},
            forbidden_documents=tuple(sorted({*own, chip})),
            tags=(*wrong_tags, "scope:chip"),
            **wrong,
        )
    )
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


def edgar_examples(filings: Sequence[Filing]) -> tuple[list[LabelledExample], list[Question]]:
    """Every example and the questions they come from, in filing order."""
    splits = split_of_groups()
    examples: list[LabelledExample] = []
    questions: list[Question] = []
    seen: set[str] = set()
    for filing in filings:
        split = splits[GROUP_OF[filing.company.ticker]]
        for q in filing_questions(filing):
            made = question_examples(q, filings, split)
            if any(e.id in seen for e in made):
                log.warning("%s: the question %r repeats another; kept once", filing.relpath, q.question)
                continue
            seen.update(e.id for e in made)
            questions.append(q)
            examples.extend(made)
    return examples, questions


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def manifest(filings: Sequence[Filing]) -> str:
    """The corpus manifest: every company with filings as an entity (name, question name and aliases),
    each filing owned by its company; the folders' JSON files and the licence are no documents."""
    tickers = sorted({f.company.ticker for f in filings})
    lines = [
        "# EDGAR filings (10-K and 10-Q as HTML with inline XBRL) from ../shared/data/edgar-filings.",
        "# Unpack the archive, then index (scripts/make_edgar_traces.py writes this file):",
        "#   tar -xJf ../shared/data/edgar-filings/edgar-filings.tar.xz -C .scoperag/edgar",
        "#   scoperag index .scoperag/edgar/edgar-filings --manifest datasets/edgar/corpus.toml \\",
        "#       --out .scoperag/edgar-index",
        'format = "scoperag-corpus/v1"',
        f'name = "{CORPUS}"',
        'entity_kind = "company"',
        'exclude = ["*.json", "LICENSE"]',
        "",
        "[vocabulary]",
        'generic_words = ["company", "companies", "corporation", "inc", "filing", "filings", "report", "reports",',
        '  "document", "documents", "form"]',
        'units = ["usd", "dollar", "dollars"]',
    ]
    for ticker in tickers:
        company = COMPANIES[ticker]
        aliases = list(dict.fromkeys(a for a in (company.short, *company.aliases) if a != company.name))
        lines += [
            "",
            "[[entities]]",
            f'slug = "{company.slug}"',
            f"name = {_toml_string(company.name)}",
            f"aliases = [{', '.join(_toml_string(a) for a in aliases)}]",
        ]
    for ticker in tickers:
        lines += [
            "",
            "[[documents]]",
            f'path = "*/{ticker}/*/{DOCUMENT}"',
            f'entities = ["{ticker.lower()}"]',
            f'attributes = {{ ticker = "{ticker}" }}',
        ]
    return "\n".join(lines) + "\n"


def card(examples: Sequence[LabelledExample], questions: Sequence[Question], filings: Sequence[Filing]) -> str:
    """The dataset card (README.md of the traces)."""
    splits = split_of_groups()
    companies = Counter(f.company.ticker for f in filings)
    by_split = {
        split: sorted(t for t in companies if splits[GROUP_OF[t]] == split) for split in ("train", "dev", "test")
    }
    families = Counter(q.family.name for q in questions)
    kinds = Counter(q.period_kind for q in questions)
    pages = Counter(len(q.pages) for q in questions)
    no_facts = sorted(f.relpath for f in filings if not f.source.facts)
    lines = [
        "# EDGAR labelled traces",
        "",
        "Labelled examples (`pipeline.evaluation.examples.LabelledExample`, JSONL) made without an LM from the",
        f"inline XBRL facts of the {len(filings)} EDGAR filings in `../shared/data/edgar-filings` "
        f"({sum(1 for f in filings if f.form == '10-K')} 10-K, {sum(1 for f in filings if f.form == '10-Q')} 10-Q; "
        f"{len(companies)} companies; entities as in `datasets/edgar/corpus.toml`).",
        "Documents are named by their path in the unpacked folder "
        '("10-K/KO/0000021344-24-000009/primary-document.html"), scopes by company slug ("ko").',
        "",
        "## Counts",
        "",
        *counts_table(examples),
        "",
        f"{len(questions)} facts asked about: "
        + ", ".join(f"{name} {count}" for name, count in sorted(families.items())),
        "",
        "Periods: " + ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items())) + ".",
        "",
        "## What each fact becomes",
        "",
        "A figure of the filing's own period (a 10-K's fiscal year, a 10-Q's quarter or else its year to date,",
        "or the balance-sheet date), tagged without dimensions and with one value wherever it is printed, is",
        "asked about in a wording drawn by hash from its concept family's templates and period phrases",
        '(`scripts/edgar_questions.toml`: "What were Coca-Cola\'s total revenues for fiscal 2023?"). Up to '
        f"{FACTS_PER_FILING['10-K']} facts",
        f"of different families per 10-K and {FACTS_PER_FILING['10-Q']} per 10-Q.",
        "",
        '- `answer_facts`: the value as printed with its scale and unit ("$45,754 million", "$2.47 per share").',
        "- `gold_documents`: the filing; `gold_pages`: every page of it that prints the fact (pages as the index",
        "  reads them: `pipeline.store.html`). Facts on 1 / 2 / 3+ pages: "
        + " / ".join(str(pages[n]) for n in (1, 2))
        + f" / {sum(c for n, c in pages.items() if n >= 3)}.",
        "- `chip`: the filing selected; `property`: the company's scope (all its filings); `no_scope`: none.",
        "  Forbidden documents: the close companies' filings (chip, property); every other company's filing",
        "  (no scope), so any chunk of another company counts as a wrong-entity chunk.",
        "- `wrong_property` (two per fact, tags `wrong_entity`, `not_in_scope`, `other:TICKER`): the same question",
        "  over a close company's filing of the same form (`scope:chip`) or over that company's scope",
        "  (`scope:property`); `expect_not_found`, forbidden = the asking company's filings and those in scope.",
        "",
        "Close companies (`scripts/edgar_companies.toml`): KO / PEP, V / MA / AXP, INTC / AMD / NVDA / TXN,",
        "GOOG / META / AMZN / AAPL, HD / LOW, and groups by industry for the rest.",
        "",
        f"Filings without inline XBRL facts (no examples): {', '.join(no_facts) or 'none'}.",
        "",
        "Tags: `family:NAME`, `form:10-K|10-Q`, `period:year|quarter|ytd|instant`, `wording:N`, `group:NAME`,",
        "`scope:none|chip|property`, `wrong_entity`, `not_in_scope`, `other:TICKER`.",
        "",
        "## Splits",
        "",
        "By group of close companies: whole groups in sha256 order go to test, then dev, until each holds 20% of",
        "the companies; the rest to train. No company (and no close pair) is in two splits.",
        "",
        *(f"- {split}: {', '.join(tickers)}" for split, tickers in by_split.items()),
        "",
        "## Regenerate",
        "",
        "```",
        "python scripts/make_edgar_traces.py   # unpacks the archive into .scoperag/edgar/ when needed",
        "```",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, default=ARCHIVE)
    parser.add_argument("--filings", type=Path, help="an unpacked edgar-filings folder (default: unpack the archive)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    folder = args.filings or unpack(args.archive, SCRATCH)
    print(f"reading the filings in {folder} ...")
    filings = read_filings(folder)
    examples, questions = edgar_examples(filings)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "corpus.toml").write_text(manifest(filings), encoding="utf-8")
    traces = args.out / "traces"
    for split, count in write_example_set(traces, examples).items():
        print(f"{split}: {count} examples")
    (traces / "README.md").write_text(card(examples, questions, filings), encoding="utf-8")
    print(f"wrote {len(examples)} examples from {len(questions)} facts of {len(filings)} filings to {traces}")


if __name__ == "__main__":
    main()
