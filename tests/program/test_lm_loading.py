"""Which LM make_lm makes and when the embedded model loads: spec parsing and dispatch with the network blocked,
the embedded model loaded by its first call, once, and never for calls the cache answers."""

from __future__ import annotations

import socket
import sys
import threading
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.clients.cache import Cache

from pipeline.errors import ScopeRagError
from pipeline.program.lm import (
    QWEN_CODER_05B,
    QWEN_CODER_15B,
    ShippedModel,
    default_model_cache_dir,
    embedded_model_name,
    make_lm,
    parse_lm_spec,
)
from tests.support.fakes import QA, Loads


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
