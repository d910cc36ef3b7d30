"""Time-boxed fuzzing of the export loader and the HTTP request parser (hypothesis; not part of the test run).

    .venv/bin/python benchmarks/fuzz.py --seconds 60 --json benchmarks/results/fuzz.json
    .venv/bin/python benchmarks/fuzz.py --targets request --seconds 30 --seed 7

Each target runs hypothesis rounds (`--round` examples each, a fresh seed per round: `--seed` + round) until its
time box ends, and counts every input it ran. `export` writes a real export (save_export of a ScopedQA over the
demo corpus), mutates its files and checks that load_export either loads it or raises a ScopeRagError naming a
file of that directory, never anything else, and never touches the caller's program. `request` sends request
bodies through QueryRequest (the model POST /v1/query validates) and, for about one example in five, through
the real app (httpx ASGI transport, scripted LM): statuses are 2xx/4xx only, agree with the model, error bodies
are JSON naming the problem and streams end with `completed` or `error`. The minimal failing input of each
distinct failure is written to benchmarks/results/fuzz-failures/.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

import argparse
import json
import logging
import platform
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fuzz_export import ExportTarget
from fuzz_inputs import Record, Target
from fuzz_request import RequestTarget
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException
from measure import Row, log, table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the scripted DummyLM lives with the tests

from pipeline.store import open_store  # noqa: E402
from pipeline.store.build import build_index  # noqa: E402
from pipeline.store.embedders import HashEmbedder  # noqa: E402

FAILURES_DIR = ROOT / "benchmarks" / "results" / "fuzz-failures"
TARGETS = ("export", "request")
ROUND_EXAMPLES = 100


# -- the time-boxed loop --------------------------------------------------------------------------


@dataclass
class Result:
    target: str
    examples: int = 0
    seconds: float = 0.0
    rounds: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)

    def row(self) -> Row:
        distinct = len({(f["exception"], f["message"][:120]) for f in self.failures})
        return {
            "target": self.target,
            "examples": self.examples,
            "seconds": round(self.seconds, 1),
            "per_s": round(self.examples / self.seconds, 1) if self.seconds else None,
            "rounds": self.rounds,
            "failures": len(self.failures),
            "distinct": distinct,
        }


def fuzz(target: Target, seconds: float, first_seed: int, round_examples: int) -> Result:
    """Hypothesis rounds of `round_examples` against `target` until `seconds` have passed."""
    result = Result(target.name)
    started = time.monotonic()
    record: Record = {}

    def one(data: st.DataObject) -> None:
        record.clear()
        try:
            outcome = target.check(data, record)
        except HypothesisException:  # the input could not be drawn (too large): hypothesis discards it
            raise
        except Exception:
            result.examples += 1
            raise
        result.examples += 1
        result.outcomes[outcome] += 1

    while time.monotonic() - started < seconds:
        round_seed = first_seed + result.rounds
        test = settings(
            max_examples=round_examples,
            database=None,
            deadline=None,
            phases=[Phase.generate, Phase.shrink],
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
            print_blob=False,
        )(seed(round_seed)(given(data=st.data())(one)))
        try:
            test()
        except Exception as exc:  # the minimal failing example ran last, so `record` holds it
            result.failures.append(_failure(target.name, round_seed, exc, dict(record)))
        result.rounds += 1
    result.seconds = time.monotonic() - started
    return result


def _failure(target: str, round_seed: int, exc: BaseException, record: Record) -> dict[str, Any]:
    FAILURES_DIR.mkdir(parents=True, exist_ok=True)
    failure = {
        "target": target,
        "seed": round_seed,
        "exception": type(exc).__name__,
        "message": str(exc)[:2000],
        "traceback": "".join(traceback.format_exception(exc))[-6000:],
        "input": record,
    }
    path = FAILURES_DIR / f"{target}-seed{round_seed}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(failure, indent=2, ensure_ascii=True, default=repr) + "\n", encoding="utf-8")
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    log(f"{target}: {failure['exception']}: {failure['message'][:200]} -> {shown}")
    failure["file"] = str(shown)
    return failure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", nargs="+", choices=TARGETS, default=list(TARGETS))
    parser.add_argument("--seconds", type=float, default=60.0, help="time box per target (default: 60)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first round; round i uses seed + i")
    parser.add_argument("--round", type=int, default=ROUND_EXAMPLES, help="examples per hypothesis round")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the loaders log every rejection; keep the output readable

    load_start = os.getloadavg()
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="scoperag-fuzz-") as tmp:
        workdir = Path(tmp)
        embedder = HashEmbedder(64)
        log("indexing the demo corpus (hash embedder)")
        build_index(ROOT / "datasets" / "demo", workdir / "index", embedder)
        store = open_store(workdir / "index", embedder)
        for name in args.targets:
            log(f"fuzzing {name} for {args.seconds:g} s")
            if name == "export":
                results.append(fuzz(ExportTarget(store, workdir), args.seconds, args.seed, args.round))
            else:
                target = RequestTarget(store)
                try:
                    results.append(fuzz(target, args.seconds, args.seed, args.round))
                finally:
                    target.close()
    columns = ["target", "examples", "seconds", "per_s", "rounds", "failures", "distinct"]
    print(table(f"fuzz: {args.seconds:g} s per target, seed {args.seed}", [r.row() for r in results], columns))
    for result in results:
        outcomes = [{"outcome": k, "count": v} for k, v in sorted(result.outcomes.items(), key=lambda kv: -kv[1])]
        print(table(f"{result.target}: outcomes", outcomes, ["outcome", "count"]))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        meta = {
            "seconds_per_target": args.seconds,
            "seed": args.seed,
            "round_examples": args.round,
            "python": platform.python_version(),
            "loadavg_start": load_start,
            "loadavg_end": os.getloadavg(),
        }
        rows = [{**r.row(), "outcomes": dict(r.outcomes), "failure_details": r.failures} for r in results]
        args.json.write_text(json.dumps({"meta": meta, "targets": rows}, indent=2) + "\n", encoding="utf-8")
    if any(r.failures for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
