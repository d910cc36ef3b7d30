"""Timing, memory and recall helpers and plain-text tables for the benchmarks."""

from __future__ import annotations

import math
import os
import resource
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

Row = dict[str, Any]
K = 10  # top-k of every search
WARMUP_QUERIES = 10  # run first and left out of every timing


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def rss_mb() -> float:
    """Current resident set size of this process (MB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark (VmHWM, ru_maxrss) to the current RSS (Linux >= 4.0)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(call: Callable[[], object]) -> float:
    """Wall-clock milliseconds of one call."""
    start = time.perf_counter_ns()
    call()
    return (time.perf_counter_ns() - start) / 1e6


def percentiles(samples: Sequence[float]) -> dict[str, float]:
    values = np.asarray(samples, dtype=np.float64)
    return {
        "p50_ms": float(np.percentile(values, 50)),
        "p95_ms": float(np.percentile(values, 95)),
        "mean_ms": float(values.mean()),
        "n": len(values),
    }


def recall(found: Sequence[int], expected: Sequence[int]) -> float:
    return len(set(found) & set(expected)) / max(len(expected), 1)


def directory_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "n/a"
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    return str(value)


def table(title: str, rows: Sequence[Row], columns: Sequence[str]) -> str:
    """A plain-text table with right-aligned columns (text columns left-aligned)."""
    cells = [[fmt(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    text_columns = {i for i, c in enumerate(columns) if any(isinstance(r.get(c), str) for r in rows)}

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.ljust(w) if i in text_columns else v.rjust(w) for i, (v, w) in enumerate(zip(values, widths, strict=True))
        )

    rule = "-" * len(line(list(columns)))
    return "\n".join([title, rule, line(list(columns)), rule, *(line(r) for r in cells), ""])


class TreeRss:
    """Peak of the summed RSS of this process and its descendants, sampled every `every` s in a thread.

    ru_maxrss of children is no use here: a spawned child is forked before it executes Python, so
    its peak includes the parent's pages at that moment.
    """

    def __init__(self, every: float = 0.1, history: bool = False) -> None:
        self.every = every
        self.peak_mb = 0.0
        # (time.perf_counter(), MB) of every sample, when `history`
        self.samples: list[tuple[float, float]] = []
        self._history = history
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> TreeRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(self.every):
            mb = sum(_rss_kb(pid) for pid in _tree(os.getpid())) / 1024
            self.peak_mb = max(self.peak_mb, mb)
            if self._history:
                self.samples.append((time.perf_counter(), mb))


def _tree(root: int) -> list[int]:
    """`root` and every live descendant (from /proc/*/stat parent ids)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier]
        found.extend(frontier)
    return found


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0
