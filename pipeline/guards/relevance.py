"""Applying one scoring call's output to its groups, with a recorded fallback per bad group."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

FallbackReason = Literal[
    "unparseable", "missing_group", "duplicate_group", "wrong_count", "not_a_number", "out_of_range"
]
MIN_SCORE = 0.0
MAX_SCORE = 10.0


@dataclass(frozen=True)
class ScoringFallback:
    """A group whose scores could not be used: it keeps all its chunks."""

    sub_question_index: int
    reason: FallbackReason
    detail: str


@dataclass(frozen=True)
class GroupVerdict:
    """Per chunk of one group: its score (None after a fallback) and whether it is kept."""

    sub_question_index: int
    scores: tuple[float | None, ...]
    kept: tuple[bool, ...]


def _coerce(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _entries(raw: object) -> dict[int, list[object]] | None:
    """Scores by group index from the LM's output; None when it is not a list at all."""
    if not isinstance(raw, list | tuple):
        return None
    found: dict[int, list[object]] = {}
    for entry in raw:
        if isinstance(entry, dict):
            index, scores = entry.get("sub_question_index"), entry.get("scores")
        else:
            index, scores = getattr(entry, "sub_question_index", None), getattr(entry, "scores", None)
        if isinstance(index, int) and not isinstance(index, bool) and isinstance(scores, list):
            # a second entry for the same group makes it ambiguous: mark with a sentinel
            found[index] = [_DUPLICATE] if index in found else scores
    return found


_DUPLICATE = object()


def apply_scores(
    group_sizes: Sequence[int], raw: object, threshold: float
) -> tuple[list[GroupVerdict], list[ScoringFallback]]:
    """Verdicts per group from the scorer's raw output; any bad group keeps every chunk.

    `raw` is whatever the LM produced: ideally a list of {sub_question_index, scores}.
    Wrong counts, NaN, non-numbers, out-of-range values, duplicates or a missing group
    make that group (only) fall back, and the reason is recorded.
    """
    entries = _entries(raw)
    verdicts: list[GroupVerdict] = []
    fallbacks: list[ScoringFallback] = []
    for index, size in enumerate(group_sizes):
        if size == 0:
            verdicts.append(GroupVerdict(index, (), ()))
            continue
        if entries is None:
            problem: tuple[FallbackReason, str] | None = ("unparseable", f"scores were {type(raw).__name__}")
        else:
            problem = _problem(index, size, entries.get(index))
        if problem is None and entries is not None:
            values = tuple(float(v) for v in entries.get(index, []))  # type: ignore[arg-type]
            verdicts.append(GroupVerdict(index, values, tuple(v >= threshold for v in values)))
            continue
        if problem is not None:
            fallbacks.append(ScoringFallback(index, problem[0], problem[1]))
        verdicts.append(GroupVerdict(index, (None,) * size, (True,) * size))
    return verdicts, fallbacks


def _problem(index: int, size: int, scores: list[object] | None) -> tuple[FallbackReason, str] | None:
    if scores is None:
        return "missing_group", f"no scores for sub-question {index}"
    if scores and scores[0] is _DUPLICATE:
        return "duplicate_group", f"sub-question {index} scored twice"
    if len(scores) != size:
        return "wrong_count", f"expected {size} scores, got {len(scores)}"
    values = [_coerce(v) for v in scores]
    if any(v is None for v in values):
        return "not_a_number", f"non-numeric score in {scores!r}"
    if any(math.isnan(v) or math.isinf(v) for v in values if v is not None):
        return "not_a_number", f"NaN or infinite score in {scores!r}"
    if any(not MIN_SCORE <= v <= MAX_SCORE for v in values if v is not None):
        return "out_of_range", f"score outside {MIN_SCORE:g}-{MAX_SCORE:g} in {scores!r}"
    return None


def keep_without_scores(sizes: Sequence[int], keep: int | None) -> list[GroupVerdict]:
    """The scoring step's floor, no LM: every retrieved chunk kept (`keep` None), or the first `keep` of each
    group in retrieval order. No chunk gets a score."""
    return [
        GroupVerdict(i, (None,) * size, tuple(keep is None or j < keep for j in range(size)))
        for i, size in enumerate(sizes)
    ]
