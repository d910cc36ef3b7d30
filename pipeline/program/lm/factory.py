"""make_lm: the embedded model, a LiteLLM model string, or an OpenAI-compatible server, as a dspy.LM.

Nothing here touches the network: constructing a dspy.LM connects to nothing, and dspy does not
import LiteLLM until a call needs it (entry points still set LITELLM_LOCAL_MODEL_COST_MAP=True
first, so that import reads the bundled cost map instead of fetching one).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import dspy

from pipeline.errors import ScopeRagError
from pipeline.program.lm.engine import (
    AsyncEmbeddedEngine,
    EmbeddedEngine,
    LoadOptions,
    LocalModel,
    load_local_model,
    start_model_server,
)
from pipeline.program.lm.keys import LMKeys
from pipeline.program.lm.model_file import QWEN_CODER_05B, QWEN_CODER_15B, ShippedModel, ensure_model_file
from pipeline.settings import DEFAULT_PARALLEL, LMRequestSettings, available_cores

EMBEDDED = "embedded"
DEFAULT_MAX_TOKENS = 1024
DEFAULT_TEMPERATURE = 0.0

# Told True as a deferred model starts loading (on its first call) and False once it is loaded (or failed to).
LoadNotice = Callable[[bool], None]


# The embedded models `--lm embedded:SIZE` names; plain `embedded` is the first, the one the shipped program was
# compiled and measured on.
EMBEDDED_MODELS: dict[str, ShippedModel] = {"0.5b": QWEN_CODER_05B, "1.5b": QWEN_CODER_15B}
DEFAULT_EMBEDDED = "0.5b"


@dataclass(frozen=True)
class LMSpec:
    """Which backend a --lm value names: the embedded model (`size`, one of EMBEDDED_MODELS), a LiteLLM model
    string, or a base URL."""

    kind: Literal["embedded", "litellm", "base_url"]
    value: str
    size: str = DEFAULT_EMBEDDED

    @property
    def model(self) -> ShippedModel:
        """The embedded model's weights (for an embedded spec; the default model otherwise)."""
        return EMBEDDED_MODELS[self.size]


def embedded_spellings() -> str:
    """The --lm spellings of the embedded models, for messages and help."""
    sizes = ", ".join(f"'{EMBEDDED}:{size}'" for size in EMBEDDED_MODELS)
    return f"'{EMBEDDED}' (the {DEFAULT_EMBEDDED.upper()} model), {sizes}"


def parse_lm_spec(spec: str | None) -> LMSpec:
    """The backend named by `spec`; a clear error for anything that is none of the three forms, or an embedded
    model size the project does not ship."""
    text = (spec or EMBEDDED).strip()
    if text == EMBEDDED:
        return LMSpec("embedded", EMBEDDED)
    if text.startswith(f"{EMBEDDED}:"):
        size = text.removeprefix(f"{EMBEDDED}:").strip().lower()
        if size not in EMBEDDED_MODELS:
            raise ScopeRagError(f"unknown embedded model {spec!r}: the embedded models are {embedded_spellings()}")
        return LMSpec("embedded", f"{EMBEDDED}:{size}", size)
    if text.startswith(("http://", "https://")):
        return LMSpec("base_url", text)
    provider, _, model = text.partition("/")
    if provider and model and " " not in text:
        return LMSpec("litellm", text)
    raise ScopeRagError(
        f"unknown LM {spec!r}: use {embedded_spellings()}, a LiteLLM model string such as 'openai/gpt-4o-mini' or "
        "'ollama_chat/llama3', or an OpenAI-compatible base URL such as 'http://127.0.0.1:8080/v1'"
    )


class DeferredModel(LocalModel):
    """The embedded model, loaded on its first chat: a program whose steps all run their floors, or whose every
    call DSPy's cache answers, never assembles or loads the weights (seconds of start-up, a few hundred MB).

    `load` gives the loaded model (shared per process by `load_local_model`); `on_load` hears when loading
    starts and ends, so a command can say why its step pauses.
    """

    def __init__(self, load: Callable[[], LocalModel], name: str, parallel: int, on_load: LoadNotice | None = None):
        # LocalModel.__init__ needs a server; this one has none until the first chat.
        self.name = name
        self.parallel = parallel
        self._load = load
        self._on_load = on_load
        self._model: LocalModel | None = None
        self._loading = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the weights are loaded (a chat was made)."""
        return self._model is not None

    def chat(self, body: dict[str, Any], seconds: float | None = None) -> dict[str, Any]:
        """The loaded model's chat completion for `body` (within `seconds`, LocalModel.chat); the first call
        loads the model."""
        return self._ready().chat(body, seconds)

    def close(self) -> None:
        """Shut the loaded model down (LocalModel.close); nothing to do before the first chat."""
        if self._model is not None:
            self._model.close()

    @property
    def closed(self) -> bool:
        return self._model is not None and self._model.closed

    def _ready(self) -> LocalModel:
        with self._loading:
            if self._model is None:
                if self._on_load is not None:
                    self._on_load(True)
                try:
                    self._model = self._load()
                finally:
                    if self._on_load is not None:
                        self._on_load(False)
            return self._model


def embedded_model_name(model: ShippedModel = QWEN_CODER_05B) -> str:
    """The dspy model string of the embedded model; the hash prefix keeps DSPy cache keys per weights."""
    return f"local/{model.file_name.removesuffix('.gguf')}-{model.sha256[:8]}"


def make_embedded_lm(
    *,
    cache_dir: Path,
    threads: int | None = None,
    context_size: int = 8192,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    temperature: float = DEFAULT_TEMPERATURE,
    cache: bool = True,
    parallel: int = DEFAULT_PARALLEL,
    model: ShippedModel = QWEN_CODER_05B,
    deferred: bool = False,
    on_load: LoadNotice | None = None,
) -> dspy.LM:
    """The embedded model as a dspy.LM: weights assembled/verified in `cache_dir`, loaded once per process;
    with `deferred`, on the first call that reaches the model (see `DeferredModel`), else now.

    `threads` None: every core this process may use; `parallel`: sequences decoded together.
    """
    options = load_options(threads, context_size, parallel)
    name = embedded_model_name(model)

    def load() -> LocalModel:
        return load_local_model(ensure_model_file(cache_dir, model), name, options)

    loaded = DeferredModel(load, name, options.parallel, on_load) if deferred else load()
    engine = EmbeddedEngine(loaded, max_tokens=max_tokens, temperature=temperature)
    # A local model has no transient network faults worth retrying.
    return dspy.LM(
        name,
        engine=engine,
        async_engine=AsyncEmbeddedEngine(engine),
        temperature=temperature,
        max_tokens=max_tokens,
        cache=cache,
        num_retries=0,
    )


def serve_embedded_model(
    *,
    cache_dir: Path,
    host: str,
    port: int,
    key: str,
    threads: int | None = None,
    context_size: int = 8192,
    parallel: int = DEFAULT_PARALLEL,
    model: ShippedModel = QWEN_CODER_05B,
) -> Any:
    """The embedded model served over HTTP by llama.cpp's own OpenAI-compatible server (`scoperag lm-serve`), so
    that Ray workers and other programs share one loaded model: `--lm http://HOST:PORT/v1` with the key."""
    options = load_options(threads, context_size, parallel)
    return start_model_server(ensure_model_file(cache_dir, model), options, host=host, port=port, key=key)


def load_options(threads: int | None, context_size: int, parallel: int) -> LoadOptions:
    """How the embedded model is loaded (`threads` None: every core this process may use); ScopeRagError naming
    the values out of range."""
    threads = available_cores() if threads is None else threads
    if threads < 1 or context_size < 512 or parallel < 1:
        raise ScopeRagError(
            "the embedded LM needs threads >= 1, context_size >= 512 and parallel >= 1, "
            f"got {threads}, {context_size}, {parallel}"
        )
    return LoadOptions(threads=threads, context_size=context_size, parallel=parallel)


def make_lm(
    spec: str | None,
    *,
    cache_dir: Path,
    threads: int | None = None,
    context_size: int = 8192,
    max_tokens: int | None = None,
    temperature: float | None = None,
    model_name: str = "default",
    keys: LMKeys | None = None,
    cache: bool = True,
    requests: LMRequestSettings | None = None,
    parallel: int = DEFAULT_PARALLEL,
    deferred: bool = False,
    on_load: LoadNotice | None = None,
) -> dspy.LM:
    """A dspy.LM for `spec`: None/"embedded" (the 0.5B model), "embedded:0.5b" or "embedded:1.5b", "provider/model"
    (LiteLLM) or an http(s):// base URL.

    `threads` (None: every core), `context_size`, `parallel`, `cache_dir`, `deferred` (load the weights on the
    first call, not now) and `on_load` apply to the embedded model only; `model_name` to a base URL, which gets its
    own key from `keys` (pipeline.program.lm.keys: the loopback key only to a loopback address). A remote LM loads
    nothing either way. `max_tokens`/`temperature` of None mean the
    backend's default (embedded: 1024 tokens at temperature 0). A remote LM makes one HTTP request per
    call, within `requests.timeout_seconds`: retries are the program's (`call_once`), each one a counted call.
    """
    parsed = parse_lm_spec(spec)
    if parsed.kind == "embedded":
        return make_embedded_lm(
            cache_dir=cache_dir,
            threads=threads,
            context_size=context_size,
            max_tokens=DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
            temperature=DEFAULT_TEMPERATURE if temperature is None else temperature,
            cache=cache,
            parallel=parallel,
            model=parsed.model,
            deferred=deferred,
            on_load=on_load,
        )
    # DSPy's own retries (3 by default) would make one counted call cost up to four requests.
    remote = {"num_retries": 0, "timeout": (requests or LMRequestSettings()).timeout_seconds}
    if parsed.kind == "base_url":
        return dspy.LM(
            f"openai/{model_name}",
            api_base=parsed.value,
            api_key=(keys or LMKeys()).for_url(parsed.value),
            temperature=temperature,
            max_tokens=max_tokens,
            cache=cache,
            **remote,
        )
    return dspy.LM(parsed.value, temperature=temperature, max_tokens=max_tokens, cache=cache, **remote)
