"""Ctrl-C during an optimisation job: the run is KILLED at once, no LM call starts after it, the job says
what it kept; and DSPy's own progress bars stay off so the job's display is the only one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from experiments.runner import run_experiment
from experiments.store import open_tracker
from experiments.tracking import experiment_id
from pipeline.errors import JobInterrupted
from pipeline.program.calls import StopSignal
from pipeline.store import Store
from tests.support.experiments import fresh_mlruns, write_config, write_data
from tests.support.fakes import cooperative, scripted_lm
from tests.support.paths import ROOT

STOP_AT_CALL = 6  # inside the baseline evaluation (4 examples x 3 calls)


def one_worker(config: Path) -> Path:
    """The config with one example at a time, so "the call under way" is exactly one."""
    config.write_text(
        config.read_text().replace('task = "openai/scripted-test"', 'task = "openai/scripted-test"\nnum_threads = 1')
    )
    return config


def run_status(mlruns: Path) -> str:
    tracker = open_tracker(mlruns)
    (logged,) = tracker.client.search_runs([experiment_id(tracker, "tests")])
    return str(logged.info.status)


def test_a_stop_marks_the_run_killed_at_once_and_no_lm_call_starts_after_it(
    tmp_path: Path,
    mlflow_template: Path,
    store: Store,
) -> None:
    mlruns = fresh_mlruns(mlflow_template, tmp_path / "mlruns")
    config = one_worker(write_config(tmp_path, write_data(tmp_path / "traces")))
    stop = StopSignal()
    base = cooperative()
    calls: list[str] = []
    seen: dict[str, Any] = {}

    def respond(prompt: str) -> Any:
        calls.append(prompt[:40])
        if len(calls) == STOP_AT_CALL:  # Ctrl-C while this call is under way
            stop.request()
            seen["status during the call"] = run_status(mlruns)
        return base(prompt)

    lm = scripted_lm(respond)
    with pytest.raises(JobInterrupted) as info:
        run_experiment(config, mlruns=mlruns, store=store, lm_factory=lambda spec: lm, stop=stop)
    # The run was KILLED before the call under way returned; that call finished, and no other started.
    assert seen["status during the call"] == "KILLED"
    assert len(calls) == STOP_AT_CALL
    assert info.value.phase == "baseline" and info.value.calls == STOP_AT_CALL  # refused calls are not calls
    said = str(info.value)
    assert info.value.run_id in said and "KILLED" in said and f"the {STOP_AT_CALL} LM answers obtained" in said
    tracker = open_tracker(mlruns)
    (logged,) = tracker.client.search_runs([experiment_id(tracker, "tests")])
    assert logged.info.status == "KILLED" and "Ctrl-C" in logged.data.tags["scoperag.stop_reason"]
    assert logged.data.metrics["lm_calls.baseline"] == STOP_AT_CALL


def test_ctrl_c_during_optimize_stops_at_the_next_lm_call_and_exits_130(
    tmp_path: Path,
    mlflow_template: Path,
    demo_index_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The real SIGINT, delivered to this process while `scoperag optimize` runs in it."""
    import experiments.runner as runner
    from pipeline.cli.main import main

    mlruns = fresh_mlruns(mlflow_template, tmp_path / "mlruns")
    config = one_worker(write_config(tmp_path, write_data(tmp_path / "traces")))
    config.write_text(config.read_text().replace("[data]\n", f'[data]\nindex_dir = "{demo_index_dir}"\n'))
    base = cooperative()
    calls: list[str] = []
    seen: dict[str, Any] = {}

    def respond(prompt: str) -> Any:
        calls.append(prompt[:40])
        if len(calls) == STOP_AT_CALL:
            os.kill(os.getpid(), signal.SIGINT)
            deadline = time.monotonic() + 30
            while run_status(mlruns) != "KILLED" and time.monotonic() < deadline:
                time.sleep(0.05)
            seen["status during the call"] = run_status(mlruns)
        return base(prompt)

    monkeypatch.setattr(runner, "make_lm", lambda spec, **kwargs: scripted_lm(respond))
    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy"))
    capsys.readouterr()
    before = signal.getsignal(signal.SIGINT)  # the default, or ignored when the suite runs in the background
    assert main(["optimize", str(config), "--mlruns", str(mlruns)]) == 130
    err = " ".join(capsys.readouterr().err.split())
    assert seen["status during the call"] == "KILLED" and len(calls) == STOP_AT_CALL
    assert "stopping: no new LM call will start" in err
    assert "stopped during baseline" in err and "is marked KILLED" in err and str(tmp_path / "dspy") in err
    assert signal.getsignal(signal.SIGINT) is before  # restored


def test_dspy_progress_bars_are_off_in_the_command() -> None:
    """What `optimize` does around a job: TQDM_DISABLE before tqdm is imported, DSPy's stdout to the log."""
    script = (
        "import contextlib, logging, os, sys\n"
        "os.environ.pop('TQDM_DISABLE', None)\n"
        "from pipeline.cli.common import quiet_environment\n"
        "quiet_environment()\n"
        "from dspy.utils.parallelizer import ParallelExecutor\n"
        "import tqdm\n"
        "from pipeline.cli.progress import LibraryOutput\n"
        "logging.basicConfig(level=logging.INFO, stream=sys.stderr, format='LOG %(message)s')\n"
        "with contextlib.redirect_stdout(LibraryOutput(logging.getLogger('optimize'))):\n"
        "    done = ParallelExecutor(num_threads=1).execute(lambda x: x, [1, 2])\n"
        "    list(tqdm.tqdm(range(3)))\n"
        "    print('Bootstrapped 1 full traces')\n"
        "print(json.dumps(done))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", "import json\n" + script], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert json.loads(done.stdout) == [1, 2]  # stdout holds the result only
    logged = [line for line in done.stderr.splitlines() if line.startswith("LOG ")]
    assert "LOG Bootstrapped 1 full traces" in logged
    assert len([line for line in logged if "2/2" in line]) == 1  # a bar's last state, once, in the log
    assert all(line.startswith("LOG ") for line in done.stderr.splitlines() if line.strip())  # nothing else drawn


def test_optimize_shows_one_display_whatever_a_library_draws_on_stdout_or_stderr(
    tmp_path: Path,
    mlflow_template: Path,
    demo_index_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A library that draws a tqdm bar whatever TQDM_DISABLE says (as DSPy's ParallelExecutor does, passing
    `disable` itself) and writes to stderr: both go to the log, and the terminal shows the job's own display (one
    ETA, the job's: tests/cli/test_progress.py)."""
    import tqdm

    import experiments.runner as runner
    from pipeline.cli.main import main

    mlruns = fresh_mlruns(mlflow_template, tmp_path / "mlruns")
    config = write_config(tmp_path, write_data(tmp_path / "traces"))
    config.write_text(config.read_text().replace("[data]\n", f'[data]\nindex_dir = "{demo_index_dir}"\n'))
    base = cooperative()

    def respond(prompt: str) -> Any:
        list(tqdm.tqdm(range(3), desc="library bar", disable=False))  # stderr
        list(tqdm.tqdm(range(2), desc="library bar", disable=False, file=sys.stdout))
        sys.stderr.write("library chatter\n")
        return base(prompt)

    monkeypatch.setattr(runner, "make_lm", lambda spec, **kwargs: scripted_lm(respond))
    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy"))
    capsys.readouterr()
    assert main(["optimize", str(config), "--mlruns", str(mlruns), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["run_id"]  # stdout holds the result only
    assert "library bar" not in captured.err and "library chatter" not in captured.err and "it/s" not in captured.err
    assert "run " in captured.err or "setup:" in captured.err  # the job's own lines are still shown
