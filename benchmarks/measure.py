"""Timing, memory and recall helpers and plain-text tables for the benchmarks."""

from __future__ import annotations

import math
import resource
import sys
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
