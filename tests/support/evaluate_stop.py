"""Ctrl-C to an LM-backed `scoperag evaluate` process at a known moment: the LM is the project's test server (an
OpenAI-compatible endpoint on 127.0.0.1) answering every call of the first `answered` examples at once and holding
every later call HELD_SECONDS, as a slow model would. Used by tests/cli/test_evaluate_stop.py and
benchmarks/evaluate_stop.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.evaluation.examples import LabelledExample, write_examples
from tests.support.compromised_server import Failure, openai_compatible_server
from tests.support.fakes import cooperative
from tests.support.serve_process import scoperag_command

HELD_SECONDS = 60.0


class HoldingLM:
    """Answers every call about the first `answered` questions it is asked; holds every other call HELD_SECONDS."""

    slow_seconds = HELD_SECONDS

    def __init__(self, answered: int = 1) -> None:
        self.answered = answered
        self.questions: list[str] = []  # the questions answered at once, in the order they came
        self.held = threading.Event()
        self._lock = threading.Lock()
        self._respond = cooperative()

    def receive(self, body: dict[str, Any]) -> tuple[Failure | None, str]:
        prompt = body["messages"][-1]["content"]
        with self._lock:
            own = any(question in prompt for question in self.questions)
            if not own and len(self.questions) < self.answered:
                self.questions.append(prompt.split("[[ ## question ## ]]", 1)[-1].strip().split("\n", 1)[0])
                own = True
        answer = json.dumps(self._respond(prompt))
        if own:
            return None, answer
        self.held.set()
        return "slow", answer


def distinct_questions(examples: list[LabelledExample]) -> list[LabelledExample]:
    """The first example of each question: the LM tells examples apart by their question."""
    seen: set[str] = set()
    return [e for e in examples if not (e.question in seen or seen.add(e.question))]  # type: ignore[func-returns-value]


@dataclass(frozen=True)
class Stopped:
    """What the interrupted command did: its exit code, seconds from SIGINT to exit, its output."""

    returncode: int
    seconds: float
    stdout: str
    stderr: str


def interrupt_evaluate(
    examples: list[LabelledExample], index_dir: Path, scratch: Path, out: Path, answered: int = 1
) -> Stopped:
    """Run `scoperag evaluate` on `examples` (one at a time) against a HoldingLM answering the first `answered` of
    them; once the next example's first call is held, send SIGINT and time the exit."""
    traces = scratch / "traces.jsonl"
    write_examples(traces, examples)
    lm = HoldingLM(answered)
    env = {**os.environ, "DSPY_CACHEDIR": str(scratch / "dspy"), "SCOPERAG_CACHE_DIR": str(scratch / "cache")}
    with openai_compatible_server(lm, "holding-lm") as url:
        command = [
            *scoperag_command(),
            "evaluate",
            *("--traces", str(traces), "--index", str(index_dir), "--lm", url),
            *("--threads", "1", "--out", str(out)),
        ]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            if not lm.held.wait(120):
                raise RuntimeError(f"example {answered + 1}'s first call never came")
            time.sleep(0.5)  # the answered examples' results are in
            sent = time.monotonic()
            process.send_signal(signal.SIGINT)
            process.wait(HELD_SECONDS * 2)
            seconds = time.monotonic() - sent
        finally:
            if process.poll() is None:
                process.kill()
        stdout, stderr = process.communicate()
    return Stopped(process.returncode, seconds, stdout, stderr)
