"""A job's plan (examples, LM calls and time per phase, before it starts), its ETA (calibrated by the work
finished so far) and this machine's measured rates (kept for the next plan); `optimize --dry-run` runs nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.config import load_config
from experiments.estimate import CALLS_PER_QUESTION, EMBEDDED_SECONDS, JobClock, PhasePlan, plan_job
from experiments.runner import ProgressEvent, run_experiment
from experiments.timings import load_rates, record_rates
from experiments.tracking import experiment_id, open_tracker
from pipeline.evaluation.examples import CASES
from pipeline.store import Store
from tests.experiments.test_experiments import fresh_mlruns, write_config, write_data
from tests.support.clock import Ticks
from tests.support.fakes import cooperative, scripted_lm
from tests.support.paths import ROOT


def cases(n: int) -> list[str]:
    """n examples spread over the four cases, as stratified sampling spreads them."""
    return [CASES[i % len(CASES)] for i in range(n)]


def test_an_end_to_end_plan_counts_every_phase_and_times_the_embedded_model() -> None:
    config = load_config(ROOT / "experiments" / "bootstrap_demo.toml")
    plan = plan_job(config, {"train": cases(8), "val": cases(4)}, embedded=True)
    assert [p.name for p in plan.phases] == ["baseline", "compile", "result"]
    # BootstrapFewShot tries each of the 8 training questions once (4 calls each), under the budget of 60
    assert plan.phases[1].calls == min(config.budget.max_lm_calls, 8 * CALLS_PER_QUESTION) == 32
    assert plan.lm_calls == 2 * 4 * CALLS_PER_QUESTION + 32
    assert plan.seconds == pytest.approx((4 + 4 + 32 / CALLS_PER_QUESTION) * EMBEDDED_SECONDS["question"])
    assert plan.examples == {"train": dict.fromkeys(CASES, 2), "val": dict.fromkeys(CASES, 1)}
    assert plan.too_few and "benchmark rate if none comes from the cache" in plan.describe()


def test_a_stage_plan_runs_the_stages_calls_at_its_rate_plus_the_end_to_end_sample_and_the_test_split() -> None:
    config = load_config(ROOT / "experiments" / "stage_decompose_sec.toml")
    plan = plan_job(config, {"train": cases(40), "val": cases(40), "test": cases(40)}, embedded=True)
    names = [p.name for p in plan.phases]
    assert names == [
        "floor_parts",
        "floor_question",
        "baseline",
        "compile",
        "result",
        "e2e_baseline",
        "e2e_result",
        "test_floor",
        "test_baseline",
        "test_result",
    ]
    assert all(p.calls == 0 and p.seconds == 0 for p in plan.phases if "floor" in p.name)  # floors call no LM
    e2e = min(config.data.end_to_end_size, 40)
    stage_calls = 4 * 40 + config.budget.max_lm_calls  # random search: its budget is the bound
    assert plan.lm_calls == stage_calls + 2 * e2e * CALLS_PER_QUESTION
    assert plan.seconds == pytest.approx(
        stage_calls * EMBEDDED_SECONDS["decompose"] + 2 * e2e * EMBEDDED_SECONDS["question"]
    )
    assert EMBEDDED_SECONDS["decompose"] < EMBEDDED_SECONDS["score"]  # one question read, against chunks


def test_rates_measured_here_time_the_plan_and_a_remote_lm_is_unknown_until_measured() -> None:
    config = load_config(ROOT / "experiments" / "quick_score.toml")
    examples = {"train": cases(4), "val": cases(4)}
    benchmark = plan_job(config, examples, embedded=True)
    measured = plan_job(config, examples, embedded=True, rates={"score": 40.0})
    assert measured.seconds == pytest.approx(12 * 40.0) and benchmark.seconds == pytest.approx(12 * 15.4)
    assert "this machine's measured rate" in measured.describe()
    assert plan_job(config, examples, embedded=False).seconds is None
    assert plan_job(config, examples, embedded=False, rates={"score": 2.0}).seconds == pytest.approx(24.0)


def three_phase_plan() -> object:
    from experiments.estimate import JobPlan

    phases = (
        PhasePlan("baseline", 4, "examples", "score", 1, 10.0),
        PhasePlan("compile", 8, "LM calls", "score", 1, 10.0),
        PhasePlan("result", 4, "examples", "score", 1, 10.0),
    )
    return JobPlan(phases, {"val": dict.fromkeys(CASES, 1)}, min_val_size=20)


def test_the_eta_is_calibrated_by_the_work_finished_and_a_short_compile_shortens_it() -> None:
    ticks = Ticks()
    clock = JobClock(three_phase_plan(), clock=ticks)  # type: ignore[arg-type]
    assert clock.eta() == "" and clock.calibration_note() is None
    clock.advance("baseline", 0)
    ticks.now = 40.0
    clock.advance("baseline", 2)  # 20 s of planned work took 40 s: this machine runs at twice the plan's time
    assert clock.factor() == pytest.approx(2.0)
    assert clock.seconds_left() == pytest.approx(2.0 * (2 + 8 + 4) * 10.0)
    assert clock.eta() == "job ETA 4:40"
    note = clock.calibration_note()
    assert note is not None and "2.0x the planned time" in note and "planned 3 min" in note
    assert clock.calibration_note() is None  # said once
    ticks.now = 70.0
    clock.advance("baseline", 4)
    ticks.now = 80.0
    clock.advance("compile", 1)  # the baseline ended when the compile step began
    ticks.now = 100.0
    clock.advance("result", 0)  # compile used 1 of its 8 calls: the 7 left are no longer work to do
    assert clock.seconds_left() == pytest.approx(clock.factor() * 4 * 10.0)  # type: ignore[operator]
    ticks.now = 180.0
    clock.advance("result", 4)
    clock.finish()
    assert clock.seconds_left() == pytest.approx(0.0)
    measured = clock.measured({"baseline": True, "compile": True, "result": False})
    # baseline 0-80 s for its 4 examples (it ended when compile began), compile 80-100 s for 1 call; result cached
    assert measured == {"score": (100.0, 5)}


def test_measured_rates_are_kept_per_lm_and_parallelism_and_follow_the_machine(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "timings.json"
    assert load_rates(path, "embedded", 2) == {}
    record_rates(path, "embedded", 2, {"score": (300.0, 10), "decompose": (20.0, 8)})
    record_rates(path, "openai/other", 2, {"score": (10.0, 10)})
    assert load_rates(path, "embedded", 2) == {"score": 30.0, "decompose": 2.5}
    assert load_rates(path, "embedded", 1) == {}
    record_rates(path, "embedded", 2, {"score": (500.0, 10)})  # slower now: the old 10 units weigh against 10 new
    assert load_rates(path, "embedded", 2)["score"] == pytest.approx((500.0 + 30.0 * 10) / 20)
    path.write_text('{"format": "scoperag-timings/v1", "rates": {"x|score|2": {"seconds_per_unit": -1}}}')
    assert load_rates(path, "x", 2) == {}
    assert "ignoring the measured LM rates" in caplog.text


def test_a_job_shows_its_eta_says_how_this_machine_compares_and_keeps_what_it_measured(
    tmp_path: Path, mlflow_template: Path, store: Store
) -> None:
    mlruns = fresh_mlruns(mlflow_template, tmp_path / "mlruns")
    config = write_config(tmp_path, write_data(tmp_path / "traces"))
    timings = tmp_path / "timings.json"
    events: list[ProgressEvent] = []
    lm = scripted_lm(cooperative())
    summary = run_experiment(
        config, mlruns=mlruns, store=store, lm_factory=lambda spec: lm, progress=events.append, timings=timings
    )
    etas = [e for e in events if "job ETA" in e.message]
    assert {e.phase for e in etas} >= {"baseline", "result"}
    notes = [e.message for e in events if e.message.startswith("calibrated on the first")]
    assert len(notes) == 1 and "s per LM call here" in notes[0]  # a remote LM: calibrated in seconds per call
    assert summary.seconds > 0 and summary.estimate_seconds is None
    tracker = open_tracker(mlruns)
    (logged,) = tracker.client.search_runs([experiment_id(tracker, "tests")])
    assert logged.data.metrics["time.seconds"] > 0
    rates = load_rates(timings, "openai/scripted-test", 2)
    assert set(rates) == {"question"} and rates["question"] > 0  # the evaluations of whole questions


def test_dry_run_prints_examples_per_split_and_case_calls_and_time_and_runs_nothing(
    tmp_path: Path, demo_index_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import experiments.runner as runner
    from pipeline.cli.main import main

    def no_lm(*args: object, **kwargs: object) -> None:
        raise AssertionError("a dry run makes no LM")

    monkeypatch.setattr(runner, "make_lm", no_lm)
    monkeypatch.setenv("SCOPERAG_CACHE_DIR", str(tmp_path / "cache"))
    config = write_config(tmp_path, write_data(tmp_path / "traces"), data=f'index_dir = "{demo_index_dir}"')
    mlruns = tmp_path / "mlruns"
    capsys.readouterr()
    assert main(["optimize", str(config), "--dry-run", "--mlruns", str(mlruns)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "split no_scope chip property wrong_property all" in out
    assert "train 1 1 1 1 4" in out and "val 1 1 1 1 4" in out
    assert "baseline 4 examples 16 ?" in out and "compile <= 16 LM calls 16 ?" in out
    assert "up to 48 LM calls" in out and "nothing was run (--dry-run)" in out
    assert not mlruns.exists()  # no store, no run
    assert main(["optimize", str(config), "--dry-run", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["lm_calls"] == 48 and planned["examples"]["val"] == dict.fromkeys(CASES, 1)
    assert [p["phase"] for p in planned["phases"]] == ["baseline", "compile", "result"]
    # With rates measured here for that LM, the same plan has a time.
    record_rates(tmp_path / "cache" / "timings.json", "openai/scripted-test", 2, {"question": (40.0, 4)})
    assert main(["optimize", str(config), "--dry-run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["seconds"] == pytest.approx((4 + 4 + 16 / 4) * 10.0)
