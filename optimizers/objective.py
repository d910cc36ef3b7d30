"""The metric optimizers maximise: the composite score, with the safety gates as a penalty no candidate can offset.

Pure part: `gate_penalty`, `metric_value`, `bootstrap_accept` take values and return values.
DSPy part: `gated_metric` / `gepa_metric` are thin `metric(example, pred, trace=None)` adapters that
score the program's prediction with `pipeline.evaluation.score_prediction` and call the pure part.

Why the penalty is `-n` (n = the most examples any one evaluation averages over): a gate-clean
example scores in [0, 1], so a gate-clean candidate's mean is >= 0; a candidate with at least one
gate failure has a mean of at most (-n + (n - 1)) / n = -1/n < 0. Every candidate with a
wrong-property citation or an invalid id therefore ranks below every gate-clean candidate, whatever
its other examples score, in DSPy's averages (Evaluate, MIPROv2, random search) and in GEPA's sums.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import dspy

from optimizers.feedback import feedback_text
from pipeline.evaluation.labels import ResolvedExample
from pipeline.evaluation.scoring import ExampleResult, score_prediction
from pipeline.store import Store

Metric = Callable[..., Any]


def gate_penalty(examples: int) -> float:
    """The score of a gate failure: -max(1, examples) (see the module docstring for why)."""
    return -float(max(1, examples))


def metric_value(result: ExampleResult, penalty: float) -> float:
    """The composite of a gate-clean example (0 when no weighted metric applies); `penalty` when a
    safety gate failed."""
    return (result.composite or 0.0) if result.scores.gates_passed else penalty


def bootstrap_accept(result: ExampleResult, threshold: float) -> bool:
    """Whether a trace may become a demo: gates pass, no error, composite >= threshold."""
    return result.scores.gates_passed and result.error is None and (result.composite or 0.0) >= threshold


def to_training_examples(resolved: Sequence[ResolvedExample]) -> list[dspy.Example]:
    """dspy.Examples whose `scope` input is the resolved Scope the program takes; labels ride along."""
    return [
        dspy.Example(question=r.example.question, scope=r.scope, resolved=r, case=r.example.case).with_inputs(
            "question", "scope"
        )
        for r in resolved
    ]


def score_example(
    store: Store, example: dspy.Example, pred: dspy.Prediction, weights: Mapping[str, float]
) -> ExampleResult:
    """The evaluation of one prediction of ScopedQA against the example's labels."""
    resolved: ResolvedExample = example.resolved
    return score_prediction(
        store,
        resolved,
        answer=pred.answer or "",
        sections=pred.sections or (),
        value=pred.get("value"),
        trace=pred.trace,
        weights=weights,
    )


def gated_metric(store: Store, weights: Mapping[str, float], *, examples: int, threshold: float = 0.5) -> Metric:
    """DSPy metric: a float (composite or the gate penalty) when evaluating; a bool when bootstrapping.

    DSPy passes `trace` only while collecting demos; then the answer is `bootstrap_accept`.
    """
    penalty = gate_penalty(examples)

    def metric(example: dspy.Example, pred: dspy.Prediction, trace: Any = None) -> float | bool:
        result = score_example(store, example, pred, weights)
        if trace is not None:
            return bootstrap_accept(result, threshold)
        return metric_value(result, penalty)

    return metric


def gepa_metric(store: Store, weights: Mapping[str, float], *, examples: int) -> Metric:
    """GEPA metric: `dspy.Prediction(score, feedback)`, feedback from guard interventions and failures."""
    penalty = gate_penalty(examples)

    def metric(
        gold: dspy.Example,
        pred: dspy.Prediction,
        trace: Any = None,
        pred_name: str | None = None,
        pred_trace: Any = None,
    ) -> dspy.Prediction:
        result = score_example(store, gold, pred, weights)
        return dspy.Prediction(
            score=metric_value(result, penalty), feedback=feedback_text(result, pred.trace, pred_name)
        )

    return metric
