"""What `scoperag ask` spends before its first step, and what `ask --questions` spends per question once loaded.

    .venv/bin/python benchmarks/startup.py --index .scoperag/index --json benchmarks/results/startup.json
    .venv/bin/python benchmarks/startup.py --before ../old-checkout     # the same runs on another checkout's code

Three measurements, each in fresh processes of this virtual environment:
- imports: seconds to import each heavy module alone (median of `--repeat` interpreters, interpreter start-up
  subtracted);
- one ask: the command as a user runs it, off a terminal (so each stage is a dated line on stderr as it starts):
  seconds from spawning it to its first step's line ("decomposing the question"), to its "done" line and to its
  exit, and the CPU seconds it had used by its first step and in all (on a busy machine the wall-clock times
  stretch with the load; the CPU seconds are what an idle machine's wall clock comes close to). With
  `--before DIR`, the code under DIR (a checkout's top level: pipeline/, signatures/, ...) is run the same way,
  alternating with this checkout's run by run, so both see the same load;
- many questions: `ask --questions` over `--questions-index` with `--questions` questions taken from a labelled
  trace file (their id, question and scope): load seconds, answering seconds, seconds per question and the whole
  run, against the same number of single asks estimated from the one-ask runs (each pays its start-up).

Timings on a shared machine are noisy: the load average is printed and recorded with them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from measure import log, table

ROOT = Path(__file__).resolve().parents[1]
HEAVY = (
    "pipeline.cli.main",
    "bm25s",
    "faiss",
    "tokenizers",
    "dspy",
    "pipeline.store",
    "pipeline.program.module",
    "litellm",
    "xllamacpp",
    "mlflow",
    "pandas",
)
FIRST_STEP = re.compile(r"decomposing the question")
DONE = re.compile(r"\] done$")
QUESTION = ("What is the monthly rent?", "Banda Lane")


def environment(code: Path | None) -> dict[str, str]:
    """The environment of a measured process: offline settings, and `code` ahead of the installed project."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "MLFLOW_DISABLE_TELEMETRY": "true"}
    env["HF_HUB_OFFLINE"] = "1"
    env["PYTHONPATH"] = str(code or ROOT)
    return env


def import_seconds(module: str, repeat: int) -> tuple[float, float] | None:
    """Median wall-clock and CPU seconds to import `module` in a fresh interpreter (None: not installed)."""
    code = (
        "import time, importlib\nstart, cpu = time.perf_counter(), time.process_time()\n"
        f"importlib.import_module({module!r})\nprint(time.perf_counter() - start, time.process_time() - cpu)"
    )
    walls, cpus = [], []
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, "-c", code], env=environment(None), capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            return None
        wall, cpu = done.stdout.strip().splitlines()[-1].split()
        walls.append(float(wall))
        cpus.append(float(cpu))
    return statistics.median(walls), statistics.median(cpus)


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system, every thread) process `pid` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_ask(code: Path | None, index: Path, scratch: Path) -> dict[str, float]:
    """Seconds from spawn to the first step's stage line, to the "done" line and to exit, for one `ask`; and the
    CPU seconds the process had used by its first step and in all (what a machine's load does not stretch)."""
    command = [sys.executable, "-m", "pipeline.cli", "ask", QUESTION[0], "--property", QUESTION[1]]
    command += ["--index", str(index), "--history", str(scratch / "history.sqlite")]
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=scratch, env=environment(code), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    marks: dict[str, float] = {}
    for line in process.stderr or ():
        now = time.perf_counter() - start
        if "first_step" not in marks and FIRST_STEP.search(line):
            marks["first_step"] = now
            marks["first_step_cpu"] = cpu_seconds(process.pid)
        if DONE.search(line.rstrip()):
            marks["done"] = now
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"ask failed with {process.returncode} ({code or ROOT})")
    marks["exit"] = time.perf_counter() - start
    marks["exit_cpu"] = usage.ru_utime + usage.ru_stime
    return marks


def question_file(traces: Path, count: int, out: Path) -> int:
    """The first `count` questions of a labelled trace file as an `ask --questions` file (id, question, scope)."""
    lines = []
    for raw in traces.read_text(encoding="utf-8").splitlines()[:count]:
        example = json.loads(raw)
        scope = example.get("scope") or {}
        row: dict[str, Any] = {"id": example["id"], "question": example["question"]}
        if scope.get("property"):
            row["property"] = scope["property"]
        if scope.get("document_ids"):
            row["document_ids"] = scope["document_ids"]
        lines.append(json.dumps(row))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def many_questions(index: Path, questions: Path, scratch: Path) -> dict[str, Any]:
    """`ask --questions` once: its own summary (load, answering, per question) and the whole run's seconds."""
    out = scratch / "answers.jsonl"
    out.unlink(missing_ok=True)
    command = [sys.executable, "-m", "pipeline.cli", "ask", "--questions", str(questions), "--out", str(out)]
    command += ["--index", str(index), "--history", str(scratch / "history.sqlite"), "--json"]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=scratch, env=environment(None), capture_output=True, text=True, check=False)
    whole = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"ask --questions failed with {done.returncode}: {done.stderr[-2000:]}")
    summary: dict[str, Any] = json.loads(done.stdout)
    return {**summary, "run_seconds": round(whole, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=ROOT / ".scoperag" / "index", help="the demo index")
    parser.add_argument("--before", type=Path, help="another checkout's top level, measured the same way")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--questions", type=int, default=100, help="questions for `ask --questions` (0: none)")
    parser.add_argument("--questions-index", type=Path, default=ROOT / ".scoperag" / "edgar-index")
    parser.add_argument("--traces", type=Path, default=ROOT / "datasets" / "edgar" / "traces" / "test.jsonl")
    parser.add_argument("--skip-imports", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    load = os.getloadavg()
    log(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    record: dict[str, Any] = {"benchmark": "startup", "cores": os.cpu_count(), "load_average": {"start": load}}

    if not args.skip_imports:
        base_wall, base_cpu = import_seconds("json", args.repeat) or (0.0, 0.0)
        imports = []
        for module in HEAVY:
            measured = import_seconds(module, args.repeat)
            row: dict[str, Any] = {"module": module, "seconds": None, "cpu_seconds": None}
            if measured is not None:
                row.update(seconds=max(0.0, measured[0] - base_wall), cpu_seconds=max(0.0, measured[1] - base_cpu))
            imports.append(row)
            log(f"import {module}: {row}")
        print(table("import alone, fresh interpreter (median)", imports, ["module", "seconds", "cpu_seconds"]))
        record["imports"] = imports

    versions: dict[str, Path | None] = {"this checkout": None}
    if args.before is not None:
        versions = {"before": args.before.resolve(), "this checkout": None}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in versions}
    with tempfile.TemporaryDirectory(prefix="startup-") as scratch:
        for turn in range(args.repeat):
            for name, code in versions.items():
                runs[name].append(one_ask(code, args.index.resolve(), Path(scratch)))
                log(f"ask {turn + 1}/{args.repeat} {name}: {runs[name][-1]}")
        rows = []
        for name, samples in runs.items():
            row: dict[str, Any] = {"code": name}
            for mark in ("first_step", "first_step_cpu", "done", "exit", "exit_cpu"):
                values = [s[mark] for s in samples if mark in s]
                row[f"{mark}_median_s"] = statistics.median(values) if values else None
                row[f"{mark}_min_s"] = min(values) if values else None
            rows.append(row)
        if len(rows) == 2:
            before, after = rows
            rows.append(
                {
                    "code": "before / this checkout",
                    **{key: before[key] / after[key] for key in before if key != "code" and before[key] and after[key]},
                }
            )
        columns = ["code", "first_step_median_s", "first_step_min_s", "first_step_cpu_median_s", "done_median_s"]
        columns += ["exit_median_s", "exit_min_s", "exit_cpu_median_s"]
        print(table(f"one `ask` ({args.repeat} runs each, alternating; seconds from spawn)", rows, columns))
        record["one_ask"] = {"question": QUESTION, "index": str(args.index), "rows": rows, "runs": runs}

        if args.questions:
            questions = Path(scratch) / "questions.jsonl"
            count = question_file(args.traces, args.questions, questions)
            log(f"ask --questions: {count} questions over {args.questions_index}")
            summary = many_questions(args.questions_index.resolve(), questions, Path(scratch))
            for row in rows[: len(versions)]:  # the same questions as single asks, each paying its start-up
                single = row["exit_median_s"]
                summary[f"single_asks_{row['code'].replace(' ', '_')}_estimate_s"] = round(single * count, 1)
            print(
                table(
                    f"ask --questions, {count} questions from {args.traces.name} over {args.questions_index.name}",
                    [summary],
                    ["answered", "failed", "load_seconds", "answer_seconds", "seconds_per_question", "run_seconds"],
                )
            )
            record["questions"] = {"traces": str(args.traces), "index": str(args.questions_index), **summary}
    end = os.getloadavg()
    record["load_average"]["end"] = end
    log(f"load average {load[0]:.2f} -> {end[0]:.2f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
