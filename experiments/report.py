"""Turning evaluation tables into MLflow metrics, export scores and readable prompt texts (pure functions)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from optimizers.params import MODULES
from pipeline.export.prompts import render_module

# Per-case columns of pipeline.evaluation.per_case_table that are logged and exported.
CASE_COLUMNS = (
    "n",
    "composite",
    "failed",
    "wrong_property_citations",
    "invalid_ids",
    "fact_recall",
    "citation_precision",
    "citation_recall",
    "recall_at_10",
    "sub_question_coverage",
    "abstention",
    "lm_calls",
    "tokens",
)
PHASES = ("baseline", "result")


def finite_number(value: Any) -> float | None:
    """`value` as a finite float; None for None, NaN, infinities and non-numbers."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def case_metrics(phase: str, table: Any) -> dict[str, float]:
    """`<phase>.<case>.<column>` -> value for every finite cell of a per-case table."""
    out: dict[str, float] = {}
    for case in table.index:
        for column in CASE_COLUMNS:
            if column in table.columns:
                value = finite_number(table.loc[case, column])
                if value is not None:
                    out[f"{phase}.{case}.{column}"] = value
    return out


def export_scores(tables: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """The manifest's `scores`: {case: {"baseline.composite": .., "result.composite": .., ...}}."""
    scores: dict[str, dict[str, float]] = {}
    for phase, table in tables.items():
        for key, value in case_metrics(phase, table).items():
            _, case, column = key.split(".", 2)
            scores.setdefault(str(case), {})[f"{phase}.{column}"] = value
    return scores


def gate_failures(table: Any) -> int:
    """Wrong-property citations plus invalid ids over all examples of a per-case table."""
    row = table.loc["all"]
    return int(finite_number(row["wrong_property_citations"]) or 0) + int(finite_number(row["invalid_ids"]) or 0)


def safety_counts(table: Any) -> dict[str, int]:
    """The safety counts of a per-case table's `all` row, named as a rejection reason names them."""
    row = table.loc["all"]
    return {
        "wrong-property citations": int(finite_number(row["wrong_property_citations"]) or 0),
        "invalid ids": int(finite_number(row["invalid_ids"]) or 0),
    }


def module_prompts(state: Mapping[str, Any], optimised: tuple[str, ...], selected: bool = True) -> dict[str, str]:
    """{module: prompt text} for every predictor of a program.json state (what the prompt registry stores):
    the optimised modules titled "optimised", or "candidate, rejected" when the job kept the baseline;
    demos as readable outlines."""
    changed = "optimised" if selected else "candidate, rejected"
    return {
        name: render_module(name, state[name], note=changed if name in optimised else "frozen", demo_style="outline")
        + "\n"
        for name in MODULES
    }
