"""What a job will cost before it starts, and when it will end while it runs.

`plan_job`: each phase's examples, LM calls (at most) and time: the setup before the first unit of work, the
phases, and the logging after. The time of a unit of work (a stage call, a question) is this machine's idle rate
when a job has measured it here before (pipeline.program.lm.timings), else, for the embedded model, the rate
benchmarks/ measured; another LM's speed is unknown until it has been measured here. An embedded model's plan is
scaled by the load it will meet (the load now plus its own threads).

`job_eta`: the running job's one ETA (pipeline.cli.eta), the rates learned from the work finished so far.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from experiments.config import ExperimentConfig
from experiments.floors import STAGE_FLOORS
from optimizers.params import BootstrapParams
from pipeline.cli.eta import Eta, Gauge, Work, duration
from pipeline.program.lm.timings import EMBEDDED_LOAD_EXPONENT, EMBEDDED_SECONDS, OVERHEAD_SECONDS

# An end-to-end question: decompose, score and answer, and HyDE for a conceptual one (the upper end).
CALLS_PER_QUESTION = 4

Rates = Mapping[str, float]  # kind of work ("decompose", "score", "answer", "question") -> seconds per unit


@dataclass(frozen=True)
class PhasePlan:
    """One phase: `units` of work (examples, LM calls for compile, or one setup or logging step), each
    `calls_per_unit` LM calls at most and `seconds_per_unit` seconds on an idle machine (None when the LM's speed is
    unknown); `kind` names the work whose rate applies."""

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
        """The phase's time on an idle machine, if every call reaches the LM."""
        return None if self.seconds_per_unit is None else self.units * self.seconds_per_unit


@dataclass(frozen=True)
class JobPlan:
    """A job's phases in order, its examples per split and case, where its rates come from, and the contention it
    expects (how many times an idle machine's time its local work will take at the load now; 1 for a remote LM)."""

    phases: tuple[PhasePlan, ...]
    examples: Mapping[str, Mapping[str, int]]
    min_val_size: int
    # kinds whose rate was measured on this machine (the rest: benchmarks/, or unknown)
    measured: frozenset[str] = frozenset()
    contention: float = 1.0

    @property
    def lm_calls(self) -> int:
        """At most this many LM calls in all (the compile step's budget included)."""
        return sum(p.calls for p in self.phases)

    @property
    def seconds(self) -> float | None:
        """The job's time at the expected load if no call comes from the cache; None when a phase's rate is
        unknown."""
        times = [p.seconds for p in self.phases]
        if any(t is None for t in times):
            return None
        return self.contention * sum(t for t in times if t is not None)

    def phase_seconds(self, phase: PhasePlan) -> float | None:
        """One phase's time at the expected load."""
        return None if phase.seconds is None else phase.seconds * self.contention

    @property
    def val_examples(self) -> int:
        return sum(self.examples.get("val", {}).values())

    @property
    def too_few(self) -> bool:
        """The validation set is below the configured minimum: a verdict on it turns on single examples."""
        return self.val_examples < self.min_val_size

    def source(self) -> str:
        """Where the rates come from, and the load they are scaled by, in words."""
        kinds = {p.kind for p in self.phases if p.calls_per_unit}
        if kinds <= self.measured:
            where = "at this machine's measured rate"
        elif self.measured & kinds:
            where = "at this machine's measured rate where known, else the benchmark rate"
        else:
            where = "at the embedded model's benchmark rate"
        if self.contention > 1.05:
            where += f", {self.contention:.1f}x an idle machine's time for the load now"
        return where

    def describe(self) -> str:
        """One line: the calls, the time (or why it is unknown) and that a cache may answer some."""
        if self.seconds is None:
            return f"up to {self.lm_calls} LM calls (the time depends on the LM: none measured here yet)"
        return (
            f"up to {self.lm_calls} LM calls, about {duration(self.seconds)} {self.source()} "
            "if none comes from the cache"
        )

    def work(self) -> list[Work]:
        """The phases as the ETA plans them."""
        return [
            Work(p.name, p.units, p.kind, p.seconds_per_unit, _singular(p.unit), calibrates=p.unit != "step")
            for p in self.phases
        ]


def plan_job(
    config: ExperimentConfig,
    examples: Mapping[str, Sequence[str]],
    *,
    embedded: bool,
    rates: Rates | None = None,
    contention: float = 1.0,
) -> JobPlan:
    """The phases `config` runs on `examples` ({"train"|"val"|"test": the case of each example}): the setup, the
    uncompiled and compiled program on validation (and test), the compile budget, for a stage job the assembled
    program end to end on a validation sample, and the logging. `embedded`: the LM is the one benchmarks/ timed (the
    default embedded model), whose rates apply until this machine has measured its own; any other LM's time is
    unknown until measured here. Rates measured here win over the benchmark's;
    `contention` is the load the job's local work will meet (1 for a remote LM)."""
    measured = dict(rates or {})

    def rate(kind: str) -> float | None:
        if kind == "floor":
            return measured.get(kind, 0.0)
        default = EMBEDDED_SECONDS[kind] if embedded else OVERHEAD_SECONDS.get(kind)
        return measured.get(kind, default)

    val, test = len(examples.get("val", ())), len(examples.get("test", ()))
    phases: list[PhasePlan] = [PhasePlan("setup", 1, "step", "setup", 0, rate("setup"))]
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
        floors = STAGE_FLOORS[stage]
        phases.extend(PhasePlan(f"floor_{name}", val, "examples", "floor", 0, rate("floor")) for name in floors)
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
    phases.append(PhasePlan("log", 1, "step", "log", 0, rate("log")))
    counts = {role: _by_case(cases, config.data.cases) for role, cases in examples.items() if cases}
    return JobPlan(tuple(phases), counts, config.data.min_val_size, frozenset(measured), contention)


def _singular(unit: str) -> str:
    """ "examples" -> "example", "LM calls" -> "LM call"."""
    return unit.removesuffix("s")


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


def job_eta(plan: JobPlan, gauge: Gauge | None, clock: Callable[[], float] | None = None) -> Eta:
    """The running job's ETA over every phase of `plan` (`gauge`: the load its local work meets; None for a remote
    LM); its clock starts now."""
    eta = Eta(plan.work(), gauge=gauge) if clock is None else Eta(plan.work(), clock=clock, gauge=gauge)
    eta.start()
    return eta


def job_gauge(embedded: bool, threads: int) -> Gauge | None:
    """The load gauge of a job whose LM runs here on `threads` threads (slowing as the embedded model does under
    load); None for a remote LM."""
    return Gauge(threads, exponent=EMBEDDED_LOAD_EXPONENT) if embedded else None
