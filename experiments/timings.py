"""This machine's measured LM rates, kept in the project's cache (`timings.json`) so that the next job's plan
is timed by what jobs took here, not by a benchmark run on another machine under another load."""

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
MAX_BYTES = 1024 * 1024
# An earlier measurement counts for at most this many units against a new one: the rate follows the machine.
HISTORY_UNITS = 20


class Rate(StrictJson):
    """Seconds per unit of one kind of work on one LM, measured over `units` units."""

    seconds_per_unit: float = Field(gt=0)
    units: int = Field(ge=1)
    measured_at: str


class Timings(StrictJson):
    """timings.json: "<lm>|<kind>|<examples in parallel>" -> its rate."""

    format: Literal["scoperag-timings/v1"]
    rates: dict[str, Rate]


def _key(lm: str, kind: str, parallel: int) -> str:
    return f"{lm}|{kind}|{parallel}"


def _read(path: Path) -> Timings:
    """The file's rates; none when it is missing, and none (with a warning) when it is unreadable."""
    if not path.exists():
        return Timings(format="scoperag-timings/v1", rates={})
    try:
        return Timings.model_validate(strict_loads(read_limited(path, str(path), MAX_BYTES), str(path)))
    except (ExportError, ValidationError) as exc:
        log.warning("ignoring the measured LM rates in %s (%s); the next job writes it anew", path, exc)
        return Timings(format="scoperag-timings/v1", rates={})


def load_rates(path: Path, lm: str, parallel: int) -> dict[str, float]:
    """kind -> seconds per unit measured here for the LM `lm` running `parallel` examples at once."""
    found = {}
    for key, rate in _read(path).rates.items():
        named, kind, slots = key.rsplit("|", 2)
        if named == lm and slots == str(parallel):
            found[kind] = rate.seconds_per_unit
    return found


def record_rates(path: Path, lm: str, parallel: int, measured: Mapping[str, tuple[float, int]]) -> None:
    """Fold `measured` (kind -> (seconds, units)) into the file, an earlier rate weighing at most HISTORY_UNITS."""
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
    data = Timings(format="scoperag-timings/v1", rates=rates).model_dump(mode="json")
    try:
        write_file_atomic(path, canonical_json(data))
    except OSError as exc:  # a cache that cannot be written costs the next estimate, not this job
        log.warning("could not keep the measured LM rates in %s: %s", path, exc)
