"""Comparing two programs on the same examples: the paired difference per case and overall with a
seeded bootstrap 95% confidence interval, and the rule that decides whether a candidate is selected.

Pure functions over values: per-example scores in, numbers and a verdict out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

RESAMPLES = 2000
CONFIDENCE = 0.95
ALL = "all"


@dataclass(frozen=True)
class Difference:
    """Candidate minus baseline over `n` paired examples: the means, their difference and its interval."""

    case: str
    n: int
    baseline: float
    candidate: float
    difference: float
    low: float
    high: float


@dataclass(frozen=True)
class Selection:
    """Whether the candidate is selected, and why not when it is not."""

    selected: bool
    reason: str | None


def bootstrap_interval(
    differences: Sequence[float], resamples: npt.NDArray[np.int64], confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """The percentile interval of the mean difference over the given resamples (rows of example indices)."""
    values = np.asarray(differences, dtype=float)
    means = values[resamples].mean(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return float(low), float(high)


def paired_bootstrap(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    seed: int,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[float, float, float]:
    """Mean of candidate - baseline over paired examples, and its seeded bootstrap interval (low, high)."""
    if len(baseline) != len(candidate):
        raise ValueError(f"paired scores need equal lengths, got {len(baseline)} and {len(candidate)}")
    if not baseline:
        raise ValueError("paired_bootstrap needs at least one example")
    differences = [c - b for b, c in zip(baseline, candidate, strict=True)]
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, len(differences), size=(resamples, len(differences)))
    low, high = bootstrap_interval(differences, indices, confidence)
    return float(np.mean(differences)), low, high


def compare_paired(
    cases: Sequence[str],
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    seed: int,
    resamples: int = RESAMPLES,
) -> list[Difference]:
    """One Difference per case (sorted) and one for all examples; the i-th scores belong to the i-th case."""
    if not len(cases) == len(baseline) == len(candidate):
        raise ValueError(
            f"cases, baseline and candidate differ in length: {len(cases)}, {len(baseline)}, {len(candidate)}"
        )
    groups: dict[str, list[int]] = {}
    for index, case in enumerate(cases):
        groups.setdefault(case, []).append(index)
    groups[ALL] = list(range(len(cases)))
    out = []
    for offset, (case, indices) in enumerate(sorted(groups.items(), key=lambda kv: (kv[0] == ALL, kv[0]))):
        if not indices:
            continue
        b = [baseline[i] for i in indices]
        c = [candidate[i] for i in indices]
        mean, low, high = paired_bootstrap(b, c, seed=seed + offset, resamples=resamples)
        out.append(Difference(case, len(indices), float(np.mean(b)), float(np.mean(c)), mean, low, high))
    return out


def compare_rows(
    baseline: Sequence[Mapping[str, object]], candidate: Sequence[Mapping[str, object]], metric: str, *, seed: int
) -> list[Difference]:
    """`compare_paired` over per-example rows (each with `id`, `case` and `metric`), paired by id; an example
    without a numeric `metric` in either row (None: the metric does not apply) is left out."""
    theirs = {row["id"]: row for row in candidate}
    pairs = [
        (str(row["case"]), float(a), float(b))
        for row in baseline
        if row["id"] in theirs
        and isinstance(a := row.get(metric), int | float)
        and isinstance(b := theirs[row["id"]].get(metric), int | float)
    ]
    return compare_paired([p[0] for p in pairs], [p[1] for p in pairs], [p[2] for p in pairs], seed=seed)


def overall(differences: Sequence[Difference]) -> Difference:
    """The `all` row of a comparison."""
    for difference in differences:
        if difference.case == ALL:
            return difference
    raise ValueError("the comparison has no 'all' row")


def select_candidate(
    differences: Sequence[Difference], baseline_safety: Mapping[str, int], candidate_safety: Mapping[str, int]
) -> Selection:
    """Selected only when every safety count of the candidate is zero (so none got worse than the
    baseline's, whatever those were) and the lower end of the interval of its overall difference is
    above zero. The reason names the baseline's counts when the candidate fails a gate."""
    failures = {name: count for name, count in candidate_safety.items() if count > 0}
    if failures:
        listed = ", ".join(
            f"{name} {count} (baseline {baseline_safety.get(name, 0)})" for name, count in sorted(failures.items())
        )
        return Selection(False, f"safety gate failed on validation: {listed}")
    total = overall(differences)
    if total.low <= 0:
        return Selection(
            False,
            f"no improvement on validation: difference {total.difference:+.4f}, "
            f"95% CI [{total.low:+.4f}, {total.high:+.4f}] does not lie above 0",
        )
    return Selection(True, None)


def differences_frame(differences: Sequence[Difference]) -> object:
    """The comparison as a pandas DataFrame, one row per case (`all` last)."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "case": d.case,
                "n": d.n,
                "baseline": round(d.baseline, 4),
                "candidate": round(d.candidate, 4),
                "difference": round(d.difference, 4),
                "ci_low": round(d.low, 4),
                "ci_high": round(d.high, 4),
            }
            for d in differences
        ]
    )
