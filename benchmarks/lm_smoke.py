"""Time the embedded LM: model load, then a cold, a warm (prompt prefix cached) and a DSPy-cached call.

    python benchmarks/lm_smoke.py [--threads 1] [--context-words 1100] [--adapter json|chat]

The question sits after a long shared context, so the warm call (a different question) reuses
llama.cpp's KV cache for the whole prefix, and the third call repeats the warm one exactly so
DSPy's response cache answers it (a fresh temporary DSPy cache is used, so the first two are real).
The model file is assembled in $SCOPERAG_CACHE_DIR or ~/.cache/scoperag/models.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import dspy

from pipeline.program.lm import default_model_cache_dir, make_lm

WORDS = (
    "The lease for Banda Lane runs for twelve months and the tenant pays rent on the first day of "
    "each month. The landlord repairs the roof, the boiler and the shared stairwell, while the "
    "tenant keeps the garden tidy and reports leaks within two days. "
).split()


class ContextQA(dspy.Signature):
    """Answer the question from the context in a few words."""

    context: str = dspy.InputField()
    question: str = dspy.InputField()
    answer: str = dspy.OutputField()


def synthetic_context(words: int) -> str:
    """A deterministic passage of `words` words built from a short lease text."""
    return " ".join(WORDS[i % len(WORDS)] for i in range(words))


def timed_call(lm: dspy.LM, adapter: dspy.Adapter, context: str, question: str) -> dict[str, Any]:
    """One Predict call: seconds, token counts and the answer."""
    start = time.perf_counter()
    with dspy.context(lm=lm, adapter=adapter):
        prediction = dspy.Predict(ContextQA)(context=context, question=question)
    seconds = time.perf_counter() - start
    usage = lm.history[-1]["usage"] or {}
    details = usage.get("prompt_tokens_details") or {}
    return {
        "seconds": seconds,
        "prompt": usage.get("prompt_tokens", 0),
        "cached": details.get("cached_tokens", 0),
        "completion": usage.get("completion_tokens", 0),
        "answer": prediction.answer,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--context-size", type=int, default=8192)
    parser.add_argument("--context-words", type=int, default=1100)
    parser.add_argument("--adapter", choices=["json", "chat"], default="json")
    args = parser.parse_args()

    cache_dir = Path(os.environ.get("SCOPERAG_CACHE_DIR") or default_model_cache_dir())
    with tempfile.TemporaryDirectory(prefix="lm-smoke-dspy-cache-") as dspy_cache:
        dspy.configure_cache(enable_disk_cache=True, disk_cache_dir=dspy_cache, restrict_pickle=True)
        start = time.perf_counter()
        lm = make_lm(None, cache_dir=cache_dir, threads=args.threads, context_size=args.context_size)
        load_seconds = time.perf_counter() - start
        adapter = dspy.JSONAdapter() if args.adapter == "json" else dspy.ChatAdapter()
        context = synthetic_context(args.context_words)
        rows = [
            ("cold", timed_call(lm, adapter, context, "Who repairs the roof?")),
            ("warm", timed_call(lm, adapter, context, "When is the rent due?")),
            ("cached", timed_call(lm, adapter, context, "When is the rent due?")),
        ]

    print(f"model {lm.model}  threads={args.threads}  adapter={args.adapter}  load {load_seconds:.1f} s")
    print(f"{'call':<7} {'seconds':>8} {'prompt':>7} {'cached':>7} {'output':>7}  answer")
    for name, row in rows:
        print(
            f"{name:<7} {row['seconds']:>8.2f} {row['prompt']:>7} {row['cached']:>7} "
            f"{row['completion']:>7}  {row['answer']!r}"
        )


if __name__ == "__main__":
    main()
