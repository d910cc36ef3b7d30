"""`scoperag history ID`: one recorded question as readable lines: each sub-question once, with its answer,
the chunks retrieved and kept with their scores, then the guards' interventions, the LM's cost and timings."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from pydantic import ValidationError

from pipeline.cli.answer_view import section_lines, steps_line
from pipeline.cli.common import styled
from pipeline.program.events import Section, value_text
from pipeline.program.trace import Intervention, LineTrace, QuestionTrace, SubQuestionTrace

if TYPE_CHECKING:
    from rich.text import Text

    from pipeline.evaluation.history import HistoryEntry

# The chunks listed per sub-question (the trace keeps them all: `history ID --json`).
MAX_CHUNKS_SHOWN = 12


def trace_lines(entry: HistoryEntry) -> list[Text]:
    """The question, its scope and cost; per sub-question its section and chunks; the typed value; guards;
    timings."""
    trace = entry.trace
    scope = trace.scope.get("kind", "?")
    lines = [
        styled((entry.question, "bold")),
        styled((f"{entry.created_at}  {entry.history_id}  scope: {scope}", "dim")),
    ]
    if trace.steps:
        lines.append(styled((steps_line(trace.steps), "dim")))
    if trace.format_request:
        lines.append(styled(("format asked: ", "dim"), trace.format_request))
    sections = _sections(trace)
    made = {line.index: line for line in trace.lines}
    if not trace.sub_questions:  # answered directly, asked back or refused: the answer is the message
        lines.append(styled(trace.answer or "(no answer)"))
    for sq in trace.sub_questions:
        lines.extend(_sub_question(sq, sections.get(sq.index), made.get(sq.index)))
    if trace.value is not None and [trace.value] != [s.value for s in sections.values()]:
        lines.extend([styled(""), styled(("value", "bold"), f"  {value_text(trace.value)}")])
    lines.extend(_guards("guards", "yellow", trace.interventions))
    lines.extend(_guards("fallbacks", "magenta", trace.fallbacks))
    if trace.tool_loop is not None and trace.tool_loop.message:
        lines.append(styled(("tool loop", "bold"), f"  {trace.tool_loop.message}"))
    lines.append(styled(("cost", "bold"), f"  {_cost(entry, trace)}"))
    if trace.timings:
        timings = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in trace.timings.items())
        lines.append(styled(("timings", "bold"), f"  {timings}"))
    return lines


def _sections(trace: QuestionTrace) -> dict[int, Section]:
    """The answer's sections by sub-question index (a malformed record shows no section rather than failing)."""
    out = {}
    for raw in trace.sections:
        try:
            section = Section.model_validate(raw)
        except ValidationError:
            continue
        out[section.index] = section
    return out


def _line_record(line: LineTrace) -> Text:
    """How a section's answer line was made: the kind asked, the way (LM or floor), support, what became of it."""
    parts = [f"   answer step: {line.step}", f"asks for {line.kind}"]
    if line.support is not None:
        parts.append(f"support {line.support:.2f}")
    if line.basis:
        parts.append(f"line {line.basis}")
    if line.reason:
        parts.append(f"{line.status}: {line.reason}")
    return styled((", ".join(parts), "dim"))


def _sub_question(sq: SubQuestionTrace, section: Section | None, line: LineTrace | None = None) -> list[Text]:
    kept = sum(1 for c in sq.chunks if c.kept)
    rounds = f", {len(sq.rounds)} round(s)" if sq.rounds else ""
    stop = f", stopped: {sq.stop_reason}" if sq.stop_reason else ""
    lines = [
        styled(""),
        styled((f"{sq.index + 1}. ", "bold"), (sq.sub_question, "bold")),
        styled((f"   {len(sq.chunks)} retrieved, {kept} kept{rounds}{stop}", "dim")),
    ]
    if line is not None:
        lines.append(_line_record(line))
    if section is not None:
        lines.extend(section_lines(section, "   ")[1:])
        if section.sources:
            cited = "; ".join(f"{s.title or s.filename} p.{s.page}" for s in section.sources)
            lines.append(styled(("   sources: " + cited, "dim")))
    if sq.chunks:
        lines.append(styled(("   kept  relevance  retrieval  chunk", "dim")))
    for chunk in sq.chunks[:MAX_CHUNKS_SHOWN]:
        relevance = "-" if chunk.relevance is None else f"{chunk.relevance:g}"
        mark = ("yes ", "green") if chunk.kept else ("no  ", "red")
        lines.append(
            styled("   ", mark, f"  {relevance:>9}  {chunk.retrieval_score:9.4f}  {chunk.filename} p.{chunk.page}")
        )
    if len(sq.chunks) > MAX_CHUNKS_SHOWN:
        lines.append(styled((f"   ... {len(sq.chunks) - MAX_CHUNKS_SHOWN} more (history ID --json)", "dim")))
    return lines


def _guards(title: str, style: str, items: list[Intervention]) -> list[Text]:
    """Each distinct intervention once, with how many times it happened."""
    if not items:
        return []
    counted = Counter((i.guard, i.target, i.reason) for i in items)
    lines = [styled(""), styled((title, "bold"))]
    for (guard, target, reason), times in counted.items():
        repeat = f" (x{times})" if times > 1 else ""
        lines.append(styled("  ", (guard, style), f" {target}: {reason}{repeat}"))
    return lines


def _cost(entry: HistoryEntry, trace: QuestionTrace) -> str:
    attempts = ", ".join(f"{step} {count}" for step, count in trace.lm_attempts.items())
    calls = f"{entry.lm_calls} LM calls" + (f" ({attempts})" if attempts else "")
    cached = f", {trace.cached_calls} from the cache" if trace.cached_calls else ""
    tokens = f"{trace.prompt_tokens} prompt + {trace.completion_tokens} completion tokens"
    return f"{calls}{cached}, {tokens}, {entry.seconds:.1f} s"
