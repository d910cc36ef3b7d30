"""HTTP serving throughput and time to first event, with the scripted DummyLM (no model time).

The demo corpus is indexed with the deterministic hash embedder into a temporary directory, the app
runs on uvicorn in a thread of this process, and an httpx.AsyncClient keeps C streams open at once
(C = 1, 10, 50 by default) until the level's fixed number of requests is done. Questions rotate over
the four cases (no scope, chip, property, wrong property).

    .venv/bin/python benchmarks/serving.py --json benchmarks/results/serving.json

Client and server share one process (and its GIL), so the numbers are a lower bound for the server.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import dspy
import httpx
from measure import Row, log, percentiles, table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the scripted DummyLM lives with the tests

from pipeline.program.module import ScopedQA  # noqa: E402
from pipeline.serving import create_app, parse_sse, running_server  # noqa: E402
from pipeline.store import Store, open_store  # noqa: E402
from pipeline.store.build import build_index  # noqa: E402
from pipeline.store.embedders import HashEmbedder  # noqa: E402
from tests.support.fakes import cooperative, scripted_lm  # noqa: E402

LEVELS = (1, 10, 50)
COLUMNS = ["clients", "requests", "errors", "req_per_s", "ttfe_p50_ms", "ttfe_p95_ms", "total_p50_ms", "total_p95_ms"]


def bodies(store: Store) -> list[dict[str, Any]]:
    """One request body per case."""
    banda_road = store.resolve_entity("Banda Road").entity_id
    chip = sorted(store.entity_document_ids(banda_road))[:2]
    return [
        {"question": "What is the monthly rent at Banda Lane?"},
        {"question": "What does the lease say about the rent?", "document_ids": chip},
        {"question": "What did the inspection find?", "property": "Mellifera Gardens"},
        {"question": "When was Apartment B4, Mellifera Court inspected?", "property": "mellifera-court"},
    ]


async def one_request(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> tuple[float, float, bool]:
    """(time to first event, total time) in ms, and whether the stream ended with `completed`."""
    started = time.perf_counter()
    first: float | None = None
    lines: list[str] = []
    async with client.stream("POST", url, json=body) as response:
        if response.status_code != 200:
            await response.aread()
            return float("nan"), (time.perf_counter() - started) * 1e3, False
        async for line in response.aiter_lines():
            if first is None and line.startswith("data:"):
                first = time.perf_counter()
            lines.append(line)
    total = (time.perf_counter() - started) * 1e3
    events = list(parse_sse(lines))
    ok = bool(events) and events[-1].event == "completed"
    return ((first or time.perf_counter()) - started) * 1e3, total, ok


async def level(url: str, clients: int, requests: int, cases: list[dict[str, Any]]) -> Row:
    """`requests` requests with `clients` streams open at once."""
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    todo = iter(range(requests))
    ttfe: list[float] = []
    totals: list[float] = []
    errors = 0

    async def client_loop(client: httpx.AsyncClient) -> None:
        nonlocal errors
        for number in todo:
            first, total, ok = await one_request(client, url, cases[number % len(cases)])
            if ok:
                ttfe.append(first)
                totals.append(total)
            else:
                errors += 1

    async with httpx.AsyncClient(limits=limits, timeout=300) as client:
        await asyncio.gather(*(one_request(client, url, cases[i % len(cases)]) for i in range(clients)))  # warm-up
        started = time.perf_counter()
        await asyncio.gather(*(client_loop(client) for _ in range(clients)))
        wall = time.perf_counter() - started
    first_stats, total_stats = percentiles(ttfe), percentiles(totals)
    return {
        "clients": clients,
        "requests": requests,
        "errors": errors,
        "req_per_s": round(len(totals) / wall, 1),
        "ttfe_p50_ms": round(first_stats["p50_ms"], 1),
        "ttfe_p95_ms": round(first_stats["p95_ms"], 1),
        "total_p50_ms": round(total_stats["p50_ms"], 1),
        "total_p95_ms": round(total_stats["p95_ms"], 1),
        "wall_s": round(wall, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", type=int, nargs="+", default=list(LEVELS), help="concurrent clients per level")
    parser.add_argument("--requests", type=int, default=200, help="timed requests per level (default: 200)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()

    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="scoperag-bench-") as tmp:
        index_dir = Path(tmp) / "index"
        embedder = HashEmbedder(64)
        log("indexing the demo corpus (hash embedder)")
        build_index(ROOT / "datasets" / "demo", index_dir, embedder)
        store = open_store(index_dir, embedder)
        app = create_app(
            store=store,
            program=ScopedQA(store),
            lm=scripted_lm(cooperative()),
            adapter=dspy.ChatAdapter(),
            max_concurrent_streams=max(64, *args.levels),
        )
        rows: list[Row] = []
        with running_server(app) as base:
            for clients in args.levels:
                log(f"{clients} concurrent clients, {args.requests} requests")
                rows.append(asyncio.run(level(f"{base}/v1/query", clients, args.requests, bodies(store))))
    load_end = os.getloadavg()
    title = (
        f"POST /v1/query, scripted DummyLM, demo corpus; {os.cpu_count()} CPUs, "
        f"load average {load_start[0]:.1f} -> {load_end[0]:.1f}"
    )
    print(table(title, rows, COLUMNS))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        result = {
            "benchmark": "serving",
            "lm": "scripted DummyLM (tests/fakes.py cooperative)",
            "corpus": "datasets/demo, hash-64 embedder",
            "cpus": os.cpu_count(),
            "load_average": {"start": load_start[0], "end": load_end[0]},
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "levels": rows,
        }
        args.json.write_text(json.dumps(result, indent=2) + "\n")
        log(f"wrote {args.json}")


if __name__ == "__main__":
    main()
