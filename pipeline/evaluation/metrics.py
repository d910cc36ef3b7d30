"""Quality metrics as pure functions over values, and the composite that optimisers maximise.

Two safety metrics are hard gates, not weights: any wrong-property citation or any invalid
id reaching the store scores the example 0, whatever else it got right.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from pipeline.guards.ids import id_problem
from pipeline.periods import find_dates
from pipeline.text import normalise, word_set

# ---- safety -------------------------------------------------------------------------------


def wrong_property_citations(cited: Iterable[str], forbidden: Collection[str], allowed: Collection[str] | None) -> int:
    """Cited documents that are forbidden for the example or lie outside its scope."""
    return sum(1 for d in set(cited) if d in forbidden or (allowed is not None and d not in allowed))


def invalid_store_ids(sent: Iterable[str], known: Collection[str], allowed: Collection[str] | None) -> int:
    """Ids that reached a store call while non-canonical, unknown or outside the scope."""
    known_set, allowed_set = frozenset(known), None if allowed is None else frozenset(allowed)
    return sum(1 for d in sent if id_problem(d, known_set, allowed_set) is not None)


# ---- retrieval ------------------------------------------------------------------------------


def recall_at_k(ranked_documents: Sequence[str], gold: Collection[str], k: int) -> float | None:
    """Share of gold documents among the first k distinct ranked documents (None without gold)."""
    if not gold:
        return None
    top = list(dict.fromkeys(ranked_documents))[:k]
    return len(set(top) & set(gold)) / len(set(gold))


def page_recall_at_k(
    ranked_pages: Sequence[tuple[str, int]], gold_pages: Mapping[str, frozenset[int] | None], k: int
) -> float | None:
    """Share of the gold documents with known evidence pages that have one of those pages among the
    first k ranked (document, page) chunks; None when no gold page is known."""
    located = {d: pages for d, pages in gold_pages.items() if pages}
    if not located:
        return None
    top = set(ranked_pages[:k])
    return sum(1 for d, pages in located.items() if any((d, p) in top for p in pages)) / len(located)


def sub_question_coverage(predicted: Sequence[str], gold: Sequence[str], threshold: float = 0.5) -> float | None:
    """Share of gold sub-questions matched (word Jaccard >= threshold) by some predicted one."""
    if not gold:
        return None
    covered = 0
    for wanted in gold:
        target = word_set(wanted)
        if any(len(target & word_set(p)) / max(1, len(target | word_set(p))) >= threshold for p in predicted):
            covered += 1
    return covered / len(gold)


# ---- citations ------------------------------------------------------------------------------


def citation_precision(
    cited: Sequence[tuple[str, int]], gold_pages: Mapping[str, frozenset[int] | None]
) -> float | None:
    """Share of cited (document, page) pairs that are gold; a gold document with no pages accepts any page."""
    if not cited:
        return None
    good = 0
    for document, page in set(cited):
        pages = gold_pages.get(document, frozenset())
        if document in gold_pages and (pages is None or page in pages):
            good += 1
    return good / len(set(cited))


def citation_recall(cited_documents: Iterable[str], gold: Collection[str]) -> float | None:
    """Share of gold documents cited at least once (None without gold)."""
    if not gold:
        return None
    return len(set(cited_documents) & set(gold)) / len(set(gold))


# ---- answer facts ---------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?")


def _dates(text: str) -> set[str]:
    return {day.isoformat() for _, _, day in find_dates(text)}


def number_values(text: str) -> set[str]:
    """Numbers in canonical form: thousands separators dropped, trailing zero decimals dropped."""
    out = set()
    for whole, fraction in _NUMBER.findall(text):
        value = whole.replace(",", "")
        fraction = (fraction or "").rstrip("0")
        out.add(f"{int(value)}.{fraction}" if fraction else str(int(value)))
    return out


# Scale words are often written differently or left out ("1.2 million", "1,200,000").
_SCALE_WORDS = frozenset({"million", "billion", "thousand"})


def fact_present(fact: str, answer: str, units: Collection[str] = frozenset()) -> bool:
    """Whether `answer` states `fact`: dates and numbers compared by value, words as text.

    "1,200,000" matches "1200000.00"; "1 March 2023" matches "March 1, 2023" and "2023-03-01";
    other words must appear after normalisation, except scale words and the corpus's `units`
    (currency words an amount may be written with or without).
    """
    fact_norm, answer_norm = normalise(fact), normalise(answer)
    fact_dates = _dates(fact_norm)
    if fact_dates:
        return fact_dates <= _dates(answer_norm)
    fact_numbers = number_values(fact)
    if fact_numbers and not fact_numbers <= number_values(answer):
        return False
    words = [w for w in re.findall(r"[a-z]+", fact_norm) if w not in _SCALE_WORDS and w not in units]
    return all(w in answer_norm for w in words)


def fact_recall(facts: Sequence[str], answer: str, units: Collection[str] = frozenset()) -> float | None:
    """Share of answer facts the answer states (None when the example lists none); `units` as in fact_present."""
    if not facts:
        return None
    return sum(fact_present(f, answer, units) for f in facts) / len(facts)


# ---- abstention and cost --------------------------------------------------------------------


def abstained(cited_documents: Collection[str]) -> bool:
    """An answer with no surviving citation states nothing from the documents."""
    return not cited_documents


def abstention_correct(expect_not_found: bool, did_abstain: bool) -> bool:
    """Right when the answer abstains exactly when the answer is not in scope."""
    return expect_not_found == did_abstain


# ---- composite ------------------------------------------------------------------------------

DEFAULT_WEIGHTS: Mapping[str, float] = {
    "fact_recall": 0.4,
    "citation_precision": 0.2,
    "recall_at_10": 0.15,
    "sub_question_coverage": 0.1,
    "abstention": 0.15,
}


@dataclass(frozen=True)
class ExampleScores:
    """Every metric of one example; None where it does not apply."""

    wrong_property_citations: int
    invalid_ids: int
    recall_at_5: float | None
    recall_at_10: float | None
    sub_question_coverage: float | None
    citation_precision: float | None
    citation_recall: float | None
    fact_recall: float | None
    abstention: float
    lm_calls: int
    tokens: int
    page_recall_at_5: float | None = None
    page_recall_at_10: float | None = None
    # 1.0 when the answer carries the scope note the example expects, 0.0 when not; None when it expects none.
    scope_note: float | None = None

    @property
    def gates_passed(self) -> bool:
        return self.wrong_property_citations == 0 and self.invalid_ids == 0


def scope_note_correct(expected: str | None, given: str | None) -> float | None:
    """Whether the answer's scope note (its kind, or None) is the one the example expects; None when the
    example expects none (an unlabelled note is not judged)."""
    return None if expected is None else float(expected == given)


def composite(scores: ExampleScores, weights: Mapping[str, float] = DEFAULT_WEIGHTS) -> float | None:
    """Weighted mean of the applicable quality metrics; 0 when a safety gate fails; None when no
    weighted metric applies (the example is then left out of the composite's averages, not scored 0)."""
    if not scores.gates_passed:
        return 0.0
    total = weight = 0.0
    for name, w in weights.items():
        value = getattr(scores, name)
        if value is not None and w > 0:
            total += w * float(value)
            weight += w
    return total / weight if weight else None
