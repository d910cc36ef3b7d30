"""This machine's measured rates of LM work, kept in the project's cache (`timings.json`) so that the next job's or
evaluation's plan is timed by what the work took here, not by a benchmark run on another machine.

A rate is seconds per unit of one kind of work ("decompose", "question", "setup", ...) on one LM with some
examples in parallel. For an LM that runs here (the embedded model) it is seconds on an idle machine: the time
measured at a load, each second counted 1/contention (pipeline.cli.eta), so the plan scales it by the load it will
meet; for a remote LM, plain seconds. Before anything was measured here, the embedded model's rates are the
benchmark's (EMBEDDED_SECONDS)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from pipeline.errors import ExportError
from pipeline.export.jsonio import canonical_json, read_limited, strict_loads
from pipeline.files import write_file_atomic
from pipeline.types import StrictJson

log = logging.getLogger(__name__)

TIMINGS_FILE = "timings.json"
FORMAT: Literal["scoperag-timings/v2"] = "scoperag-timings/v2"
# Idle seconds per unit of work of the embedded 0.5B model on 2 cores, two at a time, measured at load 0.7-1.9
# (benchmarks/results/lm-throughput.json: 1,725 decompose, 234 score and 241 answer examples an hour, an
# end-to-end question 18.5 s); "setup" is loading the model and opening the job's run before the first unit,
# "log" the export and logging after the last (estimates until a job has measured them here).
EMBEDDED_SECONDS = {"decompose": 2.1, "score": 15.4, "answer": 14.9, "question": 18.5, "setup": 6.0, "log": 3.0}
# How the embedded model's time grows with the contention c it meets (runnable processes per core): as c ** 1.5.
# Its threads wait for each other at every token, so an oversubscribed core slows it more than the load says.
# Fitted on four quick jobs on 2 shared cores (benchmarks/results/eta.json): a decompose call of 2.1 s on an idle
# machine took 12.8x, 23x and 40x that at a mean c of 5.8, 7.3 and 8.1 (exponents 1.45, 1.58, 1.77; 1.9 put a
# job's first ETA 4.75x over, 1.0 one 5x under). One thread of plain Python (the floors, retrieval) slows as c.
EMBEDDED_LOAD_EXPONENT = 1.5
# What any job spends before its first unit and after its last when its LM's rates are not measured yet.
OVERHEAD_SECONDS = {"setup": 3.0, "log": 3.0}
MAX_BYTES = 1024 * 1024
# An earlier measurement counts for at most this many units against a new one: the rate follows the machine.
HISTORY_UNITS = 20


class Rate(StrictJson):
    """Seconds per unit of one kind of work on one LM (idle seconds for an LM that runs here), over `units` units."""

    seconds_per_unit: float = Field(gt=0)
    units: int = Field(ge=1)
    measured_at: str


class Timings(StrictJson):
    """timings.json: "<lm>|<kind>|<examples in parallel>" -> its rate."""

    format: Literal["scoperag-timings/v2"]
    rates: dict[str, Rate]


def _key(lm: str, kind: str, parallel: int) -> str:
    return f"{lm}|{kind}|{parallel}"


def _read(path: Path) -> Timings:
    """The file's rates; none when it is missing or of the first format (wall seconds at an unknown load), and
    none (with a warning) when it is unreadable."""
    empty = Timings(format=FORMAT, rates={})
    if not path.exists():
        return empty
    try:
        data = strict_loads(read_limited(path, str(path), MAX_BYTES), str(path))
        if isinstance(data, dict) and data.get("format") == "scoperag-timings/v1":
            log.info("%s holds rates measured at an unknown load: the next job measures them again", path)
            return empty
        return Timings.model_validate(data)
    except (ExportError, ValidationError) as exc:
        log.warning("ignoring the measured LM rates in %s (%s); the next job writes it anew", path, exc)
        return empty


def load_rates(path: Path, lm: str, parallel: int) -> dict[str, float]:
    """kind -> seconds per unit measured here for the LM `lm` running `parallel` examples at once (idle seconds for
    an LM that runs here)."""
    found = {}
    for key, rate in _read(path).rates.items():
        named, kind, slots = key.rsplit("|", 2)
        if named == lm and slots == str(parallel):
            found[kind] = rate.seconds_per_unit
    return found


def record_rates(path: Path, lm: str, parallel: int, measured: Mapping[str, tuple[float, int]]) -> None:
    """Fold `measured` (kind -> (seconds, units), idle seconds for an LM that runs here) into the file, an earlier
    rate weighing at most HISTORY_UNITS."""
    if not measured:
        return
    timings = _read(path)
    rates = dict(timings.rates)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    for kind, (seconds, units) in measured.items():
        if units < 1 or seconds <= 0:
            continue
        key = _key(lm, kind, parallel)
        old = rates.get(key)
        weight = 0 if old is None else min(old.units, HISTORY_UNITS)
        total = seconds + (old.seconds_per_unit * weight if old is not None else 0.0)
        rates[key] = Rate(seconds_per_unit=total / (units + weight), units=units + weight, measured_at=now)
    data = Timings(format=FORMAT, rates=rates).model_dump(mode="json")
    try:
        write_file_atomic(path, canonical_json(data))
    except OSError as exc:  # a cache that cannot be written costs the next estimate, not this job
        log.warning("could not keep the measured LM rates in %s: %s", path, exc)
