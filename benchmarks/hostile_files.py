"""How long the reader takes on the hostile HTML and inline XBRL files an outside probe wrote (issue 36, D3/D4),
and how the time grows with nesting depth and line length.

    .venv/bin/python benchmarks/hostile_files.py --json benchmarks/results/hostile-files.json

Each file is read as the build reads it (pipeline.store.reading.read_or_error: skipped files come back as the
error the build lists), one after the other in this process, bytes written beforehand; the table gives the wall
time, the pages kept (or why the file was skipped) and the facts kept. The scaling rows read nested <div> and
one long line at growing sizes: a linear reader doubles its time when the size doubles. Before the bounds,
200,000 nested <div> and the 29 MB line were each still being read after 240 s, and one XBRL scale of 999999999
stopped the build.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from measure import log, table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.errors import InputFileError  # noqa: E402
from pipeline.store.reading import read_or_error  # noqa: E402
from tests.support.hostile_files import HOSTILE, nested_divs, one_line  # noqa: E402


def read_timed(path: Path) -> dict[str, Any]:
    start = time.perf_counter()
    result = read_or_error(path, path.name)
    seconds = time.perf_counter() - start
    if isinstance(result, InputFileError):
        return {"seconds": seconds, "pages": None, "facts": None, "outcome": f"skipped: {result.reason}"}
    notes = "; ".join(result.notes)
    return {"seconds": seconds, "pages": len(result.pages), "facts": len(result.facts), "outcome": notes or "read"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    load = os.getloadavg()
    log(f"load average {load[0]:.2f}")
    rows: list[dict[str, Any]] = []
    scaling: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="hostile-") as scratch:
        folder = Path(scratch)
        for label, (name, make) in HOSTILE.items():
            path = folder / name
            path.write_bytes(make())
            row = {"file": label, "bytes": path.stat().st_size, **read_timed(path)}
            log(f"{label}: {row['seconds']:.2f} s, {row['outcome'][:80]}")
            rows.append(row)
            path.unlink()
        for kind, make_sized, sizes in (
            ("nested divs", nested_divs, (25_000, 50_000, 100_000, 200_000, 400_000)),
            ("one line (bytes)", one_line, (2_000_000, 4_000_000, 8_000_000, 16_000_000)),
        ):
            for size in sizes:
                path = folder / f"scaling-{size}.html"
                path.write_bytes(make_sized(size))
                result = read_timed(path)
                scaling.append({"kind": kind, "size": size, "seconds": result["seconds"], "outcome": result["outcome"]})
                path.unlink()
    print(table("hostile files, read as a build reads them", rows, ["file", "bytes", "seconds", "pages", "facts"]))
    print(table("time against size", scaling, ["kind", "size", "seconds"]))
    for row in rows:
        print(f"{row['file']}: {row['outcome']}")
    log(f"load average {load[0]:.2f} -> {os.getloadavg()[0]:.2f}")
    if args.json:
        record = {
            "files": rows,
            "scaling": scaling,
            "load_average": {"start": load, "end": os.getloadavg()},
            "cores": os.cpu_count(),
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
