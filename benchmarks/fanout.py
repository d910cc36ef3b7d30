"""Evaluation throughput, one process against a local Ray: examples per hour.

Two workloads isolate what the fan-out does:
- retrieval: retrieval and guards only (no LM), CPU-bound, milliseconds per example;
- fake-lm: the full program with the project's scripted LM answering each call after a fixed latency
  (`--latency`), i.e. an LM endpoint that is never the bottleneck.
Each runs as one process with 1 thread, one process with `--threads` threads, and as Ray tasks on a
local Ray with 2 CPUs (pipeline.cluster.LOCAL_CPUS), cold (workers start, import and open the index) and
warm (the same setup again); Ray's own start is reported apart. Run from the repository root:

    nice -n 15 .venv/bin/python benchmarks/fanout.py --json benchmarks/results/fanout.json
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import functools
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dspy  # noqa: E402

from pipeline.cluster import cluster_cpus, ray_session  # noqa: E402
from pipeline.evaluation.examples import LabelledExample, load_examples  # noqa: E402
from pipeline.evaluation.fanout import WorkerSetup, evaluate_on_ray, program_setup  # noqa: E402
from pipeline.evaluation.scoring import evaluate  # noqa: E402
from pipeline.program.module import ScopedQA  # noqa: E402
from pipeline.store import open_store  # noqa: E402
from pipeline.store.build import build_index  # noqa: E402
from pipeline.store.embedders import StaticEmbedder  # noqa: E402
from tests.support.fakes import cooperative, scripted_lm  # noqa: E402


def slow_lm(latency: float) -> Any:
    """The cooperative scripted LM, each answer after `latency` seconds (an endpoint with spare capacity)."""
    respond = cooperative()

    def answer(prompt: str) -> Any:
        time.sleep(latency)
        return respond(prompt)

    return scripted_lm(answer)


def per_hour(examples: int, seconds: float) -> float:
    return round(examples * 3600 / seconds, 1)


def run(args: argparse.Namespace) -> dict[str, Any]:
    traces = load_examples(ROOT / "datasets" / "demo-traces" / "dev.jsonl")
    examples: list[LabelledExample] = [traces[i % len(traces)] for i in range(args.examples)]
    lm_examples = examples[: args.lm_examples]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="scoperag-fanout-") as scratch:
        index = Path(scratch) / "index"
        build_index(ROOT / "datasets" / "demo", index, StaticEmbedder())
        store = open_store(index)
        program = ScopedQA(store)

        def timed(workload: str, how: str, count: int, call: Any) -> None:
            started = time.perf_counter()
            call()
            seconds = time.perf_counter() - started
            rows.append(
                {
                    "workload": workload,
                    "how": how,
                    "examples": count,
                    "seconds": round(seconds, 2),
                    "examples_per_hour": per_hour(count, seconds),
                }
            )
            print(f"{workload:9} {how:28} {count:4} examples {seconds:7.2f} s {per_hour(count, seconds):>10} /h")

        for threads in sorted({1, args.threads}):
            timed(
                "retrieval",
                f"1 process, {threads} thread(s)",
                len(examples),
                lambda t=threads: evaluate(examples, store, threads=t),
            )
            with dspy.context(lm=slow_lm(args.latency)):
                timed(
                    "fake-lm",
                    f"1 process, {threads} thread(s)",
                    len(lm_examples),
                    lambda t=threads: evaluate(lm_examples, store, program=program, threads=t),
                )
        started = time.perf_counter()
        with ray_session("local"):
            ray_start = round(time.perf_counter() - started, 2)
            cpus = cluster_cpus()
            print(f"local Ray started in {ray_start} s with {cpus} CPUs")
            retrieval = WorkerSetup(index.resolve())
            setup = program_setup(index, program, functools.partial(slow_lm, args.latency), json_adapter=False)
            # cold: workers start and open the index; warm: the same setup again, as the rest of a long run
            for state in ("cold", "warm"):
                timed(
                    "retrieval",
                    f"Ray, {cpus} CPUs, {state}",
                    len(examples),
                    lambda: evaluate_on_ray(examples, retrieval),
                )
                timed(
                    "fake-lm",
                    f"Ray, {cpus} CPUs, {state}",
                    len(lm_examples),
                    lambda: evaluate_on_ray(lm_examples, setup),
                )
    return {
        "examples": args.examples,
        "lm_examples": args.lm_examples,
        "latency_seconds_per_lm_call": args.latency,
        "lm_calls_per_example": 3,
        "cores": len(os.sched_getaffinity(0)),
        "ray_start_seconds": ray_start,
        "load_average": os.getloadavg(),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=400, help="retrieval-only examples (the dev split, cycled)")
    parser.add_argument("--lm-examples", type=int, default=40, help="examples through the fake LM")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the fake LM takes per call")
    parser.add_argument("--threads", type=int, default=2, help="threads of the second single-process run")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    result = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
