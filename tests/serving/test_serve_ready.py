"""`scoperag serve` says "serving on ..." only once it answers (loading the model may take most of a minute)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx

from tests.support.serve_process import free_port, scoperag_command, stop_process


def test_serve_says_it_serves_once_it_answers(tmp_path: Path, demo_index_dir: Path) -> None:
    port = free_port()
    env = {**os.environ, "DSPY_CACHEDIR": str(tmp_path / "dspy"), "PYTHONUNBUFFERED": "1"}
    command = [*scoperag_command(), "serve", "--index", str(demo_index_dir), "--lm", "openai/test-model"]
    process = subprocess.Popen(
        [*command, "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    said = []
    try:
        assert process.stderr is not None
        for line in process.stderr:
            said.append(line.strip())
            if line.startswith("serving on "):
                break
        assert said and said[-1].startswith(f"serving on http://127.0.0.1:{port}"), said
        assert said[0].startswith("loading the index")
        # Said when true: the first request, made right after the line, is answered.
        assert httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=10).status_code == 200
    finally:
        stop_process(process, 15)
