"""The embedded model is shut down before the process exits, whatever it was doing: every call goes through the
model's own HTTP listener, so `close` can cut the calls under way and release the native server while the
interpreter is whole (a process exiting with llama.cpp still decoding died of a segmentation fault, exit 139).

Fakes stand in for xllamacpp: a loopback HTTP server answering (or holding) chat completions, and a server object
whose release is observed by a weak reference. The real model's exit is tested in `test_lm_exit_live`."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli import main as cli_main
from pipeline.program.lm import engine
from pipeline.program.lm.engine import LoadOptions, LocalModel, ModelClosed, load_local_model, release_models
from tests.support.paths import ROOT

ANSWER = {"choices": [{"message": {"role": "assistant", "content": "Paris"}}], "usage": {}}


class NativeServer:
    """Stands in for xllamacpp.Server: what LocalModel holds until it is shut down."""

    def __init__(self, address: str = "") -> None:
        self.listening_address = address

    def handle_chat_completions(self, body: dict[str, Any]) -> dict[str, Any]:
        return ANSWER


class ChatListener:
    """A loopback HTTP server answering /v1/chat/completions; with `hold`, a request waits until released."""

    def __init__(self, hold: bool) -> None:
        self.hold = hold
        self.released = threading.Event()
        self.arrived = threading.Event()
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                listener.arrived.set()
                if listener.hold:
                    listener.released.wait(30)
                data = json.dumps(ANSWER).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client cut the connection
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener(request: pytest.FixtureRequest) -> Iterator[ChatListener]:
    served = ChatListener(hold=getattr(request, "param", False))
    yield served
    served.stop()


def test_a_call_goes_over_http_and_leaves_no_connection_behind(listener: ChatListener) -> None:
    model = LocalModel(NativeServer(), "local/fake", address=listener.address, key="k")
    assert model.chat({"messages": []}) == ANSWER
    assert model._connections == set()


@pytest.mark.parametrize("listener", [True], indirect=True)
def test_close_cuts_the_call_under_way_and_releases_the_native_server(listener: ChatListener) -> None:
    native = NativeServer()
    gone = weakref.ref(native)
    model = LocalModel(native, "local/fake", address=listener.address, key="k")
    del native
    failures: list[BaseException] = []

    def call() -> None:
        try:
            model.chat({"messages": []})  # no time bound: it would wait for the held request
        except BaseException as exc:
            failures.append(exc)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    assert listener.arrived.wait(10)
    began = time.monotonic()
    model.close()
    caller.join(10)
    assert not caller.is_alive() and time.monotonic() - began < 5
    assert len(failures) == 1 and isinstance(failures[0], ModelClosed)
    assert "shut down" in str(failures[0]) and "Run the command again" in str(failures[0])
    gc.collect()
    assert model.server is None and gone() is None  # the last reference dropped: the native server freed itself
    with pytest.raises(ModelClosed):
        model.chat({"messages": []})
    model.close()  # a second close does nothing
    assert model.closed


def test_an_in_process_model_refuses_calls_once_closed() -> None:
    model = LocalModel(NativeServer(), "local/fake")
    assert model.chat({"messages": []}) == ANSWER
    model.close()
    with pytest.raises(ModelClosed):
        model.chat({"messages": []})


def test_release_models_shuts_down_every_loaded_model_and_registers_itself_at_exit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    registered: list[Any] = []
    monkeypatch.setattr(engine, "_loaded", {})
    monkeypatch.setattr(engine.atexit, "register", registered.append)
    monkeypatch.setattr(engine, "start_model_server", lambda *a, **k: NativeServer("http://127.0.0.1:9"))
    first = load_local_model(tmp_path / "a.gguf", "local/a", LoadOptions())
    second = load_local_model(tmp_path / "a.gguf", "local/a", LoadOptions(parallel=2))
    assert load_local_model(tmp_path / "a.gguf", "local/a", LoadOptions()) is first  # loaded once per options
    assert registered == [release_models]  # once, at the first load
    assert release_models() == 2
    assert first.closed and second.closed and first.server is None and second.server is None
    assert engine._loaded == {}
    assert release_models() == 0


@pytest.mark.parametrize(
    ("ending", "code"),
    [("return", 0), ("usage", 2), ("failure", None), ("interrupt", None)],
)
def test_the_cli_shuts_models_down_on_every_way_out(
    monkeypatch: pytest.MonkeyPatch, ending: str, code: int | None
) -> None:
    shut: list[int] = []
    monkeypatch.setattr(engine, "release_models", lambda: shut.append(1) or 0)
    monkeypatch.setattr(gc, "freeze", lambda: None)

    def main() -> int:
        if ending == "usage":
            raise SystemExit(2)  # argparse; rich raises SystemExit(1) when the reader of stdout is gone
        if ending == "failure":
            raise RuntimeError("a bug")
        if ending == "interrupt":
            raise KeyboardInterrupt
        return 0

    monkeypatch.setattr(cli_main, "main", main)
    expected: type[BaseException] = {"failure": RuntimeError, "interrupt": KeyboardInterrupt}.get(ending, SystemExit)
    with pytest.raises(expected) as raised:
        cli_main.run()
    if code is not None:
        assert isinstance(raised.value, SystemExit) and raised.value.code == code
    assert shut == [1]


def test_a_cli_run_that_loaded_no_model_imports_no_engine() -> None:
    # `scoperag --help` and every command without an LM stay light: the shutdown looks the engine up, never imports it
    code = "import sys\nfrom pipeline.cli.main import shut_down_models\nshut_down_models()\n"
    code += "print('pipeline.program.lm.engine' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    assert done.stdout.strip() == "False"
