"""The LM behind DSPy programs: an embedded llama.cpp model shipped in Python packages, or any remote one."""

from pipeline.program.lm.engine import (
    AsyncEmbeddedEngine,
    EmbeddedEngine,
    LoadOptions,
    LocalModel,
    ModelClosed,
    load_local_model,
    release_models,
)
from pipeline.program.lm.factory import (
    DeferredModel,
    LMSpec,
    LoadNotice,
    embedded_model_name,
    make_embedded_lm,
    make_lm,
    parse_lm_spec,
    serve_embedded_model,
)
from pipeline.program.lm.keys import LMKeys, key_variable, keys_from
from pipeline.program.lm.model_file import (
    GEMMA3_270M,
    QWEN_CODER_05B,
    QWEN_CODER_15B,
    SMOLLM2_135M,
    ShippedModel,
    assemble,
    cached_file_is_valid,
    default_model_cache_dir,
    ensure_model_file,
    locate_parts,
)
from pipeline.program.lm.translate import llama_chat_body, llama_response_format, response_from_llama

__all__ = [
    "GEMMA3_270M",
    "QWEN_CODER_05B",
    "QWEN_CODER_15B",
    "SMOLLM2_135M",
    "AsyncEmbeddedEngine",
    "DeferredModel",
    "EmbeddedEngine",
    "LMKeys",
    "LMSpec",
    "LoadNotice",
    "LoadOptions",
    "LocalModel",
    "ModelClosed",
    "ShippedModel",
    "assemble",
    "cached_file_is_valid",
    "default_model_cache_dir",
    "embedded_model_name",
    "ensure_model_file",
    "key_variable",
    "keys_from",
    "llama_chat_body",
    "llama_response_format",
    "load_local_model",
    "locate_parts",
    "make_embedded_lm",
    "make_lm",
    "parse_lm_spec",
    "release_models",
    "response_from_llama",
    "serve_embedded_model",
]
