"""One scoreboard over every set: the shipped program on each set's held-out split, paired against a base commit.

    .venv/bin/python benchmarks/scoreboard.py [--base COMMIT] [--set NAME ...] [--json PATH] [--markdown PATH]

Per set (demo, SEC 10-Q, EDGAR typed, the project's contracts, CUAD, ERC round 1 and the annual-report forms
labelled over its reports) it builds the set's index when
missing (or when the reading code changed since), runs `scoperag evaluate --out` on the split the set is measured
on, and prints one table: the set's main metric (answer lines, or typed values correct), false abstention,
abstention when the fact is absent, invented answers on absent cases, wrong-entity citations and seconds per
question, each as head, base and head - base with its paired seeded bootstrap 95% CI (examples paired by id).
For ERC round 1 it also gives the organisers' score (their `rank.py`'s grading of the typed values, 0-100).

The base is a commit (default: BASE below, the last one before the reading work): it runs from a git worktree
of that commit, with its own shipped program and its own indexes, under the same virtual environment; its
results are kept per commit and set (under `.scoperag/scoreboard/`) and reused while the traces are the same.
Head is the working tree as it is (never cached). Both read the head's trace files, so the same examples are
answered. A set whose data is not beside the project (`--data`, default `../shared/data`) is skipped and named.

A change lands when no set's main metric falls (its CI entirely below 0) unless the note says why it must.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import csv
import hashlib
import importlib.util
import json
import subprocess
import tarfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipeline.evaluation.compare import Difference, compare_rows

ROOT = Path(__file__).resolve().parents[1]
BASE = "3e805f4"  # the outside sets, their metrics and the scoreboard, before any answering change of the reading work
SEED = 20261205
WORK = ROOT / ".scoperag" / "scoreboard"
# Code whose change makes an index stale (how files are read, chunked and indexed).
READING_CODE = ("pipeline/store", "pipeline/retrieval", "pipeline/text.py", "pipeline/vocabulary.py")


@dataclass(frozen=True)
class Source:
    """Where a set's documents come from: a folder of the repository, a folder of the data, or an archive of the
    data extracted once (`inner`: the folder inside the archive that is indexed)."""

    path: str
    in_data: bool = False
    archive: bool = False
    inner: str = ""
    manifest: str | None = None


@dataclass(frozen=True)
class ScoreSet:
    name: str
    traces: str
    split: str
    source: Source
    main: str  # the set's main metric column
    extra: tuple[str, ...] = field(default=())


SETS: tuple[ScoreSet, ...] = (
    ScoreSet("demo", "datasets/demo-traces", "test", Source("datasets/demo"), "answer_line_correct"),
    ScoreSet(
        "sec-10q",
        "datasets/sec-10q/traces",
        "test",
        Source("sec-10q/docs", in_data=True, manifest="datasets/sec-10q/corpus.toml"),
        "answer_line_correct",
    ),
    ScoreSet(
        "edgar-typed",
        "datasets/edgar/typed",
        "test",
        Source(
            "edgar-filings/edgar-filings.tar.xz",
            in_data=True,
            archive=True,
            inner="edgar-filings",
            manifest="datasets/edgar/corpus.toml",
        ),
        "value_correct",
    ),
    ScoreSet(
        "contracts", "datasets/contracts-traces/test.jsonl", "test", Source("datasets/contracts"), "answer_line_correct"
    ),
    ScoreSet(
        "cuad",
        "datasets/cuad/traces",
        "test",
        Source(
            "cuad-dev/contracts.tar.xz",
            in_data=True,
            archive=True,
            inner="cuad-dev",
            manifest="datasets/cuad/corpus.toml",
        ),
        "answer_line_correct",
    ),
    ScoreSet(
        "erc-round1",
        "datasets/erc-round1/traces",
        "dev",
        Source("erc-round1/pdfs", in_data=True, manifest="datasets/erc-round1/corpus.toml"),
        "value_correct",
        extra=("rank_score",),
    ),
    ScoreSet(
        "erc-forms",
        "datasets/erc-forms",
        "test",
        Source("erc-round1/pdfs", in_data=True, manifest="datasets/erc-round1/corpus.toml"),
        "value_correct",
    ),
)
# The columns every set reports besides its main metric; `invented` is derived (an answer where none exists).
COMMON = ("false_abstention", "abstained_when_absent", "invented", "wrong_property_citations", "seconds")


def sh(command: Sequence[str], cwd: Path, env: dict[str, str] | None = None, log: Path | None = None) -> None:
    """Run a command; its output goes to `log`; a failure stops the scoreboard naming the command and the log."""
    handle = log.open("w") if log else subprocess.DEVNULL
    try:
        done = subprocess.run(list(command), cwd=cwd, env=env, stdout=handle, stderr=subprocess.STDOUT, check=False)
    finally:
        if log:
            handle.close()  # type: ignore[union-attr]
    if done.returncode not in (0,):
        raise SystemExit(f"failed ({done.returncode}): {' '.join(command)} in {cwd}; see {log}")


def tree_hash(root: Path, parts: Sequence[str]) -> str:
    """A hash of the files under `parts` of `root` (what an index was built with)."""
    digest = hashlib.sha256()
    for part in parts:
        path = root / part
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for file in files:
            if file.is_file():
                digest.update(str(file.relative_to(root)).encode())
                digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def file_hash(path: Path) -> str:
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


@dataclass
class Side:
    """A program to score: the working tree (`commit` None) or a commit checked out in a worktree."""

    label: str
    root: Path
    commit: str | None

    @property
    def folder(self) -> Path:
        """Where the side's indexes and results are kept: per commit for a base, per checkout for a working tree
        (several checkouts may share one scoreboard folder and its base results)."""
        if self.commit is not None:
            return WORK / self.label.replace(" ", "-")
        return WORK / f"head-{hashlib.sha256(str(self.root).encode()).hexdigest()[:8]}"

    @property
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(self.root)  # this checkout's packages before the installed (editable) ones
        env.setdefault("HF_HUB_OFFLINE", "1")
        env.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
        return env

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "pipeline.cli", *args]


def base_side(commit: str) -> Side:
    """The base commit in a worktree of its own (made once)."""
    full = subprocess.run(
        ["git", "rev-parse", "--verify", f"{commit}^{{commit}}"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if full.returncode != 0:
        raise SystemExit(f"no such commit: {commit}")
    sha = full.stdout.strip()
    tree = WORK / f"base-{sha[:12]}"
    if not (tree / "pipeline").is_dir():
        tree.parent.mkdir(parents=True, exist_ok=True)
        sh(["git", "worktree", "add", "--detach", "--force", str(tree), sha], cwd=ROOT)
    return Side(f"base {sha[:8]}", tree, sha)


def source_folder(score_set: ScoreSet, data: Path) -> Path | None:
    """The folder the set's index is built from (an archive extracted once under the scoreboard's work folder);
    None when the data is not here."""
    source = score_set.source
    if not source.in_data:
        return ROOT / source.path
    path = data / source.path
    if not path.exists():
        return None
    if not source.archive:
        return path
    target = WORK / "sources" / score_set.name
    if not (target / source.inner).is_dir():
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(path) as archive:
            archive.extractall(target, filter="data")
    return target / source.inner


def ensure_index(side: Side, score_set: ScoreSet, folder: Path, say: Callable[[str], None]) -> Path:
    """The side's index of the set, built by the side's own code; rebuilt when its reading code changed."""
    where = side.folder / score_set.name
    index = where / "index"
    stamp = where / "reading-code"
    code = tree_hash(side.root, READING_CODE)
    if index.is_dir() and stamp.is_file() and stamp.read_text() == code:
        return index
    where.mkdir(parents=True, exist_ok=True)
    say(f"{side.label}: indexing {score_set.name} from {folder}")
    command = side.command("index", str(folder), "--out", str(index), "--yes")
    if score_set.source.manifest:
        command += ["--manifest", str(side.root / score_set.source.manifest)]
    sh(command, cwd=side.root, env=side.env, log=where / "index.log")
    stamp.write_text(code)
    return index


def evaluate(
    side: Side, score_set: ScoreSet, index: Path, threads: int, say: Callable[[str], None]
) -> list[dict[str, Any]]:
    """The side's per-example rows on the set (cached for a commit while the traces are the same)."""
    where = side.folder / score_set.name
    traces = ROOT / score_set.traces
    key = f"{file_hash(traces)}-{score_set.split}"
    out = where / "evaluation"
    stamp = where / "evaluated"
    table = out / "examples-hybrid.csv"
    if side.commit is not None and stamp.is_file() and stamp.read_text() == key and table.is_file():
        return read_rows(table)
    say(f"{side.label}: answering {score_set.name} ({score_set.split})")
    command = side.command(
        "evaluate", "--traces", str(traces), "--split", score_set.split, "--index", str(index), "--out", str(out)
    )
    command += ["--threads", str(threads)]
    started = time.perf_counter()
    sh(command, cwd=side.root, env=side.env, log=where / "evaluate.log")
    say(f"{side.label}: {score_set.name} answered in {time.perf_counter() - started:.0f} s")
    stamp.write_text(key)
    return read_rows(table)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Per-example rows: numbers as floats, empty cells None, and the derived `invented` column."""
    rows = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            parsed: dict[str, Any] = {}
            for key, value in row.items():
                if value in ("", None):
                    parsed[key] = None
                elif key in ("id", "case", "typed_value", "answer", "error", "failed"):
                    parsed[key] = value
                else:
                    try:
                        parsed[key] = float(value)
                    except ValueError:
                        parsed[key] = value
            absent = parsed.get("abstained_when_absent")
            parsed["invented"] = None if absent is None else 1.0 - absent
            rows.append(parsed)
    return rows


def rank_scores(rows: list[dict[str, Any]], traces: Path, data: Path) -> list[dict[str, Any]]:
    """The organisers' grade per question (their rank.py's `grade_answer` and weights), as a `rank_score` column:
    each question's grade times its weight, scaled so that the mean over the set is their score / 100."""
    scorer = data / "erc-round1" / "rank.py"
    spec = importlib.util.spec_from_file_location("erc_rank", scorer)
    if spec is None or spec.loader is None:
        return rows
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = {json.loads(line)["id"]: json.loads(line) for line in _trace_lines(traces)}
    answers = json.loads((data / "erc-round1" / "answers.json").read_text(encoding="utf-8"))
    by_question = {a["question"]: a for a in answers}
    weights = []
    for row in rows:
        item = by_question.get(expected.get(row["id"], {}).get("question", ""))
        if item is None:
            row["rank_score"] = None
            continue
        _, weight = module.get_answer_category(item["answer"])
        answer = submitted(row.get("typed_value"))
        grade = 0.0 if answer is None else max(module.grade_answer(answer, item["schema"], a) for a in item["answer"])
        row["rank_score"] = grade * weight
        weights.append(weight)
    mean_weight = sum(weights) / len(weights) if weights else 1.0
    for row in rows:
        if row.get("rank_score") is not None:
            row["rank_score"] = row["rank_score"] / mean_weight
    return rows


def submitted(typed_value: str | None) -> Any:
    """A typed value as the challenge's submission writes it: "N/A" when absent, a number in units, a name."""
    if not typed_value:
        return None
    value = json.loads(typed_value)
    if value.get("absent") or value.get("value") is None:
        return "N/A"
    if value.get("kind") == "number":
        return float(value["value"])
    return value["value"]


def _trace_lines(traces: Path) -> list[str]:
    files = sorted(traces.glob("*.jsonl")) if traces.is_dir() else [traces]
    return [line for file in files for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]


def summary(rows: list[dict[str, Any]], metric: str) -> tuple[int, float | None]:
    values = [r[metric] for r in rows if isinstance(r.get(metric), float)]
    return len(values), (sum(values) / len(values) if values else None)


def paired(base: list[dict[str, Any]], head: list[dict[str, Any]], metric: str) -> Difference | None:
    """head - base over the examples both answered, with its CI (None: the metric applies to none)."""
    if not any(isinstance(r.get(metric), float) for r in head) or not any(
        isinstance(r.get(metric), float) for r in base
    ):
        return None
    try:
        differences = compare_rows(base, head, metric, seed=SEED)
    except ValueError:
        return None
    return next((d for d in differences if d.case == "all"), None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default=BASE, help="the commit to pair against (default: %(default)s)")
    parser.add_argument("--no-base", action="store_true", help="head only, no pairing")
    parser.add_argument("--set", action="append", choices=[s.name for s in SETS], help="only these sets")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--threads", type=int, default=2, help="examples answered in parallel (default: 2)")
    parser.add_argument("--json", type=Path, help="write the table as JSON")
    parser.add_argument("--markdown", type=Path, help="write the table as Markdown")
    args = parser.parse_args()

    def say(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    sides = [Side("head", ROOT, None)]
    if not args.no_base:
        sides.append(base_side(args.base))
    chosen = [s for s in SETS if not args.set or s.name in args.set]
    report: list[dict[str, Any]] = []
    started = time.perf_counter()
    for score_set in chosen:
        folder = source_folder(score_set, args.data)
        if folder is None:
            say(f"{score_set.name}: skipped, its data is not in {args.data}")
            continue
        results: dict[str, list[dict[str, Any]]] = {}
        for side in sides:
            index = ensure_index(side, score_set, folder, say)
            rows = evaluate(side, score_set, index, args.threads, say)
            if "rank_score" in score_set.extra:
                rows = rank_scores(rows, ROOT / score_set.traces, args.data)
            results[side.label] = rows
        head = results["head"]
        base = results.get(sides[1].label) if len(sides) > 1 else None
        for metric in (score_set.main, *score_set.extra, *COMMON):
            n, head_mean = summary(head, metric)
            line: dict[str, Any] = {"set": score_set.name, "metric": metric, "main": metric == score_set.main}
            line.update({"n": n, "head": head_mean})
            if base is not None:
                line["base"] = summary(base, metric)[1]
                difference = paired(base, head, metric)
                if difference is not None:
                    line.update({"difference": difference.difference, "low": difference.low, "high": difference.high})
                    line["n"] = difference.n
            report.append(line)
    elapsed = time.perf_counter() - started
    print_table(report, sides)
    print(f"\n{len(chosen)} sets in {elapsed / 60:.1f} min; base: {sides[1].commit if len(sides) > 1 else 'none'}")
    falls = [r for r in report if r["main"] and r.get("high") is not None and r["high"] < 0]
    if falls:
        print("FALLS (main metric, CI entirely below 0): " + ", ".join(r["set"] for r in falls))
    payload = {"base": sides[1].commit if len(sides) > 1 else None, "minutes": round(elapsed / 60, 2), "rows": report}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(markdown(report) + "\n", encoding="utf-8")
    return 1 if falls else 0


def _number(value: float | None, metric: str) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if metric == "seconds" else f"{value:.3f}"


def _interval(line: dict[str, Any]) -> str:
    if line.get("difference") is None:
        return "-"
    return f"{line['difference']:+.3f} [{line['low']:+.3f}, {line['high']:+.3f}]"


def print_table(report: list[dict[str, Any]], sides: list[Side]) -> None:
    print(f"{'set':<12} {'metric':<26} {'n':>5} {'head':>8} {'base':>8}  {'head - base [95% CI]':<28}")
    for line in report:
        name = f"{line['metric']}{' *' if line['main'] else ''}"
        print(
            f"{line['set']:<12} {name:<26} {line['n']:>5} {_number(line['head'], line['metric']):>8} "
            f"{_number(line.get('base'), line['metric']):>8}  {_interval(line):<28}"
        )


def markdown(report: list[dict[str, Any]]) -> str:
    """One row per set: its main metric (head, base, head - base with its CI), then false abstention, abstention
    and invented answers on absent cases, wrong-entity citations and seconds per question, each head (base)."""
    columns = ("false_abstention", "abstained_when_absent", "invented", "wrong_property_citations", "seconds")
    lines = [
        "| set (n) | main metric | head | base | head - base [95% CI] | false abstention | abstention when absent "
        "| invented when absent | wrong-entity citations | s / question |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in dict.fromkeys(r["set"] for r in report):
        rows = {r["metric"]: r for r in report if r["set"] == name}
        main = next(r for r in rows.values() if r["main"])
        cells = [
            f"{_number(rows[c]['head'], c)} ({_number(rows[c].get('base'), c)})" if c in rows else "-" for c in columns
        ]
        lines.append(
            f"| {name} ({main['n']}) | {main['metric']} | {_number(main['head'], '')} | "
            f"{_number(main.get('base'), '')} | {_interval(main)} | {' | '.join(cells)} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
