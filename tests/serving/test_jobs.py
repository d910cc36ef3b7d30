"""Questions as background jobs (POST /v1/jobs), over real sockets: they run without a reader, report their stage,
elapsed time and an estimate, stop on cancel with no LM call after, and land in the history however they end."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from pipeline.evaluation.history import History
from pipeline.program.module import ScopedQA
from pipeline.program.trace import QuestionTrace, SubQuestionTrace
from pipeline.serving import create_app, running_server
from pipeline.serving.estimate import current_stage, estimate_left, stage_seconds, typical_times
from pipeline.store import open_store
from tests.support.app_server import DUMMY_ADAPTER, Server, Start, wait_until
from tests.support.fakes import ONE_SECTION_PHASES, cooperative, prompt_step, scripted_lm

RENT = "What is the monthly rent at Banda Lane?"


@dataclass
class GateLM:
    """A cooperative responder recording each call's step; a call of step `hold` waits until `release` is set."""

    hold: str | None = None
    delay: float = 0.0
    calls: list[str] = field(default_factory=list)
    held: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def __call__(self, prompt: str) -> Any:
        step = prompt_step(prompt)
        self.calls.append(step)
        if step == self.hold:
            self.held.set()
            self.release.wait(30)
        time.sleep(self.delay)
        return cooperative()(prompt)


def start_job(server: Server, **body: Any) -> dict[str, Any]:
    response = httpx.post(f"{server.url}/v1/jobs", json=body, timeout=30)
    assert response.status_code == 202, response.text
    job: dict[str, Any] = response.json()
    return job


def job(server: Server, job_id: str, after: int = -1) -> dict[str, Any]:
    response = server.get(f"/v1/jobs/{job_id}?after={after}")
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def finished(server: Server, job_id: str) -> dict[str, Any]:
    wait_until(lambda: job(server, job_id)["status"] != "running", 20)
    return job(server, job_id)


def test_a_job_runs_without_a_reader_and_lands_in_the_history(start: Start, tmp_path: Path) -> None:
    server = start(GateLM(), history=tmp_path / "history.sqlite")
    started = start_job(server, question=RENT, property="banda-lane")
    assert started["status"] == "running" and started["question"] == RENT
    assert started["scope"] == {"kind": "property", "label": "Banda Lane"}
    assert started["program"] == "The program serving now" and started["estimate"] is None  # nothing measured yet
    uuid.UUID(started["job_id"])
    done = finished(server, started["job_id"])  # nobody read its events meanwhile
    assert done["status"] == "done" and done["stage"] == "generating" and not done["cancelling"]
    assert [e["phase"] for e in done["events"]] == ONE_SECTION_PHASES
    assert [e["seq"] for e in done["events"]] == list(range(len(ONE_SECTION_PHASES)))
    completed = done["events"][-1]
    assert completed["history_id"] == done["history_id"] and completed["sections"][0]["answer"]
    assert done["lm_calls"] == 3 and done["elapsed"] >= 0 and done["next_seq"] == len(ONE_SECTION_PHASES)
    # a reader that has seen the first four events gets the rest only
    assert [e["seq"] for e in job(server, started["job_id"], after=3)["events"]] == [4, 5, 6]
    entry = History(tmp_path / "history.sqlite").get(done["history_id"])
    assert entry.status == "done" and entry.lm == "dummy" and entry.answer == completed["answer"]
    listed = server.get("/v1/history").json()["entries"][0]
    assert listed["status"] == "done" and listed["scope"] == {"kind": "property", "label": "Banda Lane"}
    assert [j["job_id"] for j in server.get("/v1/jobs").json()["jobs"]] == [started["job_id"]]
    assert server.get("/v1/jobs").json()["jobs"][0]["events"] == []  # the list carries no events


def test_a_job_says_which_steps_its_program_runs_and_the_uncompiled_one_runs_every_step_by_the_lm(
    start: Start,
) -> None:
    from pipeline.settings import ProgramSettings, Settings, StepChoices

    floors = StepChoices(
        decompose="parts",
        score="top_k",
        answer="span",
        abstain="support",
        compute="rows",
        hyde="none",
        judge="claims",
        choose="span",
    )
    lm = GateLM()
    server = start(lm, program=lambda store: ScopedQA(store, Settings(program=ProgramSettings(steps=floors))))
    serving = finished(server, start_job(server, question=RENT, property="banda-lane")["job_id"])
    assert serving["status"] == "done" and serving["lm_calls"] == 0 and lm.calls == []
    assert serving["steps"].startswith("no step by the LM, each runs its floor (decompose parts, score top_k")
    # Compare's "Uncompiled program": the LM's own prompts on every step, not the floors serving now
    uncompiled = finished(server, start_job(server, question=RENT, property="banda-lane", uncompiled=True)["job_id"])
    assert uncompiled["status"] == "done" and uncompiled["program"] == "Uncompiled program"
    assert uncompiled["steps"].startswith("every step by the LM") and uncompiled["lm_calls"] > 0 and lm.calls


def test_cancel_stops_the_job_and_no_lm_call_starts_after_it(start: Start, tmp_path: Path) -> None:
    lm = GateLM(hold="score")
    server = start(lm, history=tmp_path / "history.sqlite")
    job_id = start_job(server, question=RENT)["job_id"]
    assert lm.held.wait(10)  # the scoring call is under way
    during = job(server, job_id)
    assert during["status"] == "running" and during["stage"] == "filtering"
    cancelled = httpx.post(f"{server.url}/v1/jobs/{job_id}/cancel", timeout=10).json()
    assert cancelled["status"] == "running" and cancelled["cancelling"]  # the call under way still finishes
    lm.release.set()
    done = finished(server, job_id)
    assert done["status"] == "cancelled" and not done["cancelling"]
    assert lm.calls == ["decompose", "score"]
    time.sleep(0.3)
    assert lm.calls == ["decompose", "score"]  # the answer call never started
    assert server.health()["active_streams"] == 0
    entry = History(tmp_path / "history.sqlite").get(done["history_id"])
    assert entry.status == "cancelled" and entry.question == RENT
    [stop] = [i for i in entry.trace.interventions if i.guard == "stop"]
    assert "cancelled by the user" in stop.reason and "no LM call started after it" in stop.reason
    assert [s.sub_question for s in entry.trace.sub_questions] == [RENT]  # what was done before the stop is kept
    # cancelling a finished job changes nothing
    again = httpx.post(f"{server.url}/v1/jobs/{job_id}/cancel", timeout=10).json()
    assert again["status"] == "cancelled"


def test_a_failed_job_lands_in_the_history_as_failed(start: Start, tmp_path: Path) -> None:
    def failing(prompt: str) -> Any:
        if prompt_step(prompt) == "score":
            raise ConnectionError("model server went away")
        return cooperative()(prompt)

    server = start(failing, history=tmp_path / "history.sqlite")
    done = finished(server, start_job(server, question=RENT)["job_id"])
    assert done["status"] == "failed" and done["events"][-1]["phase"] == "error"
    assert History(tmp_path / "history.sqlite").get(done["history_id"]).status == "failed"


def test_the_estimate_comes_from_questions_answered_here(start: Start, tmp_path: Path) -> None:
    lm = GateLM(delay=0.05)
    server = start(lm, history=tmp_path / "history.sqlite")
    finished(server, start_job(server, question=RENT)["job_id"])
    lm.hold = "answer"
    running = start_job(server, question=f"{RENT} (again)")["job_id"]
    assert lm.held.wait(10)
    now = job(server, running)
    assert now["stage"] == "generating" and now["estimate"]["questions"] == 1
    assert now["estimate"]["seconds_left"] >= 0
    lm.release.set()
    finished(server, running)


def test_bad_jobs_are_refused_and_unknown_ids_are_404(start: Start) -> None:
    server = start(GateLM(delay=0.3), max_concurrent_streams=1)
    unknown = httpx.post(f"{server.url}/v1/jobs", json={"question": RENT, "property": "nowhere"}, timeout=10)
    assert unknown.status_code == 422 and unknown.json()["detail"][0]["loc"] == ["body", "property"]
    assert httpx.post(f"{server.url}/v1/jobs", json={"question": " "}, timeout=10).status_code == 422
    for job_id in (str(uuid.uuid4()), "not-an-id", str(uuid.uuid4()).upper()):
        assert server.get(f"/v1/jobs/{job_id}").status_code == 404
        assert httpx.post(f"{server.url}/v1/jobs/{job_id}/cancel", timeout=10).status_code == 404
    first = start_job(server, question=RENT)
    busy = httpx.post(f"{server.url}/v1/jobs", json={"question": RENT}, timeout=10)
    assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
    finished(server, first["job_id"])
    foreign = httpx.post(
        f"{server.url}/v1/jobs", json={"question": RENT}, headers={"origin": "https://evil.example"}, timeout=10
    )
    assert foreign.status_code == 403
    assert (
        httpx.post(
            f"{server.url}/v1/jobs/{first['job_id']}/cancel", headers={"origin": "https://evil.example"}, timeout=10
        ).status_code
        == 403
    )


# -- the estimate, without a server ------------------------------------------------------------------


def answered(decompose: float, retrieve: float, score: float, answer: float, total: float) -> QuestionTrace:
    trace = QuestionTrace(question="q", scope={"kind": "no_scope"})
    trace.sub_questions = [SubQuestionTrace(index=0, sub_question="q")]
    trace.timings = {"decompose": decompose, "retrieve": retrieve, "score": score, "answer": answer, "total": total}
    return trace


def test_typical_times_are_medians_of_uncached_answered_questions() -> None:
    cached = answered(0.0, 0.0, 0.0, 0.0, 0.1)
    cached.cached_calls = 3
    unanswered = QuestionTrace(question="q", scope={"kind": "no_scope"}, timings={"total": 0.0})
    traces = [answered(2, 1, 10, 20, 34), answered(4, 1, 30, 20, 56), answered(3, 1, 20, 100, 125), cached, unanswered]
    typical = typical_times(traces)
    assert typical is not None and typical.questions == 3
    assert dict(typical.seconds) == {"decomposing": 3, "retrieving": 1, "filtering": 20, "generating": 20}
    assert typical.total == 56
    assert stage_seconds(traces[0])["generating"] == 20
    assert typical_times([cached, unanswered]) is None


def test_the_estimate_counts_down_and_says_when_a_stage_runs_long() -> None:
    typical = typical_times([answered(3, 1, 20, 20, 48)])  # 4 s outside the stages, spread over them
    assert estimate_left(None, "filtering", 1.0, 5.0) is None
    early = estimate_left(typical, None, 0.0, 0.5)
    assert early is not None and early.seconds_left == 47.5 and not early.overdue
    scoring = estimate_left(typical, "filtering", 5.0, 10.0)
    assert scoring is not None and scoring.seconds_left == 15 + 20 + 2 and not scoring.overdue
    slow = estimate_left(typical, "filtering", 50.0, 60.0)
    assert slow is not None and slow.overdue and slow.seconds_left == 20 + 2  # the later stages: a lower bound
    assert current_stage([("decomposing", 1.0), ("decomposed", 2.0), ("retrieving", 3.0)]) == ("retrieving", 3.0)
    assert current_stage([]) == (None, None)


def test_a_question_running_when_the_server_stops_lands_in_the_history_as_cancelled(
    demo_index_dir: Path, embedder: Any, tmp_path: Path
) -> None:
    gate, path = GateLM(hold="score"), tmp_path / "history.sqlite"
    store = open_store(demo_index_dir, embedder)
    app = create_app(store=store, program=ScopedQA(store), lm=scripted_lm(gate), adapter=DUMMY_ADAPTER, history=path)
    with running_server(app) as url:
        started = httpx.post(f"{url}/v1/jobs", json={"question": RENT, "property": "banda-lane"}, timeout=30).json()
        assert gate.held.wait(30)  # the scoring call is under way
        (entry,) = History(path).recent()
        assert entry.history_id == started["history_id"] and entry.status == "running"
    # the server stopped while the call waited: the question is in the history, cancelled, and says why
    entry = History(path).get(started["history_id"])
    assert entry.status == "cancelled" and entry.question == RENT
    assert any(i.reason.startswith("the server stopped") for i in entry.trace.interventions)
    gate.release.set()  # the call under way ends after the server did: the record stays as it was closed
    wait_until(lambda: gate.calls.count("score") == 1 and threading.active_count() < 50, 10)
    time.sleep(0.5)
    assert History(path).get(started["history_id"]).status == "cancelled"
