"""What a job will cost before it starts, and when it will end while it runs.

`plan_job`: each phase's examples, LM calls (at most) and time. The time of a unit of work (a stage call, a
question) is this machine's rate when a job has measured it here before (`Rates`, kept in the project's cache
by experiments.timings), else, for the embedded model, the rate benchmarks/ measured; another LM's speed is
unknown until it has been measured here.

`JobClock`: as the job runs, the time its finished work took against what the plan gave that work calibrates
the rest, so every progress line carries an ETA that the first calls have already corrected; and it measures
each phase answered wholly by the LM (no cache) to calibrate the next plan. Pure logic: the clock is injected.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from experiments.config import ExperimentConfig
from experiments.floors import STAGE_FLOORS
from optimizers.params import BootstrapParams
from pipeline.cli.progress import clock_time

# An end-to-end question: decompose, score and answer, and HyDE for a conceptual one (the upper end).
CALLS_PER_QUESTION = 4
# Seconds per unit of work of the embedded 0.5B model on 2 cores, two at a time
# (benchmarks/results/lm-throughput.json: 1,725 decompose, 234 score and 241 answer examples an hour, an
# end-to-end question 18.5 s). A decompose call reads one question; score and answer read chunks.
EMBEDDED_SECONDS = {"decompose": 2.1, "score": 15.4, "answer": 14.9, "question": 18.5}
# The ETA is first corrected once this many units of the plan's work have finished.
CALIBRATE_AFTER_UNITS = 2

Rates = Mapping[str, float]  # kind of work ("decompose", "score", "answer", "question") -> seconds per unit


@dataclass(frozen=True)
class PhasePlan:
    """One phase: `units` of work (examples, or LM calls for compile), each `calls_per_unit` LM calls at most and
    `seconds_per_unit` seconds (None when the LM's speed is unknown); `kind` names the work whose rate applies."""

    name: str
    units: int
    unit: str
    kind: str
    calls_per_unit: int
    seconds_per_unit: float | None

    @property
    def calls(self) -> int:
        """At most this many LM calls."""
        return self.units * self.calls_per_unit

    @property
    def seconds(self) -> float | None:
        """The phase's time, if every call reaches the LM."""
        return None if self.seconds_per_unit is None else self.units * self.seconds_per_unit

    @property
    def weight(self) -> float:
        """What one unit counts for when the job's progress is weighed: its seconds, else its LM calls."""
        return self.seconds_per_unit if self.seconds_per_unit is not None else float(self.calls_per_unit)


@dataclass(frozen=True)
class JobPlan:
    """A job's phases in order, its examples per split and case, and where its rates come from."""

    phases: tuple[PhasePlan, ...]
    examples: Mapping[str, Mapping[str, int]]
    min_val_size: int
    # kinds whose rate was measured on this machine (the rest: benchmarks/, or unknown)
    measured: frozenset[str] = frozenset()

    @property
    def lm_calls(self) -> int:
        """At most this many LM calls in all (the compile step's budget included)."""
        return sum(p.calls for p in self.phases)

    @property
    def seconds(self) -> float | None:
        """The job's time if no call comes from the cache; None when a phase's rate is unknown."""
        times = [p.seconds for p in self.phases]
        return None if any(t is None for t in times) else sum(t for t in times if t is not None)

    @property
    def val_examples(self) -> int:
        return sum(self.examples.get("val", {}).values())

    @property
    def too_few(self) -> bool:
        """The validation set is below the configured minimum: a verdict on it turns on single examples."""
        return self.val_examples < self.min_val_size

    def source(self) -> str:
        """Where the rates come from, in words."""
        kinds = {p.kind for p in self.phases}
        if kinds <= self.measured:
            return "at this machine's measured rate"
        if self.measured & kinds:
            return "at this machine's measured rate where known, else the benchmark rate"
        return "at the embedded model's benchmark rate"

    def describe(self) -> str:
        """One line: the calls, the time (or why it is unknown) and that a cache may answer some."""
        if self.seconds is None:
            return f"up to {self.lm_calls} LM calls (the time depends on the LM: none measured here yet)"
        return (
            f"up to {self.lm_calls} LM calls, about {duration(self.seconds)} {self.source()} "
            "if none comes from the cache"
        )


def duration(seconds: float) -> str:
    """`seconds` as "42 s", "7 min" or "1 h 05 min"."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    hours, rest = divmod(round(seconds), 3600)
    return f"{hours} h {rest // 60:02d} min" if hours else f"{round(seconds / 60)} min"


def plan_job(
    config: ExperimentConfig,
    examples: Mapping[str, Sequence[str]],
    *,
    embedded: bool,
    rates: Rates | None = None,
) -> JobPlan:
    """The phases `config` runs on `examples` ({"train"|"val"|"test": the case of each example}): the
    uncompiled and compiled program on validation (and test), the compile budget, and for a stage job the
    assembled program end to end on a validation sample. Rates measured here win over the benchmark's."""
    measured = dict(rates or {})

    def rate(kind: str) -> float | None:
        if kind == "floor":
            return 0.0
        return measured.get(kind, EMBEDDED_SECONDS[kind] if embedded else None)

    val, test = len(examples.get("val", ())), len(examples.get("test", ()))
    phases: list[PhasePlan] = []
    budget = compile_calls(config, len(examples.get("train", ())))
    if config.stage == "end_to_end":
        question = rate("question")
        per_call = None if question is None else question / CALLS_PER_QUESTION
        phases.append(PhasePlan("baseline", val, "examples", "question", CALLS_PER_QUESTION, question))
        phases.append(PhasePlan("compile", budget, "LM calls", "question", 1, per_call))
        phases.append(PhasePlan("result", val, "examples", "question", CALLS_PER_QUESTION, question))
        tested = [("test_baseline", test, "question", CALLS_PER_QUESTION), ("test_result", test, "question", 4)]
    else:
        stage = config.stage
        e2e = min(config.data.end_to_end_size, val)
        # the stage's floors: plain code, no LM call (experiments.floors)
        phases.extend(PhasePlan(f"floor_{name}", val, "examples", "floor", 0, 0.0) for name in STAGE_FLOORS[stage])
        phases.append(PhasePlan("baseline", val, "examples", stage, 1, rate(stage)))
        phases.append(PhasePlan("compile", budget, "LM calls", stage, 1, rate(stage)))
        phases.append(PhasePlan("result", val, "examples", stage, 1, rate(stage)))
        for name in ("e2e_baseline", "e2e_result"):
            if e2e:
                phases.append(PhasePlan(name, e2e, "examples", "question", CALLS_PER_QUESTION, rate("question")))
        tested = [("test_floor", test, "floor", 0), ("test_baseline", test, stage, 1), ("test_result", test, stage, 1)]
    for name, units, kind, calls in tested:
        if units:
            phases.append(PhasePlan(name, units, "examples", kind, calls, rate(kind)))
    counts = {role: _by_case(cases, config.data.cases) for role, cases in examples.items() if cases}
    return JobPlan(tuple(phases), counts, config.data.min_val_size, frozenset(measured))


def compile_calls(config: ExperimentConfig, train: int) -> int:
    """At most this many LM calls in the compile step: its budget, or fewer for BootstrapFewShot, which tries
    each training example once a round (one call in a stage job, a question's calls end to end)."""
    params = config.optimizer_params
    if isinstance(params, BootstrapParams):
        per_example = 1 if config.stage != "end_to_end" else CALLS_PER_QUESTION
        return min(config.budget.max_lm_calls, train * params.max_rounds * per_example)
    return config.budget.max_lm_calls


def _by_case(cases: Sequence[str], order: Sequence[str]) -> dict[str, int]:
    return {case: sum(1 for c in cases if c == case) for case in order}


@dataclass
class JobClock:
    """The ETA of a running job and the rates it measures. `advance(phase, done)` as units finish (a later
    phase starting ends the earlier ones, however little of its budget the compile step used)."""

    plan: JobPlan
    clock: Callable[[], float] = time.monotonic
    _done: dict[str, int] = field(default_factory=dict)
    _started: dict[str, float] = field(default_factory=dict)
    _ended: dict[str, float] = field(default_factory=dict)
    _began: float | None = None
    _noted: bool = False

    def _index(self, phase: str) -> int | None:
        return next((i for i, p in enumerate(self.plan.phases) if p.name == phase), None)

    def advance(self, phase: str, done: int) -> None:
        """`done` units of `phase` have finished (a phase the plan does not know is ignored)."""
        index = self._index(phase)
        if index is None:
            return
        now = self.clock()
        if self._began is None:
            self._began = now
        for earlier in self.plan.phases[:index]:
            if earlier.name in self._started and earlier.name not in self._ended:
                self._ended[earlier.name] = now
            self._started.setdefault(earlier.name, now)
            self._ended.setdefault(earlier.name, now)
        self._started.setdefault(phase, now)
        self._done[phase] = max(self._done.get(phase, 0), min(done, self.plan.phases[index].units))

    def finish(self) -> None:
        """The job's work is over: every phase begun has ended."""
        now = self.clock()
        for name in self._started:
            self._ended.setdefault(name, now)

    @property
    def elapsed(self) -> float:
        """Seconds since the first unit of work began."""
        return 0.0 if self._began is None else self.clock() - self._began

    def _weights(self) -> tuple[float, float]:
        """(the plan's weight of the finished work, of the work left)."""
        done = left = 0.0
        for p in self.plan.phases:
            finished = self._done.get(p.name, 0)
            done += finished * p.weight
            if p.name not in self._ended:
                left += (p.units - finished) * p.weight
        return done, left

    def factor(self) -> float | None:
        """Seconds the finished work took per second (or LM call) the plan gave it; None before any finished."""
        done, _ = self._weights()
        return None if done <= 0 or self._began is None else self.elapsed / done

    def seconds_left(self) -> float | None:
        """The work left at the rate the finished work ran; None before any finished."""
        factor = self.factor()
        return None if factor is None else factor * self._weights()[1]

    def eta(self) -> str:
        """ "job ETA m:ss", or "" before the first unit of work finished."""
        left = self.seconds_left()
        return "" if left is None else f"job ETA {clock_time(left)}"

    def calibration_note(self) -> str | None:
        """Once, when the first units have finished: how this machine compares with the plan, the time in all
        and the time left."""
        units = sum(self._done.values())
        factor, left = self.factor(), self.seconds_left()
        if self._noted or units < CALIBRATE_AFTER_UNITS or factor is None or left is None:
            return None
        self._noted = True
        total = self.elapsed + left
        if self.plan.seconds is None:
            return (
                f"calibrated on the first {units} units: {factor:.1f} s per LM call here; "
                f"about {duration(total)} in all, {duration(left)} left"
            )
        return (
            f"calibrated on the first {units} units: {factor:.1f}x the planned time here; "
            f"about {duration(total)} in all (planned {duration(self.plan.seconds)}), {duration(left)} left"
        )

    def measured(self, uncached: Mapping[str, bool]) -> dict[str, tuple[float, int]]:
        """kind -> (seconds, units) of the ended phases that `uncached` says the LM answered wholly (no cache):
        what the next plan's rates are made from."""
        out: dict[str, tuple[float, int]] = {}
        for p in self.plan.phases:
            done = self._done.get(p.name, 0)
            if not done or not uncached.get(p.name) or p.name not in self._ended:
                continue
            seconds, units = out.get(p.kind, (0.0, 0))
            if p.kind == "question" and p.unit == "LM calls":
                continue  # an end-to-end job's compile calls are parts of questions, not questions
            out[p.kind] = (seconds + self._ended[p.name] - self._started[p.name], units + done)
        return out
