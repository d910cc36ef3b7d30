"""Case-stratified, seeded sampling of labelled examples: every case in every split."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from pipeline.evaluation.examples import CASES, LabelledExample, stratified_sample

__all__ = ["missing_cases", "stratified_sample"]


def missing_cases(examples: Iterable[LabelledExample], required: Collection[str]) -> list[str]:
    """The required cases that no example has, in CASES order."""
    present = {e.case for e in examples}
    return [case for case in _ordered_cases(required) if case not in present]


def _ordered_cases(cases: Iterable[str]) -> list[str]:
    wanted = set(cases)
    return [c for c in CASES if c in wanted] + sorted(wanted - set(CASES))
