"""Each learned module's own metric, as pure functions over values (no store, no LM).

decompose: gold-document and gold-page recall@10 of the retrieval run on its sub-questions, plus
coverage of the labelled sub-questions; score: precision and recall of the kept chunks against the
chunks on gold pages; answer: what a reader gets (pipeline.evaluation.metrics.reader_metrics): a correct
answer line, evidence on gold pages, correct abstention both ways, facts stated, brevity. Every stage
keeps the safety gates of the end-to-end metric (pipeline.evaluation.metrics): a stage value is 0
when a gate failed, and optimizers rank such a candidate below every gate-clean one.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

Stage = Literal["decompose", "score", "answer"]
STAGES: tuple[Stage, ...] = ("decompose", "score", "answer")
RECALL_K = 10

# How each stage's value weighs its components (only the components that apply are averaged).
STAGE_WEIGHTS: Mapping[Stage, Mapping[str, float]] = {
    "decompose": {"document_recall": 0.4, "page_recall": 0.4, "sub_question_coverage": 0.2},
    "score": {"kept_f1": 1.0, "dropped_share": 1.0},
    "answer": {
        "answer_line_correct": 0.4,
        "evidence_precision": 0.15,
        "abstention": 0.25,
        "fact_recall": 0.1,
        "brevity": 0.1,
    },
}
# What every stage's record holds beyond its own components: the safety gates.
SAFETY_METRICS = ("wrong_property", "invalid_ids")


@dataclass(frozen=True)
class StageScores:
    """One example's stage metrics (None where a metric does not apply) and its safety counts."""

    stage: Stage
    metrics: Mapping[str, float | None]
    wrong_property: int = 0
    invalid_ids: int = 0
    details: Mapping[str, float | None] = field(default_factory=dict)

    @property
    def gates_passed(self) -> bool:
        return self.wrong_property == 0 and self.invalid_ids == 0

    @property
    def value(self) -> float:
        """The weighted mean of the components that apply; 0 when a safety gate failed."""
        if not self.gates_passed:
            return 0.0
        total = weight = 0.0
        for name, w in STAGE_WEIGHTS[self.stage].items():
            metric = self.metrics.get(name)
            if metric is not None:
                total += w * metric
                weight += w
        return total / weight if weight else 0.0


def interleave(rankings: Sequence[Sequence[str]]) -> list[str]:
    """Distinct items of several rankings taken rank by rank (first of each, then second of each...)."""
    out: dict[str, None] = {}
    depth = max((len(r) for r in rankings), default=0)
    for rank in range(depth):
        for ranking in rankings:
            if rank < len(ranking):
                out.setdefault(ranking[rank], None)
    return list(out)


def document_recall_at_k(rankings: Sequence[Sequence[str]], gold: Collection[str], k: int = RECALL_K) -> float | None:
    """Share of gold documents among the first k distinct documents of the interleaved rankings."""
    if not gold:
        return None
    top = interleave(rankings)[:k]
    return len(set(top) & set(gold)) / len(set(gold))


def page_recall_at_k(
    rankings: Sequence[Sequence[tuple[str, int]]],
    gold_pages: Mapping[str, frozenset[int] | None],
    k: int = RECALL_K,
) -> float | None:
    """Share of gold pages among the first k distinct (document, page) pairs of the interleaved rankings.

    A gold document with no page labelled counts as one gold unit, found by any of its pages.
    """
    if not gold_pages:
        return None
    keyed = [[f"{d}\x00{p}" for d, p in ranking] for ranking in rankings]
    top = [tuple(item.split("\x00")) for item in interleave(keyed)[:k]]
    found_pages = {(d, int(p)) for d, p in top}
    found_docs = {d for d, _ in found_pages}
    units = found = 0
    for document, pages in gold_pages.items():
        if pages is None:
            units += 1
            found += document in found_docs
        else:
            units += len(pages)
            found += sum((document, page) in found_pages for page in pages)
    return found / units if units else None


def kept_precision_recall(
    kept: Collection[int], shown: Collection[int], gold: Collection[int]
) -> dict[str, float | None]:
    """Precision, recall and F1 of the kept chunk rows against the gold rows among those shown.

    With no gold chunk shown, `dropped_share` (the share of shown chunks dropped) is the measure instead.
    """
    kept_set, shown_set = set(kept) & set(shown), set(shown)
    gold_shown = set(gold) & shown_set
    out: dict[str, float | None] = {
        "kept_precision": None,
        "kept_recall": None,
        "kept_f1": None,
        "dropped_share": None,
    }
    if not shown_set:
        return out
    if not gold_shown:
        out["dropped_share"] = 1 - len(kept_set) / len(shown_set)
        return out
    hits = len(kept_set & gold_shown)
    precision = hits / len(kept_set) if kept_set else 0.0
    recall = hits / len(gold_shown)
    out["kept_precision"], out["kept_recall"] = precision, recall
    out["kept_f1"] = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return out
