"""The page index: a page whose words answer a question is found although no single chunk of it does."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from pipeline.errors import IndexCorruptError
from pipeline.settings import BuildSettings, CoreConfig
from pipeline.store import Store
from pipeline.store.pages import PAGES_BM25, PAGES_FIGURES, PAGES_FIRST_ROWS, PageIndex, figure_share
from pipeline.text import word_terms
from tests.support.stores import store_of

QUESTION = "research development selling marketing restructuring charges"
# Page 2 is a statement: every term of the question is a row label, each far from the others among
# columns of figures, so each of its chunks holds one label. Pages 1 and 3 are prose that repeats
# two of the terms in one chunk: the best single chunk is theirs, the best page is page 2.
STATEMENT = "\n".join(
    f"{label} " + " ".join(f"{n},{n % 997:03d}" for n in range(100 * i, 100 * i + 24))
    for i, label in enumerate(
        ["Research", "development", "Selling", "marketing", "Restructuring", "charges", "Total"], start=1
    )
)
PROSE = (
    "Research and development continued; research and development teams grew, and research "
    "development spending is discussed with the committee every quarter in this narrative section. "
)
SELLING = "Selling and marketing programs: selling and marketing costs rose as marketing campaigns expanded. "


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    files = {
        "report.txt": f"{PROSE * 2}\f{STATEMENT}\f{SELLING * 2}",
        "other.txt": "An unrelated letter about office hours.",
    }
    for name in ("memo", "note", "card"):  # pages without the question's words, so they weigh (idf > 0)
        files[f"{name}.txt"] = f"A {name} about the parking rota and the holiday calendar."
    return store_of(tmp_path_factory.mktemp("pages"), files, BuildSettings(chunk_words=30, chunk_overlap=5))


def _pages(store: Store, weight: float, mode: str = "bm25") -> list[int]:
    hits = store.search_chunks(QUESTION, 3, mode=mode, page_weight=weight)  # type: ignore[arg-type]
    return [h.chunk.page for h in hits]


def test_figures_are_no_page_words() -> None:
    assert word_terms("Total net sales 82,959 $ 117,154 (1,234) 12.5% Q3 2023") == ["total", "net", "sale", "q3"]


def test_the_page_index_finds_the_statement_page_the_chunks_miss(store: Store) -> None:
    assert store.pages is not None
    assert _pages(store, 0.0)[0] != 2  # chunks alone: a prose chunk that repeats two terms wins
    assert _pages(store, 3.0)[0] == 2
    assert _pages(store, 3.0, "hybrid")[0] == 2
    assert _pages(store, 3.0, "dense") == _pages(store, 0.0, "dense")  # dense search has no page index


def test_a_page_of_figures_is_favoured_as_configured(store: Store) -> None:
    assert figure_share(STATEMENT) > 0.9 and figure_share(PROSE) == 0.0 and figure_share("") == 0.0
    pages = store.pages
    assert pages is not None
    assert sorted(pages.figures.tolist()) == pytest.approx([0.0] * 6 + [figure_share(STATEMENT)])

    def first_page(figure_weight: float) -> int:
        hits = store.search_chunks("selling marketing", 1, mode="bm25", page_weight=100.0, figure_weight=figure_weight)
        return hits[0].chunk.page

    assert first_page(0.0) == 3  # the prose page says both words most
    assert first_page(20.0) == 2  # the statement, whose row labels they are


def test_page_rows_follow_the_chunks(store: Store) -> None:
    pages = store.pages
    assert pages is not None
    chunks = store.catalog.chunks(list(range(store.catalog.chunk_count)))
    keys = [(c.document_id, c.page) for c in chunks]
    starts = [row for row in range(len(keys)) if row == 0 or keys[row] != keys[row - 1]]
    assert pages.first_rows.tolist() == starts and len(starts) == len(set(keys))
    assert pages.page_rows(np.arange(len(keys), dtype=np.int64)).tolist() == list(range(len(starts)))
    # Restricted to one document's rows: only its pages.
    other = next(d for d in store.catalog.documents.values() if d.filename == "other.txt")
    rows = store.catalog.rows_for_documents([other.document_id])
    assert [
        store.catalog.chunks([int(r)])[0].document_id for r in pages.ranked_chunks("office hours", 5, rows, [])
    ] == [other.document_id]


def test_a_generation_without_a_page_index_searches_chunks_alone(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "generation"
    root.mkdir()
    assert PageIndex.load(root, store.catalog.chunk_count) is None
    bare = Store(**{**store.__dict__, "pages": None})
    assert [h.chunk.row for h in bare.search_chunks(QUESTION, 3, mode="bm25", page_weight=3.0)] == [
        h.chunk.row for h in store.search_chunks(QUESTION, 3, mode="bm25")
    ]


def test_first_rows_that_disagree_with_the_chunks_are_refused(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "generation"
    (root / PAGES_BM25).mkdir(parents=True)
    np.save(root / PAGES_FIRST_ROWS, np.asarray([0, 5, 3], dtype=np.int64), allow_pickle=False)
    with pytest.raises(IndexCorruptError, match=PAGES_FIRST_ROWS):
        PageIndex.load(root, store.catalog.chunk_count)
    np.save(root / PAGES_FIRST_ROWS, np.asarray([0, store.catalog.chunk_count], dtype=np.int64), allow_pickle=False)
    with pytest.raises(IndexCorruptError, match="disagrees"):
        PageIndex.load(root, store.catalog.chunk_count)
    np.save(root / PAGES_FIRST_ROWS, np.asarray([0, 2], dtype=np.int64), allow_pickle=False)
    np.save(root / PAGES_FIGURES, np.asarray([0.5, 1.5], dtype=np.float32), allow_pickle=False)
    with pytest.raises(IndexCorruptError, match=PAGES_FIGURES):
        PageIndex.load(root, store.catalog.chunk_count)
    shutil.rmtree(root)


@pytest.fixture(scope="module")
def spread_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """A report whose first page is a statement (each row label among figures, a chunk each) followed by five
    pages of prose that each say "selling and marketing" once: the prose chunks rank above every chunk of the
    statement, the statement ranks first among the pages."""
    statement = "\n".join(
        f"{label} " + " ".join(f"{n},{n % 997:03d}" for n in range(100 * i, 100 * i + 24))
        for i, label in enumerate(["Selling", "marketing", "Total"], start=1)
    )
    prose = [f"Selling and marketing programs in region {r} were reviewed by the {r} team." for r in "abcde"]
    files = {"report.txt": "\f".join([statement, *prose])}
    for n in range(20):  # chunks without the query's words, so its terms weigh (idf > 0)
        files[f"memo{n}.txt"] = f"Memo {n} about the parking rota and the holiday calendar."
    return store_of(tmp_path_factory.mktemp("spread"), files, BuildSettings(chunk_words=30, chunk_overlap=5))


def test_the_default_weights_put_the_statement_page_above_prose_that_outranks_its_chunks(spread_store: Store) -> None:
    core = CoreConfig()

    def first_page(page_weight: float, figure_weight: float) -> int:
        hits = spread_store.search_chunks(
            "selling marketing", 3, mode="bm25", page_weight=page_weight, figure_weight=figure_weight
        )
        return hits[0].chunk.page

    assert first_page(0.0, 0.0) != 1  # the chunks alone: a prose page's chunk holds both words
    assert first_page(3.0, 4.0) != 1  # the earlier weights: five prose chunks outrank the statement's
    assert first_page(core.page_weight, core.figure_weight) == 1
