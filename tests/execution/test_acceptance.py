"""Merging rankings, literal terms first; the acceptance verdict; explicit sub-questions the decomposition missed."""

from __future__ import annotations

from pipeline.execution.acceptance import (
    check_acceptance,
    contains_term,
    literal_count,
    merge_chunks,
    missing_sub_questions,
    name_terms,
)
from pipeline.intake.planner_state import AcceptanceCriteria, LiteralConstraints
from pipeline.types import Chunk, ChunkHit, Document, Entity

DOCS = {
    "d1": Document("d1", "a.pdf", "a.pdf", "A", "", "lease", 1, ("lane",)),
    "d2": Document("d2", "b.pdf", "b.pdf", "B", "", "lease", 1, ("road",)),
    "d3": Document("d3", "c.pdf", "c.pdf", "C", "", "lease", 1, ("lane",)),
}


def hit(row: int, document: str = "d1", text: str = "", score: float = 1.0) -> ChunkHit:
    return ChunkHit(Chunk(row, document, 1, 0, text or f"chunk {row}"), "a.pdf", score, {"rrf": score})


def test_terms_match_whole_words_after_folding() -> None:
    assert contains_term("Parcel L.R. No. 2327/30 is registered", "L.R. NO: 2327/30")
    assert contains_term("ＣＬＡＵＳＥ 4.2 applies", "clause 4.2")
    assert not contains_term("clause 4.21 applies", "clause 4.2")
    assert not contains_term("anything", "")
    assert literal_count("clause 4.2 on quiet enjoyment", ["clause 4.2", "quiet enjoyment", "rent"]) == 2


def test_one_ranking_keeps_its_order() -> None:
    ranking = [hit(5), hit(2), hit(9)]
    merged = merge_chunks([ranking], (), 10)
    assert [h.chunk.row for h in merged] == [5, 2, 9]
    assert [h.scores["retrieved"] for h in merged] == [1.0, 1.0, 1.0]


def test_rankings_fuse_with_row_tie_break_and_a_cap() -> None:
    merged = merge_chunks([[hit(5), hit(2)], [hit(7), hit(2)]], (), 3)
    # 2 is in both lists; 5 and 7 tie at rank one and break on the lower row
    assert [h.chunk.row for h in merged] == [2, 5, 7]
    assert len(merge_chunks([[hit(5), hit(2)], [hit(7), hit(2)]], (), 1)) == 1
    assert merge_chunks([[hit(5)], [hit(7)]], (), 2) == merge_chunks([[hit(5)], [hit(7)]], (), 2)


def test_chunks_with_more_literal_terms_rank_first_and_scores_follow_the_order() -> None:
    lists = [[hit(1, text="nothing"), hit(2, text="clause 4.2 only"), hit(3, text="clause 4.2 and quiet enjoyment")]]
    merged = merge_chunks(lists, ("clause 4.2", "quiet enjoyment"), 3)
    assert [h.chunk.row for h in merged] == [3, 2, 1]
    assert [h.scores["literal_terms"] for h in merged] == [2.0, 1.0, 0.0]
    assert [h.score for h in merged] == sorted((h.score for h in merged), reverse=True)


def test_acceptance_branches() -> None:
    chunks = [hit(1, "d1", "the rent is due"), hit(2, "d2", "notice period")]
    criteria = AcceptanceCriteria(min_independent_sources=2, must_cover_entities=("lane", "road"))
    exact = LiteralConstraints(must_preserve_terms=("notice period", "clause 9"), must_match_exactly=True)
    verdict = check_acceptance(chunks, criteria, exact, DOCS)
    assert not verdict.met and verdict.missing_terms == ("clause 9",)
    assert (verdict.sources, verdict.uncovered_entities, verdict.sources_short) == (2, (), False)
    loose = exact.model_copy(update={"must_match_exactly": False})
    assert check_acceptance(chunks, criteria, loose, DOCS).met
    lane_only = check_acceptance(chunks[:1], criteria, LiteralConstraints(), DOCS)
    assert lane_only.uncovered_entities == ("road",) and lane_only.sources_short and not lane_only.met
    assert check_acceptance([], AcceptanceCriteria(min_independent_sources=0), LiteralConstraints(), DOCS).met


def test_explicit_sub_questions_the_decomposition_missed() -> None:
    required = ("Who is the tenant of Banda Lane?", "When does the lease end?")
    names = name_terms([Entity("e1", "banda-lane", "Banda Lane", ("14 Banda Lane",))])
    assert missing_sub_questions(["Who is the tenant of Banda Lane?"], required) == ("When does the lease end?",)
    # the whole question, or a rewording that keeps the words, covers them
    assert missing_sub_questions([" ".join(required)], required) == ()
    assert (
        missing_sub_questions(["Who rents Banda Lane as tenant?", "On what date will the lease end?"], required) == ()
    )
    # entity names tell entities apart; they do not make a question about the rent one about the tenant
    assert missing_sub_questions(["What is the rent at Banda Lane?"], required[:1]) == ()
    assert missing_sub_questions(["What is the rent at Banda Lane?"], required[:1], names) == required[:1]
    assert missing_sub_questions(["Who is the tenant?"], required[:1], names) == ()
    assert missing_sub_questions(["What is the rent?"], ()) == ()
