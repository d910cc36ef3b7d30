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
from pipeline.settings import Settings, load_settings
from pipeline.store import Store
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


# ---- --lm switches the LM on, whatever profile is active -----------------------------------------------------


@pytest.mark.parametrize("profile", [False, True], ids=["no-profile", "floors-profile-active"])
def test_ask_with_an_lm_url_runs_the_lm_steps_over_a_socket_whatever_profile_is_active(
    demo_index_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    profile: bool,
) -> None:
    """As a new user tries it: `ask --lm http://127.0.0.1:PORT/v1` against an OpenAI-compatible server makes LM
    calls and answers, also once a profile whose program runs every step's floor (the shipped one) is active."""
    from pipeline.cli.main import main
    from pipeline.export.choice import SHIPPED_PROGRAM

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy"))
    monkeypatch.delenv("SCOPERAG_LM", raising=False)
    monkeypatch.delenv("SCOPERAG_LM_KEY", raising=False)
    if profile:
        assert main(["profile", "add", "floors", str(SHIPPED_PROGRAM)]) == 0
        assert main(["profile", "activate", "floors"]) == 0
    capsys.readouterr()
    question = ["ask", "What is the monthly rent?", "--property", "Banda Lane", "--index", str(demo_index_dir)]
    lm = CooperativeLM()
    with openai_compatible_server(lm) as url:
        code = main([*question, "--lm", url, "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        answer = json.loads(out)
        assert answer["lm_calls"] > 0 and len(lm.authorizations) == answer["lm_calls"]  # each call reached the server
        assert [s["status"] for s in answer["sections"]] == ["answered"] and answer["sections"][0]["answer"]
        first = err.splitlines()[0]
        assert f"nothing is compiled for {url}" in first and "every step by the LM" in first
        assert ("profile 'floors' is active but not used: --lm was given" in first) is profile
        if profile:  # $SCOPERAG_LM is a standing default, as the profile is: the profile answers, and says so
            monkeypatch.setenv("SCOPERAG_LM", url)
            before = len(lm.authorizations)
            assert main([*question, "--json"]) == 0
            out, err = capsys.readouterr()
            assert json.loads(out)["lm_calls"] == 0 and len(lm.authorizations) == before
            assert err.splitlines()[0].startswith("program: profile 'floors' (") and "no step by the LM" in err


# ---- the loopback key goes to loopback servers only (issue 36, D10) ----------------------------------------


def _ask_through_proxy(index: Path, url: str, proxy: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """`scoperag ask --lm URL` in this process with every HTTP request sent through `proxy`: the test server sees
    the request meant for URL's host, with the key it carried, and nothing reaches the network."""
    from pipeline.cli.main import main

    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.setenv(name, proxy)
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    question = ["ask", "What is the monthly rent?", "--property", "Banda Lane", "--index", str(index)]
    return main([*question, "--lm", url, "--json"])


@pytest.mark.parametrize(
    "url", ["http://llm.example:8000/v1", "http://10.1.2.3:8080/v1", "http://127.0.0.1.evil.example:8080/v1"]
)
def test_the_loopback_key_is_never_sent_to_another_server_and_its_own_key_is(
    demo_index_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    url: str,
) -> None:
    from pipeline.program.lm import key_variable

    monkeypatch.setenv("SCOPERAG_LM_KEY", "loopback-secret")
    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy"))
    monkeypatch.chdir(tmp_path)
    lm = CooperativeLM()
    with openai_compatible_server(lm) as proxy:
        assert _ask_through_proxy(demo_index_dir, url, proxy.removesuffix("/v1"), monkeypatch) == 0
        assert lm.authorizations and set(lm.authorizations) == {"Bearer local"}  # no key: the server's own variable
        lm.authorizations.clear()
        monkeypatch.setenv(key_variable(url), "its-own-key")
        monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy-2"))  # asked again, not answered from the cache
        assert _ask_through_proxy(demo_index_dir, url, proxy.removesuffix("/v1"), monkeypatch) == 0
    assert lm.authorizations and set(lm.authorizations) == {"Bearer its-own-key"}
    assert "loopback-secret" not in capsys.readouterr().err


def test_keys_by_address() -> None:
    from pipeline.program.lm import key_variable, keys_from

    keys = keys_from({"SCOPERAG_LM_KEY": "k", "SCOPERAG_LM_KEY_VLLM_INTERNAL_8000": "v", "SCOPERAG_LM_KEY_X_1": ""})
    for loopback in (
        "http://127.0.0.1:8080/v1",
        "http://127.0.0.9:1/v1",
        "http://localhost:8080/v1",
        "http://[::1]:8/v1",
    ):
        assert keys.for_url(loopback) == "k"
    assert keys.for_url("http://vllm.internal:8000/v1") == "v"
    assert keys.for_url("http://vllm.internal:8001/v1") == "local"  # another port is another server
    assert keys.for_url("https://llm.example/v1") == "local" and key_variable("https://llm.example/v1").endswith("_443")
    assert key_variable("http://vllm.internal:8000/v1") == "SCOPERAG_LM_KEY_VLLM_INTERNAL_8000"
    assert keys_from({}).for_url("http://127.0.0.1:8080/v1") == "local"


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
    # the clients' settings beside the key: the embedded model's bounds, not the default 120 s, and no step changed
    client_settings = key_file.with_suffix(".toml")
    assert f'scoperag ask "..." --settings {client_settings} --lm http://127.0.0.1:8123/v1' in said
    settings = load_settings(client_settings)
    assert settings.question.seconds == 900 and settings.lm_requests.timeout_seconds == 900
    assert settings.program.steps == Settings().program.steps
    monkeypatch.setenv("SCOPERAG_LM_KEY", "chosen")
    assert main(["lm-serve", "--port", "8124", "--key-file", str(key_file), "--host", "0.0.0.0"]) == 0
    assert key_file.read_text() == "chosen" == started["key"]
    said = " ".join(capsys.readouterr().err.split())
    assert "reachable from other machines" in said
    # SCOPERAG_LM_KEY is for loopback servers: clients of this address use its own variable
    assert f"SCOPERAG_LM_KEY_0_0_0_0_8124=$(cat {key_file}) scoperag ask" in said


def test_lm_serve_serves_the_embedded_model_named_and_names_the_program_shipped_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], demo_store: Store
) -> None:
    import pipeline.program.lm as lm_package
    from pipeline.cli.main import main
    from pipeline.export.choice import SHIPPED_PROGRAM, SHIPPED_PROGRAMS
    from pipeline.export.routes import write_routed
    from pipeline.program.lm.model_file import QWEN_CODER_05B, QWEN_CODER_15B

    served: list[Any] = []
    monkeypatch.setattr(lm_package, "serve_embedded_model", lambda **kwargs: served.append(kwargs["model"]))
    monkeypatch.setattr(threading.Event, "wait", lambda self, timeout=None: (_ for _ in ()).throw(KeyboardInterrupt))
    key_file = tmp_path / "lm.key"
    assert main(["lm-serve", "--key-file", str(key_file)]) == 0
    assert main(["lm-serve", "--key-file", str(key_file), "--lm", "embedded:1.5b"]) == 0
    # a program shipped for the 1.5B that routes a step to it (the shipped one routes none)
    routed = tmp_path / "routed"
    write_routed(SHIPPED_PROGRAM, demo_store, {"choose": "lm"}, routed, lm_name="embedded:1.5b", measured="a test")
    monkeypatch.setitem(SHIPPED_PROGRAMS, "1.5b", routed)
    assert main(["lm-serve", "--key-file", str(key_file), "--lm", "embedded:1.5b"]) == 0
    assert served == [QWEN_CODER_05B, QWEN_CODER_15B, QWEN_CODER_15B]
    said = capsys.readouterr().err.split("\n")
    client_lines = [" ".join(line.split()) for line in said if line.startswith("clients:")]
    # a shipped program of floors (the 0.5B's, the 1.5B's) leaves its clients running the LM's steps uncompiled;
    # one that runs a step by the LM is named to its clients
    plain = "--lm http://127.0.0.1:8080/v1 (Ctrl-C stops it)"
    assert [line.endswith(plain) for line in client_lines] == [True, True, False]
    assert client_lines[2].endswith(f"--lm http://127.0.0.1:8080/v1 --program {routed} (Ctrl-C stops it)")
    assert any(line.startswith("serving the embedded 1.5B model on") for line in said)
    # Any other LM is the client's to name: refused before a key is written or a model loaded
    key_file.unlink()
    for other in ("http://127.0.0.1:8080/v1", "openai/gpt-4o-mini", "embedded:7b"):
        assert main(["lm-serve", "--key-file", str(key_file), "--lm", other]) != 0
        assert not key_file.exists() and len(served) == 3
    refusals = capsys.readouterr().err
    assert "lm-serve serves an embedded model, not 'http://127.0.0.1:8080/v1'" in refusals
    assert "unknown embedded model 'embedded:7b'" in refusals


@pytest.mark.live_lm
@pytest.mark.parametrize("profile", [False, True], ids=["no-profile", "floors-profile-active"])
def test_ask_through_lm_serve_answers_end_to_end_with_the_real_model(
    demo_index_dir: Path, tmp_path: Path, profile: bool
) -> None:
    """Loads the embedded model in `scoperag lm-serve` and asks through it (`pytest -m live_lm`), also with a profile
    active whose program runs every step's floor (the shipped one): --lm runs the LM's steps all the same."""
    from pipeline.export.choice import SHIPPED_PROGRAM

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
        # A score call of the 0.5B model takes 15 s on 2 idle cores and minutes on a busy machine: no timeout, and
        # no bound on the question short of an hour (the 120 s default stopped it in the score step at load 4-5).
        settings = tmp_path / "settings.toml"
        settings.write_text("[lm_requests]\ntimeout_seconds = 3600.0\nretries = 0\n[question]\nseconds = 3600.0\n")
        question = ["What is the monthly rent?", "--property", "Banda Lane", "--index", str(demo_index_dir)]
        if profile:
            for step in (["add", "floors", str(SHIPPED_PROGRAM)], ["activate", "floors"]):
                subprocess.run([*scoperag_command(), "profile", *step], env=env, cwd=tmp_path, check=True)
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
        first = asked.stderr.splitlines()[0]
        assert "every step by the LM" in first and ("not used: --lm was given" in first) is profile
    finally:
        stop_process(server, 30)
