"""One estimate of the time left for a whole piece of work (an optimisation job, an evaluation), from the rates
measured on this machine, scaled by how busy the machine is now.

Work is planned as phases of units (examples, LM calls), each unit of a kind of work ("decompose", "question",
"setup") planned at its seconds on an idle machine (None: unknown until measured). Work that runs here (the
embedded model, the floors) slows as other processes share the cores: a `Gauge` reads the load average and says
how many times slower than idle the work runs now, and time measured at one load is turned into idle seconds
(each second counts 1/slowdown) so that it predicts the time at another. A remote LM is not slowed by this
machine's load: its work is measured and predicted in plain seconds (no gauge).

As units finish, each kind's idle rate is learned (the plan counting as one unit), and the kinds not yet seen are
scaled by how the ones seen compared with their plan; a unit running longer than its rate stretches the estimate
instead of letting it reach zero. Pure logic: the clock and the load are injected.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pipeline.cli.progress import clock_time

# The load average is a 1-minute exponential mean: work that just began shows in it only after a while.
LOAD_MINUTE = 60.0
# The note comparing this machine with the plan comes once this many units of timed work have finished.
NOTE_AFTER_UNITS = 2
# How much work (idle seconds) the plan counts for against what is measured, when scaling the kinds not seen yet.
PLAN_WEIGHT_SECONDS = 10.0


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def read_load() -> float:
    """The machine's 1-minute load average (runnable processes)."""
    return os.getloadavg()[0]


def contention(load: float, cores: int) -> float:
    """How many times slower than on an idle machine CPU-bound work runs at `load` on `cores`: the runnable
    processes per core, at least 1."""
    return max(1.0, load / max(1, cores))


class Gauge:
    """How many times an idle machine's time this work takes now: the contention it meets (the load average plus
    the share of its own `threads` the average has not caught up with yet, exp(-t / 60) of them t seconds after it
    began, per core) raised to `exponent`. Work on one thread slows in proportion (exponent 1); threads that wait
    for each other at every step, as a model's do, slow faster once the cores are oversubscribed."""

    def __init__(
        self,
        threads: int,
        *,
        cores: int | None = None,
        exponent: float = 1.0,
        load: Callable[[], float] = read_load,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.threads = threads
        self.cores = cores if cores is not None else available_cores()
        self.exponent = exponent
        self.load = load
        self.clock = clock
        self.started = clock()

    def __call__(self) -> float:
        lag = math.exp(-(self.clock() - self.started) / LOAD_MINUTE)
        return float(contention(self.load() + self.threads * lag, self.cores) ** self.exponent)

    def expected(self) -> float:
        """The slowdown the work will meet once it runs (before it starts: the load now plus its threads)."""
        return float(contention(self.load() + self.threads, self.cores) ** self.exponent)


@dataclass(frozen=True)
class Work:
    """One phase of planned work: `units` of `kind`, each `idle_seconds` on an idle machine (None: unknown)."""

    name: str
    units: int
    kind: str
    idle_seconds: float | None
    unit: str = "unit"  # what one unit is, in words ("example", "LM call")
    # whether its pace says how fast the other kinds will go: not for setting up or logging, whose time is the
    # index's size and the store's, not the machine's speed
    calibrates: bool = True


@dataclass
class _Phase:
    work: Work
    done: int = 0
    started: float | None = None  # idle-equivalent time (Eta._idle) when it began
    last_unit: float | None = None  # ... when its last unit finished
    ended: float | None = None


@dataclass
class Eta:
    """The time left for `work` (its phases in order). `advance(phase, done)` as units finish; a later phase
    starting ends the earlier ones (however little of its budget a compile step used)."""

    work: Sequence[Work]
    clock: Callable[[], float] = time.monotonic
    # None: the work is not slowed by this machine's load (a remote LM)
    gauge: Callable[[], float] | None = None
    _phases: dict[str, _Phase] = field(default_factory=dict, init=False)
    _began: float | None = field(default=None, init=False)
    _sampled: float | None = field(default=None, init=False)  # wall time of the last sample
    _idle: float = field(default=0.0, init=False)  # idle-equivalent seconds since the work began
    _contention: float = field(default=1.0, init=False)  # the slowdown read at the last sample
    _noted: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self._phases = {w.name: _Phase(w) for w in self.work}

    def _sample(self) -> None:
        """Move the idle-equivalent clock to now at the contention last read, then read it again."""
        now = self.clock()
        if self._began is None or self._sampled is None:
            self._began = self._sampled = now
        self._idle += (now - self._sampled) / self._contention
        self._sampled = now
        self._contention = self.gauge() if self.gauge is not None else 1.0

    def start(self) -> None:
        """The work has begun (the clock runs from here even before the first phase reports)."""
        self._sample()

    def advance(self, name: str, done: int) -> None:
        """`done` units of phase `name` have finished (a phase the plan does not know is ignored)."""
        phase = self._phases.get(name)
        if phase is None:
            return
        self._sample()
        for earlier in self.work[: self.work.index(phase.work)]:
            before = self._phases[earlier.name]
            if before.started is None:
                before.started = self._idle
            if before.ended is None:
                before.ended = self._idle
        if phase.started is None:
            # first heard of with units already done: it began when the phase before it ended (or the work began)
            ended = [p.ended for p in self._phases.values() if p.ended is not None and p is not phase]
            phase.started = self._idle if done <= 0 else max(ended, default=0.0)
        done = min(done, phase.work.units)
        if done > phase.done:
            phase.done = done
            phase.last_unit = self._idle
        if phase.done >= phase.work.units and phase.ended is None:
            phase.ended = self._idle

    def finish(self) -> None:
        """The work is over: every phase begun has ended."""
        self._sample()
        for phase in self._phases.values():
            if phase.started is not None and phase.ended is None:
                phase.ended = self._idle

    @property
    def elapsed(self) -> float:
        """Wall seconds since the work began."""
        return 0.0 if self._began is None else self.clock() - self._began

    @property
    def load_factor(self) -> float:
        """The contention read last (1 when the work is not scaled by load)."""
        return self._contention

    def _observed(self) -> dict[str, tuple[float, int]]:
        """kind -> (idle-equivalent seconds, units) of the units finished so far."""
        out: dict[str, tuple[float, int]] = {}
        for phase in self._phases.values():
            if phase.started is None or not phase.done:
                continue
            until = phase.ended if phase.ended is not None and phase.done >= phase.work.units else phase.last_unit
            seconds, units = out.get(phase.work.kind, (0.0, 0))
            out[phase.work.kind] = (seconds + (until or phase.started) - phase.started, units + phase.done)
        return out

    def _planned(self) -> dict[str, float]:
        return {w.kind: w.idle_seconds for w in self.work if w.idle_seconds is not None}

    def factor(self) -> float | None:
        """How the finished units of calibrating kinds compare with their plan: observed over planned idle time,
        the plan counting as PLAN_WEIGHT_SECONDS of work done at its rate (so a few units of a kind that takes
        milliseconds, the floors, cannot scale a model's calls); None before such a unit finished."""
        planned = self._planned()
        calibrating = {w.kind for w in self.work if w.calibrates}
        observed = {k: v for k, v in self._observed().items() if planned.get(k) and k in calibrating}
        expected = sum(planned[k] * n for k, (_, n) in observed.items())
        if expected <= 0:
            return None
        seconds = sum(s for s, _ in observed.values())
        return (seconds + PLAN_WEIGHT_SECONDS) / (expected + PLAN_WEIGHT_SECONDS)

    def rates(self) -> dict[str, float | None]:
        """kind -> idle seconds per unit now: learned from its finished units (its plan counting as one), else
        its plan scaled by how the other kinds compared with theirs; None when neither is known."""
        planned, observed, factor = self._planned(), self._observed(), self.factor() or 1.0
        calibrated = {w.kind for w in self.work if w.calibrates}
        out: dict[str, float | None] = {}
        for kind in {w.kind for w in self.work}:
            seconds, units = observed.get(kind, (0.0, 0))
            prior = planned.get(kind)
            if prior is not None:
                scaled = prior * factor if kind in calibrated else prior
                out[kind] = (seconds + scaled) / (units + 1)
            else:
                out[kind] = seconds / units if units else None
        return out

    def seconds_left(self) -> float | None:
        """Wall seconds left for the whole work at the current load; None while a kind still to run has no rate."""
        self._sample()
        rates = self.rates()
        idle_left = 0.0
        for phase in self._phases.values():
            if phase.ended is not None:
                continue
            left = phase.work.units - phase.done
            rate = rates[phase.work.kind]
            if rate is None:
                return None
            if phase.started is None:
                idle_left += left * rate
                continue
            since = self._idle - (phase.last_unit if phase.last_unit is not None else phase.started)
            unit = max(rate, since)  # a unit running past its rate has taken at least that long
            idle_left += max(left * unit - since, (left - 1) * unit + 0.1 * unit) if left > 0 else 0.0
        return idle_left * self._contention

    def text(self) -> str:
        """ "job ETA m:ss" (with the load when it scales the estimate), or what is known before any rate is."""
        left = self.seconds_left()
        if left is None:
            rates = self.rates()
            unknown = next(p.work for p in self._phases.values() if p.ended is None and rates[p.work.kind] is None)
            return f"job ETA once the first {unknown.unit} has finished ({clock_time(self.elapsed)} so far)"
        busy = f" (busy machine: {self._contention:.1f}x idle time)" if self.gauge and self._contention > 1.05 else ""
        return f"job ETA {clock_time(left)}{busy}"

    def note(self) -> str | None:
        """Once, when the first units have finished: the time in all and left (the estimate the ETA shows), how
        this machine compares with the plan, and how much the load slows it."""
        units = sum(n for _, n in self._observed().values())
        left = self.seconds_left()
        if self._noted or units < NOTE_AFTER_UNITS or left is None:
            return None
        self._noted = True
        factor = self.factor()
        parts = [f"measured on the first {units} units: about {duration(self.elapsed + left)} in all"]
        parts.append(f"{duration(left)} left")
        if factor is not None:
            parts.append(f"{factor:.1f}x the planned rate")
        if self.gauge is not None and self._contention > 1.05:
            parts.append(f"the load makes it {self._contention:.1f}x an idle machine's time")
        return ", ".join(parts)

    def measured(self, kinds: Mapping[str, bool] | None = None) -> dict[str, tuple[float, int]]:
        """kind -> (idle seconds, units) of the ended phases (those `kinds` allows by phase name, when given):
        what the next plan's rates are made from."""
        out: dict[str, tuple[float, int]] = {}
        for phase in self._phases.values():
            if phase.ended is None or phase.started is None or not phase.done:
                continue
            if kinds is not None and not kinds.get(phase.work.name):
                continue
            seconds, units = out.get(phase.work.kind, (0.0, 0))
            out[phase.work.kind] = (seconds + phase.ended - phase.started, units + phase.done)
        return out


def duration(seconds: float) -> str:
    """`seconds` as "42 s", "7 min" or "1 h 05 min"."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    hours, rest = divmod(round(seconds), 3600)
    return f"{hours} h {rest // 60:02d} min" if hours else f"{round(seconds / 60)} min"


def scaled_plan(work: Sequence[Work], gauge: Gauge | None) -> float | None:
    """The wall seconds `work` takes at the load it will meet (the load now plus its own threads), or None when a
    phase's rate is unknown."""
    if any(w.idle_seconds is None for w in work):
        return None
    idle = sum(w.units * (w.idle_seconds or 0.0) for w in work)
    return idle * (gauge.expected() if gauge is not None else 1.0)
