"""A real `scoperag serve` process on a free loopback port, as a user starts it, for the web page's tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

STARTUP_SECONDS = 60.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_healthy(
    process: subprocess.Popen[Any], health_url: str, seconds: float, tail: Callable[[], str], name: str
) -> None:
    """Returns once `health_url` answers 200; RuntimeError with the log's `tail()` when `process` exits first or
    `seconds` pass."""
    deadline = time.monotonic() + seconds
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}: {tail()}")
        try:
            if httpx.get(health_url, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name} did not answer within {seconds} s: {tail()}")
        time.sleep(0.1)


def scoperag_command() -> list[str]:
    """The `scoperag` console script of this environment."""
    script = Path(sys.executable).with_name("scoperag")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "pipeline.cli"]


@contextmanager
def scoperag_serve(options: Sequence[str], cwd: Path, startup: float = STARTUP_SECONDS) -> Iterator[str]:
    """`scoperag serve OPTIONS --port <free>` run in `cwd` (its profiles live in cwd/.scoperag); yields its
    base URL once /v1/health answers (within `startup` seconds); stopped (SIGTERM, then SIGKILL) on exit."""
    port = free_port()
    env = {**os.environ, "DSPY_CACHEDIR": str(cwd / "dspy-cache"), "PYTHONUNBUFFERED": "1"}
    log = (cwd / f"serve-{port}.log").open("wb")
    process = subprocess.Popen(
        [*scoperag_command(), "serve", *options, "--port", str(port)], cwd=cwd, env=env, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(process, f"{url}/v1/health", startup, lambda: _tail(cwd, port), "scoperag serve")
        yield url
    finally:
        stop_process(process)
        log.close()


def stop_process(process: subprocess.Popen[Any], seconds: float = 15) -> None:
    """SIGTERM, then SIGKILL if it has not ended within `seconds`."""
    process.terminate()
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


def _tail(cwd: Path, port: int) -> str:
    return (cwd / f"serve-{port}.log").read_text(errors="replace")[-2000:]
