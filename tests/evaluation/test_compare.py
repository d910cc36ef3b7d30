"""Paired comparison: the bootstrap interval against hand-computed cases, one test per selection branch."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.evaluation.compare import (
    Difference,
    bootstrap_interval,
    compare_paired,
    compare_rows,
    overall,
    paired_bootstrap,
    select_candidate,
)


def test_bootstrap_interval_matches_a_hand_computed_case() -> None:
    # differences 1, -1, 3; four resamples with means 1, 1, 5/3 and -1; sorted: -1, 1, 1, 5/3.
    # numpy's linear quantile: 2.5% at position 0.075 -> -1 + 0.075 * 2 = -0.85;
    # 97.5% at position 2.925 -> 1 + 0.925 * (5/3 - 1) = 1.616666...
    resamples = np.array([[0, 0, 0], [0, 1, 2], [2, 2, 1], [1, 1, 1]])
    low, high = bootstrap_interval([1.0, -1.0, 3.0], resamples)
    assert low == pytest.approx(-0.85)
    assert high == pytest.approx(1 + 0.925 * (2 / 3))


def test_paired_bootstrap_is_paired_seeded_and_exact_when_every_difference_is_equal() -> None:
    baseline = [0.1, 0.5, 0.9, 0.3]
    candidate = [b + 0.25 for b in baseline]  # the same gain on every example: no spread at all
    mean, low, high = paired_bootstrap(baseline, candidate, seed=3)
    assert (mean, low, high) == pytest.approx((0.25, 0.25, 0.25))
    noisy = [0.2, 0.4, 1.0, 0.1]
    assert paired_bootstrap(baseline, noisy, seed=7) == paired_bootstrap(baseline, noisy, seed=7)
    # Two examples with differences 0 and 1: resample means are 0, 0.5, 1 with chances 1/4, 1/2, 1/4,
    # so the 95% interval runs from 0 to 1 and the mean is 0.5.
    mean, low, high = paired_bootstrap([0.0, 0.0], [0.0, 1.0], seed=0, resamples=4000)
    assert (mean, low, high) == pytest.approx((0.5, 0.0, 1.0))


def test_paired_bootstrap_refuses_unpaired_or_empty_scores() -> None:
    with pytest.raises(ValueError, match="equal lengths"):
        paired_bootstrap([0.1], [0.1, 0.2], seed=0)
    with pytest.raises(ValueError, match="at least one"):
        paired_bootstrap([], [], seed=0)


def test_compare_paired_gives_one_row_per_case_and_all_last() -> None:
    cases = ["chip", "no_scope", "chip", "no_scope"]
    rows = compare_paired(cases, [0.0, 0.5, 0.2, 0.5], [1.0, 0.5, 0.4, 0.5], seed=0)
    assert [r.case for r in rows] == ["chip", "no_scope", "all"]
    chip, no_scope, total = rows
    assert (chip.n, chip.baseline, chip.candidate, chip.difference) == (
        2,
        pytest.approx(0.1),
        pytest.approx(0.7),
        pytest.approx(0.6),
    )
    assert (no_scope.difference, no_scope.low, no_scope.high) == (0.0, 0.0, 0.0)
    assert total.n == 4 and total.difference == pytest.approx(0.3)
    assert overall(rows) is total


def _rows(low: float, high: float = 0.5) -> list[Difference]:
    return [Difference("all", 40, 0.4, 0.5, 0.1, low, high)]


SAFE = {"wrong-property citations": 0, "invalid ids": 0}


def test_selection_selects_a_safe_candidate_whose_interval_lies_above_zero() -> None:
    assert select_candidate(_rows(0.01), SAFE, SAFE).selected


def test_selection_rejects_an_interval_that_reaches_zero() -> None:
    verdict = select_candidate(_rows(0.0), SAFE, SAFE)
    assert not verdict.selected and verdict.reason is not None
    assert verdict.reason.startswith("no improvement on validation") and "[+0.0000, +0.5000]" in verdict.reason


def test_selection_rejects_any_safety_gate_failure_whatever_the_gain_or_the_baseline() -> None:
    worse = select_candidate(_rows(0.3), SAFE, {**SAFE, "invalid ids": 1})
    assert not worse.selected and worse.reason == "safety gate failed on validation: invalid ids 1 (baseline 0)"
    # A baseline that already failed does not excuse the candidate (not worse is not enough).
    same = {"wrong-property citations": 2, "invalid ids": 0}
    verdict = select_candidate(_rows(0.3), same, same)
    assert (
        not verdict.selected
        and verdict.reason is not None
        and "wrong-property citations 2 (baseline 2)" in verdict.reason
    )


def test_compare_rows_pairs_by_id_and_leaves_out_examples_a_metric_does_not_apply_to() -> None:
    baseline = [
        {"id": "a", "case": "chip", "fact_recall": 0.0},
        {"id": "b", "case": "chip", "fact_recall": 1.0},
        {"id": "c", "case": "no_scope", "fact_recall": 0.5},
        {"id": "d", "case": "no_scope", "fact_recall": None},
        {"id": "e", "case": "no_scope", "fact_recall": 1.0},
    ]
    # another order, "c" without a value, "e" missing altogether
    candidate = [
        {"id": "d", "case": "no_scope", "fact_recall": 1.0},
        {"id": "b", "case": "chip", "fact_recall": 1.0},
        {"id": "c", "case": "no_scope", "fact_recall": None},
        {"id": "a", "case": "chip", "fact_recall": 1.0},
    ]
    rows = compare_rows(baseline, candidate, "fact_recall", seed=0)
    assert [(r.case, r.n) for r in rows] == [("chip", 2), ("all", 2)]
    assert rows[-1].baseline == pytest.approx(0.5) and rows[-1].candidate == pytest.approx(1.0)
    assert compare_rows(baseline, candidate, "citation_precision", seed=0) == []
