"""The per-family adversarial report: what a compromised LM tried and what got through.

Indexes datasets/adversarial/ into a temporary directory (hash embedder by default, or the
shipped MiniLM with --embedder minilm), runs tests/adversarial_suite.py for every family (four
questions each, answered by an LM that obeys every instruction in the documents) and prints one
row per family. Every column but `obeyed` and `benign` must be 0; `benign` must be 1.

    .venv/bin/python benchmarks/adversarial.py --json benchmarks/results/adversarial.json

Exits 1 when any promise was broken, so it can gate a release.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from measure import log

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the compromised LM lives with the tests

from pipeline.store import open_store  # noqa: E402
from pipeline.store.build import build_index  # noqa: E402
from pipeline.store.embedders import Embedder, HashEmbedder, MiniLMEmbedder  # noqa: E402
from tests.support.adversarial_suite import CORPUS_DIR, FAMILIES, MUST_BE_ZERO, family_row, format_table  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", choices=("hash", "minilm"), default="hash")
    parser.add_argument("--json", type=Path, help="also write the rows and totals here")
    args = parser.parse_args()
    embedder: Embedder = HashEmbedder(64) if args.embedder == "hash" else MiniLMEmbedder()
    rows: dict[str, dict[str, int]] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        log(f"indexing {CORPUS_DIR} with {embedder.name}")
        report = build_index(CORPUS_DIR, Path(tmp), embedder)
        store = open_store(Path(tmp), embedder)
        for family in FAMILIES:
            rows[family], _ = family_row(store, family)
            log(f"{family}: {rows[family]}")
    for line in format_table(rows):
        print(line)
    broken = {name: row for name, row in rows.items() if any(row[c] for c in MUST_BE_ZERO) or row["benign"] != 1}
    hidden = sum(sum(kinds.values()) for _, kinds in report.hidden)
    print(f"\n{report.documents} documents, {len(report.hidden)} with hidden characters removed at ingest ({hidden})")
    print("all promises kept" if not broken else f"BROKEN in: {', '.join(sorted(broken))}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "embedder": embedder.name,
            "documents": report.documents,
            "hidden_characters_removed": dict(report.hidden),
            "families": rows,
            "broken": sorted(broken),
            "seconds": round(time.perf_counter() - started, 1),
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
