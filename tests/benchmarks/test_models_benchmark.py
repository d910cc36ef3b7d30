"""benchmarks/models.py: which runs it pairs, and the paired differences it reports."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from tests.support.scripts import load_benchmark


def run(model: str, program: str, facts: list[float | None]) -> dict[str, Any]:
    per_example = [
        {"id": f"q{i}", "case": "chip" if i % 2 else "property", "fact_recall": f, "citation_precision": None}
        for i, f in enumerate(facts)
    ]
    for example in per_example:
        example["composite"] = example["fact_recall"]
    return {"model": model, "program": program, "per_example": per_example}


def test_run_spec_reads_model_and_program_and_names_the_choices_when_wrong() -> None:
    models = load_benchmark("models")
    assert models.run_spec("1.5b:uncompiled") == ("1.5b", "uncompiled")
    with pytest.raises(argparse.ArgumentTypeError, match=r"MODEL:PROGRAM with MODEL one of 0\.5b, 1\.5b"):
        models.run_spec("7b:uncompiled")
    with pytest.raises(argparse.ArgumentTypeError, match="PROGRAM one of uncompiled, shipped"):
        models.run_spec("0.5b")


def test_each_run_is_paired_with_the_first_and_with_the_first_models_run_of_its_program() -> None:
    models = load_benchmark("models")
    shipped = run("0.5b", "shipped", [1.0, 1.0, 1.0, 1.0])
    small = run("0.5b", "uncompiled", [0.0, 1.0, 0.0, 1.0])
    large = run("1.5b", "uncompiled", [1.0, 1.0, 0.0, None])
    pairs = models.pairs_to_compare([shipped, small, large])
    assert [(a["model"], a["program"], b["model"], b["program"]) for a, b in pairs] == [
        ("0.5b", "shipped", "0.5b", "uncompiled"),
        ("0.5b", "shipped", "1.5b", "uncompiled"),
        ("0.5b", "uncompiled", "1.5b", "uncompiled"),
    ]


def test_report_pairs_over_the_examples_both_runs_scored() -> None:
    models = load_benchmark("models")
    small = run("0.5b", "uncompiled", [0.0, 1.0, 0.0, 1.0])
    large = run("1.5b", "uncompiled", [1.0, 1.0, 0.0, None])
    for row in (small, large):
        row.update(n=4, abstention=None, failed=0, wrong_property_citations=0, invalid_ids=0, seconds_per_question=1)
        row.update(fact_recall=None, citation_precision=None, composite=None)
    comparisons = models.report([small, large])
    overall = comparisons["1.5b/uncompiled - 0.5b/uncompiled"]["fact_recall"][-1]
    # the fourth example has no value for the 1.5B run: three pairs, (0, 1), (1, 1), (0, 0)
    assert overall["case"] == "all" and overall["n"] == 3
    assert overall["difference"] == pytest.approx(1 / 3, abs=1e-4)
    assert comparisons["1.5b/uncompiled - 0.5b/uncompiled"]["citation_precision"] == []
