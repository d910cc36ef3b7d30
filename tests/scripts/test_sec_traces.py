"""SEC 10-Q question set -> labelled traces, on the real CSV (skipped when it is not beside the project)."""

from __future__ import annotations

from collections import Counter

import pytest

from pipeline.errors import ExamplesError
from pipeline.evaluation.examples import CASES, SPLITS, LabelledExample, load_examples
from pipeline.evaluation.metrics import number_values
from tests.support.paths import ROOT
from tests.support.scripts import load_script

sec = load_script("make_sec_traces")
facts = load_script("sec_answer_facts")
filings = load_script("sec_filings")
SEC_DOCUMENTS = filings.SEC_DOCUMENTS
extract_facts, gold_pages, locates_page = facts.extract_facts, facts.gold_pages, facts.locates_page
names_company, split_of, swap_company, ticker_of = (
    filings.names_company,
    filings.split_of,
    filings.swap_company,
    filings.ticker_of,
)
read_questions, resolve_glob, sec_examples = sec.read_questions, sec.resolve_glob, sec.sec_examples
CSV = ROOT.parent / "shared" / "data" / "sec-10q" / "qna_data.csv"
COMMITTED = ROOT / "datasets" / "sec-10q" / "traces"

needs_csv = pytest.mark.skipif(not CSV.is_file(), reason=f"{CSV} not present")


@pytest.fixture(scope="module")
def examples() -> list[LabelledExample]:
    if not CSV.is_file():
        pytest.skip(f"{CSV} not present")
    return sec_examples(CSV)


def _by_question(examples: list[LabelledExample], start: str, case: str = "chip") -> LabelledExample:
    found = [e for e in examples if e.question.startswith(start) and e.case == case]
    assert len(found) == 1, start
    return found[0]


# ---- globs and companies ------------------------------------------------------------------


def test_the_twenty_known_filings() -> None:
    assert len(SEC_DOCUMENTS) == 20
    assert "2022 Q3 AAPL.pdf" in SEC_DOCUMENTS and "2023 Q3 NVDA.pdf" in SEC_DOCUMENTS
    assert ticker_of("2023 Q3 AAPL.pdf") == "AAPL"


def test_source_globs_resolve_against_the_known_filings() -> None:
    assert resolve_glob("*AAPL*") == ("2022 Q3 AAPL.pdf", "2023 Q1 AAPL.pdf", "2023 Q2 AAPL.pdf", "2023 Q3 AAPL.pdf")
    assert resolve_glob("*2023 Q3 AAPL*") == ("2023 Q3 AAPL.pdf",)
    assert resolve_glob(" *2022 Q3 INTC* ") == ("2022 Q3 INTC.pdf",)
    with pytest.raises(ExamplesError, match="matches none"):
        resolve_glob("*2021 Q1 AAPL*")


def test_swap_company_keeps_the_quarters() -> None:
    assert swap_company(("2023 Q1 AAPL.pdf", "2023 Q3 AAPL.pdf"), "MSFT") == ("2023 Q1 MSFT.pdf", "2023 Q3 MSFT.pdf")


def test_company_names_are_matched_as_words() -> None:
    assert names_company("What was Apple's revenue?", "AAPL")
    assert names_company("How did NVIDIA's margin change?", "NVDA")
    assert not names_company("What was the pineapple revenue?", "AAPL")


def test_split_is_a_stable_hash_of_the_question() -> None:
    assert split_of("What was Apple's revenue?") == split_of("  what was   APPLE'S revenue? ")
    buckets = Counter(split_of(f"question {i}") for i in range(2000))
    assert set(buckets) == set(SPLITS)
    assert 0.55 < buckets["train"] / 2000 < 0.65


# ---- fact extraction --------------------------------------------------------------------------


def test_facts_prefer_amounts_then_dates_and_skip_source_notes() -> None:
    answer = (
        "1. For the quarter ended June 25, 2022, net sales were $82,959 million, up 2% (SOURCE: 2022 Q3 AAPL.pdf).\n"
        "2. In fiscal 2023 the company repurchased 7.5 million shares for $ 3.1 billion.\n\n"
        'SOURCE(S): "2022 Q3 AAPL.pdf", 2023 Q1 AAPL.pdf'
    )
    assert extract_facts(answer) == ("June 25, 2022", "$82,959 million", "2%", "7.5 million shares", "$3.1 billion")
    assert extract_facts(answer, limit=2) == ("$82,959 million", "2%")


def test_a_lone_date_is_not_a_fact() -> None:
    assert extract_facts("For the quarter ended July 1, 2023, margins fell on currency weakness.") == ()
    assert extract_facts("No significant acquisitions were reported.\n\nSOURCE(S): 2023 Q2 AAPL.pdf") == ()


def test_stated_figures_are_preferred_to_derived_ones() -> None:
    answer = "Revenue was $2.294 billion and $1,000 million; the margin was 47.55%, and costs $12 million."
    known = number_values("Revenue 2,294 ... 1,000 ... costs 12")
    assert extract_facts(answer, limit=3, known=known) == ("$2.294 billion", "$1,000 million", "$12 million")
    # Below the limit a derived figure stays: it may be what the question asks for.
    assert "47.55%" in extract_facts(answer, known=known)


def test_only_specific_figures_locate_a_page() -> None:
    assert locates_page("$82,959 million") and locates_page("46.7%") and locates_page("$6.105 billion")
    assert not locates_page("80%") and not locates_page("2%") and not locates_page("June 25, 2022")


def test_gold_pages_are_the_pages_stating_a_specific_figure() -> None:
    pages = {
        "a.pdf": [number_values(t) for t in ("cover 2022", "net sales 82,959 and 80", "total 82,959", "80 80")],
        "b.pdf": [number_values(t) for t in ("1,000", "1,000", "1,000", "1,000", "1,000")],
    }
    found = gold_pages(("$82,959 million", "80%", "$1,000 million"), ("a.pdf", "b.pdf"), pages)
    # "80%" is too common to locate anything; $1,000 million is on all five pages of b.pdf: no page.
    assert [(p.document, p.page) for p in found] == [("a.pdf", 2), ("a.pdf", 3)]


def test_committed_traces_carry_gold_pages_where_a_figure_locates_them() -> None:
    sales = next(
        e
        for s in SPLITS
        for e in load_examples(COMMITTED / f"{s}.jsonl")
        if e.case == "chip" and e.question == "How has Apple's total net sales changed over time?"
    )
    # Hand-checked: page 4 of each filing is its condensed consolidated statement of operations.
    assert {("2022 Q3 AAPL.pdf", 4), ("2023 Q3 AAPL.pdf", 4)} <= {(p.document, p.page) for p in sales.gold_pages}
    assert {p.document for p in sales.gold_pages} <= set(sales.gold_documents)


@needs_csv
def test_hand_checked_facts_of_real_answers(examples: list[LabelledExample]) -> None:
    sales = _by_question(examples, "How has Apple's total net sales changed over time?")
    assert sales.gold_documents == resolve_glob("*AAPL*")
    assert {"$82,959 million", "$117,154 million", "$94,836 million", "$81,797 million"} <= set(sales.answer_facts)
    assert "June 25, 2022" in sales.answer_facts
    assert len(sales.answer_facts) == 6
    nvda = _by_question(examples, "What were the main contributors to NVIDIA's net income in the second quarter")
    assert nvda.gold_documents == ("2023 Q2 NVDA.pdf",)
    assert nvda.answer_facts[:3] == ("$13,507 million", "$9,462 million", "$6,800 million")
    opex = _by_question(examples, "How did NVIDIA's operating expenses compare to its revenues in Q1 2023?")
    assert opex.answer_facts == ("34.9%",)
    intel = _by_question(examples, "What was Intel's R&D expenditure in Q1 2023")
    assert intel.answer_facts == ("$4,109 million",)
    amazon = _by_question(examples, "For Amazon's Q1 2023 10-Q, align the details of debt")
    assert {"$68.5 billion", "$972 million", "$7.8 billion", "$8.0 billion"} <= set(amazon.answer_facts)
    assert all(len(e.answer_facts) <= 6 for e in examples)


# ---- the whole question set -------------------------------------------------------------------


@needs_csv
def test_every_question_becomes_five_examples(examples: list[LabelledExample]) -> None:
    questions = read_questions(CSV)
    assert len(questions) == 195
    assert all(len(q.tickers) == 1 for q in questions)
    counts = Counter(e.case for e in examples)
    assert counts == {"chip": 195, "property": 195, "no_scope": 195, "wrong_property": 390}
    assert len({e.id for e in examples}) == len(examples)
    assert all(e.corpus == "sec-10q" for e in examples)


@needs_csv
def test_answerable_examples_are_scoped_to_their_filings(examples: list[LabelledExample]) -> None:
    for e in examples:
        if e.case == "wrong_property":
            continue
        ticker = ticker_of(e.gold_documents[0])
        assert e.gold_documents and all(ticker_of(d) == ticker for d in e.gold_documents)
        assert not e.expect_not_found
        assert set(e.forbidden_documents) == {d for d in SEC_DOCUMENTS if ticker_of(d) != ticker}
        if e.case == "chip":
            assert e.scope.document_ids == e.gold_documents and e.expected_plan == "one_step"
        elif e.case == "property":
            assert e.scope.property == ticker.lower() and e.expected_plan == "one_step"
        else:
            assert e.scope.document_ids == () and e.scope.property is None and e.expected_plan == "two_step"


@needs_csv
def test_wrong_entity_variants_never_have_the_answer_in_scope(examples: list[LabelledExample]) -> None:
    truth = {(e.question, e.case): e.gold_documents for e in examples if e.case == "chip"}
    wrong = [e for e in examples if e.case == "wrong_property"]
    assert Counter(t for e in wrong for t in e.tags if t.startswith("scope:")) == {
        "scope:chip": 195,
        "scope:property": 195,
    }
    for e in wrong:
        gold = truth[(e.question, "chip")]
        true_ticker = ticker_of(gold[0])
        assert e.expect_not_found and not e.gold_documents and not e.answer_facts
        assert set(gold) <= set(e.forbidden_documents)
        if e.scope.document_ids:
            assert not set(e.scope.document_ids) & set(gold)
            assert {ticker_of(d) for d in e.scope.document_ids} != {true_ticker}
            assert set(e.scope.document_ids) <= set(e.forbidden_documents)
        else:
            assert e.scope.property is not None and e.scope.property != true_ticker.lower()
        assert "wrong_entity" in e.tags and "not_in_scope" in e.tags


@needs_csv
def test_variants_of_a_question_share_a_split(examples: list[LabelledExample]) -> None:
    splits: dict[str, set[str | None]] = {}
    for e in examples:
        splits.setdefault(e.question, set()).add(e.split)
    assert all(len(s) == 1 and None not in s for s in splits.values())
    per_case = Counter((e.case, e.split) for e in examples)
    for case in CASES:
        assert all(per_case[(case, s)] > 0 for s in SPLITS)


@needs_csv
def test_committed_files_match_the_question_set(examples: list[LabelledExample]) -> None:
    committed = {s: load_examples(COMMITTED / f"{s}.jsonl") for s in SPLITS}
    for split, loaded in committed.items():
        assert all(e.split == split for e in loaded)
    ids = [e.id for loaded in committed.values() for e in loaded]
    assert len(ids) == len(set(ids))
    # Ids hash only question and scope, so they agree whether or not facts were checked against the filings.
    # Beside the question set's examples, only the computed-figure and unanswerable-in-scope ones.
    question_set = {e.id for e in examples}
    added = {e.id for loaded in committed.values() for e in loaded if {"computed", "absent_in_scope"} & set(e.tags)}
    assert set(ids) == question_set | added and not question_set & added
