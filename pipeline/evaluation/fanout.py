"""Evaluation with examples as Ray tasks: each worker opens the index, rebuilds the program from its state
and makes the LM once, then scores examples exactly as `evaluate` does in one process."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.cluster import FanOut, Progress, cluster_cpus, kept, map_tasks
from pipeline.evaluation.examples import LabelledExample
from pipeline.evaluation.scoring import ExampleResult, evaluate
from pipeline.settings import Settings
from pipeline.types import SearchMode

# Makes the LM inside a worker: `functools.partial(make_lm, spec, ...)` names an OpenAI-compatible endpoint
# or loads the embedded model (once per worker, see `kept`).
LMFactory = Callable[[], Any]
# Retrieval-only tasks per CPU of the cluster: enough to balance uneven examples, few enough to amortise Ray.
TASKS_PER_CPU = 4


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker needs to score examples: the index, the settings (retrieval alone reads their core
    section), the program (compiled state; None: retrieval only), how to make the LM, the retrieval mode
    and the composite's weights."""

    index_dir: Path
    program: bool = False
    settings: Settings | None = None
    state: Mapping[str, Any] | None = None
    lm: LMFactory | None = None
    json_adapter: bool = True
    mode: SearchMode = "hybrid"
    weights: Mapping[str, float] | None = None
    # identifies this setup in a worker's kept objects (a worker may serve several evaluations)
    key: str = field(default_factory=lambda: uuid.uuid4().hex)


def program_setup(
    index_dir: Path,
    program: Any,
    lm: LMFactory,
    *,
    json_adapter: bool = True,
    weights: Mapping[str, float] | None = None,
) -> WorkerSetup:
    """The setup that rebuilds `program` (a ScopedQA: its settings and compiled state) in each worker."""
    from pipeline.export import program_state

    return WorkerSetup(
        index_dir=Path(index_dir).resolve(),
        program=True,
        settings=program.settings,
        state=program_state(program),
        lm=lm,
        json_adapter=json_adapter,
        weights=weights,
    )


def evaluate_on_ray(
    examples: Sequence[LabelledExample],
    setup: WorkerSetup,
    progress: Progress | None = None,
    batch: int | None = None,
) -> FanOut[ExampleResult]:
    """Every example scored in Ray tasks of `batch` examples (inside `pipeline.cluster.ray_session`), in input
    order, with the number of attempts Ray repeated after worker failures. `batch` None: one example per task
    with an LM (its calls dominate), else enough examples per task that Ray's per-task cost stays small."""
    size = batch or (1 if setup.program else max(1, len(examples) // (TASKS_PER_CPU * cluster_cpus())))
    batches = [list(examples[start : start + size]) for start in range(0, len(examples), size)]

    def advance(done: int, total: int) -> None:
        if progress:
            progress(min(len(examples), done * size), len(examples))

    fanned = map_tasks(score_in_worker, setup, batches, progress=advance)
    return FanOut([result for results in fanned.results for result in results], fanned.retries)


def score_in_worker(setup: WorkerSetup, examples: list[LabelledExample], attempt: int) -> list[ExampleResult]:
    """Examples scored in this worker with the setup's store, program and LM (each made once per worker)."""
    import dspy

    store, program = kept((setup.key, "program"), lambda: _open(setup))
    lm = kept((setup.key, "lm"), setup.lm) if setup.lm is not None else None
    context: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
    if lm is not None:
        context = dspy.context(lm=lm, adapter=dspy.JSONAdapter()) if setup.json_adapter else dspy.context(lm=lm)
    with context:
        core = setup.settings.core if setup.settings is not None else None
        return evaluate(examples, store, program=program, mode=setup.mode, weights=setup.weights, core=core)


def _open(setup: WorkerSetup) -> tuple[Any, Any]:
    from pipeline.export.saving import apply_state
    from pipeline.program.module import ScopedQA
    from pipeline.store import open_store

    store = open_store(setup.index_dir)
    if not setup.program:
        return store, None
    program = ScopedQA(store, setup.settings)
    if setup.state is not None:
        program = apply_state(program, setup.state, "<program state sent to the worker>")
    return store, program
