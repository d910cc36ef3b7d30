"""The tool loop (seed 001): typed tool results, retry policy, per-tool and per-turn limits.

A tool returns a ToolResult: ok with a value, or a ToolError with a code. rate_limited is
retried; unavailable (and unknown_tool) gives the tool up for the turn at once; missing_param
is retried with the argument filled from context (the scope's property, then the user's
reply) when a source has it. A logical call that still fails counts once towards the tool's
consecutive-failure limit; iterations where every call failed count towards their own cap,
apart from the limit on iterations with at least one success. Failures are never reported
as successes, and the user gets one message naming each tool that was given up.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pipeline.settings import ToolLoopLimits

log = logging.getLogger(__name__)

T = TypeVar("T")

ErrorCode = Literal[
    "missing_param", "invalid_param", "not_found", "rate_limited", "unavailable", "unknown_tool", "internal"
]
RETRYABLE: frozenset[ErrorCode] = frozenset({"rate_limited"})
PERMANENT: frozenset[ErrorCode] = frozenset({"unavailable", "unknown_tool"})
StopReason = Literal["max_iterations", "max_failed_iterations", "all_tools_given_up"]


@dataclass(frozen=True)
class ToolError:
    """Why a tool call failed; `missing` names absent arguments for missing_param."""

    code: ErrorCode
    message: str
    missing: tuple[str, ...] = ()

    @property
    def retryable(self) -> bool:
        return self.code in RETRYABLE

    @property
    def permanent(self) -> bool:
        return self.code in PERMANENT


@dataclass(frozen=True)
class ToolResult(Generic[T]):
    """Exactly one of: a value (ok) or an error."""

    value: T | None = None
    error: ToolError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @staticmethod
    def success(value: T) -> ToolResult[T]:
        return ToolResult(value=value)

    @staticmethod
    def failure(code: ErrorCode, message: str, missing: Sequence[str] = ()) -> ToolResult[Any]:
        return ToolResult(error=ToolError(code, message, tuple(missing)))


Tool = Callable[[Mapping[str, object]], ToolResult[Any]]


@dataclass(frozen=True)
class ToolSpec:
    """A tool by name, the arguments it cannot run without, and the function."""

    name: str
    run: Tool
    required: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolCall:
    """A request to run one tool with arguments."""

    tool: str
    args: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class ContextSource:
    """Argument values a retry may borrow, e.g. ("scope_property", {"document_ids": [...]})."""

    name: str
    values: Mapping[str, object]


@dataclass(frozen=True)
class Attempt:
    """One invocation within a call: the arguments used and what came back."""

    args: Mapping[str, object]
    result: ToolResult[Any]
    filled_from: str | None = None


CallStatus = Literal["ok", "error", "skipped"]


@dataclass(frozen=True)
class CallRecord:
    """A logical call after retries: ok, error (the last error), or skipped (tool given up)."""

    tool: str
    status: CallStatus
    attempts: tuple[Attempt, ...]
    error: ToolError | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def value(self) -> Any:
        return self.attempts[-1].result.value if self.ok else None


@dataclass(frozen=True)
class IterationRecord:
    """One round of calls; `all_failed` when calls ran and none succeeded."""

    index: int
    calls: tuple[CallRecord, ...]

    @property
    def all_failed(self) -> bool:
        ran = [c for c in self.calls if c.status != "skipped"]
        return bool(ran) and not any(c.ok for c in ran)


@dataclass(frozen=True)
class GivenUp:
    """A tool stopped for the rest of the turn, and the error that stopped it."""

    tool: str
    code: ErrorCode
    message: str
    failures: int


def _missing(required: Sequence[str], args: Mapping[str, object]) -> list[str]:
    """Required arguments that are absent, None, blank or empty."""
    out = []
    for name in required:
        value = args.get(name)
        blank = isinstance(value, str) and not value.strip()
        empty = isinstance(value, list | tuple | dict | set | frozenset) and not value
        if value is None or blank or empty:
            out.append(name)
    return out


class ToolLoop:
    """Runs tool calls for one turn under the limits; holds that turn's counters."""

    def __init__(
        self, tools: Sequence[ToolSpec], limits: ToolLoopLimits, context: Sequence[ContextSource] = ()
    ) -> None:
        self._tools = {t.name: t for t in tools}
        self._limits = limits
        self._context = tuple(context)
        self._consecutive: dict[str, int] = {}
        self._given_up: dict[str, GivenUp] = {}
        self._iterations: list[IterationRecord] = []
        self._successful_iterations = 0
        self._failed_iterations = 0
        self._stop: StopReason | None = None

    @property
    def stopped(self) -> StopReason | None:
        return self._stop

    @property
    def given_up(self) -> tuple[GivenUp, ...]:
        return tuple(self._given_up.values())

    @property
    def iterations(self) -> tuple[IterationRecord, ...]:
        return tuple(self._iterations)

    def is_given_up(self, tool: str) -> bool:
        return tool in self._given_up

    def run_iteration(self, calls: Sequence[ToolCall]) -> IterationRecord:
        """Run `calls` (skipped once the loop has stopped) and update the turn's counters."""
        if self._stop is not None:
            records = tuple(CallRecord(c.tool, "skipped", ()) for c in calls)
        else:
            records = tuple(self._call(c) for c in calls)
        record = IterationRecord(len(self._iterations), records)
        self._iterations.append(record)
        if self._stop is None:
            self._count(record)
        return record

    def _count(self, record: IterationRecord) -> None:
        if any(c.ok for c in record.calls):
            self._successful_iterations += 1
        elif record.all_failed:
            self._failed_iterations += 1
        if self._successful_iterations >= self._limits.max_iterations:
            self._stop = "max_iterations"
        elif self._failed_iterations >= self._limits.max_failed_iterations:
            self._stop = "max_failed_iterations"
        elif self._tools and all(name in self._given_up for name in self._tools):
            self._stop = "all_tools_given_up"
        if self._stop is not None:
            log.warning("tool loop stopped: %s", self._stop)

    def _invoke(self, spec: ToolSpec | None, name: str, args: Mapping[str, object]) -> ToolResult[Any]:
        if spec is None:
            return ToolResult.failure("unknown_tool", f"no tool named {name!r}")
        missing = _missing(spec.required, args)
        if missing:
            return ToolResult.failure("missing_param", f"missing {', '.join(missing)}", missing)
        return spec.run(args)

    def _call(self, call: ToolCall) -> CallRecord:
        """One logical call: retries rate limits, fills missing arguments from context."""
        if call.tool in self._given_up:
            return CallRecord(call.tool, "skipped", ())
        spec = self._tools.get(call.tool)
        args = dict(call.args)
        attempts: list[Attempt] = []
        tried: list[str] = []
        retries = 0
        filled: str | None = None
        while True:
            result = self._invoke(spec, call.tool, args)
            attempts.append(Attempt(dict(args), result, filled))
            if result.error is None:
                self._consecutive[call.tool] = 0
                return CallRecord(call.tool, "ok", tuple(attempts))
            error = result.error
            log.info("tool %s failed (%s): %s", call.tool, error.code, error.message)
            if error.permanent:
                break
            if error.code == "missing_param":
                source = self._next_source(error.missing, tried)
                if source is None:
                    break
                tried.append(source.name)
                filled = source.name
                args.update({k: source.values[k] for k in error.missing if not _missing([k], source.values)})
                continue
            if error.retryable and retries < self._limits.max_retries:
                retries += 1
                continue
            break
        failures = self._consecutive.get(call.tool, 0) + 1
        self._consecutive[call.tool] = failures
        if error.permanent or failures >= self._limits.max_consecutive_failures:
            self._given_up[call.tool] = GivenUp(call.tool, error.code, error.message, failures)
            log.warning("tool %s given up for this turn after %d failure(s): %s", call.tool, failures, error.code)
        return CallRecord(call.tool, "error", tuple(attempts), error)

    def _next_source(self, missing: Sequence[str], tried: Sequence[str]) -> ContextSource | None:
        """The first untried context source that has a value for any missing argument."""
        for source in self._context:
            if source.name not in tried and any(not _missing([k], source.values) for k in missing):
                return source
        return None

    def user_message(self) -> str | None:
        """One sentence for the user naming every tool given up, or why the loop stopped."""
        if self._given_up:
            parts = [f"{g.tool} ({g.code}: {g.message})" for g in self._given_up.values()]
            return f"Some steps could not be completed and were given up for this question: {'; '.join(parts)}."
        if self._stop == "max_failed_iterations":
            return f"Stopped after {self._failed_iterations} rounds in which every tool call failed."
        if self._stop == "max_iterations":
            return f"Stopped after the limit of {self._successful_iterations} tool rounds."
        return None
