"""The hand-labelled set of Enterprise RAG Challenge round 2 question forms (datasets/erc-forms): the examples
are what scripts/make_erc_forms_set.py makes of the labels, valid, split by company, every form in both splits,
and every stated answer rests on a real page that carries its quote as the project's reader reads it."""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from pipeline.evaluation.examples import LabelledExample, load_example_set, load_examples
from tests.support.paths import DATASETS, ROOT
from tests.support.scripts import load_script

SET = DATASETS / "erc-forms"
PDFS = ROOT.parent / "shared" / "data" / "erc-round1" / "pdfs"
MANIFEST = DATASETS / "erc-round1" / "corpus.toml"
EVENTS = ("mergers", "buyback", "dividend_policy", "esg", "capital_structure", "product_launch")
FAMILIES = {*(f"event:{e}" for e in EVENTS), "leadership_titles", "new_executives", "metric", "compare"}
Q = r'"(?P<c>[^"]+)"'
SHAPES = {
    "event:mergers": rf"Did {Q} mention any mergers or acquisitions in the annual report\? If there is no mention, "
    r"return False\.",
    "event:buyback": rf"Did {Q} announce a share buyback plan in the annual report\? If there is no mention, return "
    r"False\.",
    "event:dividend_policy": rf"Did {Q} announce any changes to its dividend policy in the annual report\? If there "
    r"is no mention, return False\.",
    "event:esg": rf"Did {Q} announce any new ESG initiatives in the annual report\? If there is no mention, return "
    r"False\.",
    "event:capital_structure": rf"Did {Q} mention any changes to its capital structure in the annual report\? If "
    r"there is no mention, return False\.",
    "event:product_launch": rf"Did {Q} report any new product launches in the annual report\? If there is no "
    r"mention, return False\.",
    "leadership_titles": rf"Which leadership positions changed at {Q} in the reporting period\? If data is not "
    r"available, return 'N/A'\. Give me the title of the position\.",
    "new_executives": rf"What are the names of all new executives that took on new leadership positions in {Q}\?",
    "metric": rf"What was the value of .+ of {Q} at the end of the period listed in the annual report\? If data is "
    r"not available, return 'N/A'\.",
    "compare": r"Which of the companies had the highest .+ in the reporting period: (\"[^\"]+\"(, )?)+\? If data for "
    r"the company is not available, exclude it from the comparison\.",
}

builder = load_script("make_erc_forms_set")


def _family(form: str) -> str:
    return form.split(":", 1)[0] if form.startswith(("metric:", "compare:")) else form


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


@pytest.fixture(scope="module")
def labels() -> list[dict[str, Any]]:
    read: list[dict[str, Any]] = builder.read_labels(SET / "labels.jsonl")
    return read


@pytest.fixture(scope="module")
def examples() -> list[LabelledExample]:
    return load_example_set(SET)


def test_the_files_are_what_the_builder_makes_of_the_labels(labels, examples) -> None:  # type: ignore[no-untyped-def]
    made = builder.examples(labels)
    for split in ("dev", "test"):
        written = load_examples(SET / f"{split}.jsonl")
        assert [e.model_dump() for e in made if e.split == split] == [e.model_dump() for e in written]
    assert len(made) == len(examples) == len(labels)
    assert load_examples(SET / "train.jsonl") == []
    assert len(examples) >= 130


def test_questions_are_in_the_forms_and_quote_companies_of_the_corpus(labels) -> None:  # type: ignore[no-untyped-def]
    manifest = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))
    names = {e["name"]: e["slug"] for e in manifest["entities"]}
    documents = {d["path"]: d["entities"] for d in manifest["documents"]}
    for label in labels:
        family = _family(label["form"])
        match = re.fullmatch(SHAPES[family], label["question"])
        assert match, label["question"]
        quoted = re.findall(r'"([^"]+)"', label["question"])
        if label["company"]:
            assert quoted == [label["company"]]
            assert documents[label["document"]] == [names[label["company"]]]
        else:
            assert quoted == label["companies"] and len(quoted) >= 2
        assert set(quoted) <= set(names)


def test_labels_are_consistent_with_their_schema(labels) -> None:  # type: ignore[no-untyped-def]
    for label in labels:
        answer, pages, quote = label["answer"], label["pages"], label["quote"]
        assert label["note"], label["question"]
        assert len(quote.split()) <= 40
        absent = builder.is_absent(answer)
        if label["schema"] == "boolean":
            assert isinstance(answer, bool)
            assert bool(pages) == bool(quote) == answer, label["question"]
        elif absent:
            assert not pages and not quote, label["question"]
        elif label["schema"] in ("names", "number"):
            assert pages and quote, label["question"]
        if label["schema"] == "number" and not absent:
            assert isinstance(answer, (int, float)) and not isinstance(answer, bool)
            assert label["currency"] is None or re.fullmatch(r"[A-Z]{3}", label["currency"])
        if label["schema"] == "name":
            values = {c: v for c, v in label["values"].items() if not builder.is_absent(v)}
            assert answer == max(values, key=lambda c: values[c]) and answer in label["companies"]


def test_dev_and_test_share_no_company_and_every_form_is_in_both(examples) -> None:  # type: ignore[no-untyped-def]
    def companies(split: str) -> set[str]:
        return {t for e in examples if e.split == split for t in e.tags if t.startswith("company:")}

    def documents(split: str) -> set[str]:
        return {d for e in examples if e.split == split for d in e.gold_documents}

    assert companies("dev") and not companies("dev") & companies("test")
    assert not documents("dev") & documents("test")
    for split in ("dev", "test"):
        forms = Counter(
            _family(t.split(":", 1)[1]) for e in examples if e.split == split for t in e.tags if t.startswith("form:")
        )
        assert set(forms) == FAMILIES, split
        assert any(e.expect_not_found for e in examples if e.split == split)
    events = [e for e in examples if e.expected_value and e.expected_value.kind == "boolean"]
    share = sum(e.expected_value.value is True for e in events if e.expected_value) / len(events)
    assert 0.3 < share < 0.7


def test_absent_answers_expect_not_found_and_stated_ones_name_their_pages(examples) -> None:  # type: ignore[no-untyped-def]
    for example in examples:
        value = example.expected_value
        assert value is not None
        assert example.expect_not_found == value.absent
        assert not example.answer_facts
        if value.absent or value.value is False:
            assert not example.gold_documents and not example.gold_pages
        else:
            assert example.gold_pages and {p.document for p in example.gold_pages} == set(example.gold_documents)


def _stated_pages(labels: Sequence[dict[str, Any]]) -> dict[str, set[int]]:
    pages: dict[str, set[int]] = {}
    for label in labels:
        if label["company"]:
            pages.setdefault(label["document"], set()).update(label["pages"])
        for gold in label.get("gold", ()):
            pages.setdefault(gold["document"], set()).add(gold["page"])
    return pages


def test_every_gold_page_is_a_page_of_its_report(labels) -> None:  # type: ignore[no-untyped-def]
    if not PDFS.is_dir():
        pytest.skip(f"{PDFS} not present")
    import pypdfium2

    for document, pages in _stated_pages(labels).items():
        pdf = pypdfium2.PdfDocument(PDFS / document)
        try:
            count = len(pdf)
        finally:
            pdf.close()
        assert all(1 <= p <= count for p in pages), (document, sorted(pages), count)


def test_every_quote_is_on_its_page_as_the_reader_reads_it(labels) -> None:  # type: ignore[no-untyped-def]
    if not PDFS.is_dir():
        pytest.skip(f"{PDFS} not present")
    from pipeline.store.reading import read_source

    quoted = [label for label in labels if label["quote"]]
    for document in sorted({label["document"] for label in quoted}):
        source = read_source(PDFS / document, document)
        for label in (lab for lab in quoted if lab["document"] == document):
            on_pages = [_norm(source.pages[p - 1]) for p in label["pages"]]
            assert any(_norm(label["quote"]) in page for page in on_pages), (document, label["pages"], label["quote"])
