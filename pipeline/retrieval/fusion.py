"""Reciprocal rank fusion (Cormack et al. 2009) with deterministic tie-breaks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

RRF_K = 60


@dataclass(frozen=True)
class Fused:
    """A fused row: its RRF score and its 1-based rank in each input list."""

    row: int
    score: float
    ranks: dict[str, int] = field(default_factory=dict)


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[int]],
    k: int = RRF_K,
    weights: Mapping[str, float] | None = None,
    limit: int | None = None,
) -> list[Fused]:
    """Rows ordered by sum of weight / (k + rank); ties by ascending row id."""
    scores: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for name, rows in rankings.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        seen: set[int] = set()
        for rank, row in enumerate(rows, start=1):
            if row in seen:
                continue
            seen.add(row)
            scores[row] = scores.get(row, 0.0) + weight / (k + rank)
            ranks.setdefault(row, {})[name] = rank
    ordered = sorted(scores, key=lambda r: (-scores[r], r))
    if limit is not None:
        ordered = ordered[:limit]
    return [Fused(row, scores[row], ranks[row]) for row in ordered]
