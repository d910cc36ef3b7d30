"""Ingest and store: stable ids, page numbers, bad inputs named, manifest checks, filtered search."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fpdf import FPDF

from pipeline.errors import IndexCorruptError, IndexNotFoundError, InputFileError, UnknownScopeError
from pipeline.store import open_store
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder

MANIFEST = """
format = "scoperag-corpus/v1"
name = "tiny"
entity_kind = "property"
exclude = ["notes/*"]

[[entities]]
slug = "banda-lane"
name = "Banda Lane"
aliases = ["14 Banda Lane", "L.R. NO: 2327/30"]

[[entities]]
slug = "dik-dik-lane"
name = "Dik Dik Lane"

[[documents]]
path = "banda/*"
entities = ["banda-lane"]

[[documents]]
path = "dikdik/valuation.pdf"
entities = ["dik-dik-lane"]
type = "valuation"
"""

LEASE = """---
title: Lease of 14 Banda Lane
type: lease
summary: Lease of 14 Banda Lane to Amina Otieno at KSH 120,000 per month.
---
# Lease
The tenant Amina Otieno shall pay KSH 120,000 per month for 14 Banda Lane.
<!-- pagebreak -->
The term is five years from 1 March 2023. The parcel is L.R. NO: 2327/30.
"""


def _pdf(path: Path, pages: list[str], subject: str | None) -> None:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    if subject:
        pdf.set_subject(subject)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
    pdf.output(str(path))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "banda").mkdir(parents=True)
    (root / "dikdik").mkdir()
    (root / "notes").mkdir()
    (root / "corpus.toml").write_text(MANIFEST)
    (root / "banda" / "lease.md").write_text(LEASE)
    (root / "banda" / "inspection.txt").write_text(
        "Inspection of 14 Banda Lane found a leaking roof. The plumbing is sound.\fSecond page: gutters."
    )
    _pdf(
        root / "dikdik" / "valuation.pdf",
        ["Valuation of 3 Dik Dik Lane by Knight Frank.", "Market value KSH 45,000,000 as at June 2023."],
        None,
    )
    (root / "notes" / "ignored.md").write_text("not a document")
    return root


def _build(corpus: Path, out: Path) -> None:
    build_index(corpus, out, HashEmbedder(32))


def test_ids_are_stable_across_rebuilds(corpus: Path, tmp_path: Path) -> None:
    _build(corpus, tmp_path / "a")
    _build(corpus, tmp_path / "b")
    first = open_store(tmp_path / "a", HashEmbedder(32)).catalog
    second = open_store(tmp_path / "b", HashEmbedder(32)).catalog
    assert list(first.documents) == list(second.documents)
    assert list(first.entities) == list(second.entities)
    assert len(first.documents) == 3  # notes/ excluded by the manifest


def test_catalog_keeps_pages_metadata_and_relationships(corpus: Path, tmp_path: Path) -> None:
    _build(corpus, tmp_path / "idx")
    store = open_store(tmp_path / "idx", HashEmbedder(32))
    docs = {d.relpath: d for d in store.catalog.documents.values()}
    lease, inspection, valuation = (
        docs["banda/lease.md"],
        docs["banda/inspection.txt"],
        docs["dikdik/valuation.pdf"],
    )
    assert lease.title == "Lease of 14 Banda Lane" and lease.doc_type == "lease" and lease.page_count == 2
    assert lease.summary.startswith("Lease of 14 Banda Lane to Amina Otieno")
    assert valuation.page_count == 2 and valuation.doc_type == "valuation"
    assert valuation.summary.startswith("Valuation of 3 Dik Dik Lane")  # extractive: no metadata summary
    banda = store.resolve_entity("14 banda lane")
    assert banda.slug == "banda-lane"
    assert set(store.entity_document_ids(banda.entity_id)) == {lease.document_id, inspection.document_id}
    pages = {
        c.page for c in store.catalog.chunks(range(store.catalog.chunk_count)) if c.document_id == lease.document_id
    }
    assert pages == {1, 2}
    hits = store.search_chunks("parcel L.R. NO: 2327/30", k=1, mode="bm25")
    assert hits[0].chunk.document_id == lease.document_id and hits[0].chunk.page == 2


def test_bad_inputs_are_reported_by_name(corpus: Path, tmp_path: Path) -> None:
    (corpus / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    (corpus / "empty.txt").write_bytes(b"")
    (corpus / "letter.docx").write_bytes(b"PK\x03\x04")
    (corpus / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    report = build_index(corpus, tmp_path / "idx", HashEmbedder(32))
    reasons = {e.path: e.reason for e in report.skipped}
    assert set(reasons) == {"broken.pdf", "empty.txt", "letter.docx", "latin1.txt"}
    assert "PDF" in reasons["broken.pdf"] and "empty" in reasons["empty.txt"]
    assert "unsupported file type '.docx'" in reasons["letter.docx"] and "UTF-8" in reasons["latin1.txt"]
    assert report.documents == 3
    with pytest.raises(InputFileError, match=r"broken\.pdf"):
        build_index(corpus, tmp_path / "strict", HashEmbedder(32), strict=True)


def test_filtered_search_returns_k_inside_the_filter(corpus: Path, tmp_path: Path) -> None:
    _build(corpus, tmp_path / "idx")
    store = open_store(tmp_path / "idx", HashEmbedder(32))
    banda = store.resolve_entity("Banda Lane")
    allowed = store.entity_document_ids(banda.entity_id)
    total = sum(1 for c in store.catalog.chunks(range(store.catalog.chunk_count)) if c.document_id in allowed)
    for mode in ("bm25", "dense", "hybrid"):
        hits = store.search_chunks("valuation Knight Frank market value", k=total, document_ids=allowed, mode=mode)
        assert {h.chunk.document_id for h in hits} <= set(allowed)
        if mode != "bm25":  # dense scores every allowed chunk, so k are always found
            assert len(hits) == total
    docs = store.search_documents("valuation", k=5, document_ids=allowed)
    assert {d.document.document_id for d in docs} <= set(allowed)


def test_store_rejects_non_canonical_and_unknown_ids(corpus: Path, tmp_path: Path) -> None:
    _build(corpus, tmp_path / "idx")
    store = open_store(tmp_path / "idx", HashEmbedder(32))
    good = next(iter(store.catalog.documents))
    for bad in (
        good.upper(),
        "{" + good + "}",
        "urn:uuid:" + good,
        good.replace("-", ""),
        "00000000-0000-0000-0000-000000000000",
    ):
        with pytest.raises(UnknownScopeError):
            store.search_chunks("rent", document_ids=[good, bad])
    with pytest.raises(UnknownScopeError, match="known: banda-lane, dik-dik-lane"):
        store.resolve_entity("Banda Road")


def test_opening_checks_the_manifest(corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(IndexNotFoundError, match="scoperag index"):
        open_store(tmp_path / "nothing", HashEmbedder(32))
    _build(corpus, tmp_path / "idx")
    manifest = json.loads((tmp_path / "idx" / "MANIFEST.json").read_text())
    victim = tmp_path / "idx" / manifest["generation"] / "chunks_dense" / "vectors.npy"
    victim.write_bytes(victim.read_bytes()[:-8])
    with pytest.raises(IndexCorruptError, match=r"chunks_dense/vectors\.npy has"):
        open_store(tmp_path / "idx", HashEmbedder(32))


def test_hash_check_catches_same_size_tampering(corpus: Path, tmp_path: Path) -> None:
    _build(corpus, tmp_path / "idx")
    manifest = json.loads((tmp_path / "idx" / "MANIFEST.json").read_text())
    victim = tmp_path / "idx" / manifest["generation"] / "catalog.sqlite"
    data = bytearray(victim.read_bytes())
    data[-1] ^= 0xFF
    victim.write_bytes(bytes(data))
    open_store(tmp_path / "idx", HashEmbedder(32))  # sizes still agree
    with pytest.raises(IndexCorruptError, match="sha256"):
        open_store(tmp_path / "idx", HashEmbedder(32), verify_hashes=True)


def test_wrong_embedder_is_refused(corpus: Path, tmp_path: Path) -> None:
    from pipeline.errors import EmbedderError

    _build(corpus, tmp_path / "idx")
    with pytest.raises(EmbedderError, match="hash-32"):
        open_store(tmp_path / "idx", HashEmbedder(16))


HIDDEN_LEASE = """---
title: "Le\u200base of 14 Banda Lane"
summary: "Lease of 14 Ba\u200dnda Lane\U000e0063\U000e0069\U000e0074\U000e0065."
---
The ten\u200bant shall pay KSH 120,000 per mo\u2060nth.\u202e1 egap dm.esael\u202c
Ignore this\ufe0f\U000e0100 line.\ufeff
"""


def test_hidden_characters_are_stripped_and_reported_at_ingest(corpus: Path, tmp_path: Path) -> None:
    from pipeline.text import HIDDEN_TRANSLATION

    (corpus / "banda" / "hidden.md").write_text(HIDDEN_LEASE)
    report = build_index(corpus, tmp_path / "idx", HashEmbedder(32))
    assert report.hidden == (("banda/hidden.md", {"zero_width": 5, "tag": 4, "bidi": 2, "variation_selector": 2}),)
    assert report.manifest.counts["hidden_characters_removed"] == 13
    store = open_store(tmp_path / "idx", HashEmbedder(32))
    doc = next(d for d in store.catalog.documents.values() if d.relpath == "banda/hidden.md")
    assert (doc.title, doc.summary) == ("Lease of 14 Banda Lane", "Lease of 14 Banda Lane.")
    texts = [c.text for c in store.catalog.chunks(store.catalog.rows_for_documents([doc.document_id]).tolist())]
    assert texts and all(not set(map(ord, t)) & set(HIDDEN_TRANSLATION) for t in texts)
    # the words the characters split are whole again, so they are found
    hits = store.search_chunks("tenant month", k=1, document_ids=[doc.document_id])
    assert hits and "tenant shall pay KSH 120,000 per month" in hits[0].chunk.text


def test_an_empty_metadata_summary_is_recorded_as_extractive(corpus: Path, tmp_path: Path) -> None:
    import sqlite3

    (corpus / "banda" / "blank.md").write_text('---\nsummary: "\u200b"\n---\nThe tenant shall keep the garden tidy.\n')
    report = build_index(corpus, tmp_path / "idx", HashEmbedder(32))
    catalog = tmp_path / "idx" / report.manifest.generation / "catalog.sqlite"
    with sqlite3.connect(catalog) as db:
        row = db.execute("SELECT summary, summary_source FROM documents WHERE relpath = 'banda/blank.md'").fetchone()
    assert row == ("The tenant shall keep the garden tidy.", "extractive")


def test_a_second_build_into_the_same_index_is_refused(corpus: Path, tmp_path: Path) -> None:
    from pipeline.errors import IndexBusyError
    from pipeline.store.generations import build_lock

    out = tmp_path / "idx"
    _build(corpus, out)
    before = open_store(out, HashEmbedder(32)).manifest.generation
    with build_lock(out), pytest.raises(IndexBusyError, match=rf"pid {os.getpid()}.*another --out"):
        _build(corpus, out)
    assert open_store(out, HashEmbedder(32)).manifest.generation == before
    assert not list(out.glob(".building-*"))
    _build(corpus, out)  # the lock is released with its holder
    assert open_store(out, HashEmbedder(32)).manifest.generation != before


def test_a_manifest_given_from_outside_replaces_the_folders_own(corpus: Path, tmp_path: Path) -> None:
    """`--manifest` from elsewhere: the folder's own corpus.toml is neither read nor taken for a document."""
    outside = tmp_path / "elsewhere.toml"
    outside.write_text(MANIFEST.replace('name = "tiny"', 'name = "tiny-outside"'))
    report = build_index(corpus, tmp_path / "idx", HashEmbedder(32), manifest_path=outside, strict=True)
    assert report.skipped == () and report.documents == 3
    store = open_store(tmp_path / "idx", HashEmbedder(32))
    assert store.manifest.corpus == "tiny-outside"
    assert "corpus.toml" not in {d.relpath for d in store.catalog.documents.values()}
