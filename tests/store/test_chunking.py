from pipeline.store.chunking import chunk_pages, extractive_summary


def test_chunks_never_cross_pages_and_keep_page_numbers() -> None:
    pages = [" ".join(f"a{i}" for i in range(25)), "", " ".join(f"c{i}" for i in range(7))]
    chunks = chunk_pages(pages, size=10, overlap=3)
    # 25 words, windows of 10 stepping by 7: starts 0, 7, 14, 21 on page 1; page 2 is empty
    assert [c.page for c in chunks] == [1, 1, 1, 1, 3]
    assert [c.ordinal for c in chunks] == [0, 1, 2, 3, 4]
    assert chunks[0].text.split() == [f"a{i}" for i in range(10)]
    # overlap: the second chunk starts 3 words before the first one ended
    assert chunks[1].text.split()[:3] == ["a7", "a8", "a9"]
    assert chunks[3].text.split() == ["a21", "a22", "a23", "a24"]
    assert chunks[4].text.split() == [f"c{i}" for i in range(7)]


def test_short_page_is_one_chunk() -> None:
    assert [c.text for c in chunk_pages(["one two three"], size=10, overlap=2)] == ["one two three"]


def test_invalid_window_rejected() -> None:
    import pytest

    with pytest.raises(ValueError, match="overlap"):
        chunk_pages(["x"], size=5, overlap=5)


def test_extractive_summary_is_deterministic_and_bounded() -> None:
    pages = [
        "# Title\nThe lease of 14 Banda Lane starts on 1 March 2023. Rent is KSH 120,000 monthly.",
        "More.",
    ]
    first = extractive_summary(pages, max_chars=80)
    assert first == extractive_summary(pages, max_chars=80)
    assert first.startswith("Title The lease of 14 Banda Lane")
    assert len(first) <= 80
