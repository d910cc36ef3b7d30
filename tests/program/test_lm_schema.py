"""The embedded LM's translation between DSPy and llama.cpp (pure): JSON schemas nested under json_schema, chat
bodies from the request DSPy sends, responses with real token counts, llama errors as lm15 errors."""

from __future__ import annotations

from typing import Any

import pytest
from dspy.lm15 import ContextLengthError, InvalidRequestError, UnsupportedFeatureError, request_from_openai_chat

from pipeline.program.lm import llama_chat_body, llama_response_format, response_from_llama
from tests.support.fakes import llama_completion

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}


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
