"""Optimisation jobs and exports killed with SIGKILL (real subprocesses, tests/fault_job.py) at any moment.

After each kill: the previous finished run and its export are untouched (byte for byte), a run left
RUNNING is marked FAILED by the next job's start, the next job redoes no LM call the killed one had
finished (DSPy's disk cache), and an export destination holds the previous export or the complete new one.
"""

from __future__ import annotations

import logging
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from experiments.runner import RunSummary
from experiments.runs import export_run
from experiments.store import open_tracker
from experiments.tracking import TAG_STOP
from pipeline.export import MANIFEST, PROGRAM, PROMPTS, load_export, program_state
from pipeline.program.module import ScopedQA
from pipeline.store import Store
from tests.support.experiments import fresh_mlruns, run, write_config, write_data
from tests.support.fault_job import computed_log, disk_cache, phases_log, read_lines, run_job
from tests.support.paths import ROOT

log = logging.getLogger(__name__)

ENV = {
    **os.environ,
    "PYTHONPATH": str(ROOT),
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "HF_HUB_OFFLINE": "1",
    "OMP_NUM_THREADS": "1",
}
# Random search (zero-shot, unshuffled and one shuffled demo set, each scored on validation): 34
# distinct LM calls, 22 of them in compile, so kills land in every phase.
RANDOM_SEARCH = "[optimizer_params]\nmax_bootstrapped_demos = 1\nnum_candidate_programs = 1\n"
EXPORT_FILES = (MANIFEST, PROGRAM, PROMPTS)
SLOW_DISK = 0.05  # seconds each fsync/rename waits in the slow-disk export variant


# -- subprocesses ----------------------------------------------------------------------------------


def _start(args: list[str], stderr: Path) -> subprocess.Popen[str]:
    """`python -m tests.fault_job ARGS`, returned once it prints `ready` (imports done)."""
    with stderr.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.fault_job", *args],
            stdout=subprocess.PIPE,
            stderr=err,
            env=ENV,
            cwd=ROOT,
            text=True,
        )
    assert proc.stdout is not None
    if proc.stdout.readline().strip() != "ready":
        proc.wait()
        raise AssertionError(f"fault_job did not start:\n{stderr.read_text()[-3000:]}")
    return proc


def _wait_until(proc: subprocess.Popen[str], condition: Callable[[], bool], every: float = 0.0) -> None:
    """Poll (busily by default: an export writes in milliseconds) until `condition` holds or the driver exits."""
    deadline = time.monotonic() + 60
    while proc.poll() is None and not condition() and time.monotonic() < deadline:
        time.sleep(every)


def _kill_after(proc: subprocess.Popen[str], delay: float) -> bool:
    """SIGKILL `delay` s from now; whether that hit a live process (False: it had already finished)."""
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    code = proc.wait()
    assert proc.stdout is not None
    proc.stdout.close()
    assert code in (0, -signal.SIGKILL), f"fault_job failed with exit code {code}"
    return code == -signal.SIGKILL


def _finish(proc: subprocess.Popen[str], stderr: Path) -> None:
    """Wait for the driver to finish on its own; it must succeed."""
    try:
        code = proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise
    assert proc.stdout is not None
    proc.stdout.close()
    assert code == 0, f"fault_job failed with exit code {code}:\n{stderr.read_text()[-3000:]}"


def _files(directory: Path) -> dict[str, bytes] | None:
    """Every file under `directory` (relative path -> bytes); None when there is no such directory."""
    if not directory.is_dir():
        return None
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _timeline(path: Path) -> list[tuple[float, str]]:
    """`seconds what` lines of a driver's phase or syscall log."""
    return [(float(t), what) for t, what in (line.split(" ", 1) for line in read_lines(path))]


def _phases(finished_log: Path) -> list[tuple[float, str]]:
    """(seconds after `ready`, phase) of a driver's job: setup, run (started), baseline, ..., finished."""
    return [
        (t, what.split()[-1] if what.startswith("phase ") else what.split()[0])
        for t, what in _timeline(phases_log(finished_log))
    ]


# -- optimisation jobs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CleanJob:
    """One job run to completion by the driver: what every killed job is compared with."""

    config: Path
    mlruns: Path
    run_id: str
    export: dict[str, bytes]
    state: dict[str, Any]
    computed: frozenset[str]
    finished: frozenset[str]
    phases: dict[str, float]  # seconds after `ready` that each phase started (and `finished`)
    seconds: float  # `ready` to process exit


@pytest.fixture(scope="module")
def clean_job(
    tmp_path_factory: pytest.TempPathFactory, mlflow_template: Path, demo_index_dir: Path, store: Store
) -> CleanJob:
    """The job in a fresh store and cache; it stays in the store as the previous state of every kill."""
    where = tmp_path_factory.mktemp("fault-job")
    config = write_config(
        where, write_data(where / "traces"), optimizer='"bootstrap_random_search"', extra=RANDOM_SEARCH
    )
    mlruns = fresh_mlruns(mlflow_template, where / "mlruns")
    finished_log = where / "clean.log"
    args = [str(config), str(mlruns), str(demo_index_dir), str(where / "clean-cache"), str(finished_log)]
    proc = _start(args, where / "clean.err")
    ready = time.monotonic()
    _finish(proc, where / "clean.err")
    seconds = time.monotonic() - ready
    phases = {phase: t for t, phase in _phases(finished_log)}
    run_id = next(what.split()[1] for _, what in _timeline(phases_log(finished_log)) if what.startswith("finished"))
    computed, finished = set(read_lines(computed_log(finished_log))), set(read_lines(finished_log))
    # The call identities agree between the callback and the engine: every computed call was received.
    assert computed and computed <= finished
    summary_dir = _export_dir(mlruns, run_id)
    export = _files(summary_dir)
    assert export is not None and set(export) == set(EXPORT_FILES)
    state = program_state(load_export(summary_dir, ScopedQA(store)).program)
    return CleanJob(config, mlruns, run_id, export, state, frozenset(computed), frozenset(finished), phases, seconds)


def _export_dir(mlruns: Path, run_id: str) -> Path:
    from experiments.tracking import artifact_dir

    return artifact_dir(open_tracker(mlruns), run_id, "export", mlruns / ".scratch")


def _statuses(mlruns: Path) -> dict[str, str]:
    tracker = open_tracker(mlruns)
    ids = [e.experiment_id for e in tracker.client.search_experiments()]
    return {r.info.run_id: r.info.status for r in tracker.client.search_runs(ids, max_results=1000)}


def _kill_job(
    clean: CleanJob, index_dir: Path, store: Store, where: Path, delay: float, after: str | None = None
) -> str:
    """Kill the job `delay` s after it starts (or after it starts phase `after`, or after it creates its
    scratch export when `after` is "staging"), run it again to completion; where the kill landed."""
    where.mkdir()
    cache, killed_log, rerun_log = where / "cache", where / "killed.log", where / "rerun.log"
    before = _statuses(clean.mlruns)
    args = [str(clean.config), str(clean.mlruns), str(index_dir), str(cache), str(killed_log)]
    proc = _start(args, where / "killed.err")
    if after == "staging":
        _wait_until(proc, lambda: any((clean.mlruns / ".staging").glob("*/export/*")))
    elif after is not None:
        _wait_until(proc, lambda: after in (p for _, p in _phases(killed_log)), every=0.005)
    _kill_after(proc, delay)

    started = {run_id: status for run_id, status in _statuses(clean.mlruns).items() if run_id not in before}
    assert len(started) <= 1
    killed_run, status = next(iter(started.items()), (None, None))
    phases = [phase for _, phase in _phases(killed_log) if phase != "run"]
    landing = {None: "before run start", "FINISHED": "after finish"}.get(status, phases[-1] if phases else "setup")
    landing = {"setup": "setup (run started)", "log": "export and logging"}.get(landing, landing)
    finished, computed = set(read_lines(killed_log)), set(read_lines(computed_log(killed_log)))
    scratch = [p.name for p in (clean.mlruns / ".staging").glob("*")]

    # The next start (in this process) of the same job, on the killed job's cache and store.
    with disk_cache(cache):
        summary: RunSummary = run_job(clean.config, clean.mlruns, index_dir, rerun_log)
    recomputed = set(read_lines(computed_log(rerun_log)))
    statuses = _statuses(clean.mlruns)

    # (a) the run the kill left RUNNING is marked FAILED by the next start; nothing is left RUNNING
    if status == "RUNNING":
        assert summary.reaped == (killed_run,)
        assert statuses[killed_run] == "FAILED"
        tags = open_tracker(clean.mlruns).client.get_run(killed_run).data.tags
        assert "ended without closing the run" in tags[TAG_STOP]
        assert not (clean.mlruns / ".staging" / str(killed_run)).exists()  # its scratch export is removed
    else:
        assert summary.reaped == ()
    assert "RUNNING" not in statuses.values()
    # (b) no LM call the killed job had finished is made again; every call it never started is made
    assert not recomputed & finished, f"{len(recomputed & finished)} finished call(s) redone after a kill at {delay}s"
    assert clean.computed - computed <= recomputed <= clean.computed - finished
    # (c) the resumed job finishes with the same program as a job that was never killed
    assert statuses[summary.run_id] == "FINISHED"
    assert program_state(load_export(summary.export_dir, ScopedQA(store)).program) == clean.state
    if status == "FINISHED":
        assert _files(_export_dir(clean.mlruns, str(killed_run))) is not None
    # the previous state: the clean run is still finished, its export byte for byte the same
    assert statuses[clean.run_id] == "FINISHED"
    assert _files(_export_dir(clean.mlruns, clean.run_id)) == clean.export
    log.info(
        "job kill at %.2fs%s: %s; %d/%d calls had finished, %d recomputed, reaped %s, scratch export left %s",
        delay,
        f" after {after}" if after else "",
        landing,
        len(finished & clean.computed),
        len(clean.computed),
        len(recomputed),
        summary.reaped,
        scratch,
    )
    return landing


def test_killed_optimisation_jobs_resume_without_redoing_finished_calls(
    clean_job: CleanJob, demo_index_dir: Path, store: Store, tmp_path: Path
) -> None:
    # Half-way through compiling (as long as compiling took in the clean run), and while exporting.
    half = (clean_job.phases["result"] - clean_job.phases["compile"]) / 2
    assert _kill_job(clean_job, demo_index_dir, store, tmp_path / "kill-0", half, after="compile") in (
        "baseline",
        "compile",
        "result",
    )
    assert _kill_job(clean_job, demo_index_dir, store, tmp_path / "kill-1", 0.0, after="staging") == (
        "export and logging"
    )


@pytest.mark.slow
def test_ten_random_kills_of_an_optimisation_job(
    clean_job: CleanJob, demo_index_dir: Path, store: Store, tmp_path: Path
) -> None:
    rng = random.Random(10)
    # Spread over the job from half-way through its start-up (opening MLflow) to after it finishes.
    low, high = 0.5 * clean_job.phases["run"], 1.2 * clean_job.phases["finished"]
    delays = sorted(rng.uniform(low, high) for _ in range(10))
    landings = Counter(
        _kill_job(clean_job, demo_index_dir, store, tmp_path / f"kill-{i}", delay) for i, delay in enumerate(delays)
    )
    log.info("job kills: %s (clean job: %s, %.1fs)", dict(landings), clean_job.phases, clean_job.seconds)
    assert sum(landings.values()) == 10


# -- exports ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Exports:
    """Two finished runs in one store; `scoperag export` of `new` is killed over an export of `previous`."""

    mlruns: Path
    previous: str
    new: str
    files: dict[str, dict[str, bytes]]


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory, mlflow_template: Path, store: Store) -> Exports:
    where = tmp_path_factory.mktemp("fault-export")
    mlruns = fresh_mlruns(mlflow_template, where / "mlruns")
    config = write_config(where, write_data(where / "traces"))
    previous, new = run(config, mlruns, store), run(config, mlruns, store)
    files = {s.run_id: _files(s.export_dir) for s in (previous, new)}
    assert all(f is not None and set(f) == set(EXPORT_FILES) for f in files.values())
    assert files[previous.run_id] != files[new.run_id]
    return Exports(mlruns, previous.run_id, new.run_id, {k: v for k, v in files.items() if v is not None})


def _siblings(dest: Path) -> set[str]:
    return {p.name for p in dest.parent.iterdir() if p != dest}


def _measure_export(exports: Exports, dest: Path, where: Path) -> list[float]:
    """Run the slow-disk export to completion; when each fsync/rename of it began, in seconds after the first."""
    syscalls, err = where / "measure.syscalls", where / "measure.err"
    _finish(_start(["export", str(SLOW_DISK), str(syscalls), exports.new, str(dest), str(exports.mlruns)], err), err)
    assert _files(dest) == exports.files[exports.new]
    export_run(exports.previous, dest, exports.mlruns, overwrite=True)
    steps = [(t, what) for t, what in _timeline(syscalls) if str(dest.parent) in what]
    log.info(
        "slow-disk export: %s", [(round(t - steps[0][0], 4), what.replace(str(dest.parent), "")) for t, what in steps]
    )
    assert steps, "the export made no fsync or rename"
    return [t - steps[0][0] for t, _ in steps]


def _kill_export(exports: Exports, store: Store, dest: Path, slow: float, delay: float, where: Path) -> str:
    """Kill `scoperag export NEW --out DEST --overwrite` `delay` s after its staging directory appears.

    The test polls for the staging directory (the code under test is not told anything), so the
    kill lands inside the write even though start-up takes a varying fraction of a second."""
    assert _files(dest) == exports.files[exports.previous]
    before = _siblings(dest)
    name = f"{'slow' if slow else 'natural'}-{delay:.4f}"
    args = ["export", str(slow), str(where / f"{name}.syscalls"), exports.new, str(dest), str(exports.mlruns)]
    proc = _start(args, where / f"{name}.err")
    _wait_until(proc, lambda: bool(_siblings(dest) - before))
    hit = _kill_after(proc, delay)

    found = _files(dest)
    assert found is not None, f"no export at the destination after a kill {delay:.4f}s into the write"
    assert found in (exports.files[exports.previous], exports.files[exports.new]), "a partial export was published"
    assert load_export(dest, ScopedQA(store)).manifest.run_id in (exports.previous, exports.new)
    left = _siblings(dest) - before
    # Leftovers of a killed export are hidden staging directories beside the destination.
    assert all(n.startswith(f".{dest.name}.") for n in left), left
    new = exports.files[exports.new]
    if found == exports.files[exports.previous]:
        staged = [_files(dest.parent / n) or {} for n in left]
        complete = max((sum(f.get(k) == v for k, v in new.items()) for f in staged), default=None)
        landing = "before staging" if complete is None else f"staging, {complete} of 3 files complete"
    else:
        previous_left = any(_files(dest.parent / n) == exports.files[exports.previous] for n in left)
        landing = (
            "published, the previous export left beside it"
            if previous_left
            else "published, clean-up interrupted"
            if left
            else "after finish"
            if hit
            else "finished before the kill"
        )
        export_run(exports.previous, dest, exports.mlruns, overwrite=True)
    log.info("export kill %.4fs into the write (slow disk %ss): %s", delay, slow, landing)
    return landing


def _export_delays(steps: list[float], rng: random.Random, natural: int, slow: int) -> list[tuple[float, float]]:
    """(slow-disk seconds, delay after the staging directory appears): `natural` kills within the real
    write (a few milliseconds), then slow-disk kills in the middle of the wait before each fsync/rename
    (before the last-but-one first, then the last, then backwards), then random ones over the write."""
    plan = [(0.0, rng.uniform(0.0, 0.003)) for _ in range(natural)]
    order = [*steps[-2:], *reversed(steps[:-2])]
    plan += [(SLOW_DISK, t + SLOW_DISK / 2) for t in order][:slow]
    plan += [(SLOW_DISK, rng.uniform(0.0, steps[-1] + SLOW_DISK)) for _ in range(slow - len(order))]
    return plan


def _run_export_kills(exports: Exports, store: Store, tmp_path: Path, natural: int, slow: int) -> Counter[str]:
    dest = tmp_path / "exports" / "program"
    dest.parent.mkdir()
    export_run(exports.previous, dest, exports.mlruns)
    plan = _export_delays(_measure_export(exports, dest, tmp_path), random.Random(natural + slow), natural, slow)
    landings = Counter(_kill_export(exports, store, dest, s, delay, tmp_path) for s, delay in plan)
    # Whatever the kills left beside it, the next export to the destination completes and removes it.
    export_run(exports.new, dest, exports.mlruns, overwrite=True)
    assert _files(dest) == exports.files[exports.new]
    assert not _siblings(dest), "scratch directories of killed exports were left beside the destination"
    log.info("export kills: %s; left beside the destination: %s", dict(landings), sorted(_siblings(dest)))
    return landings


def test_killed_exports_leave_the_previous_or_the_new_export(exports: Exports, store: Store, tmp_path: Path) -> None:
    # One slow-disk kill, in the wait before the last-but-one fsync/rename. Before renameat2 exchange
    # was used, that was between renaming the previous export aside and renaming the new one in.
    landings = _run_export_kills(exports, store, tmp_path, natural=0, slow=1)
    assert sum(landings.values()) == 1


@pytest.mark.slow
def test_ten_random_kills_of_an_export(exports: Exports, store: Store, tmp_path: Path) -> None:
    landings = _run_export_kills(exports, store, tmp_path, natural=4, slow=6)
    assert sum(landings.values()) == 10
