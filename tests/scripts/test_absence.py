"""The absence check of the unanswerable-in-scope examples (scripts/absence.py) and the builders that use it:
each refuses a fact some document in scope states, on the pages and on an index's chunks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pipeline.errors import ExamplesError
from pipeline.evaluation.examples import load_example_set, load_examples
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder
from tests.support.paths import DATASETS
from tests.support.scripts import load_script

absence = load_script("absence")
marker_hits, require_absent, index_chunks = absence.marker_hits, absence.require_absent, absence.index_chunks

PAGES = {
    "lease.md": ("THE TENANT pays a\nservice   charge of KSH 5,000.", "Sparking plugs are no parking."),
    "offer.md": ("The purchase price is KSH 76,000,000.",),
}


def test_markers_match_whole_words_across_line_breaks_and_case() -> None:
    hits = marker_hits(["service charge", "parking", "park"], PAGES, ["lease.md", "offer.md"])
    assert [(h.document, h.marker, h.unit, h.number) for h in hits] == [
        ("lease.md", "service charge", "page", 1),
        ("lease.md", "parking", "page", 2),
    ]
    assert "service charge of ksh 5,000" in hits[0].excerpt
    # "park" is not a word of "parking" or "sparking"; a regular expression names a pattern
    assert marker_hits([r"\d[\d,]* employees"], {"a": ("We employ 1,200 employees.",)}, ["a"])[0].number == 1


def test_an_absent_fact_passes_and_a_present_one_is_refused_naming_where() -> None:
    require_absent("rent-free", ["rent-free", "rent free"], ["lease.md", "offer.md"], PAGES)
    with pytest.raises(ExamplesError, match=r"lease\.md page 1: 'service charge' in \.\.\.the tenant pays a service"):
        require_absent("service charge", ["service charge"], ["lease.md"], PAGES)
    # only the documents in scope are read: the price is in the offer, not in the lease
    require_absent("price", ["purchase price"], ["lease.md"], PAGES)


def test_chunks_are_checked_beside_the_pages() -> None:
    chunks = {"offer.md": ("the agent's commission is 3%",)}
    require_absent("commission", ["commission"], ["offer.md"], PAGES)
    with pytest.raises(ExamplesError, match=r"offer\.md chunk 1: 'commission'"):
        require_absent("commission", ["commission"], ["offer.md"], PAGES, chunks)


def test_a_check_against_nothing_is_refused() -> None:
    with pytest.raises(ExamplesError, match="at least one marker"):
        require_absent("x", [], ["lease.md"], PAGES)
    with pytest.raises(ExamplesError, match="scope is empty"):
        require_absent("x", ["parking"], [], PAGES)
    with pytest.raises(ExamplesError, match="no text to check"):
        require_absent("x", ["parking"], ["missing.md"], PAGES)
    with pytest.raises(ExamplesError, match="marker is empty"):
        require_absent("x", [" "], ["lease.md"], PAGES)


def test_index_chunks_reads_a_built_index_by_relative_path(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "lease.md").write_text("# Lease\n\nThe tenant pays a service charge of KSH 5,000.\n", encoding="utf-8")
    (corpus / "offer.md").write_text("# Offer\n\nThe purchase price is KSH 76,000,000.\n", encoding="utf-8")
    build_index(corpus, tmp_path / "index", HashEmbedder(64))
    chunks = index_chunks(tmp_path / "index")
    assert set(chunks) == {"lease.md", "offer.md"}
    assert any("service charge" in text for text in chunks["lease.md"])
    with pytest.raises(ExamplesError, match=r"lease\.md chunk 1"):
        require_absent("x", ["service charge"], ["lease.md"], {"lease.md": ("",)}, chunks)


# ---- the builders refuse a present fact ------------------------------------------------------


def test_the_demo_builder_refuses_a_fact_the_selected_lease_states(monkeypatch: pytest.MonkeyPatch) -> None:
    demo = load_script("make_demo_traces")
    rent = demo.AbsentAsk("rent", demo.LEASE, ("What is the rent of {r}?", "What is the rent of {r}?"), ("rent",))
    monkeypatch.setattr(demo, "ABSENT_ASKS", (rent,))
    with pytest.raises(ExamplesError, match=r"banda-lane/lease\.pdf page \d+: 'rent'"):
        demo.build(demo.DEMO)


def test_the_contract_builder_refuses_a_term_the_agreement_has(monkeypatch: pytest.MonkeyPatch) -> None:
    contracts = load_script("make_contract_corpus")
    governing_law = replace(contracts.ABSENT_TERMS[0], markers=("governing law",))
    monkeypatch.setattr(contracts, "ABSENT_TERMS", (governing_law,))
    with pytest.raises(ExamplesError, match=r"northwind-helix-nda\.txt page 3: 'governing law'"):
        contracts.absent_in_scope_examples(DATASETS / "contracts")


def test_every_committed_unanswerable_in_scope_example_expects_not_found() -> None:
    sets = {
        "demo": load_example_set(DATASETS / "demo-traces"),
        "contracts": load_examples(DATASETS / "contracts-traces" / "dev.jsonl"),
        "sec": load_example_set(DATASETS / "sec-10q" / "traces"),
    }
    for name, examples in sets.items():
        absent = [e for e in examples if "absent_in_scope" in e.tags]
        assert {e.case for e in absent} == {"chip", "property"}, name
        for e in absent:
            assert e.expect_not_found and "not_in_scope" in e.tags, e.question
            assert not e.gold_documents and not e.gold_pages and not e.answer_facts, e.question
            assert not set(e.scope.document_ids) & set(e.forbidden_documents), e.question
            # the other companies' filings, the agreements the parties are no party to (a demo property may
            # have no confusable document)
            assert e.forbidden_documents or name == "demo", e.question
