"""The same meaning in other words: the shipped program on the paraphrase set, each wording against its original.

    .venv/bin/python benchmarks/paraphrases.py [--split test] [--set cuad ...] [--json PATH]

For each set of `datasets/paraphrases` (SEC 10-Q, EDGAR typed, CUAD, ERC round 1) it answers the split's
questions (the originals and their two paraphrases) on the set's index, as the scoreboard builds it
(benchmarks/scoreboard.py), and prints per set: how often the answer is right in the original wording and in
the paraphrases (right: the typed value where one is expected, else the answer line, else the abstention), the
paired difference paraphrase - original over meanings with its seeded bootstrap 95% CI, and how often a
paraphrase gets the same verdict and the same typed value as its original. The target: every set within 0.05.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import argparse
import json
import time
from typing import Any

from scoreboard import ROOT, SETS, WORK, ScoreSet, Side, ensure_index, read_rows, sh, source_folder

from pipeline.evaluation.compare import paired_bootstrap

SEED = 20261205
PARAPHRASE_SETS = ("sec-10q", "edgar-typed", "cuad", "erc-round1")


def right(row: dict[str, Any]) -> float | None:
    """Whether an answer is right: its typed value where the example expects one, else its answer line, else
    its abstention."""
    for metric in ("value_correct", "answer_line_correct", "abstention"):
        if isinstance(row.get(metric), float):
            return float(row[metric])
    return None


def meanings(traces: Path) -> dict[str, tuple[str, str]]:
    """Example id -> (meaning, phrasing) from the set's tags."""
    out = {}
    for line in traces.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        tags = dict(t.split(":", 1) for t in record.get("tags", []) if ":" in t)
        out[record["id"]] = (tags["meaning"], tags["phrasing"])
    return out


def compare(rows: list[dict[str, Any]], groups: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """Per phrasing the share right; paraphrase - original paired over meanings; agreement with the original."""
    by_meaning: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        meaning, phrasing = groups[row["id"]]
        by_meaning.setdefault(meaning, {})[phrasing] = row
    original, paraphrased, same_verdict, same_value = [], [], [], []
    for group in by_meaning.values():
        first = group.get("original")
        if first is None or right(first) is None:
            continue
        for phrasing in ("p1", "p2"):
            other = group.get(phrasing)
            if other is None or right(other) is None:
                continue
            original.append(right(first))
            paraphrased.append(right(other))
            same_verdict.append(float(right(first) == right(other)))
            same_value.append(float((first.get("typed_value") or "") == (other.get("typed_value") or "")))
    if not original:
        return {"n": 0}
    difference, low, high = paired_bootstrap(original, paraphrased, seed=SEED)
    return {
        "n": len(original),
        "original": sum(original) / len(original),
        "paraphrased": sum(paraphrased) / len(paraphrased),
        "difference": difference,
        "low": low,
        "high": high,
        "same_verdict": sum(same_verdict) / len(same_verdict),
        "same_value": sum(same_value) / len(same_value),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("dev", "test"), default="test")
    parser.add_argument("--set", action="append", choices=PARAPHRASE_SETS)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    side = Side("head", ROOT, None)
    report: dict[str, Any] = {}
    by_name: dict[str, ScoreSet] = {s.name: s for s in SETS}
    started = time.perf_counter()
    print(f"{'set':<12} {'n':>4} {'original':>9} {'reworded':>9}  {'reworded - original [95% CI]':<30} {'same':>6}")
    for name in args.set or PARAPHRASE_SETS:
        score_set = by_name[name]
        folder = source_folder(score_set, args.data)
        if folder is None:
            print(f"{name}: skipped, its data is not in {args.data}", file=sys.stderr)
            continue
        index = ensure_index(side, score_set, folder, lambda m: print(m, file=sys.stderr))
        traces = ROOT / "datasets" / "paraphrases" / f"{args.split}-{name}.jsonl"
        out = side.folder / "paraphrases" / f"{args.split}-{name}"
        out.mkdir(parents=True, exist_ok=True)
        command = side.command("evaluate", "--traces", str(traces), "--index", str(index), "--out", str(out))
        sh([*command, "--threads", str(args.threads)], cwd=ROOT, env=side.env, log=out / "evaluate.log")
        result = compare(read_rows(out / "examples-hybrid.csv"), meanings(traces))
        report[name] = result
        if result["n"]:
            interval = f"{result['difference']:+.3f} [{result['low']:+.3f}, {result['high']:+.3f}]"
            print(
                f"{name:<12} {result['n']:>4} {result['original']:>9.3f} {result['paraphrased']:>9.3f}  "
                f"{interval:<30} {result['same_verdict']:>6.3f}"
            )
    print(f"\n{args.split} split, {(time.perf_counter() - started) / 60:.1f} min; work in {WORK}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
