"""compile_program: one DSPy optimizer over the chosen predictors of ScopedQA, under an LM-call budget.

The task LM and adapter come from the caller's `dspy.context(...)`; teacher and reflection LMs are
passed in the spec. The student is never modified: it is deep-copied before any optimizer sees it,
and predictors that are not optimised are restored from it afterwards.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy

from optimizers.fanout import RayCandidates, random_search_on_ray, random_search_optimizer
from optimizers.objective import Metric, gated_metric, gepa_metric
from optimizers.params import BootstrapParams, GepaParams, MiproParams, OptimizerParams, RandomSearchParams
from optimizers.stages import StageProgram, stage_gepa_metric, stage_metric
from optimizers.trainable import TrainableView
from pipeline.errors import BudgetExceededError
from pipeline.evaluation.metrics import DEFAULT_WEIGHTS
from pipeline.evaluation.stage_metrics import Stage
from pipeline.program.calls import BudgetExhausted, LMCallCounter, counting
from pipeline.program.module import ScopedQA
from pipeline.store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CompileSpec:
    """Everything an optimizer run depends on besides the program, the data and the task LM."""

    params: OptimizerParams
    modules: tuple[str, ...]
    seed: int = 0
    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    bootstrap_threshold: float = 0.5
    num_threads: int = 1
    teacher_lm: Any = None
    reflection_lm: Any = None
    # GEPA keeps its state here; a run with the same directory resumes where it stopped.
    log_dir: Path | None = None
    # Random search's candidates as Ray tasks (inside a Ray session); None: in this process.
    ray: RayCandidates | None = None


@dataclass(frozen=True)
class _Metrics:
    """The metric an optimizer scores with, and GEPA's metric with feedback."""

    scored: Metric
    gepa: Metric


def compile_program(
    spec: CompileSpec,
    student: ScopedQA,
    trainset: Sequence[dspy.Example],
    valset: Sequence[dspy.Example],
    *,
    store: Store,
    counter: LMCallCounter | None = None,
    stage: Stage | None = None,
) -> ScopedQA:
    """A new ScopedQA compiled by `spec.params.kind`; BudgetExceededError when the counter's limit is reached.

    End to end (`stage` None): `trainset`/`valset` come from `optimizers.objective.to_training_examples`
    and the metric is the gated composite. A `stage` compiles that step alone (optimizers.stages) on
    examples from `optimizers.stages.to_stage_examples`, against the stage's metric. Every LM call
    inside is counted by `counter` (which also holds the budget).
    """
    if not trainset or not valset:
        raise ValueError("compile_program needs a non-empty trainset and valset")
    counter = counter if counter is not None else LMCallCounter()
    examples = max(len(trainset), len(valset))
    view: TrainableView | StageProgram
    if stage is None:
        view = TrainableView(student.deepcopy(), spec.modules)
        metrics = _Metrics(
            gated_metric(store, spec.weights, examples=examples, threshold=spec.bootstrap_threshold),
            gepa_metric(store, spec.weights, examples=examples),
        )
    else:
        view = StageProgram(student.deepcopy(), stage)
        metrics = _Metrics(stage_metric(examples, spec.bootstrap_threshold), stage_gepa_metric(examples))
    compile_one = _COMPILERS[spec.params.kind]
    try:
        with counting(counter):
            if spec.ray is not None and isinstance(view, TrainableView) and isinstance(spec.params, RandomSearchParams):
                compiled = random_search_on_ray(
                    spec.ray,
                    spec.params,
                    view,
                    trainset,
                    valset,
                    weights=dict(spec.weights),
                    threshold=spec.bootstrap_threshold,
                    num_threads=spec.num_threads,
                    counter=counter,
                )
            else:
                compiled = compile_one(spec, view, list(trainset), list(valset), metrics)
    except BudgetExhausted as stop:
        raise BudgetExceededError(stop.limit, stop.calls) from None
    if not isinstance(compiled, type(view)):
        raise TypeError(f"{spec.params.kind} returned {type(compiled).__name__}, not the program it was given")
    program = compiled.unwrap()
    for name, predictor in student.named_predictors():
        if name not in spec.modules:
            setattr(program, name, copy.deepcopy(predictor))  # frozen: exactly the student's state
    return program


def _teacher_settings(spec: CompileSpec) -> dict[str, Any]:
    return {"lm": spec.teacher_lm} if spec.teacher_lm is not None else {}


def _bootstrap(
    spec: CompileSpec, view: dspy.Module, trainset: list[dspy.Example], valset: list[dspy.Example], metrics: _Metrics
) -> Any:
    params = spec.params
    if not isinstance(params, BootstrapParams):
        raise TypeError(type(params).__name__)
    metric = metrics.scored
    optimizer = dspy.BootstrapFewShot(
        metric=metric,
        teacher_settings=_teacher_settings(spec),
        max_bootstrapped_demos=params.max_bootstrapped_demos,
        max_labeled_demos=params.max_labeled_demos,
        max_rounds=params.max_rounds,
        max_errors=params.max_errors,
    )
    return optimizer.compile(view, trainset=trainset)


def _random_search(
    spec: CompileSpec, view: dspy.Module, trainset: list[dspy.Example], valset: list[dspy.Example], metrics: _Metrics
) -> Any:
    params = spec.params
    if not isinstance(params, RandomSearchParams):
        raise TypeError(type(params).__name__)
    optimizer = random_search_optimizer(params, metrics.scored, spec.teacher_lm, spec.num_threads, params.stop_at_score)
    return optimizer.compile(view, trainset=trainset, valset=valset)


def _mipro(
    spec: CompileSpec, view: dspy.Module, trainset: list[dspy.Example], valset: list[dspy.Example], metrics: _Metrics
) -> Any:
    params = spec.params
    if not isinstance(params, MiproParams):
        raise TypeError(type(params).__name__)
    metric = metrics.scored
    optimizer = dspy.MIPROv2(
        metric=metric,
        prompt_model=spec.teacher_lm,
        teacher_settings=_teacher_settings(spec),
        max_bootstrapped_demos=params.max_bootstrapped_demos,
        max_labeled_demos=params.max_labeled_demos,
        auto=params.auto,
        num_candidates=params.num_candidates,
        num_threads=spec.num_threads,
        max_errors=params.max_errors,
        seed=spec.seed,
        init_temperature=params.init_temperature,
        verbose=False,
        track_stats=False,
    )
    return optimizer.compile(
        view,
        trainset=trainset,
        valset=valset,
        num_trials=params.num_trials,
        seed=spec.seed,
        minibatch=params.minibatch,
        minibatch_size=min(params.minibatch_size, len(valset)),
        program_aware_proposer=params.program_aware_proposer,
        data_aware_proposer=params.data_aware_proposer,
        tip_aware_proposer=params.tip_aware_proposer,
        fewshot_aware_proposer=params.fewshot_aware_proposer,
    )


def _gepa(
    spec: CompileSpec, view: dspy.Module, trainset: list[dspy.Example], valset: list[dspy.Example], metrics: _Metrics
) -> Any:
    params = spec.params
    if not isinstance(params, GepaParams):
        raise TypeError(type(params).__name__)
    optimizer = dspy.GEPA(
        metric=metrics.gepa,
        auto=params.auto,
        max_metric_calls=params.max_metric_calls,
        max_full_evals=params.max_full_evals,
        reflection_minibatch_size=params.reflection_minibatch_size,
        candidate_selection_strategy=params.candidate_selection_strategy,
        reflection_lm=spec.reflection_lm if spec.reflection_lm is not None else dspy.settings.lm,
        skip_perfect_score=params.skip_perfect_score,
        use_merge=params.use_merge,
        num_threads=spec.num_threads,
        failure_score=0.0,
        perfect_score=1.0,
        log_dir=str(spec.log_dir) if spec.log_dir is not None else None,
        track_stats=False,
        seed=spec.seed,
    )
    return optimizer.compile(view, trainset=trainset, valset=valset)


_COMPILERS: dict[str, Callable[[CompileSpec, dspy.Module, list[dspy.Example], list[dspy.Example], _Metrics], Any]] = {
    "bootstrap_few_shot": _bootstrap,
    "bootstrap_random_search": _random_search,
    "mipro_v2": _mipro,
    "gepa": _gepa,
}
