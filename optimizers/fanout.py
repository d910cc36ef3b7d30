"""Random-search candidates as Ray tasks: each candidate seed is built and scored on validation in a worker by
DSPy's own BootstrapFewShotWithRandomSearch (restricted to that seed), and the best is chosen here by DSPy's
rule, so the result is the one the single-process search returns."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy

from optimizers.objective import Metric, gated_metric
from optimizers.params import RandomSearchParams
from optimizers.trainable import TrainableView
from pipeline.cluster import kept, map_tasks
from pipeline.program.calls import BudgetExhausted, LMCallCounter, counting
from pipeline.program.module import ScopedQA
from pipeline.settings import Settings

# The first candidate seeds of DSPy's random search: zero-shot, labelled demos only, unshuffled bootstrap.
FIRST_SEED = -3


@dataclass(frozen=True)
class RayCandidates:
    """How workers rebuild the search: the index, the task and teacher LM factories, the adapter."""

    index_dir: Path
    task_lm: Callable[[], Any]
    teacher_lm: Callable[[], Any] | None = None
    json_adapter: bool = False
    key: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass(frozen=True)
class _Search:
    """Everything one candidate needs, sent to the object store once."""

    where: RayCandidates
    params: RandomSearchParams
    modules: tuple[str, ...]
    weights: dict[str, float]
    threshold: float
    num_threads: int
    settings: Settings
    state: dict[str, Any]
    trainset: list[dspy.Example]
    valset: list[dspy.Example]


@dataclass(frozen=True)
class Candidate:
    """One seed's compiled state, its validation score, and the LM calls and tokens it took."""

    seed: int
    score: float
    state: dict[str, Any]
    calls: int
    tokens: int


def random_search_on_ray(
    where: RayCandidates,
    params: RandomSearchParams,
    view: TrainableView,
    trainset: Sequence[dspy.Example],
    valset: Sequence[dspy.Example],
    *,
    weights: dict[str, float],
    threshold: float,
    num_threads: int,
    counter: LMCallCounter,
) -> TrainableView:
    """The candidate DSPy's random search would select, its seeds run as Ray tasks (inside a Ray session);
    the workers' LM calls are added to `counter`, and BudgetExhausted is raised when they pass its limit."""
    from pipeline.export import program_state

    student = view.unwrap()
    search = _Search(
        where,
        params,
        view._modules,
        dict(weights),
        threshold,
        num_threads,
        student.settings,
        program_state(student),
        list(trainset),
        list(valset),
    )
    seeds = list(range(FIRST_SEED, params.num_candidate_programs))
    candidates: list[Candidate] = map_tasks(_candidate_in_worker, search, seeds).results
    for candidate in candidates:
        counter.add_remote(candidate.calls, candidate.tokens)
    if counter.limit is not None and counter.calls > counter.limit:
        raise BudgetExhausted(counter.limit, counter.calls)
    best = choose(candidates, params.stop_at_score)
    return TrainableView(_rebuilt(student, best.state), view._modules)


def choose(candidates: Sequence[Candidate], stop_at_score: float | None) -> Candidate:
    """DSPy's choice, in seed order: a candidate replaces the best only with a higher score, and the search
    stops at the first one reaching `stop_at_score`."""
    best = candidates[0]
    for candidate in candidates:
        if candidate.score > best.score:
            best = candidate
        if stop_at_score is not None and candidate.score >= stop_at_score:
            break
    return best


def random_search_optimizer(
    params: RandomSearchParams, metric: Metric, teacher_lm: Any, num_threads: int, stop_at_score: float | None
) -> Any:
    """DSPy's BootstrapFewShotWithRandomSearch as `params` describe it (`teacher_lm` None: the task LM)."""
    return dspy.BootstrapFewShotWithRandomSearch(
        metric=metric,
        teacher_settings={"lm": teacher_lm} if teacher_lm is not None else {},
        max_bootstrapped_demos=params.max_bootstrapped_demos,
        max_labeled_demos=params.max_labeled_demos,
        max_rounds=params.max_rounds,
        num_candidate_programs=params.num_candidate_programs,
        num_threads=num_threads,
        max_errors=params.max_errors,
        stop_at_score=stop_at_score,
    )


def _rebuilt(student: ScopedQA, state: dict[str, Any]) -> ScopedQA:
    from pipeline.export.saving import apply_state

    return apply_state(student.deepcopy(), state, "<random-search candidate from a Ray worker>")


def _candidate_in_worker(search: _Search, seed: int, attempt: int) -> Candidate:
    """Seed `seed` of the random search, built and scored on validation by DSPy in this worker."""
    from pipeline.export import program_state
    from pipeline.store import open_store

    where = search.where
    store = kept((where.key, "store"), lambda: open_store(where.index_dir))
    task_lm = kept((where.key, "task_lm"), where.task_lm)
    teacher = kept((where.key, "teacher_lm"), where.teacher_lm) if where.teacher_lm is not None else None
    student = _rebuilt(ScopedQA(store, search.settings), search.state)
    examples = max(len(search.trainset), len(search.valset))
    metric = gated_metric(store, search.weights, examples=examples, threshold=search.threshold)
    optimizer = random_search_optimizer(search.params, metric, teacher, search.num_threads, None)
    counter = LMCallCounter()
    settings: dict[str, Any] = {"lm": task_lm}
    if where.json_adapter:
        settings["adapter"] = dspy.JSONAdapter()
    with dspy.context(**settings), counting(counter):
        compiled = optimizer.compile(
            TrainableView(student, search.modules), trainset=search.trainset, valset=search.valset, restrict={seed}
        )
    (scored,) = compiled.candidate_programs
    state = program_state(compiled.unwrap())
    return Candidate(seed, float(scored["score"]), state, counter.calls, counter.tokens)
