"""Every attempt to reach the LM is a counted call: retries of transient failures, their limit, the budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.utils.exceptions import LMAuthError, LMRateLimitError, LMServerError, LMTransportError

from pipeline.errors import LMFailure
from pipeline.program.calls import BudgetExhausted, LMCallCounter, call_once, counting
from pipeline.program.lm import make_lm
from pipeline.settings import LMRequestSettings
from signatures import Decompose
from tests.support.fakes import scripted_lm

NO_WAIT = LMRequestSettings(retries=3, backoff_seconds=0.0)


def _failing(*errors: Exception) -> tuple[list[str], Any]:
    """A scripted LM raising `errors` in turn, then answering; and the list of prompts it was given."""
    prompts: list[str] = []

    def respond(prompt: str) -> dict[str, Any]:
        prompts.append(prompt)
        if len(prompts) <= len(errors):
            raise errors[len(prompts) - 1]
        return {"sub_questions": ["What is the rent?"]}

    lm = scripted_lm(respond)
    lm.num_retries = 0  # as make_lm makes every remote LM: retries are call_once's, each one a counted call
    return prompts, lm


def test_transient_failures_are_retried_and_every_attempt_counted() -> None:
    prompts, lm = _failing(LMServerError("boom"), LMRateLimitError("slow down"), LMTransportError("dropped"))
    with dspy.context(lm=lm):
        outcome = call_once("decompose", dspy.Predict(Decompose), 100, NO_WAIT, question="What is the rent?")
    assert outcome.prediction.sub_questions == ["What is the rent?"]
    assert outcome.calls == len(prompts) == 4
    assert outcome.retried == ("LMServerError", "LMRateLimitError", "LMTransportError")


def test_retries_stop_at_the_setting_and_the_failure_carries_every_attempt() -> None:
    prompts, lm = _failing(*(LMServerError("boom") for _ in range(10)))
    with dspy.context(lm=lm), pytest.raises(LMFailure) as caught:
        call_once("decompose", dspy.Predict(Decompose), 100, NO_WAIT, question="q")
    assert caught.value.calls == len(prompts) == 4 and caught.value.retried == ("LMServerError",) * 3


def test_a_failure_that_is_not_transient_is_not_retried() -> None:
    prompts, lm = _failing(LMAuthError("bad key"))
    with dspy.context(lm=lm), pytest.raises(LMFailure) as caught:
        call_once("decompose", dspy.Predict(Decompose), 100, NO_WAIT, question="q")
    assert caught.value.calls == len(prompts) == 1 and caught.value.retried == ()


def test_a_call_budget_stops_retries_too() -> None:
    prompts, lm = _failing(*(LMServerError("boom") for _ in range(10)))
    with dspy.context(lm=lm), counting(LMCallCounter(limit=2)), pytest.raises(BudgetExhausted):
        call_once("decompose", dspy.Predict(Decompose), 100, NO_WAIT, question="q")
    assert len(prompts) == 2


def test_a_servers_retry_after_is_honoured_up_to_a_limit() -> None:
    from pipeline.program.calls import MAX_RETRY_AFTER_SECONDS, _retry_delay

    settings = LMRequestSettings(backoff_seconds=0.5)
    assert _retry_delay(settings, 1, LMServerError("x")) == 0.5
    assert _retry_delay(settings, 3, LMServerError("x")) == 2.0
    assert _retry_delay(settings, 1, LMRateLimitError("x", retry_after=4.0)) == 4.0
    assert _retry_delay(settings, 1, LMRateLimitError("x", retry_after=3600)) == MAX_RETRY_AFTER_SECONDS


def test_remote_lms_never_retry_on_their_own_and_time_out(tmp_path: Path) -> None:
    requests = LMRequestSettings(timeout_seconds=7.5)
    for spec in ("http://127.0.0.1:8080/v1", "openai/gpt-4o-mini"):
        lm = make_lm(spec, cache_dir=tmp_path, requests=requests)
        assert lm.num_retries == 0 and lm.kwargs["timeout"] == 7.5
