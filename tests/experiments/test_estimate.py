"""A job's plan (examples, LM calls and time per phase, before it starts, scaled by the load it will meet), its one
ETA (pipeline.cli.eta: rates learned from the work finished so far, scaled by the load now; tested with a clock
moved by hand and a simulated load) and this machine's measured rates (kept for the next plan); `optimize
--dry-run` runs nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments.config import load_config
from experiments.estimate import CALLS_PER_QUESTION, job_eta, plan_job
from experiments.runner import ProgressEvent, run_experiment
from experiments.store import open_tracker
from experiments.tracking import experiment_id
from pipeline.cli.eta import Eta, Gauge, Work
from pipeline.evaluation.examples import CASES
from pipeline.program.lm.timings import EMBEDDED_SECONDS, OVERHEAD_SECONDS, load_rates, record_rates
from pipeline.store import Store
from tests.support.clock import Ticks
from tests.support.experiments import fresh_mlruns, write_config, write_data
from tests.support.fakes import cooperative, scripted_lm
from tests.support.paths import ROOT


def cases(n: int) -> list[str]:
    """n examples spread over the four cases, as stratified sampling spreads them."""
    return [CASES[i % len(CASES)] for i in range(n)]


def test_an_end_to_end_plan_counts_every_phase_and_times_the_embedded_model() -> None:
    config = load_config(ROOT / "experiments" / "bootstrap_demo.toml")
    plan = plan_job(config, {"train": cases(8), "val": cases(4)}, embedded=True)
    assert [p.name for p in plan.phases] == ["setup", "baseline", "compile", "result", "log"]
    # BootstrapFewShot tries each of the 8 training questions once (4 calls each), under the budget of 60
    assert plan.phases[2].calls == min(config.budget.max_lm_calls, 8 * CALLS_PER_QUESTION) == 32
    assert plan.lm_calls == 2 * 4 * CALLS_PER_QUESTION + 32
    overhead = EMBEDDED_SECONDS["setup"] + EMBEDDED_SECONDS["log"]
    idle = (4 + 4 + 32 / CALLS_PER_QUESTION) * EMBEDDED_SECONDS["question"] + overhead
    assert plan.seconds == pytest.approx(idle)
    # At the load it will meet (3x an idle machine's time), the plan says so and takes three times as long.
    busy = plan_job(config, {"train": cases(8), "val": cases(4)}, embedded=True, contention=3.0)
    assert busy.seconds == pytest.approx(3 * idle) and "3.0x an idle machine's time" in busy.describe()
    assert plan.examples == {"train": dict.fromkeys(CASES, 2), "val": dict.fromkeys(CASES, 1)}
    assert plan.too_few and "benchmark rate if none comes from the cache" in plan.describe()


def test_a_stage_plan_runs_the_stages_calls_at_its_rate_plus_the_end_to_end_sample_and_the_test_split() -> None:
    config = load_config(ROOT / "experiments" / "stage_decompose_sec.toml")
    plan = plan_job(config, {"train": cases(40), "val": cases(40), "test": cases(40)}, embedded=True)
    names = [p.name for p in plan.phases]
    assert names == [
        "setup",
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
        "log",
    ]
    assert all(p.calls == 0 and p.seconds == 0 for p in plan.phases if "floor" in p.name)  # floors call no LM
    e2e = min(config.data.end_to_end_size, 40)
    stage_calls = 4 * 40 + config.budget.max_lm_calls  # random search: its budget is the bound
    assert plan.lm_calls == stage_calls + 2 * e2e * CALLS_PER_QUESTION
    assert plan.seconds == pytest.approx(
        stage_calls * EMBEDDED_SECONDS["decompose"]
        + 2 * e2e * EMBEDDED_SECONDS["question"]
        + EMBEDDED_SECONDS["setup"]
        + EMBEDDED_SECONDS["log"]
    )
    assert EMBEDDED_SECONDS["decompose"] < EMBEDDED_SECONDS["score"]  # one question read, against chunks


def test_rates_measured_here_time_the_plan_and_a_remote_lm_is_unknown_until_measured() -> None:
    config = load_config(ROOT / "experiments" / "quick_score.toml")
    examples = {"train": cases(4), "val": cases(4)}
    benchmark = plan_job(config, examples, embedded=True)
    measured = plan_job(config, examples, embedded=True, rates={"score": 40.0})
    overhead = EMBEDDED_SECONDS["setup"] + EMBEDDED_SECONDS["log"]
    assert measured.seconds == pytest.approx(12 * 40.0 + overhead)
    assert benchmark.seconds == pytest.approx(12 * 15.4 + overhead)
    assert "this machine's measured rate" in measured.describe()
    assert plan_job(config, examples, embedded=False).seconds is None
    remote = plan_job(config, examples, embedded=False, rates={"score": 2.0})
    assert remote.seconds == pytest.approx(24.0 + OVERHEAD_SECONDS["setup"] + OVERHEAD_SECONDS["log"])


class Load:
    """A load average the test sets (the machine's runnable processes)."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __call__(self) -> float:
        return self.value


THREE_PHASES = [Work("baseline", 4, "score", 10.0), Work("compile", 8, "score", 10.0), Work("result", 4, "score", 10.0)]


def test_the_eta_covers_the_whole_job_and_learns_its_rate_from_the_work_finished() -> None:
    ticks = Ticks()
    eta = Eta(THREE_PHASES, clock=ticks)  # a remote LM: no load scaling
    eta.start()
    assert eta.seconds_left() == pytest.approx(16 * 10.0)  # the plan, before anything finished
    assert eta.text() == "job ETA 2:40"
    ticks.now = 40.0
    eta.advance("baseline", 2)  # 2 units took 40 s: twice the plan
    assert eta.factor() == pytest.approx((40.0 + 10.0) / (20.0 + 10.0))  # the plan counts as one unit
    rate = (40.0 + 10.0 * eta.factor()) / 3  # type: ignore[operator]
    assert eta.rates()["score"] == pytest.approx(rate)
    assert eta.seconds_left() == pytest.approx((2 + 8 + 4) * rate)
    note = eta.note()
    assert note is not None and "the first 2 units" in note and "left" in note and "1.7x the planned rate" in note
    assert eta.note() is None  # said once
    ticks.now = 70.0
    eta.advance("baseline", 4)
    ticks.now = 80.0
    eta.advance("compile", 1)
    ticks.now = 100.0
    eta.advance("result", 0)  # compile used 1 of its 8 calls: the 7 left are no longer work to do
    assert eta.seconds_left() == pytest.approx(4 * eta.rates()["score"])  # type: ignore[operator]
    ticks.now = 180.0
    eta.advance("result", 4)
    eta.finish()
    assert eta.seconds_left() == pytest.approx(0.0)
    # baseline 0-70 s (4 units, ended by its last), compile 70-100 s (its first report was a finished call: it
    # began when the baseline ended; 1 unit); the result's 4 units were answered from the cache
    assert eta.measured({"baseline": True, "compile": True, "result": False}) == {"score": (100.0, 5)}


def test_a_unit_running_past_its_rate_stretches_the_eta_instead_of_reaching_zero() -> None:
    ticks = Ticks()
    eta = Eta([Work("result", 2, "answer", 10.0)], clock=ticks)
    eta.start()
    eta.advance("result", 0)
    ticks.now = 5.0
    assert eta.seconds_left() == pytest.approx(2 * 10.0 - 5.0)
    ticks.now = 30.0  # the first unit has run three times its rate: it takes at least that, and so may the next
    assert eta.seconds_left() == pytest.approx(30.0 + 0.1 * 30.0)  # the next, and a tenth more for this one
    ticks.now = 60.0
    assert eta.seconds_left() == pytest.approx(60.0 + 0.1 * 60.0)


def test_the_eta_of_local_work_follows_the_load_and_time_measured_busy_predicts_an_idle_machine() -> None:
    ticks, load = Ticks(), Load(0.0)
    gauge = Gauge(2, cores=2, load=load, clock=ticks)
    assert gauge.expected() == pytest.approx(1.0, rel=1e-3)  # idle, its 2 threads on 2 cores: no slower than idle
    load.value = 8.0
    assert gauge.expected() == pytest.approx(5.0, rel=1e-3)  # 8 others + its 2 threads on 2 cores
    eta = Eta([Work("baseline", 4, "decompose", 2.0), Work("result", 4, "decompose", 2.0)], clock=ticks, gauge=gauge)
    eta.start()
    ticks.now = 600.0  # long enough for the load average to include the job's own threads
    load.value = 10.0
    assert eta.seconds_left() == pytest.approx(8 * 2.0 * 5.0, rel=1e-3)  # the plan, at 5x an idle machine's time
    assert "busy machine: 5.0x idle time" in eta.text()
    eta.advance("baseline", 2)  # after 600 s at 5x: 120 idle seconds for 2 units
    idle_rate = (120.0 + 2.0 * eta.factor()) / 3  # type: ignore[operator]
    assert eta.rates()["decompose"] == pytest.approx(idle_rate, rel=1e-3)
    load.value = 0.0  # the others stopped: the same work left now runs at an idle machine's pace
    assert eta.seconds_left() == pytest.approx(6 * idle_rate, rel=1e-3)
    load.value = 18.0  # busier: 9x
    assert eta.seconds_left() == pytest.approx(6 * idle_rate * 9.0, rel=1e-3)


def test_the_gauge_counts_the_jobs_own_threads_the_load_average_has_not_caught_up_with() -> None:
    ticks, load = Ticks(), Load(4.0)
    gauge = Gauge(2, cores=2, load=load, clock=ticks)
    assert gauge() == pytest.approx(3.0)  # just started: 4 others and its own 2, not yet in the average
    ticks.now = 60.0
    assert gauge() == pytest.approx((4.0 + 2 * 0.36788) / 2, rel=1e-3)  # a minute on, most of it is in


def test_a_jobs_eta_starts_with_its_plan_and_covers_setup_and_logging() -> None:
    config = load_config(ROOT / "experiments" / "quick_decompose.toml")
    plan = plan_job(config, {"train": cases(8), "val": cases(8)}, embedded=True)
    ticks = Ticks()
    eta = job_eta(plan, None, clock=ticks)
    assert eta.seconds_left() == pytest.approx(plan.seconds)
    ticks.now = 30.0
    eta.advance("setup", 1)  # loading the model and opening a large index took 30 s: 5x its plan
    # setting up says how large the index is, not how fast the model will go: the other kinds keep their plan
    assert eta.factor() is None
    left = eta.seconds_left()
    assert left == pytest.approx(plan.seconds - EMBEDDED_SECONDS["setup"])  # type: ignore[operator]


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
    path.write_text('{"format": "scoperag-timings/v2", "rates": {"x|score|2": {"seconds_per_unit": -1}}}')
    assert load_rates(path, "x", 2) == {}
    assert "ignoring the measured LM rates" in caplog.text
    # The first format kept wall seconds at an unknown load: measured again rather than trusted.
    rate = {"seconds_per_unit": 3.0, "units": 4, "measured_at": "2026-11-01T00:00:00+00:00"}
    path.write_text(json.dumps({"format": "scoperag-timings/v1", "rates": {"x|score|2": rate}}))
    assert load_rates(path, "x", 2) == {}


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
    etas = [e for e in events if e.eta.startswith("job ETA")]
    assert {e.phase for e in etas} >= {"baseline", "result"}
    assert not any("ETA" in e.message for e in events)  # one ETA, the job's, never one per phase
    notes = [e.message for e in events if e.message.startswith("measured on the first")]
    assert len(notes) == 1 and "in all" in notes[0] and "busy machine" not in notes[0]  # a remote LM: not scaled
    assert summary.seconds > 0 and summary.estimate_seconds is None
    tracker = open_tracker(mlruns)
    (logged,) = tracker.client.search_runs([experiment_id(tracker, "tests")])
    assert logged.data.metrics["time.seconds"] > 0
    rates = load_rates(timings, "openai/scripted-test", 2)
    assert set(rates) == {"question", "setup", "log"} and rates["question"] > 0  # whole questions, and the steps


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
    assert "setup 1 step 0 3 s" in out and "log 1 step 0 3 s" in out  # the steps of any job, until measured here
    assert "baseline 4 examples 16 ?" in out and "compile <= 16 LM calls 16 ?" in out
    assert "up to 48 LM calls" in out and "nothing was run (--dry-run)" in out
    assert not mlruns.exists()  # no store, no run
    assert main(["optimize", str(config), "--dry-run", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["lm_calls"] == 48 and planned["examples"]["val"] == dict.fromkeys(CASES, 1)
    assert [p["phase"] for p in planned["phases"]] == ["setup", "baseline", "compile", "result", "log"]
    # With rates measured here for that LM, the same plan has a time.
    record_rates(tmp_path / "cache" / "timings.json", "openai/scripted-test", 2, {"question": (40.0, 4)})
    assert main(["optimize", str(config), "--dry-run", "--json"]) == 0
    overhead = OVERHEAD_SECONDS["setup"] + OVERHEAD_SECONDS["log"]
    assert json.loads(capsys.readouterr().out)["seconds"] == pytest.approx((4 + 4 + 16 / 4) * 10.0 + overhead)


def test_a_models_threads_slow_faster_than_the_load_and_a_jobs_gauge_says_so() -> None:
    """Threads that wait for each other (the embedded model's) slow as contention ** exponent; a job's gauge uses
    the embedded model's exponent, a remote LM's job has none."""
    from experiments.estimate import job_gauge
    from pipeline.program.lm.timings import EMBEDDED_LOAD_EXPONENT

    load = Load(12.0)
    plain, model = Gauge(2, cores=2, load=load), Gauge(2, cores=2, load=load, exponent=2.0)
    assert plain.expected() == pytest.approx(7.0) and model.expected() == pytest.approx(49.0)
    gauge = job_gauge(True, 2)
    assert gauge is not None and gauge.exponent == EMBEDDED_LOAD_EXPONENT > 1
    assert job_gauge(False, 2) is None


def test_units_of_a_kind_that_takes_milliseconds_do_not_scale_a_models_calls() -> None:
    """A floor example 3x its planned millisecond moves the factor by a hair; a model call 3x its plan moves it."""
    ticks = Ticks()
    eta = Eta([Work("floor", 8, "floor", 0.001), Work("baseline", 8, "decompose", 2.0)], clock=ticks)
    eta.start()
    ticks.now = 0.003
    eta.advance("floor", 1)
    assert eta.factor() == pytest.approx((0.003 + 10.0) / (0.001 + 10.0))
    ticks.now = 0.01
    eta.advance("floor", 8)
    ticks.now = 30.01
    eta.advance("baseline", 5)  # 30 s for 10 s of planned calls
    assert eta.factor() == pytest.approx((0.01 + 30.0 + 10.0) / (0.008 + 10.0 + 10.0))


@pytest.mark.parametrize(("task", "timed"), [("embedded:0.5b", True), ("embedded", True), ("embedded:1.5b", False)])
def test_only_the_benchmarked_embedded_model_is_timed_before_this_machine_measures_it(
    tmp_path: Path,
    demo_index_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    task: str,
    timed: bool,
) -> None:
    """benchmarks/ timed the 0.5B model: the 1.5B's calls take longer, so its job's time is unknown, not the
    0.5B's."""
    from pipeline.cli.main import main

    monkeypatch.setenv("SCOPERAG_CACHE_DIR", str(tmp_path / "cache"))
    config = write_config(tmp_path, write_data(tmp_path / "traces"), data=f'index_dir = "{demo_index_dir}"')
    config.write_text(config.read_text().replace('task = "openai/scripted-test"', f'task = "{task}"'))
    capsys.readouterr()
    assert main(["optimize", str(config), "--dry-run", "--json"]) == 0
    seconds = json.loads(capsys.readouterr().out)["seconds"]
    assert (seconds is not None) is timed
