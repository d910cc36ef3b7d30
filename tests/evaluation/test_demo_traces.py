"""The committed demo traces (datasets/demo-traces), checked against the demo documents themselves."""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from functools import cache

import pytest
from pypdf import PdfReader

from pipeline.evaluation.examples import CASES, SPLITS, LabelledExample, load_examples
from tests.support.paths import ROOT

DEMO = ROOT / "datasets" / "demo"
TRACES = ROOT / "datasets" / "demo-traces"
PAGE_BREAK = re.compile(r"^\s*<!--\s*pagebreak\s*-->\s*$", re.MULTILINE)


def norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def states(page: str, fact: str) -> bool:
    """`fact` as a whole in a normalised page: "5%" is not stated by "7.5%", nor "1160/88" by "1160/880"."""
    return re.search(r"(?<!\w)(?<!\d[.,/])" + re.escape(norm(fact)) + r"(?!\w|[.,/]\d)", page) is not None


@cache
def pages(relpath: str) -> tuple[str, ...]:
    """The pages of a demo document: Markdown without front matter split at page breaks, PDF pages by pypdf."""
    path = DEMO / relpath
    if path.suffix == ".pdf":
        return tuple(norm(page.extract_text() or "") for page in PdfReader(path).pages)
    text = path.read_text(encoding="utf-8")
    if text.startswith("---\n"):
        text = text.split("\n---\n", 1)[1]
    return tuple(norm(page) for page in PAGE_BREAK.split(text))


@cache
def manifest() -> dict[str, tuple[str, ...]]:
    data = tomllib.loads((DEMO / "corpus.toml").read_text(encoding="utf-8"))
    return {doc["path"]: tuple(doc["entities"]) for doc in data["documents"]}


@pytest.fixture(scope="module")
def by_split() -> dict[str, list[LabelledExample]]:
    return {split: load_examples(TRACES / f"{split}.jsonl") for split in SPLITS}


@pytest.fixture(scope="module")
def examples(by_split: dict[str, list[LabelledExample]]) -> list[LabelledExample]:
    return [e for split in SPLITS for e in by_split[split]]


def test_size_and_cases(examples: list[LabelledExample]) -> None:
    counts = Counter(e.case for e in examples)
    assert len(examples) >= 240
    assert all(counts[case] >= 60 for case in CASES), counts
    assert all(e.corpus == "demo" for e in examples)


def test_splits_are_fixed_disjoint_and_stratified(
    by_split: dict[str, list[LabelledExample]], examples: list[LabelledExample]
) -> None:
    for split, loaded in by_split.items():
        assert loaded and all(e.split == split for e in loaded)
    ids = [e.id for e in examples]
    assert len(ids) == len(set(ids))
    for case in CASES:
        n = {s: sum(1 for e in by_split[s] if e.case == case) for s in SPLITS}
        total = sum(n.values())
        assert abs(n["train"] / total - 0.6) < 0.08 and n["dev"] > 0 and n["test"] > 0, (case, n)
    # The same question with the same answer never sits in two splits.
    seen: dict[tuple[str, tuple[str, ...], tuple[str, ...]], str] = {}
    for e in examples:
        if e.expect_not_found:
            continue
        key = (norm(e.question), e.answer_facts, e.gold_documents)
        assert seen.setdefault(key, e.split or "") == e.split, e.question


def test_documents_exist_and_gold_lies_in_scope(examples: list[LabelledExample]) -> None:
    known = manifest()
    for e in examples:
        named = {*e.gold_documents, *e.forbidden_documents, *e.scope.document_ids, *(p.document for p in e.gold_pages)}
        assert named <= set(known), (e.question, named - set(known))
        assert set(e.gold_documents).isdisjoint(e.forbidden_documents)
        if e.scope.document_ids:
            assert set(e.gold_documents) <= set(e.scope.document_ids), e.question
        elif e.scope.property:
            assert all(e.scope.property in known[d] for d in e.gold_documents), e.question
        assert e.expected_plan == ("one_step" if e.scope.document_ids or e.scope.property else "two_step")


def test_every_answer_fact_occurs_in_a_gold_document(examples: list[LabelledExample]) -> None:
    for e in examples:
        if e.expect_not_found:
            assert not e.answer_facts and not e.gold_documents, e.question
            continue
        assert e.gold_documents and e.answer_facts, e.question
        for fact in e.answer_facts:
            assert any(states(page, fact) for d in e.gold_documents for page in pages(d)), (e.question, fact)


def test_gold_pages_state_a_fact(examples: list[LabelledExample]) -> None:
    for e in examples:
        for gold_page in e.gold_pages:
            assert gold_page.document in e.gold_documents
            assert gold_page.page is not None and gold_page.page <= len(pages(gold_page.document))
            text = pages(gold_page.document)[gold_page.page - 1]
            assert any(states(text, f) for f in e.answer_facts), (e.question, gold_page)


def test_not_found_examples_cite_nothing_and_forbid_the_bait(examples: list[LabelledExample]) -> None:
    for e in examples:
        if not e.expect_not_found:
            continue
        assert "not_in_scope" in e.tags and not e.gold_documents and not e.gold_pages, e.question
        if e.case == "wrong_property":
            assert e.forbidden_documents, e.question
        if "chip_of_other_property" in e.tags:
            # The selected documents are about another property: citing them answers the wrong question.
            assert set(e.scope.document_ids) <= set(e.forbidden_documents), e.question


def test_every_trap_is_exercised_by_a_wrong_property_example(examples: list[LabelledExample]) -> None:
    traps = tomllib.loads((DEMO / "traps.toml").read_text(encoding="utf-8"))["traps"]
    wrong = [e for e in examples if e.case == "wrong_property"]
    assert {t["document"] for t in traps} <= {d for e in wrong for d in (*e.gold_documents, *e.forbidden_documents)}
    for trap in traps:
        tagged = [e for e in wrong if f"trap:{trap['kind']}" in e.tags]
        side = "gold_documents" if trap["expected"] == "keep" else "forbidden_documents"
        assert any(trap["document"] in getattr(e, side) for e in tagged), trap


def test_wrong_property_covers_mismatches_near_addresses_and_lookalikes(examples: list[LabelledExample]) -> None:
    wrong = [e for e in examples if e.case == "wrong_property"]
    tags = Counter(t for e in wrong for t in e.tags)
    assert tags["trap:filename_content_mismatch"] >= 5 and tags["trap:near_identical_address"] >= 5
    assert any("B\u0430nda" in e.question for e in wrong)  # Cyrillic a in the question
    assert any("banda-road/lease.md" in e.forbidden_documents and "Banda Lane" in e.question for e in wrong)
    assert Counter(
        ("scope:none" in e.tags, "scope:chip" in e.tags, "scope:property" in e.tags) for e in wrong
    ).keys() == {
        (True, False, False),
        (False, True, False),
        (False, False, True),
    }


def test_multi_part_literal_and_not_in_scope_questions(examples: list[LabelledExample]) -> None:
    multi = [e for e in examples if "multi_part" in e.tags]
    assert len(multi) >= 20 and all(len(e.gold_sub_questions) >= 2 for e in multi if not e.expect_not_found)
    assert any("L.R. NO: 1160/88" in e.question for e in examples if "literal" in e.tags)
    assert any('"' in e.question for e in examples if "literal" in e.tags)
    for case in CASES:
        assert any(e.expect_not_found for e in examples if e.case == case), case
