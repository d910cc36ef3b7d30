"""Evaluation results as tables: one row per example, and per-case means with an `all` row."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pipeline.evaluation.scoring import ExampleResult

METRIC_COLUMNS = (
    "wrong_property_citations",
    "invalid_ids",
    "recall_at_5",
    "recall_at_10",
    "page_recall_at_5",
    "page_recall_at_10",
    "sub_question_coverage",
    "citation_precision",
    "citation_recall",
    "fact_recall",
    "answer_line_correct",
    "line_fact_recall",
    "evidence_precision",
    "abstention",
    "abstained_when_absent",
    "false_abstention",
    "words_per_section",
    "quotes_per_section",
    "brevity",
    "scope_note",
    "value_correct",
    "number_correct",
    "boolean_true",
    "boolean_false",
    "name_correct",
    "names_correct",
    "comparison_correct",
    "absent_correct",
    "false_absent",
    "names_precision",
    "names_recall",
    "page_reference",
    "gold_page_cited",
    "computed_strict",
    "computed_lenient",
    "lm_calls",
    "tokens",
)


def results_frame(results: Sequence[ExampleResult]) -> Any:
    """One row per example (pandas DataFrame): id, case, every metric, composite, failed, error, and the answer's
    typed value as JSON in `typed_value` (empty when it gave none; a stage job's `value` is its metric), the seconds
    it took and its text; with its
    columns when there is no example (an evaluation stopped before its first example finished)."""
    import pandas as pd

    rows = []
    for r in results:
        row: dict[str, Any] = {"id": r.example.id, "case": r.example.case}
        row.update({name: getattr(r.scores, name) for name in METRIC_COLUMNS})
        row.update({"composite": r.composite, "failed": r.failed, "error": r.error})
        row["typed_value"] = None if r.value is None else r.value.model_dump_json()
        row.update({"seconds": r.seconds, "answer": r.answer})
        rows.append(row)
    columns = ["id", "case", *METRIC_COLUMNS, "composite", "failed", "error", "typed_value", "seconds", "answer"]
    return pd.DataFrame(rows, columns=columns)


def per_case_table(frame: Any) -> Any:
    """Per-case means (safety counts summed) with an `all` row; examples counted in `n` (no example: the `all`
    row alone, with n = 0 and no means)."""
    import pandas as pd

    def summarise(group: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"n": len(group)}
        for name in METRIC_COLUMNS:
            column = pd.to_numeric(group[name], errors="coerce")
            if name in ("wrong_property_citations", "invalid_ids"):
                out[name] = int(column.sum())
            else:
                out[name] = round(float(column.mean()), 4) if column.notna().any() else None
        # Examples no weighted metric applies to (composite None) are left out of the mean.
        applicable = pd.to_numeric(group["composite"], errors="coerce")
        out["composite"] = round(float(applicable.mean()), 4) if applicable.notna().any() else None
        out["failed"] = int(group["failed"].sum())
        return out

    table = {case: summarise(group) for case, group in frame.groupby("case", sort=True)}
    table["all"] = summarise(frame)
    return pd.DataFrame.from_dict(table, orient="index")
