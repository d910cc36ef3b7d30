"""What a job will cost before it starts: LM calls per phase and, for the embedded model, the time."""

from __future__ import annotations

from dataclasses import dataclass

from experiments.config import ExperimentConfig

# An end-to-end question: decompose, score and answer, and HyDE for a conceptual one (the upper end).
CALLS_PER_QUESTION = 4
# Seconds per uncached call of the embedded 0.5B model on 2 cores, two at a time, by what the call does
# (benchmarks/results/lm-throughput.json: 1,725 decompose, 234 score and 241 answer examples an hour, an
# end-to-end question 18.5 s). A decompose call reads one question; score and answer read chunks.
EMBEDDED_SECONDS_PER_CALL = {"decompose": 2.1, "score": 15.4, "answer": 14.9}
EMBEDDED_SECONDS_PER_QUESTION = 18.5


@dataclass(frozen=True)
class JobEstimate:
    """At most this many LM calls (the compile step's budget included); seconds when the LM's speed is known."""

    lm_calls: int
    seconds: float | None
    val_examples: int
    min_val_size: int

    @property
    def too_few(self) -> bool:
        """The validation set is below the configured minimum: a verdict on it turns on single examples."""
        return self.val_examples < self.min_val_size

    def describe(self) -> str:
        """One line: the calls, the time (or why it is unknown) and that a cache may answer some."""
        if self.seconds is None:
            return f"up to {self.lm_calls} LM calls (the time depends on the LM)"
        hours, rest = divmod(int(self.seconds), 3600)
        time = f"about {hours} h {rest // 60:02d} min" if hours else f"about {max(1, rest // 60)} min"
        return f"up to {self.lm_calls} LM calls, {time} on the embedded model if none comes from the cache"


def estimate_job(config: ExperimentConfig, val_examples: int, test_examples: int, embedded: bool) -> JobEstimate:
    """The job's LM calls: uncompiled and compiled on validation (and test), plus the compile budget; the time
    at the embedded model's measured rate for the stage's calls."""
    if config.stage == "end_to_end":
        questions = 2 * (val_examples + test_examples) + config.budget.max_lm_calls // CALLS_PER_QUESTION
        calls = 2 * CALLS_PER_QUESTION * (val_examples + test_examples) + config.budget.max_lm_calls
        seconds = questions * EMBEDDED_SECONDS_PER_QUESTION
    else:
        stage_calls = 2 * (val_examples + test_examples) + config.budget.max_lm_calls
        questions = 2 * min(config.data.end_to_end_size, val_examples)
        calls = stage_calls + CALLS_PER_QUESTION * questions
        seconds = stage_calls * EMBEDDED_SECONDS_PER_CALL[config.stage] + questions * EMBEDDED_SECONDS_PER_QUESTION
    return JobEstimate(calls, seconds if embedded else None, val_examples, config.data.min_val_size)
