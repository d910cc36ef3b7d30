"""The embedded engine under DSPy, with a fake llama.cpp server: the schema reaches llama, usage is counted, the
disk cache answers repeats, async calls use the async engine, one generation at a time.

The `live_lm` test at the end loads the real model (run with `pytest -m live_lm`).
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.clients.cache import Cache

from pipeline.program.lm import LocalModel, default_model_cache_dir, make_lm
from tests.support.fakes import QA, fake_lm, fake_server


def test_json_adapter_schema_reaches_llama_nested_and_usage_is_counted(dspy_cache: Path) -> None:
    server = fake_server()
    lm = fake_lm(server, cache=False)
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
    lm = fake_lm(server)
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
    lm = fake_lm(server, cache=False)

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

    lm = fake_lm(fake_server())
    assert copy.deepcopy(lm).engine.model is lm.engine.model


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
