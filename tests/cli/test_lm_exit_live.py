"""With the real embedded model: a command that ends while llama.cpp is still decoding exits cleanly (it died of a
segmentation fault, exit 139, with no message: after a question stopped at its time bound, and after Ctrl-C on an
`evaluate` whose output went through a pipe, with nothing written). The shutdown logic itself is tested without a
model in tests/program/test_lm_shutdown.py. Minutes; run with -m live_lm."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.paths import ROOT

pytestmark = pytest.mark.live_lm

# Every call may write 8,192 tokens: whatever the machine's speed, the bound falls while the model decodes.
SHORT_BOUND = """
[question]
seconds = 15

[program.max_tokens]
decompose = 8192
score = 8192
answer = 8192
hyde = 8192
compute = 8192
"""


def scoperag(*args: str) -> list[str]:
    return [sys.executable, "-m", "pipeline.cli", *args]


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "MLFLOW_DISABLE_TELEMETRY": "true"}


@pytest.fixture(scope="module")
def demo_index(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    index = tmp_path_factory.mktemp("live-exit") / "index"
    subprocess.run(scoperag("index", str(ROOT / "datasets" / "demo"), "--out", str(index)), env=env, check=True)
    return index


def test_a_question_stopped_at_its_bound_while_the_model_decodes_exits_cleanly(
    demo_index: Path, env: dict[str, str], tmp_path: Path
) -> None:
    settings = tmp_path / "short.toml"
    settings.write_text(SHORT_BOUND)
    history = tmp_path / "history.sqlite"
    question = ["ask", "What is the monthly rent and who is the tenant?", "--property", "Banda Lane"]
    common = ["--index", str(demo_index), "--history", str(history)]
    # the crash came one run in two or three: three runs, each exiting 0
    for _ in range(3):
        done = subprocess.run(
            scoperag(*question, *common, "--uncompiled", "--settings", str(settings)),
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert "time bound of 15 s" in done.stdout
    listed = subprocess.run(scoperag("history", *common, "--json"), env=env, capture_output=True, text=True, check=True)
    assert {entry["status"] for entry in json.loads(listed.stdout)} == {"stopped"}


def test_ctrl_c_on_an_evaluate_whose_pipe_reader_is_gone_writes_its_files_and_exits_130(
    demo_index: Path, env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "eval"
    command = scoperag(
        "evaluate", "--traces", str(ROOT / "datasets" / "demo-traces"), "--split", "dev", "--limit", "4",
        "--uncompiled", "--index", str(demo_index), "--out", str(out),
    )  # fmt: skip
    reader, writer = os.pipe()
    process = subprocess.Popen(command, env=env, stdout=writer, stderr=subprocess.PIPE, text=True)
    os.close(writer)
    time.sleep(25)  # the model loaded and decoding
    os.close(reader)  # Ctrl-C in a terminal stops `| tee` too: the reader of stdout is gone
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 130, stderr[-2000:]
    status = json.loads((out / "status-hybrid.json").read_text())
    assert status["complete"] is False and status["examples_total"] == 4
    assert (out / "examples-hybrid.csv").is_file()
