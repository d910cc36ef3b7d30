"""The tool loop (seed 001): typed errors, retries, per-tool and per-turn limits, one message."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from pydantic import ValidationError

from pipeline.execution.tool_loop import ContextSource, ToolCall, ToolError, ToolLoop, ToolResult, ToolSpec
from pipeline.settings import ToolLoopLimits

LIMITS = ToolLoopLimits()


class Scripted:
    """A fake tool returning scripted results in order and recording the arguments it saw."""

    def __init__(self, *results: ToolResult[Any]) -> None:
        self._results: Iterator[ToolResult[Any]] = iter(results)
        self.seen: list[dict[str, object]] = []

    def __call__(self, args: Mapping[str, object]) -> ToolResult[Any]:
        self.seen.append(dict(args))
        return next(self._results)


OK = ToolResult.success(["doc"])


def fail(code: str, message: str = "x", missing: tuple[str, ...] = ()) -> ToolResult[Any]:
    return ToolResult.failure(code, message, missing)  # type: ignore[arg-type]


def loop_with(tool: Scripted, *, name: str = "search", required: tuple[str, ...] = (), **kw: Any) -> ToolLoop:
    return ToolLoop([ToolSpec(name, tool, required)], kw.pop("limits", LIMITS), **kw)


def test_results_and_errors_are_typed() -> None:
    assert OK.ok and OK.value == ["doc"] and OK.error is None
    bad = fail("rate_limited")
    assert not bad.ok and bad.error == ToolError("rate_limited", "x")
    assert ToolError("rate_limited", "x").retryable and not ToolError("rate_limited", "x").permanent
    assert ToolError("unavailable", "x").permanent and not ToolError("unavailable", "x").retryable
    assert not ToolError("not_found", "x").retryable and not ToolError("not_found", "x").permanent


def test_limits_are_validated_config() -> None:
    # One loop serves a whole question (every sub-question and round), one call per iteration.
    assert (LIMITS.max_consecutive_failures, LIMITS.max_failed_iterations, LIMITS.max_iterations) == (
        2,
        10,
        100,
    )
    with pytest.raises(ValidationError):
        ToolLoopLimits(max_consecutive_failures=0)


def test_success_is_returned_and_resets_the_failure_count() -> None:
    tool = Scripted(fail("not_found"), OK, fail("not_found"), OK)
    loop = loop_with(tool)
    for _ in range(4):
        loop.run_iteration([ToolCall("search", {"q": "a"})])
    assert loop.given_up == ()
    assert [c.status for it in loop.iterations for c in it.calls] == ["error", "ok", "error", "ok"]


def test_permanent_error_gives_the_tool_up_at_once() -> None:
    tool = Scripted(fail("unavailable", "web search backend not installed"))
    loop = loop_with(tool, name="web_search")
    first = loop.run_iteration([ToolCall("web_search")]).calls[0]
    second = loop.run_iteration([ToolCall("web_search")]).calls[0]
    assert first.status == "error" and len(first.attempts) == 1
    assert second.status == "skipped" and len(tool.seen) == 1
    assert [g.tool for g in loop.given_up] == ["web_search"]
    assert loop.stopped == "all_tools_given_up"
    message = loop.user_message()
    assert message is not None and "web_search" in message and "unavailable" in message


def test_rate_limited_is_retried_then_counts_once() -> None:
    tool = Scripted(fail("rate_limited"), OK)
    loop = loop_with(tool)
    record = loop.run_iteration([ToolCall("search")]).calls[0]
    assert record.ok and len(record.attempts) == 2


def test_consecutive_failure_limit_gives_the_tool_up() -> None:
    tool = Scripted(*[fail("rate_limited")] * 4)
    loop = loop_with(tool)
    first = loop.run_iteration([ToolCall("search")]).calls[0]
    assert first.status == "error" and len(first.attempts) == 2 and not loop.is_given_up("search")
    loop.run_iteration([ToolCall("search")])
    assert loop.is_given_up("search")
    assert loop.given_up[0].failures == 2 and loop.given_up[0].code == "rate_limited"
    assert loop.run_iteration([ToolCall("search")]).calls[0].status == "skipped"
    assert len(tool.seen) == 4


def test_consecutive_failure_limit_comes_from_config() -> None:
    tool = Scripted(*[fail("not_found")] * 3)
    loop = loop_with(tool, limits=ToolLoopLimits(max_consecutive_failures=3, max_failed_iterations=10))
    for _ in range(2):
        loop.run_iteration([ToolCall("search")])
    assert not loop.is_given_up("search")
    loop.run_iteration([ToolCall("search")])
    assert loop.is_given_up("search")


def test_not_found_is_not_retried() -> None:
    tool = Scripted(fail("not_found"))
    record = loop_with(tool).run_iteration([ToolCall("search")]).calls[0]
    assert record.status == "error" and len(record.attempts) == 1


def test_missing_argument_is_checked_before_the_tool_runs() -> None:
    tool = Scripted()
    record = loop_with(tool, required=("location",)).run_iteration([ToolCall("search", {"location": " "})]).calls[0]
    assert record.error == ToolError("missing_param", "missing location", ("location",))
    assert tool.seen == []


def test_retry_fills_the_missing_argument_from_the_scope_property_first() -> None:
    tool = Scripted(OK)
    context = [
        ContextSource("scope_property", {"location": "Banda Lane"}),
        ContextSource("user_reply", {"location": "Karen"}),
    ]
    loop = loop_with(tool, required=("location",), context=context)
    record = loop.run_iteration([ToolCall("search", {"q": "restaurants"})]).calls[0]
    assert record.ok and tool.seen == [{"q": "restaurants", "location": "Banda Lane"}]
    assert [a.filled_from for a in record.attempts] == [None, "scope_property"]


def test_retry_falls_through_to_the_user_reply() -> None:
    missing = fail("missing_param", "location is required", ("location",))
    tool = Scripted(missing, missing, OK)
    context = [
        ContextSource("scope_property", {"location": "Banda Lane"}),
        ContextSource("user_reply", {"location": "Karen"}),
        ContextSource("unused", {"location": "Westlands"}),
    ]
    loop = loop_with(tool, context=context)
    record = loop.run_iteration([ToolCall("search", {"q": "x"})]).calls[0]
    assert record.ok
    assert [s.get("location") for s in tool.seen] == [None, "Banda Lane", "Karen"]
    assert [a.filled_from for a in record.attempts] == [None, "scope_property", "user_reply"]


def test_sources_without_the_argument_are_skipped_and_no_source_means_failure() -> None:
    tool = Scripted()
    context = [ContextSource("scope_property", {"location": ""}), ContextSource("user_reply", {"other": 1})]
    record = loop_with(tool, required=("location",), context=context).run_iteration([ToolCall("search")]).calls[0]
    assert record.status == "error" and record.error is not None and record.error.code == "missing_param"
    assert len(record.attempts) == 1


def test_unknown_tool_is_a_permanent_error() -> None:
    loop = loop_with(Scripted(OK))
    record = loop.run_iteration([ToolCall("rm_rf")]).calls[0]
    assert record.error is not None and record.error.code == "unknown_tool"
    assert loop.is_given_up("rm_rf")


def test_all_failed_iterations_have_their_own_cap() -> None:
    limits = ToolLoopLimits(max_consecutive_failures=10, max_failed_iterations=3, max_iterations=10)
    loop = loop_with(Scripted(*[fail("not_found")] * 5), limits=limits)
    for _ in range(2):
        loop.run_iteration([ToolCall("search")])
    assert loop.stopped is None and [it.all_failed for it in loop.iterations] == [True, True]
    loop.run_iteration([ToolCall("search")])
    assert loop.stopped == "max_failed_iterations"
    assert loop.run_iteration([ToolCall("search")]).calls[0].status == "skipped"
    assert loop.user_message() == "Stopped after 3 rounds in which every tool call failed."


def test_overall_limit_counts_iterations_with_a_success_only() -> None:
    limits = ToolLoopLimits(max_iterations=2, max_failed_iterations=5, max_consecutive_failures=5)
    a = Scripted(OK, OK, OK)
    b = Scripted(*[fail("not_found")] * 5)
    loop = ToolLoop([ToolSpec("a", a), ToolSpec("b", b)], limits)
    loop.run_iteration([ToolCall("b")])
    mixed = loop.run_iteration([ToolCall("a"), ToolCall("b")])
    assert not mixed.all_failed and loop.stopped is None
    loop.run_iteration([ToolCall("a")])
    assert loop.stopped == "max_iterations"


def test_failures_never_carry_a_value() -> None:
    a = Scripted(OK)
    b = Scripted(fail("rate_limited", "Search rate limit reached."), fail("rate_limited", "Search rate limit reached."))
    loop = ToolLoop([ToolSpec("a", a), ToolSpec("b", b)], LIMITS)
    loop.run_iteration([ToolCall("a"), ToolCall("b")])
    calls = {c.tool: c for c in loop.iterations[0].calls}
    assert calls["a"].status == "ok" and calls["a"].error is None and calls["a"].value == ["doc"]
    errored = calls["b"]
    assert errored.status == "error" and errored.error is not None and errored.error.code == "rate_limited"
    assert errored.error.message == "Search rate limit reached."
    assert errored.value is None


def test_no_message_when_nothing_was_given_up() -> None:
    loop = loop_with(Scripted(OK))
    loop.run_iteration([ToolCall("search")])
    assert loop.user_message() is None
