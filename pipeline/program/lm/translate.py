"""Pure translation between DSPy's canonical LM request/response (dspy.lm15) and llama.cpp's chat API.

DSPy hands a custom engine a `dspy.lm15.Request` whose `config.response_format` is flat:
`{"type": "json_schema", "schema": {...}, "name"?: str, "strict"?: bool}`. llama.cpp's
OpenAI-compatible endpoint reads the schema only from the nested OpenAI spelling
`{"type": "json_schema", "json_schema": {"schema": {...}}}`; given the flat one it silently
falls back to "any JSON object" (checked on this build: a required key went missing). So the
schema is re-nested here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dspy.lm15 import (
    ContextLengthError,
    InvalidRequestError,
    LM15Error,
    Message,
    Request,
    Response,
    ServerError,
    TextPart,
    ThinkingPart,
    UnsupportedFeatureError,
    Usage,
)

PROVIDER = "embedded"

# Request settings llama.cpp takes under the same OpenAI name.
_PASSTHROUGH = ("top_p", "top_k", "seed", "frequency_penalty", "presence_penalty")
# Request settings this engine does not carry: refused by name rather than silently dropped.
_REFUSED = (
    "tool_choice",
    "reasoning",
    "cache",
    "logprobs",
    "probabilities",
    "service_tier",
    "user_id",
    "store",
)
_FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_call", "content_filter": "content_filter"}


def llama_response_format(response_format: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """llama.cpp's spelling of a response_format: the flat canonical schema nested under `json_schema`."""
    if response_format is None:
        return None
    kind = response_format.get("type")
    if kind == "json_object":
        return {"type": "json_object"}
    if kind != "json_schema":
        raise UnsupportedFeatureError(
            f"response_format type {kind!r} is not supported by the embedded LM", feature="response_format"
        )
    if "json_schema" in response_format:  # already in the nested OpenAI spelling
        return {"type": "json_schema", "json_schema": dict(response_format["json_schema"])}
    schema = response_format.get("schema")
    if not isinstance(schema, Mapping):
        raise InvalidRequestError("response_format json_schema needs a 'schema' object", provider=PROVIDER)
    inner: dict[str, Any] = {"name": response_format.get("name") or "response", "schema": dict(schema)}
    if "strict" in response_format:
        inner["strict"] = response_format["strict"]
    return {"type": "json_schema", "json_schema": inner}


def _text_of(parts: Any, where: str) -> str:
    """Concatenated text of text-only parts; any other part type is refused by name."""
    texts: list[str] = []
    for part in parts:
        if not isinstance(part, TextPart):
            kind = getattr(part, "type", type(part).__name__)
            raise UnsupportedFeatureError(
                f"{where}: the embedded LM takes text only, got a {kind} part", feature=str(kind)
            )
        texts.append(part.text)
    return "".join(texts)


def chat_messages(request: Request) -> list[dict[str, str]]:
    """OpenAI-style chat messages for the request's system text and turns (text only)."""
    messages: list[dict[str, str]] = []
    if request.system is not None:
        system = request.system if isinstance(request.system, str) else _text_of(request.system, "system")
        messages.append({"role": "system", "content": system})
    for index, message in enumerate(request.messages):
        if message.role not in ("user", "assistant", "developer"):
            raise UnsupportedFeatureError(
                f"messages[{index}]: role {message.role!r} is not supported by the embedded LM",
                feature="tools",
            )
        role = "system" if message.role == "developer" else message.role
        messages.append({"role": role, "content": _text_of(message.parts, f"messages[{index}]")})
    return messages


def llama_chat_body(request: Request, *, max_tokens: int, temperature: float) -> dict[str, Any]:
    """The llama.cpp chat body for a canonical request; `max_tokens`/`temperature` fill unset values."""
    config = request.config
    if request.tools:
        raise UnsupportedFeatureError("the embedded LM does not take tools", feature="tools")
    refused = [name for name in _REFUSED if getattr(config, name) is not None]
    if config.extensions:
        refused.extend(f"extensions.{key}" for key in sorted(config.extensions))
    if refused:
        raise UnsupportedFeatureError(f"the embedded LM does not support {', '.join(refused)}", feature=refused[0])
    body: dict[str, Any] = {
        "messages": chat_messages(request),
        "max_tokens": config.max_tokens if config.max_tokens is not None else max_tokens,
        "temperature": config.temperature if config.temperature is not None else temperature,
        # Reuse the KV cache of the longest matching prompt prefix (DSPy prompts share long instructions).
        "cache_prompt": True,
    }
    for name in _PASSTHROUGH:
        value = getattr(config, name)
        if value is not None:
            body[name] = value
    if config.stop:
        body["stop"] = list(config.stop)
    response_format = llama_response_format(config.response_format)
    if response_format is not None:
        body["response_format"] = response_format
    return body


def llama_error(raw: Mapping[str, Any]) -> LM15Error:
    """The lm15 error for a llama.cpp `{"error": {...}}` body: context overflow, bad request or fault."""
    error = raw.get("error")
    detail: Mapping[str, Any] = error if isinstance(error, Mapping) else {"message": str(error)}
    message = f"embedded LM: {detail.get('message', 'unknown error')}"
    code = detail.get("code")
    status = code if isinstance(code, int) else None
    if detail.get("type") == "exceed_context_size_error":
        return ContextLengthError(message, provider=PROVIDER, status=status)
    if status is not None and 400 <= status < 500:
        return InvalidRequestError(message, provider=PROVIDER, status=status)
    return ServerError(message, provider=PROVIDER, status=status)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def response_from_llama(raw: Mapping[str, Any], *, model: str) -> Response:
    """A canonical Response (text, finish reason, real token counts) from a llama.cpp chat completion."""
    if "error" in raw:
        raise llama_error(raw)
    choices = raw.get("choices")
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], Mapping):
        raise ServerError("embedded LM returned no single choice", provider=PROVIDER)
    choice = choices[0]
    message = _mapping(choice.get("message"))
    parts: list[TextPart | ThinkingPart] = []
    if message.get("reasoning_content"):
        parts.append(ThinkingPart(str(message["reasoning_content"])))
    parts.append(TextPart(str(message.get("content") or "")))
    usage = _mapping(raw.get("usage"))
    details = _mapping(usage.get("prompt_tokens_details"))
    timings = raw.get("timings")
    return Response(
        id=raw.get("id") or None,
        model=model,
        message=Message.assistant(parts),
        finish_reason=_FINISH.get(str(choice.get("finish_reason")), "stop"),  # type: ignore[arg-type]
        usage=Usage(
            input_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("completion_tokens"),
            cache_read_tokens=details.get("cached_tokens"),
        ),
        provider_data={"timings": dict(timings)} if isinstance(timings, Mapping) else None,
    )
