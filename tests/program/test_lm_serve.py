"""`scoperag lm-serve`: the embedded model over llama.cpp's own OpenAI-compatible server, on 127.0.0.1 behind a
key that clients send (`SCOPERAG_LM_KEY`). The live test loads the real model and asks through it end to end."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from pipeline.errors import ModelError
from pipeline.program.lm.engine import LoadOptions, server_params
from tests.support.compromised_server import CooperativeLM, openai_compatible_server
from tests.support.serve_process import free_port, scoperag_command, stop_process


def test_the_server_listens_where_it_is_told_behind_its_key_with_a_slot_per_request() -> None:
    params = server_params(Path("model.gguf"), LoadOptions(threads=2, parallel=3), host="127.0.0.1", port=8080, key="k")
    assert (list(params.hostnames), params.port, list(params.api_keys)) == (["127.0.0.1"], 8080, ["k"])
    assert params.n_parallel == 3 and params.n_threads_http == 3 and params.n_ctx == 8192 * 3
    assert params.ui is False and params.offline is True
    with pytest.raises(ModelError, match="needs an API key"):
        server_params(Path("model.gguf"), LoadOptions(), host="127.0.0.1", port=0, key="")


def test_ask_sends_the_key_of_scoperag_lm_key_to_the_server(
    demo_index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.cli.main import main

    lm = CooperativeLM()
    monkeypatch.setenv("SCOPERAG_LM_KEY", "the-key")
    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy"))
    monkeypatch.chdir(tmp_path)
    with openai_compatible_server(lm) as url:
        code = main(
            [
                "ask",
                "What is the monthly rent?",
                "--property",
                "Banda Lane",
                "--index",
                str(demo_index_dir),
                "--lm",
                url,
                "--json",
            ]
        )
    assert code == 0, capsys.readouterr().err
    assert lm.authorizations and set(lm.authorizations) == {"Bearer the-key"}


def test_lm_serve_writes_its_key_for_clients_alone_and_says_how_to_use_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pipeline.program.lm as lm_package
    from pipeline.cli.main import main

    started: dict[str, Any] = {}

    def fake_server(**kwargs: Any) -> object:  # the model load is the third-party edge (the live test loads it)
        started.update(kwargs)
        return object()

    def interrupted(self: threading.Event, timeout: float | None = None) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(lm_package, "serve_embedded_model", fake_server)
    monkeypatch.setattr(threading.Event, "wait", interrupted)
    monkeypatch.delenv("SCOPERAG_LM_KEY", raising=False)
    key_file = tmp_path / "keys" / "lm.key"
    assert main(["lm-serve", "--port", "8123", "--key-file", str(key_file), "--parallel", "2"]) == 0
    key = key_file.read_text()
    assert len(key) >= 24 and started["key"] == key and started["host"] == "127.0.0.1" and started["port"] == 8123
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    said = " ".join(capsys.readouterr().err.split())
    assert "serving the embedded model on http://127.0.0.1:8123/v1" in said
    assert f"SCOPERAG_LM_KEY=$(cat {key_file}) scoperag ask" in said and "stopped" in said
    monkeypatch.setenv("SCOPERAG_LM_KEY", "chosen")
    assert main(["lm-serve", "--port", "8124", "--key-file", str(key_file), "--host", "0.0.0.0"]) == 0
    assert key_file.read_text() == "chosen" == started["key"]
    assert "reachable from other machines" in capsys.readouterr().err


@pytest.mark.live_lm
def test_ask_through_lm_serve_answers_end_to_end_with_the_real_model(demo_index_dir: Path, tmp_path: Path) -> None:
    """Loads the embedded model in `scoperag lm-serve` and asks through it (`pytest -m live_lm`)."""
    port = free_port()
    key_file = tmp_path / "lm.key"
    env = {k: v for k, v in os.environ.items() if k != "SCOPERAG_LM_KEY"} | {"DSPY_CACHEDIR": str(tmp_path / "d")}
    server = subprocess.Popen(
        [*scoperag_command(), "lm-serve", "--port", str(port), "--key-file", str(key_file)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        for line in server.stderr:
            if line.startswith("serving the embedded model"):
                break
        else:
            pytest.fail(f"lm-serve exited with {server.wait()}")
        url = f"http://127.0.0.1:{port}/v1"
        # Without its key the server answers nobody.
        refused = httpx.post(f"{url}/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]})
        assert refused.status_code == 401
        # A score call of the 0.5B model takes 15 s on 2 idle cores and minutes on a busy machine: no timeout.
        settings = tmp_path / "settings.toml"
        settings.write_text("[lm_requests]\ntimeout_seconds = 3600.0\nretries = 0\n")
        question = ["What is the monthly rent?", "--property", "Banda Lane", "--index", str(demo_index_dir)]
        asked = subprocess.run(
            [*scoperag_command(), "ask", *question, "--lm", url, "--settings", str(settings), "--json"],
            env=env | {"SCOPERAG_LM_KEY": key_file.read_text()},
            capture_output=True,
            text=True,
            timeout=3600,
            cwd=tmp_path,
        )
        assert asked.returncode == 0, asked.stderr[-2000:]
        answer = json.loads(asked.stdout)
        assert answer["sections"] and answer["lm_calls"] >= 2 and answer["cached_calls"] == 0
    finally:
        stop_process(server, 30)
