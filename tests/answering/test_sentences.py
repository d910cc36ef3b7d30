"""What an answer may quote: sentences split from the kept chunks, Markdown structure and table rows cut into
pieces, ranked best match to the sub-question first."""

from __future__ import annotations

from pipeline.answering.sentences import MAX_SENTENCES, offered_sentences, structure_pieces, table_rows
from pipeline.intake.scope import resolve_scope
from pipeline.program.module import ScopedQA
from pipeline.store import Store
from pipeline.text import split_sentences
from pipeline.types import Chunk, ChunkHit


def test_split_sentences_keeps_abbreviations_and_caps_length() -> None:
    text = "The land is L.R. NO: 1159/215 in Karen. The rent is KSH 285,000.\nTenant: Mr. Otieno!  "
    assert split_sentences(text) == [
        "The land is L.R. NO: 1159/215 in Karen.",
        "The rent is KSH 285,000.",
        "Tenant: Mr. Otieno!",
    ]
    long = " ".join(["word"] * 200)
    pieces = split_sentences(long, max_chars=100)
    assert all(len(p) <= 100 for p in pieces) and " ".join(pieces) == long
    assert split_sentences("   \n ") == []


def test_a_long_table_text_is_cut_between_its_cells() -> None:
    row = "Notes due 2030 | ACW30 (Trading Symbol) | New York Stock Exchange (Name of exchange)"
    pieces = split_sentences(" ".join([row] * 4), max_chars=120)
    assert all(len(p) <= 120 for p in pieces)
    # no cell is split over two pieces: each piece after the first starts at a cell
    assert all(p.startswith("| ") for p in pieces[1:]) and all(
        "(Trading Symbol)" in p or "ACW30" not in p for p in pieces
    )


def test_split_sentences_keeps_a_clause_number_with_its_clause() -> None:
    text = "1. Term and rent 1.1 The term is 3 years. 2. Deposit is due.\n(b) Pay it, cf. clause 4. Paid in 2023."
    assert split_sentences(text) == [
        "1. Term and rent 1.1 The term is 3 years.",
        "2. Deposit is due.",
        "(b) Pay it, cf. clause 4.",
        "Paid in 2023.",
    ]


def _hit(row: int, text: str, page: int = 1, document: str | None = None) -> ChunkHit:
    return ChunkHit(chunk=Chunk(row, document or f"doc-{row}", page, 0, text), filename=f"f{row}.pdf", score=1.0)


def test_offered_sentences_put_the_best_match_to_the_question_first() -> None:
    chunks = [
        _hit(1, "The term is 3 years. The deposit is two months. Water is paid by the Tenant."),
        _hit(2, "The rent is KSH 285,000 per month. Rent rises by 5% a year.", 2),
    ]
    in_chunk_order = [s.text for s in offered_sentences(chunks, 900)]
    assert in_chunk_order[0] == "The term is 3 years."
    ranked = offered_sentences(chunks, 900, "What is the monthly rent?")
    assert [s.sentence_id for s in ranked] == [0, 1, 2, 3, 4]
    texts = [s.text for s in ranked]
    assert texts[0] == "The rent is KSH 285,000 per month."  # both words of the question
    assert texts.index("Rent rises by 5% a year.") < texts.index("The term is 3 years.")  # one word before none
    assert ranked[0].hit.filename == "f2.pdf"  # each sentence keeps its own chunk
    # no word of the question in any sentence: chunk order
    assert [s.text for s in offered_sentences(chunks, 900, "Who signed?")] == in_chunk_order


def test_a_sentence_cut_by_a_chunk_boundary_is_offered_once_whole() -> None:
    chunks = [
        _hit(1, "1.4 Interest is due. 2. Deposit 2.1 The Tenant pays KSH 570,000.", document="lease"),
        _hit(2, "Deposit 2.1 The Tenant pays KSH 570,000. The rent is KSH 5.", document="lease"),
        _hit(3, "The rent is KSH 5.5 million.", document="lease"),
        _hit(4, "Deposit 2.1 The Tenant pays KSH 570,000.", document="copy"),
    ]
    offered = offered_sentences(chunks, 900)
    assert [s.text for s in offered] == [
        "1.4 Interest is due.",
        "2. Deposit 2.1 The Tenant pays KSH 570,000.",
        "The rent is KSH 5.",  # not held in "KSH 5.5 million": whole tokens only
        "The rent is KSH 5.5 million.",
        "Deposit 2.1 The Tenant pays KSH 570,000.",  # another document stating it may be the one to cite
    ]
    assert offered[-1].hit.chunk.document_id == "copy"


def test_the_ranking_query_leaves_out_the_names_of_the_entity_owning_every_kept_chunk(demo_store: Store) -> None:
    program = ScopedQA(demo_store)
    scope = resolve_scope(demo_store, property_ref="Banda Lane")
    owned = demo_store.entity_document_ids(scope.entity_id or "")[:2]
    hits = [ChunkHit(chunk=Chunk(i, d, 1, 0, "text"), filename="f.pdf", score=1.0) for i, d in enumerate(owned)]
    question = "What is the monthly rent for Banda Lane?"
    assert len(owned) == 2 and "Banda" not in program._ranking_query(question, hits)
    assert "rent" in program._ranking_query(question, hits)
    # a chunk of a document the entity does not own: its name stays (it tells the documents apart)
    other = next(
        d for d in demo_store.catalog.documents if d not in demo_store.entity_document_ids(scope.entity_id or "")
    )
    mixed = [*hits, ChunkHit(chunk=Chunk(9, other, 1, 0, "text"), filename="g.pdf", score=1.0)]
    assert "Banda Lane" in program._ranking_query(question, mixed)


def test_offered_sentences_are_capped_after_ranking() -> None:
    filler = " ".join(f"Clause {i} says nothing." for i in range(MAX_SENTENCES + 5))
    chunks = [_hit(1, filler), _hit(2, "The rent is KSH 9.")]
    assert len(offered_sentences(chunks, 20_000)) == MAX_SENTENCES
    assert all("rent" not in s.text for s in offered_sentences(chunks, 20_000))
    ranked = offered_sentences(chunks, 20_000, "What is the rent?")
    assert len(ranked) == MAX_SENTENCES and ranked[0].text == "The rent is KSH 9."


STATEMENT = (
    "(In millions) Three Months Ended December 31, 2022 December 25, 2021 Net sales: Products $ 96,388 $ 104,429 "
    "Services 20,766 19,516 Total net sales 117,154 123,945 Gross margin 50,332 54,243 "
    "Total gross margin percentage 44.3 % 43.7 %"
)


def test_a_tables_flattened_text_is_cut_into_rows_with_their_dates_in_the_labels() -> None:
    rows = table_rows(STATEMENT)
    assert rows == [
        "(In millions) Three Months Ended December 31, 2022 December 25, 2021",  # the column headings
        "Net sales: Products $ 96,388 $ 104,429",
        "Services 20,766 19,516",
        "Total net sales 117,154 123,945",
        "Gross margin 50,332 54,243",
        "Total gross margin percentage 44.3 % 43.7 %",
    ]


def test_prose_and_label_lists_with_a_few_figures_stay_whole() -> None:
    prose = "The Tenant shall pay rent of KSH 285,000 per month (KSH 3,420,000 per year), in advance."
    fields = "Term: 3 years Commencement date: 1 March 2023 Monthly rent: KSH 285,000 Deposit: KSH 570,000 Page 1 of 4"
    assert table_rows(prose) == [prose] and table_rows(fields) == [fields]


def test_markdown_headings_lists_and_table_rows_become_pieces() -> None:
    text = (
        "# INSPECTION REPORT | Item | Detail | | --- | --- | | Inspection date | 20 May 2024 | "
        "| Inspector | Eng. Moses Wekesa | ## Findings - Roof: leaking tiles. - Plumbing: low pressure."
    )
    assert structure_pieces(text) == [
        "INSPECTION REPORT | Item | Detail",
        "Inspection date | 20 May 2024",
        "Inspector | Eng. Moses Wekesa",
        "Findings",
        "Roof: leaking tiles.",
        "Plumbing: low pressure.",
    ]
