"""A job driver that tests/test_fault_jobs.py starts as a real subprocess and kills with SIGKILL.

    python -m tests.fault_job CONFIG MLRUNS INDEX_DIR DSPY_CACHE_DIR FINISHED_LOG
        run_experiment(CONFIG) on the index at INDEX_DIR with the cooperative scripted LM, its
        responses cached in DSPy's disk cache at DSPY_CACHE_DIR, CALL_SECONDS per computed call.
        Appends (flushed and fsynced) the hash of each LM call the program received a result for
        to FINISHED_LOG, of each call the LM computed (a cache miss) to FINISHED_LOG.computed, and
        `seconds-since-ready what` per job phase (and the run id) to FINISHED_LOG.phases.
    python -m tests.fault_job export SLOW_SECONDS SYSCALL_LOG RUN_ID OUT MLRUNS
        the real `scoperag export RUN_ID --out OUT --mlruns MLRUNS --overwrite`; with SLOW_SECONDS > 0
        every os.fsync and os.rename sleeps that long first (a slow disk: wider windows between the
        steps of the unchanged saving code) and is logged to SYSCALL_LOG.

Both print `ready` on stdout once everything is imported, so a kill delay measures the job, not imports.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

CALL_SECONDS = 0.03
_FSYNC = os.fsync  # the real one, even when slow_disk has replaced os.fsync


def prompt_hash(messages: Sequence[Mapping[str, Any]]) -> str:
    """One LM call's identity: its messages (role and text), hashed."""
    shown = [[m.get("role"), m.get("content")] for m in messages]
    return hashlib.sha256(json.dumps(shown, sort_keys=True, default=str).encode()).hexdigest()[:32]


class Appender:
    """Lines appended to a file, each flushed and fsynced before the call returns (thread-safe)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def append(self, line: str) -> None:
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()
            _FSYNC(handle.fileno())


def read_lines(path: Path) -> list[str]:
    """The complete lines of an Appender's file (none if it was never written)."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    return text.splitlines() if text.endswith("\n") else text.splitlines()[:-1]


def computed_log(finished_log: Path) -> Path:
    return Path(f"{finished_log}.computed")


def phases_log(finished_log: Path) -> Path:
    return Path(f"{finished_log}.phases")


@contextlib.contextmanager
def disk_cache(directory: Path) -> Iterator[None]:
    """DSPy's response cache on disk at `directory` (restricted unpickling, as the CLI), restored after."""
    import dspy

    previous = dspy.cache
    dspy.configure_cache(enable_disk_cache=True, disk_cache_dir=str(directory), restrict_pickle=True)
    try:
        yield
    finally:
        dspy.cache.disk_cache.close()
        dspy.cache = previous


def recording_lm(finished_log: Path, call_seconds: float = 0.0) -> Any:
    """The cooperative scripted LM with DSPy's response cache on, recording finished and computed calls.

    Finished: a dspy callback appends the call's hash when the program receives the result (cache
    hit or not). Computed: the scripted engine appends it before answering (cache misses only).
    """
    from dspy.utils.callback import BaseCallback

    from tests.support.fakes import cooperative, scripted_lm

    finished, computed = Appender(finished_log), Appender(computed_log(finished_log))

    class Finished(BaseCallback):
        def __init__(self) -> None:
            self.started: dict[str, str] = {}

        def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
            messages = inputs.get("messages") or [{"role": "user", "content": inputs.get("prompt")}]
            self.started[call_id] = prompt_hash(messages)

        def on_lm_end(self, call_id: str, outputs: Any | None, exception: BaseException | None = None) -> None:
            digest = self.started.pop(call_id, None)
            if digest is not None and exception is None:
                finished.append(digest)

    lm = scripted_lm(cooperative())
    lm._cache_responses = True  # DummyLM opts out of DSPy's cache; a real LM does not
    lm.callbacks = [Finished()]
    engine = lm._engine_spec
    answer = engine._complete_messages

    def compute(messages: list[dict[str, str]]) -> Any:
        computed.append(prompt_hash(messages))
        time.sleep(call_seconds)
        return answer(messages)

    engine._complete_messages = compute
    return lm


def run_job(
    config: Path,
    mlruns: Path,
    index_dir: Path,
    finished_log: Path,
    call_seconds: float = 0.0,
    *,
    announce: bool = False,
) -> Any:
    """run_experiment on the scripted recording LM; phases (and the run id) logged as they start.

    With `announce`, `ready` is printed just before the job starts.
    """
    from experiments.runner import ProgressEvent, run_experiment
    from pipeline.store import open_store

    store = open_store(index_dir)  # the embedder named in the index's manifest (hash-64 in the tests)
    lm = recording_lm(finished_log, call_seconds)
    phases = Appender(phases_log(finished_log))
    last = {"phase": ""}

    def note(what: str) -> None:
        phases.append(f"{time.monotonic() - start:.3f} {what}")

    def progress(event: ProgressEvent) -> None:
        if event.message.startswith("MLflow run "):
            note(f"run {event.message.split()[2]}")
        if event.phase != last["phase"]:
            last["phase"] = event.phase
            note(f"phase {event.phase}")

    if announce:
        _ready()
    start = time.monotonic()
    summary = run_experiment(config, mlruns=mlruns, store=store, lm_factory=lambda spec: lm, progress=progress)
    note(f"finished {summary.run_id}")
    return summary


def slow_disk(seconds: float, log: Path) -> None:
    """Every os.fsync and os.rename sleeps `seconds` first and is logged (seconds since now, call)."""
    appender, start = Appender(log), time.monotonic()
    fsync, rename = _FSYNC, os.rename

    def slow_fsync(fd: int) -> None:
        appender.append(f"{time.monotonic() - start:.4f} fsync {Path(f'/proc/self/fd/{fd}').readlink()}")
        time.sleep(seconds)
        fsync(fd)

    def slow_rename(src: Any, dst: Any, **kwargs: Any) -> None:
        appender.append(f"{time.monotonic() - start:.4f} rename {os.fspath(src)} {os.fspath(dst)}")
        time.sleep(seconds)
        rename(src, dst, **kwargs)

    os.fsync = slow_fsync
    os.rename = slow_rename


def _ready() -> None:
    """`ready` on stdout, then stdout joins stderr (the reader stops reading; a full pipe would block)."""
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())


def main(argv: list[str]) -> int:
    for name, value in (
        ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
        ("MLFLOW_DISABLE_TELEMETRY", "true"),
        ("HF_HUB_OFFLINE", "1"),
    ):
        os.environ.setdefault(name, value)
    if argv[0] == "export":
        seconds, log, run_id, out, mlruns = argv[1:]
        # imported before `ready`, so the kill window is the export itself
        import bm25s  # noqa: F401

        import experiments.runs  # noqa: F401
        from pipeline.cli import main as cli

        if float(seconds) > 0:
            slow_disk(float(seconds), Path(log))
        _ready()
        return cli.main(["export", run_id, "--out", out, "--mlruns", mlruns, "--overwrite"])
    config, mlruns, index_dir, cache_dir, finished_log = map(Path, argv)
    with disk_cache(cache_dir):
        run_job(config, mlruns, index_dir, finished_log, CALL_SECONDS, announce=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
