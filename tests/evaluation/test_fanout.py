"""Evaluation on a local Ray (2 CPUs): the same results as one process, worker failures retried and counted."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import dspy
import pytest

from pipeline.cluster import map_tasks
from pipeline.evaluation.fanout import WorkerSetup, evaluate_on_ray, program_setup
from pipeline.evaluation.scoring import evaluate
from pipeline.evaluation.tables import results_frame
from pipeline.program.module import ScopedQA
from pipeline.settings import CoreConfig, Settings, ToolLoopLimits
from pipeline.store import Store
from tests.evaluation.test_evaluation import _examples
from tests.support.fakes import cooperative, scripted_lm

pytestmark = pytest.mark.usefixtures("local_ray")


class _Seen:
    """A progress callback recording (done, total)."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def __call__(self, done: int, total: int) -> None:
        self.calls.append((done, total))


def test_retrieval_only_on_ray_equals_one_process(demo_store: Store, demo_index_dir: Path) -> None:
    examples = _examples() * 3
    alone = results_frame(evaluate(examples, demo_store, mode="hybrid"))
    for batch in (None, 1, 5):  # 5: uneven tasks of 5, 5 and 2 examples
        seen = _Seen()
        fanned = evaluate_on_ray(examples, WorkerSetup(demo_index_dir), progress=seen, batch=batch)
        assert fanned.retries == 0
        assert results_frame(fanned.results).equals(alone)
        assert seen.calls[-1] == (len(examples), len(examples))


def test_retrieval_only_on_ray_reads_the_settings_core(demo_store: Store, demo_index_dir: Path) -> None:
    examples = _examples() * 3
    settings = Settings(core=CoreConfig(tool_loop=ToolLoopLimits(max_iterations=1)))
    alone = results_frame(evaluate(examples, demo_store, mode="hybrid", core=settings.core))
    assert not alone.equals(results_frame(evaluate(examples, demo_store, mode="hybrid")))  # the settings matter
    fanned = evaluate_on_ray(examples, WorkerSetup(demo_index_dir, settings=settings))
    assert results_frame(fanned.results).equals(alone)


def test_program_on_ray_gives_the_single_process_metrics(demo_store: Store, demo_index_dir: Path) -> None:
    examples = _examples()
    program = ScopedQA(demo_store)
    with dspy.context(lm=scripted_lm(cooperative())):
        alone = results_frame(evaluate(examples, demo_store, program=program))
    setup = program_setup(demo_index_dir, program, functools.partial(scripted_lm, cooperative()), json_adapter=False)
    fanned = results_frame(evaluate_on_ray(examples, setup).results)
    assert (fanned["lm_calls"] == 3).all()
    timed = ["seconds"]  # the wall-clock time each answer took differs between runs
    assert fanned["seconds"].notna().all()
    assert fanned.drop(columns=timed).equals(alone.drop(columns=timed))


def _dies_on_first_attempt(shared: int, item: int, attempt: int) -> tuple[int, int]:
    if item == 2 and attempt == 1:
        os._exit(1)  # the worker process dies, as a crashed native library or an OOM kill would
    return item * shared, attempt


def test_a_dead_worker_is_retried_and_counted() -> None:
    fanned = map_tasks(_dies_on_first_attempt, 10, [1, 2, 3])
    assert fanned.results == [(10, 1), (20, 2), (30, 1)]
    assert fanned.retries == 1


def test_evaluate_command_on_ray_writes_the_same_tables(demo_index_dir: Path, tmp_path: Path) -> None:
    from pipeline.cli.main import main
    from pipeline.evaluation.examples import write_examples

    traces = tmp_path / "t.jsonl"
    write_examples(traces, _examples())
    common = ["evaluate", "--traces", str(traces), "--index", str(demo_index_dir), "--retrieval-only"]
    assert main([*common, "--mode", "hybrid", "--out", str(tmp_path / "one")]) == 0
    assert main([*common, "--mode", "hybrid", "--out", str(tmp_path / "ray"), "--ray"]) == 0
    for name in ("examples-hybrid.csv", "cases-hybrid.json"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "one" / name).read_bytes()
