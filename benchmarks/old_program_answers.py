"""The answers of the program shipped before answer lines (commit 3f561f2: sectioned bullets, a compiled
scorer, sentences chosen by id), on labelled examples, for benchmarks/answers_then_and_now.py.

Run it with that version's code and environment, not this one's:

    git worktree add ../scoperag-then 3f561f2 && cd ../scoperag-then && make setup && \
        .venv/bin/scoperag index datasets/demo --out .scoperag/index
    .venv/bin/python ../scoperag/benchmarks/old_program_answers.py .scoperag/index \
        ../scoperag/datasets/demo-traces/test.jsonl then.jsonl

One JSON line per example: `id`, `case`, `seconds`, and its `sections` (bullets, sources), `lm_calls`,
`tokens` and `answer`, or `error`. The file is appended to, and examples already in it are skipped, so a
stopped run goes on where it stopped. Two examples run at once (the embedded model's two slots).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import dspy

from pipeline.cli.common import configure_dspy, model_cache_dir
from pipeline.evaluation.examples import LabelledExample
from pipeline.evaluation.labels import resolve_example
from pipeline.evaluation.scoring import map_in_context
from pipeline.export.choice import choose_program, shipped_for
from pipeline.program.events import Completed
from pipeline.program.lm import make_lm
from pipeline.settings import Settings
from pipeline.store import open_store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("index", type=Path, help="the demo index built by that version")
    parser.add_argument("traces", type=Path, help="the labelled examples (JSONL) to answer")
    parser.add_argument("out", type=Path, help="the JSONL file answers are appended to")
    args = parser.parse_args()
    index, traces, out = args.index, args.traces, args.out
    configure_dspy()
    store = open_store(index)
    fields = set(LabelledExample.model_fields)
    rows = [json.loads(line) for line in traces.read_text(encoding="utf-8").splitlines() if line.strip()]
    examples = [LabelledExample.model_validate({k: v for k, v in r.items() if k in fields}) for r in rows]
    done = {json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()} if out.exists() else set()
    examples = [e for e in examples if e.id not in done]
    program = choose_program(store, None, None, Settings(), shipped=shipped_for(None)).program
    lm = make_lm(None, cache_dir=model_cache_dir(), threads=None, requests=Settings().lm_requests)

    with out.open("a", encoding="utf-8") as handle:

        def one(example: LabelledExample) -> dict[str, Any]:
            resolved = resolve_example(example, store)
            started = time.perf_counter()
            last = None
            with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
                for event in program.stream(example.question, resolved.scope):
                    last = event
            row: dict[str, Any] = {"id": example.id, "case": example.case, "seconds": time.perf_counter() - started}
            if isinstance(last, Completed):
                sections = [s.model_dump(mode="json") for s in last.sections]
                row.update(sections=sections, lm_calls=last.lm_calls, tokens=last.tokens, answer=last.answer)
            else:
                row.update(error=getattr(last, "message", "no answer"))
            handle.write(json.dumps(row) + "\n")
            handle.flush()
            return row

        map_in_context(one, examples, 2, lambda done, total: print(f"{done}/{total}", flush=True))


if __name__ == "__main__":
    main()
