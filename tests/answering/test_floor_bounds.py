"""The answer floors under a question's time bound: given tables far larger and odder than retrieval hands them
(thousands of rows, odd cells, one document per row), each floor either answers or stops at the bound, never
later than the bound plus a second. The bound is what is tested, so it is measured here."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.answering.asks import ComputeRequest, answer_kind
from pipeline.answering.compute import find_operands
from pipeline.answering.floors import span_line, support, trend_line
from pipeline.answering.sentences import OfferedSentence
from pipeline.answering.terms import focus_terms, ordered_terms
from pipeline.deadline import Deadline, DeadlinePassed
from pipeline.types import Chunk, ChunkHit

QUESTION = "What was the total net sales in the three months ended December 31, 2022?"


def offered(rows: list[str], documents: int = 1) -> list[OfferedSentence]:
    """Each row offered as a sentence of its own chunk, spread over `documents` documents."""
    return [
        OfferedSentence(i, row, ChunkHit(Chunk(i, f"doc-{i % documents}", 1 + i // 40, i % 40, row), f"d{i}.pdf", 1.0))
        for i, row in enumerate(rows)
    ]


def within_bound(bound: float, floor: Callable[[Deadline], object]) -> float:
    """Seconds `floor` took under a deadline of `bound` seconds; it may answer or stop at the bound."""
    started = time.monotonic()
    try:
        floor(Deadline(bound))
    except DeadlinePassed as stop:
        assert stop.seconds == bound and stop.stage.startswith(("answering", "computing"))
    return time.monotonic() - started


def _span(sentences: list[OfferedSentence]) -> Callable[[Deadline], object]:
    kind, terms, focus = answer_kind(QUESTION), ordered_terms(QUESTION), focus_terms(QUESTION)
    return lambda deadline: span_line(sentences, kind, terms, QUESTION, focus, deadline)


def test_a_floor_made_to_spin_stops_at_the_bound() -> None:
    # 150,000 table rows offered at once: the span floor reads every one, seconds of work past a 0.3 s bound
    rows = [f"Total net sales segment {i} | {i * 7919 % 100_000:,} | {i * 104_729 % 100_000:,}" for i in range(150_000)]
    sentences = offered(rows)
    with pytest.raises(DeadlinePassed, match="span floor"):
        span_line(sentences, "amount", ordered_terms(QUESTION), QUESTION, focus_terms(QUESTION), Deadline(0.3))
    assert within_bound(0.3, _span(sentences)) <= 1.3
    # the rows floor averaging one figure over 3,000 documents reads every row once per document
    average = ComputeRequest("average", ("total net sales",), False)
    spread = offered(rows[:30_000], documents=3_000)
    with pytest.raises(DeadlinePassed, match="rows floor"):
        find_operands(average, spread, Deadline(0.3))
    assert within_bound(0.3, lambda deadline: find_operands(average, spread, deadline)) <= 1.3


def test_the_floors_stop_where_a_fake_clock_says_the_bound_is() -> None:
    readings = []

    def clock() -> float:
        readings.append(len(readings))
        return float(len(readings))

    sentences = offered([f"Total net sales {i:,}" for i in range(100)])
    with pytest.raises(DeadlinePassed):
        span_line(sentences, "amount", ["total", "net", "sales"], QUESTION, (), Deadline(10.0, clock))
    assert len(readings) == 11  # the start, then one reading per sentence until the tenth passes the bound


ODD_CELLS = st.one_of(
    st.integers(-(10**30), 10**30).map(lambda n: f"{n:,}"),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
    st.sampled_from(["$", "(1,234)", "—", "–", "n/a", "%", "12.5%", "€ 1.234,56", "١٢٣", "2022", "Dec. 31, 2022", ""]),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.text("0123456789,.()$%-| ", max_size=200),
)
TABLES = st.lists(
    st.tuples(st.text(min_size=0, max_size=80), st.lists(ODD_CELLS, max_size=30)).map(
        lambda row: " | ".join([row[0], *row[1]])
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(table=TABLES, copies=st.integers(1, 200), documents=st.integers(1, 50))
def test_large_and_odd_tables_end_within_the_bound(table: list[str], copies: int, documents: int) -> None:
    bound = 0.5
    sentences = offered(table * copies, documents)
    kind, terms, focus = answer_kind(QUESTION), ordered_terms(QUESTION), focus_terms(QUESTION)
    assert within_bound(bound, _span(sentences)) <= bound + 1.0
    assert within_bound(bound, lambda d: trend_line(sentences, kind, terms, QUESTION, focus, d)) <= bound + 1.0
    assert within_bound(bound, lambda d: support(sentences, kind, frozenset(focus), d)) <= bound + 1.0
    for request in (
        ComputeRequest("average", ("total net sales",), False),
        ComputeRequest("ratio", ("gross margin", "total net sales"), True),
        ComputeRequest("change", ("total net sales",), False),
    ):
        assert within_bound(bound, lambda d, r=request: find_operands(r, sentences, d)) <= bound + 1.0
