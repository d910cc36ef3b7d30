"""A question never runs past its time bound (settings.question.seconds): whatever stage it is in, past the bound
it ends with what it has, each section an error naming that stage, recorded in its trace and the history.

The bound is the feature under test, so these tests measure it: each question must end within its bound plus
one second, with an LM that never answers (a server that accepts and stays silent) and with a fake clock that
makes a stage run past it."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import dspy
import pytest

from pipeline.deadline import Deadline, DeadlinePassed, run_within
from pipeline.evaluation.history import History
from pipeline.intake.scope import resolve_scope
from pipeline.program.events import Completed, Decomposing, Event
from pipeline.program.lm import make_lm
from pipeline.program.module import ScopedQA
from pipeline.settings import LMRequestSettings, ProgramSettings, QuestionLimits, Settings, StepChoices
from pipeline.store import Store
from tests.support.fakes import cooperative, scripted_lm

LM_STEPS = StepChoices(decompose="lm", score="lm", answer="lm", abstain="lm", compute="lm", hyde="lm")
FLOORS = StepChoices(decompose="parts", score="top_k", answer="span", abstain="support", compute="rows", hyde="none")


def test_a_deadline_counts_down_on_its_clock_and_stops_past_it() -> None:
    now = [100.0]
    deadline = Deadline(5.0, lambda: now[0])
    assert deadline.remaining() == 5.0 and not deadline.passed
    deadline.check("retrieving")
    now[0] = 104.5
    assert deadline.remaining() == pytest.approx(0.5)
    now[0] = 105.0
    with pytest.raises(DeadlinePassed, match="time bound of 5 s while retrieving") as stopped:
        deadline.check("retrieving")
    assert stopped.value.stage == "retrieving" and stopped.value.seconds == 5.0
    # no bound: nothing ever passes
    assert Deadline(None).remaining() == float("inf")
    Deadline(None, lambda: 1e12).check("anything")


def test_a_bounded_call_returns_its_result_or_its_error_unchanged_and_stops_at_the_bound() -> None:
    assert run_within(5.0, "waiting", 5.0, lambda: 42) == 42
    with pytest.raises(KeyError, match="missing"):
        run_within(5.0, "waiting", 5.0, lambda: {}["missing"])
    release = threading.Event()
    started = time.monotonic()
    with pytest.raises(DeadlinePassed, match="while waiting for the LM"):
        run_within(0.3, "waiting for the LM", 0.3, lambda: release.wait(30))
    assert time.monotonic() - started < 1.3
    release.set()


def _stepping_clock(step: float) -> object:
    """A clock that moves `step` seconds on every reading: each stage's checks see time pass."""
    now = [0.0]

    def clock() -> float:
        now[0] += step
        return now[0]

    return clock


def _ask(program: ScopedQA, question: str, store: Store, **scope: str) -> tuple[list[Event], Completed]:
    with dspy.context(lm=scripted_lm(cooperative())):
        events = list(program.stream(question, resolve_scope(store, **scope)))
    last = events[-1]
    assert isinstance(last, Completed) and last.trace is not None
    return events, last


def test_a_question_past_its_bound_ends_with_error_sections_naming_the_stage(demo_store: Store, tmp_path: Path) -> None:
    # every clock reading moves 1 s: a 3 s bound passes during retrieval, before any answer is made
    settings = Settings(program=ProgramSettings(steps=FLOORS), question=QuestionLimits(seconds=3.0))
    program = ScopedQA(demo_store, settings, clock=_stepping_clock(1.0))
    events, done = _ask(
        program, "What is the monthly rent and who is the tenant?", demo_store, property_ref="Banda Lane"
    )
    assert [e.phase for e in events][-1] == "completed" and "generating" not in [e.phase for e in events]
    assert done.sections and {s.status for s in done.sections} == {"error"}
    assert all("time bound of 3 s while retrieving" in (s.error or "") for s in done.sections)
    trace = done.trace
    assert trace is not None
    stops = [f for f in trace.fallbacks if f.guard == "deadline"]
    assert [f.target for f in stops] == ["retrieving"]
    # what it had is kept: the plan and the sub-questions it was retrieving for
    assert trace.planner and [s.status for s in done.sections] == ["error"] * len(done.sections)
    history = History(tmp_path / "history.sqlite")
    entry = history.get(history.record(trace))
    history.close()
    assert entry is not None and [f.target for f in entry.trace.fallbacks if f.guard == "deadline"] == ["retrieving"]
    assert {s["status"] for s in entry.trace.sections} == {"error"}


def test_a_question_within_its_bound_is_answered_as_before(demo_store: Store) -> None:
    _, done = _ask(ScopedQA(demo_store), "What is the monthly rent?", demo_store, property_ref="Banda Lane")
    assert {s.status for s in done.sections} <= {"answered", "not_found"}
    assert done.trace is not None and not [f for f in done.trace.fallbacks if f.guard == "deadline"]


@contextlib.contextmanager
def silent_server() -> Iterator[str]:
    """An OpenAI-compatible base URL on 127.0.0.1 whose server accepts every connection and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                held.append(listener.accept()[0])  # kept open, never read or answered

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        listener.close()


def test_an_lm_that_never_answers_ends_the_question_within_its_bound(demo_store: Store, tmp_path: Path) -> None:
    bound = 2.0
    settings = Settings(
        program=ProgramSettings(steps=LM_STEPS),
        question=QuestionLimits(seconds=bound),
        # the request timeout and the retries alone would keep the question for minutes
        lm_requests=LMRequestSettings(retries=3, backoff_seconds=1.0, timeout_seconds=600.0),
    )
    with silent_server() as url:
        lm = make_lm(url, cache_dir=tmp_path, cache=False, requests=settings.lm_requests)
        started = time.monotonic()
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            events = list(ScopedQA(demo_store, settings).stream("Who is the tenant?", resolve_scope(demo_store)))
        took = time.monotonic() - started
    assert took <= bound + 1.0, f"the question took {took:.1f} s against its bound of {bound} s"
    done = events[-1]
    assert isinstance(done, Completed) and done.trace is not None
    assert done.sections and {s.status for s in done.sections} == {"error"}
    assert all("while waiting for the LM (decompose)" in (s.error or "") for s in done.sections)
    assert [f.target for f in done.trace.fallbacks if f.guard == "deadline"] == ["waiting for the LM (decompose)"]
    history = History(tmp_path / "history.sqlite")
    entry = history.get(history.record(done.trace, status="done"))
    history.close()
    assert entry is not None and entry.trace.sections[0]["status"] == "error"


def test_progress_never_says_no_lm_while_hyde_calls_it(demo_store: Store) -> None:
    floors = FLOORS
    conceptual = "Explain how the lease handles maintenance responsibilities"
    scope = {"property_ref": "Banda Lane"}
    with_hyde, done = _ask(
        ScopedQA(demo_store, Settings(program=ProgramSettings(steps=floors.model_copy(update={"hyde": "lm"})))),
        conceptual,
        demo_store,
        **scope,
    )
    assert done.trace is not None
    planned = any(r.get("use_hyde") for r in done.trace.planner.get("retrieval_rounds", []))
    assert planned, "the planner no longer plans HyDE for a conceptual question: pick another"
    line = next(e for e in with_hyde if isinstance(e, Decomposing))
    assert line.lm is True and done.lm_calls == 1
    # the floor "none": no HyDE call, and the line says so
    without, floor_done = _ask(
        ScopedQA(demo_store, Settings(program=ProgramSettings(steps=floors.model_copy(update={"hyde": "none"})))),
        conceptual,
        demo_store,
        **scope,
    )
    assert next(e for e in without if isinstance(e, Decomposing)).lm is False and floor_done.lm_calls == 0


def _cpu_seconds() -> float:
    usage = os.times()
    return usage.user + usage.system


@pytest.mark.live_lm
def test_the_embedded_model_asked_for_more_than_the_bound_allows_is_stopped(demo_store: Store) -> None:
    from pipeline.cli.common import model_cache_dir

    bound = 2.0
    budgets = dict.fromkeys(("decompose", "score", "answer", "hyde", "compute"), 8192)
    settings = Settings(
        program=ProgramSettings(steps=LM_STEPS, max_tokens=budgets), question=QuestionLimits(seconds=bound)
    )
    # loaded before the question starts (loading is not the question's time); every call asks for 8,192 tokens
    lm = make_lm("embedded", cache_dir=model_cache_dir(), max_tokens=8192, cache=False)
    started = time.monotonic()
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        events = list(ScopedQA(demo_store, settings).stream("Who is the tenant?", resolve_scope(demo_store)))
    took = time.monotonic() - started
    assert took <= bound + 1.0, f"the question took {took:.1f} s against its bound of {bound} s"
    done = events[-1]
    assert isinstance(done, Completed) and {s.status for s in done.sections} == {"error"}
    assert done.trace is not None and [f.guard for f in done.trace.fallbacks].count("deadline") == 1
    # the generation was stopped where it ran, not left running: the process goes idle long before 8,192 tokens
    # could be written (llama.cpp looks for the closed connection between prompt batches of 512 tokens)
    idle_by = time.monotonic() + 60.0
    while time.monotonic() < idle_by:
        before = _cpu_seconds()
        time.sleep(2.0)
        if _cpu_seconds() - before < 0.2:
            break
    else:
        pytest.fail("the embedded model kept working for a minute after the question stopped")
