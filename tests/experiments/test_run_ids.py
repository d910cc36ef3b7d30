"""Run ids as `scoperag runs` prints them (8 digits) work wherever a run is named: a unique prefix resolves to
its run; an ambiguous one names every run it matches; a run's name or its config's name (when one run has it) does
too; anything else says what to give. (Export, compare and
champion by a short id: tests/experiments/test_optimize_job.py.)"""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from experiments.store import open_tracker
from experiments.tracking import TAG_CONFIG_NAME, experiment_id, resolve_run_id, start_run
from pipeline.errors import TrackingError
from tests.support.experiments import fresh_mlruns

# 17 runs: two of them share their first hex digit whatever ids MLflow draws (16 digits).
RUNS = 17


def test_a_unique_prefix_resolves_and_an_ambiguous_one_names_its_runs(tmp_path: Path, mlflow_template: Path) -> None:
    tracker = open_tracker(fresh_mlruns(mlflow_template, tmp_path / "mlruns"))
    experiment = experiment_id(tracker, "prefixes")
    ids = [start_run(tracker, experiment, f"run-{i}", {}) for i in range(RUNS)]
    for run_id in ids:
        unique = next(run_id[:n] for n in range(1, 33) if sum(other.startswith(run_id[:n]) for other in ids) == 1)
        assert resolve_run_id(tracker, unique) == run_id
        assert resolve_run_id(tracker, run_id.upper()) == run_id
    digit, count = collections.Counter(run_id[0] for run_id in ids).most_common(1)[0]
    assert count >= 2
    with pytest.raises(TrackingError, match="matches several runs") as info:
        resolve_run_id(tracker, digit)
    said = str(info.value)
    assert all(f"{run_id} (run-{ids.index(run_id)})" in said for run_id in ids if run_id.startswith(digit))
    assert "give more digits" in said
    with pytest.raises(TrackingError, match="no run id starts with"):
        resolve_run_id(tracker, next(d for d in "0123456789abcdef" if not any(i.startswith(d) for i in ids)))
    with pytest.raises(TrackingError, match="is not a run id or name"):
        resolve_run_id(tracker, "d58e82ac' OR 1=1")


def test_a_run_is_named_by_its_name_or_its_configs_and_a_name_two_runs_share_lists_them(
    tmp_path: Path, mlflow_template: Path
) -> None:
    tracker = open_tracker(fresh_mlruns(mlflow_template, tmp_path / "mlruns"))
    experiment = experiment_id(tracker, "names")
    once = start_run(tracker, experiment, "quick-score-1a2b3c4d-20261128-023022", {TAG_CONFIG_NAME: "quick-score"})
    twice = [start_run(tracker, experiment, f"quick-answer-{i}", {TAG_CONFIG_NAME: "quick-answer"}) for i in range(2)]
    assert resolve_run_id(tracker, "quick-score-1a2b3c4d-20261128-023022") == once
    assert resolve_run_id(tracker, "quick-score") == once
    assert resolve_run_id(tracker, " quick-answer-1 ") == twice[1]
    with pytest.raises(TrackingError, match="2 runs of config 'quick-answer'") as info:
        resolve_run_id(tracker, "quick-answer")
    assert all(run_id in str(info.value) for run_id in twice) and "give one's id" in str(info.value)
    with pytest.raises(TrackingError, match="no run or config is named 'quick-decompose'"):
        resolve_run_id(tracker, "quick-decompose")
    for hostile in ("quick-score' OR 1=1", "a b", "-x", "x" * 251):
        with pytest.raises(TrackingError, match="is not a run id or name"):
            resolve_run_id(tracker, hostile)
