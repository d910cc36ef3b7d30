"""Random search's choice among candidates scored on Ray is DSPy's sequential choice."""

from __future__ import annotations

from optimizers.fanout import Candidate, choose


def _candidates(*scores: float) -> list[Candidate]:
    return [Candidate(seed, score, {}, 0, 0) for seed, score in zip(range(-3, len(scores) - 3), scores, strict=True)]


def test_the_first_of_equal_best_scores_wins() -> None:
    assert choose(_candidates(0.5, 0.7, 0.7, 0.6), None).seed == -2


def test_the_search_stops_at_the_first_candidate_reaching_stop_at_score() -> None:
    assert choose(_candidates(0.5, 0.8, 0.9, 0.95), 0.8).seed == -2
    assert choose(_candidates(0.5, 0.6, 0.7), 0.9).seed == -1  # none reaches it: the best
