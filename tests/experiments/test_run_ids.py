"""Run ids as `scoperag runs` prints them (8 digits) work wherever a run is named: a unique prefix resolves to
its run; an ambiguous one names every run it matches; anything else says what to give. (Export, compare and
champion by a short id: tests/experiments/test_experiments.py.)"""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from experiments.tracking import experiment_id, open_tracker, resolve_run_id, start_run
from pipeline.errors import TrackingError
from tests.experiments.test_experiments import fresh_mlruns

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
    with pytest.raises(TrackingError, match="is not a run id"):
        resolve_run_id(tracker, "d58e82ac' OR 1=1")
