"""Stage jobs: one module compiled against its own metric, with the paired comparison of its floor."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.runs import compare_runs, list_runs
from experiments.store import open_tracker
from pipeline.errors import ExperimentConfigError
from pipeline.evaluation.examples import CASES, write_examples
from pipeline.export import load_export
from pipeline.program.module import ScopedQA
from pipeline.store import Store
from tests.optimizers.test_optimizers import demo_examples
from tests.support.experiments import fresh_mlruns, run, write_config, write_data


def test_a_stage_job_compiles_one_module_against_its_own_metric_and_logs_the_paired_comparison(
    tmp_path: Path, mlflow_template: Path, store: Store
) -> None:
    mlruns = fresh_mlruns(mlflow_template, tmp_path / "mlruns")
    traces = write_data(tmp_path / "traces")
    write_examples(traces / "test.jsonl", [e for i, e in enumerate(demo_examples()) if i % 2 == 1])
    config = write_config(
        tmp_path,
        traces,
        data='test_split = "test"\nend_to_end_size = 4',
        stage='"decompose"',
        modules='["decompose"]',
    )
    summary = run(config, mlruns, store)
    assert summary.stage == "decompose" and summary.selected  # require_improvement = false: gates only
    assert list(summary.comparison["case"]) == [*sorted(CASES), "all"]
    assert list(summary.test_comparison["case"]) == [*sorted(CASES), "all"]
    # the scripted LM answers the same with or without demos: the paired difference is exactly 0
    assert (summary.comparison[["difference", "ci_low", "ci_high"]] == 0).all().all()
    assert summary.result is not None and summary.result.loc["all", "n"] == 4  # end to end, reported

    client = open_tracker(mlruns).client
    logged = client.get_run(summary.run_id)
    metrics, tags = logged.data.metrics, logged.data.tags
    assert metrics["lm_calls.baseline"] == metrics["lm_calls.result"] == 4  # one decompose call per example
    assert metrics["lm_calls.test_baseline"] == 4 and metrics["lm_calls.e2e_result"] >= 4
    assert 0 < metrics["stage.baseline.all.value"] <= 1 and metrics["stage.baseline.all.wrong_property"] == 0
    assert metrics["compare.all.ci_low"] == 0 and "test.compare.all.difference" in metrics
    assert "result.all.composite" in metrics and tags["scoperag.stage"] == "decompose"
    assert {f.path for f in client.list_artifacts(summary.run_id, "evaluation")} >= {
        "evaluation/comparison.csv",
        "evaluation/test-comparison.csv",
        "evaluation/result-examples.csv",
        "evaluation/e2e-result-cases.csv",
    }
    loaded, manifest = load_export(summary.export_dir, ScopedQA(store))
    assert manifest.config.experiment["stage"] == "decompose" and loaded.answer.demos == []
    # the way the step runs: the LM or its best floor, the same in the run's tag and in the export it runs from
    assert summary.step in ("lm", "parts", "question") and tags["scoperag.step"] == summary.step
    assert manifest.config.program["steps"]["decompose"] == summary.step
    assert set(summary.ways.index) == {"floor parts", "floor question", "lm uncompiled", "lm compiled"}
    assert "evaluation/floor-comparison.csv" in {f.path for f in client.list_artifacts(summary.run_id, "evaluation")}

    compared = compare_runs(summary.run_id, summary.run_id, mlruns)
    assert compared.attrs["metric"] == "value" and (compared["difference"] == 0).all()
    # `runs --wide`: per case, the stage metric it selects by (its end-to-end composite is a report)
    row = list_runs(mlruns).iloc[0]
    for case in (*CASES, "all"):
        assert row[f"{case} before"] == pytest.approx(metrics[f"stage.baseline.{case}.value"])
        assert row[f"{case} after"] == pytest.approx(metrics[f"stage.result.{case}.value"])
    assert row["wrong_property_citations"] == 0 and row["invalid_ids"] == 0


def test_a_stage_without_its_labels_is_an_error_naming_the_file_and_field(tmp_path: Path, store: Store) -> None:
    traces = write_data(tmp_path / "traces")  # gold documents, but no answer facts and no gold pages
    config = write_config(tmp_path, traces, stage='"answer"', modules='["answer"]')
    with pytest.raises(ExperimentConfigError) as caught:
        run(config, tmp_path / "mlruns", store)
    assert caught.value.file == str(traces / "train.jsonl") and caught.value.field == "answer_facts"
    assert not (tmp_path / "mlruns").exists()


def test_paired_comparison_leaves_out_examples_no_metric_applies_to() -> None:
    from experiments.job import compare_results
    from pipeline.evaluation.metrics import ExampleScores
    from pipeline.evaluation.scoring import ExampleResult

    examples = demo_examples()[:3]
    scores = ExampleScores(0, 0, None, None, None, None, None, None, 0.0, 0, 0)

    def results(*composites: float | None) -> list[ExampleResult]:
        return [ExampleResult(e, scores, c) for e, c in zip(examples, composites, strict=True)]

    differences = compare_results(results(0.2, None, 0.4), results(0.6, 0.9, None), seed=0)
    overall = next(d for d in differences if d.case == "all")
    assert overall.n == 1 and overall.baseline == pytest.approx(0.2) and overall.candidate == pytest.approx(0.6)
