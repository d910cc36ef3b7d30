"""GEPA's textual feedback: guard interventions, fallbacks and per-case failure reasons as plain text."""

from __future__ import annotations

from pipeline.evaluation.scoring import ExampleResult
from pipeline.program.trace import Intervention, QuestionTrace

# Which guards and fallbacks speak about which predictor's output.
MODULE_GUARDS: dict[str, frozenset[str]] = {
    "decompose": frozenset({"decompose"}),
    "score": frozenset({"score"}),
    "answer": frozenset({"answer", "citation"}),
    "hyde": frozenset({"hyde"}),
    "select": frozenset({"select", "answer", "citation"}),
}
MAX_FEEDBACK_CHARS = 2000
MAX_LISTED = 6


def feedback_text(result: ExampleResult, trace: QuestionTrace | None, module: str | None = None) -> str:
    """What went wrong on one example, for the module being improved (all modules when None)."""
    scores = result.scores
    example = result.example
    score = "n/a" if result.composite is None else f"{result.composite:.2f}"
    lines = [f"Case {example.case}: composite score {score}."]
    if scores.wrong_property_citations:
        lines.append(
            f"SAFETY FAILURE: the answer cited {scores.wrong_property_citations} document(s) outside the scope or "
            "about another property; such an answer scores below every safe one. Cite only the chunks shown for "
            "the section, and only when they are about the property asked."
        )
    if scores.invalid_ids:
        lines.append(f"SAFETY FAILURE: {scores.invalid_ids} invalid or out-of-scope document id(s) reached the store.")
    if result.error:
        lines.append(f"The program failed: {result.error[:300]}")
    lines.extend(_failure_reasons(result, module))
    if trace is not None:
        lines.extend(_guard_lines(trace, module))
    if len(lines) == 1:
        lines.append("No guard intervened and no check failed.")
    text = "\n".join(lines)
    return text if len(text) <= MAX_FEEDBACK_CHARS else text[: MAX_FEEDBACK_CHARS - 1] + "…"


def _failure_reasons(result: ExampleResult, module: str | None) -> list[str]:
    scores = result.scores
    example = result.example
    out: list[str] = []
    if scores.abstention < 1.0:
        if example.expect_not_found:
            out.append(
                "The documents in scope do not answer this question, but the answer cited sources; it should have "
                "said that no relevant information was found."
            )
        else:
            out.append("The documents in scope answer this question, but the answer cited nothing.")
    if module in (None, "answer") and scores.fact_recall is not None and scores.fact_recall < 1.0:
        facts = ", ".join(repr(f) for f in example.answer_facts[:MAX_LISTED])
        out.append(f"Fact recall {scores.fact_recall:.2f}: the answer should state {facts}.")
    if module in (None, "answer") and scores.citation_precision is not None and scores.citation_precision < 1.0:
        out.append(f"Citation precision {scores.citation_precision:.2f}: some cited pages do not support the answer.")
    if module in (None, "decompose") and scores.sub_question_coverage is not None and scores.sub_question_coverage < 1:
        wanted = "; ".join(example.gold_sub_questions[:MAX_LISTED])
        out.append(f"Sub-question coverage {scores.sub_question_coverage:.2f}: expected sub-questions like: {wanted}.")
    if module in (None, "score", "decompose", "hyde") and scores.recall_at_10 is not None and scores.recall_at_10 < 1:
        out.append(f"Only {scores.recall_at_10:.0%} of the documents that answer were retrieved in the top 10.")
    return out


def _guard_lines(trace: QuestionTrace, module: str | None) -> list[str]:
    wanted = MODULE_GUARDS.get(module or "")
    out: list[str] = []
    fallbacks = [f for f in trace.fallbacks if wanted is None or f.guard in wanted]
    interventions = [i for i in trace.interventions if wanted is None or i.guard in wanted]
    if fallbacks:
        out.append(f"Output not usable ({len(fallbacks)}x), a fallback was used:")
        out.extend(_describe(f) for f in fallbacks[:MAX_LISTED])
    if interventions:
        out.append(f"Guards removed or corrected output ({len(interventions)}x):")
        out.extend(_describe(i) for i in interventions[:MAX_LISTED])
    others = len(trace.interventions) - len(interventions)
    if wanted is not None and others:
        out.append(f"({others} other guard intervention(s) in retrieval, not caused by this module.)")
    return out


def _describe(item: Intervention) -> str:
    return f"- {item.guard} on {item.target[:120]}: {item.reason[:200]}"
