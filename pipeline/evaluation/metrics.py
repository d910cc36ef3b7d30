"""Quality metrics as pure functions over values, and the composite that optimisers maximise.

Two safety metrics are hard gates, not weights: any wrong-property citation or any invalid
id reaching the store scores the example 0, whatever else it got right.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from pipeline.guards.ids import id_problem
from pipeline.text import content_words, normalise, word_set
from pipeline.values.quantities import SCALES, missing_values, value_spans

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


def number_values(text: str) -> set[str]:
    """Numbers in canonical form: thousands separators dropped, trailing zero decimals dropped."""
    out = set()
    for whole, fraction in _NUMBER.findall(text):
        value = whole.replace(",", "")
        fraction = (fraction or "").rstrip("0")
        out.add(f"{int(value)}.{fraction}" if fraction else str(int(value)))
    return out


# Words a figure is written with, not claims of their own ("per cent", "million").
_FIGURE_WORDS = frozenset({"per", "cent", "percent", "pct", *SCALES})


def fact_present(fact: str, answer: str, units: Collection[str] = frozenset()) -> bool:
    """Whether `answer` states `fact`: figures, dates and references by value (pipeline.values.quantities: "1,200,000"
    matches "1.2 million", "10/11/96" matches "Oct. 11, 1996", "seventy-five per cent" matches "75%"),
    other words as text, except the corpus's `units` (currency words an amount may be written with or without).
    """
    if missing_values(fact, answer):
        return False
    rest = list(fact)
    for start, end in value_spans(fact):
        rest[start:end] = " " * (end - start)
    answer_norm = normalise(answer)
    words = [w for w in re.findall(r"[a-z]+", normalise("".join(rest))) if w not in _FIGURE_WORDS and w not in units]
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


# ---- what a reader reads: answer lines, evidence, length -------------------------------------

# An answer line longer than this is no answer (a whole clause quoted is not an answer).
MAX_LINE_WORDS = 40
# A section a reader takes in at a glance: words of line and evidence beyond this cost brevity.
BREVITY_WORDS = 60


@dataclass(frozen=True)
class ReadSection:
    """What a reader reads of one section: its answer line, its evidence quotes (text, document, page), and
    whether it gives an answer (False: it says the documents do not state it)."""

    answer: str
    evidence: tuple[tuple[str, str, int], ...] = ()
    found: bool = True


def _line_states(line: str, fact: str, units: Collection[str]) -> bool:
    return len(line.split()) <= MAX_LINE_WORDS and fact_present(fact, line, units)


def answer_line_correct(
    facts: Sequence[str], sections: Sequence[ReadSection], units: Collection[str] = frozenset()
) -> float | None:
    """1.0 when an answer line of at most MAX_LINE_WORDS words states a gold fact, else 0.0 (None without facts)."""
    if not facts:
        return None
    lines = [s.answer for s in sections if s.found]
    return float(any(_line_states(line, fact, units) for line in lines for fact in facts))


# A passage states a gold span when this share of its content words lies in the span, or of the span's in it.
SPAN_OVERLAP = 0.6
# Fewer content words than this in a passage state nothing of a span ("Yes.", "Section 4").
SPAN_MIN_WORDS = 3


def states_span(text: str, span: str) -> bool:
    """Whether `text` states (a part of) `span`: most of its content words are the span's, or most of the
    span's are in it (stemless: the words as written, normalised)."""
    said, gold = content_words(normalise(text)), content_words(normalise(span))
    if len(said) < SPAN_MIN_WORDS or not gold:
        return False
    shared = len(said & gold)
    return shared / len(said) >= SPAN_OVERLAP or shared / len(gold) >= SPAN_OVERLAP


def span_answer(spans: Sequence[str], sections: Sequence[ReadSection]) -> float | None:
    """1.0 when an answered section's line of at most MAX_LINE_WORDS words, or its first quote, states a gold
    span (a clause asked about), else 0.0 (None without spans)."""
    if not spans:
        return None
    for section in sections:
        if not section.found or len(section.answer.split()) > MAX_LINE_WORDS:
            continue
        said = [section.answer, *(q[0] for q in section.evidence[:1])]
        if any(states_span(text, span) for text in said for span in spans):
            return 1.0
    return 0.0


def line_fact_recall(
    facts: Sequence[str], sections: Sequence[ReadSection], units: Collection[str] = frozenset()
) -> float | None:
    """Share of gold facts stated by some answer line of at most MAX_LINE_WORDS words (None without facts)."""
    if not facts:
        return None
    lines = [s.answer for s in sections if s.found]
    return sum(any(_line_states(line, fact, units) for line in lines) for fact in facts) / len(facts)


def evidence_precision(
    sections: Sequence[ReadSection],
    gold_pages: Mapping[str, frozenset[int] | None],
    facts: Sequence[str],
    units: Collection[str] = frozenset(),
) -> float | None:
    """Share of quoted evidence sentences that are on a gold page (any page of a gold document without page
    labels) or state a gold fact; None when nothing is quoted."""
    quotes = [q for s in sections if s.found for q in s.evidence]
    if not quotes:
        return None
    good = 0
    for text, document, page in quotes:
        pages = gold_pages.get(document, frozenset())
        on_gold = document in gold_pages and (pages is None or page in pages)
        good += on_gold or any(fact_present(f, text, units) for f in facts)
    return good / len(quotes)


def words_per_section(sections: Sequence[ReadSection]) -> float | None:
    """Mean words a reader reads per answered section: answer line plus evidence (None: nothing answered)."""
    found = [s for s in sections if s.found]
    if not found:
        return None
    return sum(len(s.answer.split()) + sum(len(q[0].split()) for q in s.evidence) for s in found) / len(found)


def quotes_per_section(sections: Sequence[ReadSection]) -> float | None:
    """Mean evidence quotes per answered section (None: nothing answered)."""
    found = [s for s in sections if s.found]
    return sum(len(s.evidence) for s in found) / len(found) if found else None


def brevity(words: float | None) -> float | None:
    """1.0 up to BREVITY_WORDS words per section, then falling as BREVITY_WORDS / words (None: nothing read)."""
    return None if words is None else min(1.0, BREVITY_WORDS / max(words, 1.0))


def reader_metrics(
    sections: Sequence[ReadSection],
    facts: Sequence[str],
    gold_pages: Mapping[str, frozenset[int] | None],
    expect_not_found: bool,
    units: Collection[str] = frozenset(),
    spans: Sequence[str] = (),
) -> dict[str, float | None]:
    """Every reader metric of one answer (ExampleScores' field names): answer lines, fact recall over lines
    and evidence, evidence precision, length, and abstention both ways. An example with gold `spans` and no
    facts (a clause asked about) has its answer line judged by `span_answer`."""
    did_abstain = not any(s.found for s in sections)
    read = "\n".join(line for s in sections if s.found for line in (s.answer, *(q[0] for q in s.evidence)))
    words = words_per_section(sections)
    line = answer_line_correct(facts, sections, units) if facts else span_answer(spans, sections)
    return {
        "answer_line_correct": None if expect_not_found else line,
        "line_fact_recall": None if expect_not_found else (line_fact_recall(facts, sections, units) if facts else line),
        "fact_recall": fact_recall(facts, read, units),
        "evidence_precision": None if expect_not_found else evidence_precision(sections, gold_pages, facts, units),
        "words_per_section": words,
        "quotes_per_section": quotes_per_section(sections),
        "brevity": brevity(words),
        "abstention": float(abstention_correct(expect_not_found, did_abstain)),
        "abstained_when_absent": float(did_abstain) if expect_not_found else None,
        "false_abstention": None if expect_not_found else float(did_abstain),
    }


# ---- composite ------------------------------------------------------------------------------

# A reader's weights: a correct short answer line first, then quotes that back it, honest abstention,
# everything stated at all, retrieval, brevity. A five-quote dump whose first quote holds the fact loses
# to one correct line with one quote (tests/evaluation/test_metrics.py).
DEFAULT_WEIGHTS: Mapping[str, float] = {
    "answer_line_correct": 0.35,
    "evidence_precision": 0.15,
    "abstention": 0.2,
    "fact_recall": 0.1,
    "recall_at_10": 0.1,
    "brevity": 0.1,
}


# Metrics a composite can weigh: those where higher is better, between 0 and 1.
WEIGHABLE: tuple[str, ...] = (
    "answer_line_correct",
    "line_fact_recall",
    "evidence_precision",
    "abstention",
    "fact_recall",
    "brevity",
    "citation_precision",
    "citation_recall",
    "recall_at_5",
    "recall_at_10",
    "page_recall_at_5",
    "page_recall_at_10",
    "sub_question_coverage",
    "value_correct",
    "gold_page_cited",
    "computed_strict",
)


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
    answer_line_correct: float | None = None
    line_fact_recall: float | None = None
    evidence_precision: float | None = None
    words_per_section: float | None = None
    quotes_per_section: float | None = None
    brevity: float | None = None
    # of examples whose answer is not in scope: 1.0 when the answer says so (None otherwise); of answerable
    # ones: 1.0 when it says "not found" all the same (a false abstention; None otherwise)
    abstained_when_absent: float | None = None
    false_abstention: float | None = None
    # 1.0 when the answer carries the scope note the example expects, 0.0 when not; None when it expects none.
    scope_note: float | None = None
    # Typed answers (pipeline.evaluation.value_metrics), None where the example expects no typed value: the
    # value right, the same per kind (booleans both ways), "not available" said of a present value, names
    # listed, and the pages the value cites (page_reference in [-1, 1]; gold_page_cited in [0, 1]).
    value_correct: float | None = None
    number_correct: float | None = None
    boolean_true: float | None = None
    boolean_false: float | None = None
    name_correct: float | None = None
    names_correct: float | None = None
    comparison_correct: float | None = None
    absent_correct: float | None = None
    false_absent: float | None = None
    names_precision: float | None = None
    names_recall: float | None = None
    page_reference: float | None = None
    gold_page_cited: float | None = None
    # Computed figures (examples tagged `computed`): the strict matcher (the value alone, signed, to the gold's
    # rounding) and the lenient one (answer_line_correct: the gold figure anywhere in a short line).
    computed_strict: float | None = None
    computed_lenient: float | None = None

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
