"""The one normaliser and stopword list, and the operations built on them."""

from __future__ import annotations

import pytest

from pipeline.text import STOPWORDS, bm25_tokens, content_words, fold, normalise, tokens, word_set


def test_normalise_is_nfkc_casefolded_visible_text_with_single_spaces() -> None:
    assert normalise("\uff22\uff41n\u200bda\u00ad  LANE\n\tStra\u00dfe") == "banda lane strasse"


def test_fold_keeps_case_and_maps_lookalikes_and_accents() -> None:
    assert fold("B\u0430nda L\u00e1ne\u200b") == "Banda Lane"


def test_tokens_keep_numbered_references_and_amounts_whole() -> None:
    text = "L.R. NO: 2327/30, KSH 1,200,000; clause 4.2.1 (2023-03-01)"
    assert tokens(text) == ["l.r", "no", "2327/30", "ksh", "1,200,000", "clause", "4.2.1", "2023-03-01"]
    assert tokens(text, "/.,") == ["l.r", "no", "2327/30", "ksh", "1,200,000", "clause", "4.2.1", "2023", "03", "01"]
    assert tokens("a-b c", "") == ["a", "b", "c"]


def test_bm25_terms_keep_compounds_split_them_and_stem_words() -> None:
    assert bm25_tokens("The leases of 2327/30") == ["leas", "2327/30", "2327", "30"]


def test_content_words_drop_stopwords_ignored_words_and_lone_letters() -> None:
    words = content_words("The rent of the premises is KSH 285,000 per month, a lot.", {"premises"})
    assert words == {"rent", "ksh", "285000", "per", "month", "lot"}
    assert content_words("Clause 7 applies", frozenset()) == {"clause", "7", "applies"}


def test_word_set_is_plain_words_without_stopwords() -> None:
    assert word_set("What is the rent at Karen Ridge?") == {"rent", "karen", "ridge"}


@pytest.mark.parametrize("word", sorted(STOPWORDS))
def test_one_stopword_list_for_index_terms_grounding_and_coverage(word: str) -> None:
    assert bm25_tokens(word) == []
    assert content_words(word) == set()
    assert word_set(word) == set()


def test_cut_text_keeps_short_text_and_cuts_long_text_at_a_space_with_its_length() -> None:
    from pipeline.text import cut_text

    assert cut_text("short", 10) == ("short", None)
    cut, length = cut_text("one two three four five six", 15)
    assert cut == "one two three…" and length == 27 and len(cut) <= 15
    assert cut_text("x" * 50, 10) == ("x" * 9 + "…", 50)
